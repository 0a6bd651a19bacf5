"""Rendered stills as the monitor shows them to the models: each turned and resampled into its
table view (``vision.view``), so the models train on what they will be given.

    python scripts/view_stills.py --stills .cache/synth/looks_stills --out .cache/synth/looks_view

The monitor fits a :class:`vision.view.TableView` to the camera's layout and runs the detector
and the face reader on the view (dealer at the top, tiles at the learnt size). A still of a
family filmed at 720p or over the dealer's shoulder is therefore never what the models see. For
each still, the scene is drawn again from its seed and randomisation (no rendering: only its
camera and layout), its layout is read exactly as the monitor reads a layout
(``pipeline.layout``: zones, homography, a tile's length in px), the view is fitted and the image
and every object's box are mapped into it. Boxes cut by the view's edge keep the part inside
when at least ``MIN_KEPT_FRACTION`` of them is left. Writes the stills layout again
(``images/``, ``labels/``, ``truth/``), which ``scripts/build_datasets.py`` reads as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from pipeline.layout import layout_from_scenario
from vision.synth.camera import Camera
from vision.synth.config import randomisation
from vision.synth.labels import MIN_KEPT_FRACTION
from vision.synth.stills_content import random_scene
from vision.synth.table import default_layout, layout_dict
from vision.view import TableView

CLASS_IDS = {"tile_down": 0, "tile_up": 1, "chip": 2, "die": 3, "hand": 4}
MIN_VISIBILITY = 0.3  # as the stills' labels (datasets/recipes/stills.yaml)


def view_of(seed: int, randomisation_name: str) -> TableView:
    """The table view the monitor would fit for the still of ``seed``."""
    scene = random_scene(np.random.default_rng(seed), randomisation(randomisation_name))
    camera = Camera.from_params(scene.camera)
    block = layout_dict(default_layout(scene.layout), camera)
    block["resolution_wh"] = list(scene.camera.resolution_wh)
    layout = layout_from_scenario({"layout": block})
    return TableView.fit(layout.zones_px, layout.tile_px, tuple(scene.camera.resolution_wh))


def label_class(obj: dict) -> int:
    if obj["kind"] == "tile":
        return CLASS_IDS["tile_up" if obj["face_up"] else "tile_down"]
    return CLASS_IDS[obj["kind"]]


def view_split(stills: Path, out: Path, split: str) -> tuple[int, int]:
    """Every still of ``split`` into its view; returns (stills, stills that were resampled)."""
    rows = [json.loads(x) for x in (stills / "truth" / f"{split}.jsonl").read_text().splitlines()]
    for sub in (f"images/{split}", f"labels/{split}", "truth"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    moved = 0
    with (out / "truth" / f"{split}.jsonl").open("w") as truth:
        for row in tqdm(rows, desc=f"view {split}", unit="img", disable=None):
            view = view_of(row["seed"], row["randomisation"])
            moved += not view.identity
            image = cv2.imread(str(stills / "images" / split / f"{row['image']}.jpg"))
            picture = view.warp(image)
            w, h = picture.shape[1], picture.shape[0]
            objects, lines = [], []
            for obj in row["objects"]:
                got = view.to_view_box(obj["xyxy"])
                if got is None or got[1] < MIN_KEPT_FRACTION:
                    continue
                box, _ = got
                objects.append({**obj, "xyxy": [round(v, 1) for v in box]})
                if obj["visibility"] >= MIN_VISIBILITY:
                    x1, y1, x2, y2 = box
                    lines.append(
                        f"{label_class(obj)} {(x1 + x2) / 2 / w:.6f} {(y1 + y2) / 2 / h:.6f} "
                        f"{(x2 - x1) / w:.6f} {(y2 - y1) / h:.6f}\n"
                    )
            cv2.imwrite(str(out / "images" / split / f"{row['image']}.jpg"), picture,
                        [cv2.IMWRITE_JPEG_QUALITY, 95])  # fmt: skip
            (out / "labels" / split / f"{row['image']}.txt").write_text("".join(lines))
            truth.write(json.dumps({**row, "objects": objects}) + "\n")
    return len(rows), moved


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stills", type=Path, required=True, help="a `paigow synth stills` folder")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--splits", nargs="+", default=["train", "val"])
    args = p.parse_args(argv)
    for split in args.splits:
        if not (args.stills / "truth" / f"{split}.jsonl").is_file():
            print(f"view_stills: {args.stills}: no truth/{split}.jsonl", file=sys.stderr)
            return 2
        n, moved = view_split(args.stills, args.out, split)
        print(f"{split}: {n} stills, {moved} turned or resampled into their view")
    return 0


if __name__ == "__main__":
    sys.exit(main())
