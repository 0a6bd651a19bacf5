"""Extra face-reader training crops from scenes with every loose tile turned face up.

A still scene yields about 7 readable faces; the same scene with its loose tiles face up yields
about 25, so the face reader gets more examples per rendered frame. Seeds come from the train
range at seed index ``FACE_SEED_INDEX``, disjoint from every other recipe's seeds.

    python scripts/make_face_crops.py --n 300 --out .cache/datasets
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.faces import FACE_CLASSES, crop_square
from vision.synth.config import randomisation
from vision.synth.labels import jitter_box
from vision.synth.render import Renderer
from vision.synth.stills import scene_seed
from vision.synth.stills_content import random_scene

FACE_SEED_INDEX = 5
MIN_VISIBILITY = 0.7


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=300)
    p.add_argument("--out", type=Path, default=Path(".cache/datasets"))
    p.add_argument("--split", default="train")
    args = p.parse_args(argv)
    renderer, dr = Renderer(), randomisation("training")
    for cls in FACE_CLASSES:
        (args.out / "faces" / args.split / cls).mkdir(parents=True, exist_ok=True)
    written = 0
    for i in tqdm(range(args.n), desc="face scenes", unit="scene"):
        seed = scene_seed("train", FACE_SEED_INDEX, i)
        rng = np.random.default_rng(seed)
        scene = random_scene(rng, dr, renderer.layout, renderer.settings)
        tiles = tuple(replace(t, face_up=True) if t.level == 0 else t for t in scene.tiles)
        result = renderer.render(replace(scene, tiles=tiles))
        for o in result.objects:
            if o.visibility < MIN_VISIBILITY:
                continue
            if o.kind == "tile" and o.face_up:
                cls = f"tile_{o.face}"
            elif o.kind == "die" and o.die_flat:
                cls = f"die_{o.die_value}"
            else:
                continue
            crop = crop_square(result.image, jitter_box(o.xyxy, rng))
            cv2.imwrite(
                str(args.out / "faces" / args.split / cls / f"fu{seed}_{o.obj_id}.png"), crop
            )
            written += 1
    print(f"wrote {written} crops from {args.n} scenes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
