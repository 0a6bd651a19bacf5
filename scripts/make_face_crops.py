"""Extra face-reader training crops from scenes with every loose tile turned face up.

A still scene yields about 7 readable faces; the same scene with its loose tiles face up yields
about 25, so the face reader gets more examples per rendered frame. Seeds come from the train
range at seed index ``--seed-index`` (one more per look after the first), disjoint from every
other recipe's seeds. ``--looks`` draws the scenes from each randomisation in turn (never a
held-out family: ``datasets/recipes/looks/families.yaml``); ``--varied-backs`` gives every scene
a tile back of its own over the colour wheel (``vision.synth.sampling.varied_back``). Crops are
cut from the rendered frame (a turned camera's crops come out turned: the reader's training
flips them).

    python scripts/make_face_crops.py --n 300 --out .cache/datasets
    python scripts/make_face_crops.py --n 1400 --looks training arc_green purple_spots \\
        --varied-backs --seed-index 40 --out /tmp/backs
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from vision.faces import DIE_TIPPED, FACE_CLASSES, crop_square
from vision.synth.config import ConfigError, families, randomisation, widened
from vision.synth.labels import jitter_box
from vision.synth.render import Renderer
from vision.synth.stills import scene_seed
from vision.synth.stills_content import random_scene

FACE_SEED_INDEX = 5
MIN_VISIBILITY = 0.7


def crop_job(job: tuple[int, int, str, str, str, bool, float | None]) -> int:
    """Face crops of ``n`` scenes of ``look`` (seed index ``seed``) under ``out/faces/split``;
    returns the crops written."""
    n, seed_index, split, out, look, varied_backs, tipped_prob = job
    renderer = Renderer()
    dr = widened(randomisation(look), False, tipped_prob, varied_backs)
    written = 0
    for i in range(n):
        seed = scene_seed(split, seed_index, i)
        rng = np.random.default_rng(seed)
        scene = random_scene(rng, dr, settings=renderer.settings)
        tiles = tuple(replace(t, face_up=True) if t.level == 0 else t for t in scene.tiles)
        result = renderer.render(replace(scene, tiles=tiles))
        for o in result.objects:
            if o.visibility < MIN_VISIBILITY:
                continue
            if o.kind == "tile" and o.face_up:
                cls = f"tile_{o.face}"
            elif o.kind == "die":
                cls = f"die_{o.die_value}" if o.die_flat else DIE_TIPPED
            else:
                continue
            crop = crop_square(result.image, jitter_box(o.xyxy, rng))
            name = f"fu{seed}_{look}_{o.obj_id}.png"
            cv2.imwrite(str(Path(out) / "faces" / split / cls / name), crop)
            written += 1
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=300, help="scenes in all, shared over the looks")
    p.add_argument("--out", type=Path, default=Path(".cache/datasets"))
    p.add_argument("--split", default="train")
    p.add_argument("--seed-index", type=int, default=FACE_SEED_INDEX)
    p.add_argument("--looks", nargs="+", default=["training"])
    p.add_argument("--varied-backs", action="store_true", help="a tile back drawn per scene")
    p.add_argument("--tipped-prob", type=float, help="scenes with a tipped die (else the look's)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = p.parse_args(argv)
    if bad := [look for look in args.looks if look in families().held_out]:
        print(f"make_face_crops: {', '.join(bad)}: held out, never trained on", file=sys.stderr)
        return 2
    try:
        for look in args.looks:
            randomisation(look)
    except ConfigError as e:
        print(f"make_face_crops: {e}", file=sys.stderr)
        return 2
    for cls in FACE_CLASSES:
        (args.out / "faces" / args.split / cls).mkdir(parents=True, exist_ok=True)
    per = -(-args.n // len(args.looks))
    jobs = [
        (per, args.seed_index + k, args.split, str(args.out), look, args.varied_backs,
         args.tipped_prob)
        for k, look in enumerate(args.looks)
    ]  # fmt: skip
    with ProcessPoolExecutor(args.workers) as pool:
        written = sum(pool.map(crop_job, jobs))
    print(f"wrote {written} crops from {per * len(jobs)} scenes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
