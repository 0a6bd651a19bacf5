"""Turn rendered stills (``paigow synth stills``) into the detector's and the face reader's data.

Detector: the monitor runs the detector on the frame scaled by ``DETECT_SCALE`` (1920x1080 ->
960x540, letterboxed to 960x544), so tiles keep ~14x35 px and dice ~9 px. Training uses random
``CROP_PX`` crops of that scaled frame (same object scale, a quarter of the cost); val, test and
shifted splits keep whole scaled frames so evaluation sees exactly what the monitor sees.

Face reader: axis-aligned crops of face-up tiles and dice cut from the *full-resolution* frame
around their box (as the runtime does from a detection), padded square, with the box jittered
like a detector's; 28 classes: ``tile_<face>`` (21), ``die_<value>`` (6) and ``die_tipped``.
The code is :mod:`vision.synth.datasets` (labels: :mod:`vision.synth.labels`).

    python scripts/build_datasets.py --stills .cache/synth/stills --out .cache/datasets
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from vision.synth.datasets import detector_split, face_split


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stills", type=Path, default=Path(".cache/synth/stills"))
    p.add_argument("--out", type=Path, default=Path(".cache/datasets"))
    p.add_argument("--splits", nargs="+", default=["train", "val", "test", "shifted"])
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    for split in args.splits:
        d = detector_split(args.stills, args.out / "detect", split, rng)
        f = face_split(args.stills, args.out, split, rng)
        print(f"{split}: {d} detector images, {f} face crops")


if __name__ == "__main__":
    main()
