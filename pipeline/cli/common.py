"""What several ``paigow`` commands share: exit statuses, the usage error, argument types and
the layout size check.

Imports nothing of the commands, nor of ``pipeline.cli`` itself, so any command may import it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

EXIT_USAGE = 2
EXIT_INTERNAL = 1
EXIT_INTERRUPTED = 130  # SIGINT (Ctrl-C), as a shell reports it


class UsageError(ValueError):
    """Bad input from the command line; printed as one line, exit status 2."""


def positive(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    """An argparse ``type`` for a number above 0 (a one-line usage error otherwise)."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} must be > 0")
        return value

    return parse


def check_size(layout, size_wh: tuple[int, int] | None, prefix: str = "") -> None:
    """Warn on stderr when the layout was drawn for frames of another size than the source's."""
    if layout.image_size_wh and size_wh and tuple(layout.image_size_wh) != tuple(size_wh):
        w, h = layout.image_size_wh
        print(
            f"{prefix}warning: the layout is for {w}x{h} frames, the video is "
            f"{size_wh[0]}x{size_wh[1]}: zones may be off",
            file=sys.stderr,
        )
