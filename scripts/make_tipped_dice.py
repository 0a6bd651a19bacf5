"""Face-reader crops of dice that are not lying flat (class ``die_tipped``), so the reader can
say "not flat" instead of guessing a value: every die of a rendered still scene is tipped.

    python scripts/make_tipped_dice.py --split train --n 300 --out .cache/datasets

Seeds come from the split's range at seed index ``TIPPED_SEED_INDEX`` (disjoint from every
other recipe's seeds); the held-out splits use their own ranges, so the test crops are never
trained on.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
from build_datasets import jitter_box  # scripts/ is on sys.path when run as a script
from tqdm import tqdm

from vision.faces import TIPPED_DIE, crop_square
from vision.synth.config import randomisation
from vision.synth.render import Renderer
from vision.synth.stills import scene_seed
from vision.synth.stills_content import random_scene

TIPPED_SEED_INDEX = 6
MIN_VISIBILITY = 0.7


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=300, help="scenes (three dice each)")
    p.add_argument("--out", type=Path, default=Path(".cache/datasets"))
    p.add_argument("--split", default="train", choices=("train", "val", "test", "shifted"))
    args = p.parse_args(argv)
    renderer = Renderer()
    dr = randomisation("shifted" if args.split == "shifted" else "training")
    folder = args.out / "faces" / args.split / TIPPED_DIE
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for i in tqdm(range(args.n), desc=f"tipped dice ({args.split})", unit="scene"):
        seed = scene_seed(args.split, TIPPED_SEED_INDEX, i)
        rng = np.random.default_rng(seed)
        scene = random_scene(rng, dr, renderer.layout, renderer.settings)
        dice = tuple(replace(d, flat=False) for d in scene.dice)
        result = renderer.render(replace(scene, dice=dice))
        for o in result.objects:
            if o.kind == "die" and o.visibility >= MIN_VISIBILITY:
                crop = crop_square(result.image, jitter_box(o.xyxy, rng))
                cv2.imwrite(str(folder / f"tip{seed}_{o.obj_id}.png"), crop)
                written += 1
    print(f"wrote {written} tipped-die crops to {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
