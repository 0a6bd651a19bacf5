"""``python -m pipeline.cli``: the ``paigow`` command without the installed script."""

import sys

from pipeline.cli import main

if __name__ == "__main__":
    sys.exit(main())
