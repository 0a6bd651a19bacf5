"""Still datasets: YOLO detection data and face-reader crops, with full ground truth.

``python -m vision.synth.stills --n 200 --out .cache/synth/stills --split train --seed 0``

Layout under ``out``::

    images/<split>/<name>.jpg            frames (1080p unless a look family says otherwise)
    labels/<split>/<name>.txt            YOLO: class cx cy w h (normalised)
    truth/<split>.jsonl                  every object's ground truth, one image per line
    crops/tiles/<face>/<split>_<name>_<id>.png, crops/dice/<value>/...
    crops/<split>.csv                    crop metadata (visibility, zone, ...)
    data.yaml                            ultralytics data file pointing here

Scene seeds come from disjoint ranges per split (:func:`scene_seed`), so test scenes never
share a seed with training scenes.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
import yaml
from tqdm import tqdm

from vision.synth.config import DomainRandomisation, randomisation
from vision.synth.crops import CropSpec, upright_crop
from vision.synth.render import Renderer, RenderResult
from vision.synth.scene import DISTRACTORS, ObjectTruth
from vision.synth.stills_content import random_scene

CLASS_NAMES: tuple[str, ...] = ("tile_down", "tile_up", "chip", "die", "hand")
SPLITS: tuple[str, ...] = ("train", "val", "test", "shifted")
SPLIT_BASE: dict[str, int] = {"train": 0, "val": 10**9, "test": 2 * 10**9, "shifted": 3 * 10**9}
SEED_STRIDE = 10**6
MAX_SEED = 999


@dataclass(frozen=True, slots=True)
class StillsConfig:
    """Label filtering and image encoding."""

    # objects less visible than this get no YOLO label (lower: more hard examples, more noise)
    min_label_visibility: float = 0.3
    # face-up tiles and dice less visible than this get no crop
    min_crop_visibility: float = 0.2
    jpeg_quality: int = 95
    crops: CropSpec = field(default_factory=CropSpec)


def scene_seed(split: str, seed: int, index: int) -> int:
    """Seed of scene ``index``: split ranges are disjoint (each holds 1000 x 10^6 seeds).

    >>> scene_seed("test", 3, 7)
    2003000007
    """
    if split not in SPLIT_BASE:
        raise ValueError(f"unknown split {split!r} (known: {', '.join(SPLITS)})")
    if not (0 <= seed <= MAX_SEED and 0 <= index < SEED_STRIDE):
        raise ValueError(f"seed must be 0..{MAX_SEED} and index below {SEED_STRIDE}")
    return SPLIT_BASE[split] + seed * SEED_STRIDE + index


def class_id(obj: ObjectTruth) -> int:
    """YOLO class of an object (see :data:`CLASS_NAMES`)."""
    if obj.kind == "tile":
        return 1 if obj.face_up else 0
    return CLASS_NAMES.index(obj.kind)


def yolo_lines(
    objects: tuple[ObjectTruth, ...], size_wh: tuple[int, int], min_visibility: float
) -> list[str]:
    """``class cx cy w h`` lines (normalised) for objects visible enough."""
    w, h = size_wh
    lines = []
    for obj in objects:
        x0, y0, x1, y1 = obj.xyxy
        if obj.visibility < min_visibility or x1 <= x0 or y1 <= y0 or obj.kind in DISTRACTORS:
            continue  # a plaque or a lammer is no chip: no box, the detector learns it as table
        cx, cy, bw, bh = (x0 + x1) / 2 / w, (y0 + y1) / 2 / h, (x1 - x0) / w, (y1 - y0) / h
        lines.append(f"{class_id(obj)} {cx:.6f} {cy:.6f} {bw:.6f} {bh:.6f}")
    return lines


def _write_crops(
    result: RenderResult, name: str, split: str, out: Path, config: StillsConfig
) -> list[dict]:
    rows = []
    for obj in result.objects:
        if obj.visibility < config.min_crop_visibility:
            continue
        if obj.kind == "tile" and obj.face_up:
            folder, label, size = (
                out / "crops" / "tiles" / str(obj.face),
                obj.face,
                config.crops.tile_wh,
            )
        elif obj.kind == "die":
            folder, label, size = (
                out / "crops" / "dice" / str(obj.die_value),
                obj.die_value,
                config.crops.die_wh,
            )
        else:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}_{obj.obj_id}.png"
        cv2.imwrite(
            str(path), upright_crop(result.image, np.array(obj.obb_px), size, config.crops.margin)
        )
        rows.append(
            {
                "path": str(path.relative_to(out)),
                "kind": obj.kind,
                "label": label,
                "split": split,
                "image": name,
                "obj_id": obj.obj_id,
                "visibility": round(obj.visibility, 4),
                "zone": obj.zone,
                "die_flat": obj.die_flat,
            }
        )
    return rows


def write_data_yaml(out: Path) -> Path:
    """An ultralytics data file for the splits under ``out`` (absolute path)."""
    data = {
        "path": str(out.resolve()),
        "train": "images/train",
        "val": "images/val",
        "test": "images/test",
        "names": dict(enumerate(CLASS_NAMES)),
    }
    path = out / "data.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def make_stills(
    n: int,
    out: str | Path,
    split: str,
    seed: int = 0,
    dr: DomainRandomisation | str | None = None,
    config: StillsConfig | None = None,
) -> Path:
    """Render ``n`` still scenes of ``split`` into ``out``; returns ``out``.

    ``dr`` defaults to the ``shifted`` set for the ``shifted`` split, else ``training``.
    """
    config = config or StillsConfig()
    dr_set = (
        randomisation(dr or ("shifted" if split == "shifted" else "training"))
        if not isinstance(dr, DomainRandomisation)
        else dr
    )
    out = Path(out)
    for sub in (f"images/{split}", f"labels/{split}", "truth", "crops"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    renderer = Renderer()
    crop_rows: list[dict] = []
    with (out / "truth" / f"{split}.jsonl").open("w") as truth_file:
        for i in tqdm(range(n), desc=f"stills {split}", unit="img"):
            s = scene_seed(split, seed, i)
            result = renderer.render(
                random_scene(np.random.default_rng(s), dr_set, settings=renderer.settings)
            )
            name = f"{split}_{s}"
            cv2.imwrite(
                str(out / "images" / split / f"{name}.jpg"),
                result.image,
                [cv2.IMWRITE_JPEG_QUALITY, config.jpeg_quality],
            )
            size_wh = result.image.shape[1::-1]
            lines = yolo_lines(result.objects, size_wh, config.min_label_visibility)
            (out / "labels" / split / f"{name}.txt").write_text(
                "".join(f"{line}\n" for line in lines)
            )
            record = {
                "image": name,
                "seed": s,
                "randomisation": dr_set.name,
                "objects": [dataclasses.asdict(o) for o in result.objects],
            }
            truth_file.write(json.dumps(record) + "\n")
            crop_rows += _write_crops(result, name, split, out, config)
    _write_csv(out / "crops" / f"{split}.csv", crop_rows)
    write_data_yaml(out)
    return out


def _write_csv(path: Path, rows: list[dict]) -> None:
    fields = ["path", "kind", "label", "split", "image", "obj_id", "visibility", "zone", "die_flat"]
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Render still datasets (YOLO + face-reader crops)."
    )
    parser.add_argument("--n", type=int, required=True, help="number of images")
    parser.add_argument("--out", type=Path, default=Path(".cache/synth/stills"))
    parser.add_argument("--split", choices=SPLITS, default="train")
    parser.add_argument(
        "--seed", type=int, default=0, help=f"0..{MAX_SEED}; split ranges never overlap"
    )
    parser.add_argument(
        "--randomisation", default=None, help="training, shifted, a look family or a YAML path"
    )
    args = parser.parse_args(argv)
    out = make_stills(args.n, args.out, args.split, args.seed, args.randomisation)
    print(f"wrote {args.n} {args.split} images to {out}")


if __name__ == "__main__":
    main()
