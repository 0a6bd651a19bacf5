"""Turn rendered stills (``paigow synth stills``) into the detector's and the face reader's data.

Detector: the monitor runs the detector on the frame scaled by ``DETECT_SCALE`` (1920x1080 ->
960x540, letterboxed to 960x544), so tiles keep ~14x35 px and dice ~9 px. Training uses random
``CROP_PX`` crops of that scaled frame (same object scale, a quarter of the cost); val, test and
shifted splits keep whole scaled frames so evaluation sees exactly what the monitor sees.

Face reader: axis-aligned crops of face-up tiles and dice cut from the *full-resolution* frame
around their box (as the runtime does from a detection), padded square, with the box jittered
like a detector's; 28 classes: ``tile_<face>`` (21), ``die_<value>`` (6) and ``die_tipped``.

    python scripts/build_datasets.py --stills .cache/synth/stills --out .cache/datasets
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.faces import FACE_CLASSES, crop_square

DETECT_SCALE = 0.5
CROP_PX = 416
CROPS_PER_IMAGE = 2
MIN_KEPT_FRACTION = 0.45  # a box cut by a crop edge is kept if this much of it remains
FACE_MIN_VISIBILITY = 0.7
BOX_JITTER = 0.08  # face crops: box edges moved by up to this fraction of its size
CLASSES = ("tile_down", "tile_up", "chip", "die", "hand")
NAMES = list(CLASSES)
CLASS_IDS = {name: i for i, name in enumerate(CLASSES)}
MIN_VISIBILITY = 0.3  # objects less visible get no box (datasets/recipes/stills.yaml)
CROPPED_SPLITS = ("train", "val")  # val is used during training, at the training image size


def _read_labels(path: Path, wh: tuple[int, int]) -> np.ndarray:
    """YOLO labels -> ``(N, 5)`` [class, x1, y1, x2, y2] in pixels of an image of size ``wh``."""
    if not path.exists() or not path.read_text().strip():
        return np.zeros((0, 5))
    a = np.loadtxt(path, ndmin=2)
    w, h = wh
    cx, cy, bw, bh = a[:, 1] * w, a[:, 2] * h, a[:, 3] * w, a[:, 4] * h
    return np.column_stack([a[:, 0], cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2])


def _write_labels(path: Path, boxes: np.ndarray, wh: tuple[int, int]) -> None:
    w, h = wh
    lines = [
        f"{int(c)} {(x1 + x2) / 2 / w:.6f} {(y1 + y2) / 2 / h:.6f} {(x2 - x1) / w:.6f} "
        f"{(y2 - y1) / h:.6f}"
        for c, x1, y1, x2, y2 in boxes
    ]
    path.write_text("\n".join(lines) + ("\n" if lines else ""))


def _crop_boxes(boxes: np.ndarray, x0: int, y0: int, size: int) -> np.ndarray:
    """Boxes shifted into a crop and clipped; those mostly outside are dropped."""
    b = boxes.copy()
    b[:, [1, 3]] -= x0
    b[:, [2, 4]] -= y0
    area = (b[:, 3] - b[:, 1]) * (b[:, 4] - b[:, 2])
    b[:, 1:] = b[:, 1:].clip(0, size)
    kept = (b[:, 3] - b[:, 1]) * (b[:, 4] - b[:, 2])
    return b[kept >= MIN_KEPT_FRACTION * np.maximum(area, 1e-6)]


def frame_labels(objects: list[dict], scale: float) -> list[list[float]]:
    """[class, x1, y1, x2, y2] rows (pixels of the scaled frame) of one truth frame."""
    rows = []
    for o in objects:
        if o["visibility"] < MIN_VISIBILITY:
            continue
        if o["class"] == "tile":
            cls = CLASS_IDS["tile_up" if o["face_up"] else "tile_down"]
        else:
            cls = CLASS_IDS[o["class"]]
        rows.append([cls, *(round(v * scale, 1) for v in o["xyxy"])])
    return rows


def face_class(o: dict) -> str | None:
    """The face reader's class of a truth object seen well enough to read, else None (clip
    truth names the kind ``class``, still truth ``kind``)."""
    kind = o.get("class") or o.get("kind")
    if o["visibility"] < FACE_MIN_VISIBILITY:
        return None
    if kind == "tile" and o["face_up"]:
        return f"tile_{o['face']}"
    if kind == "die":
        return f"die_{o['die_value']}" if o["die_flat"] else "die_tipped"
    return None


def detector_split(
    stills: Path, out: Path, split: str, rng: np.random.Generator, crop: bool | None = None
) -> int:
    """Scaled detector images and labels of one split; ``crop`` (default: train and val) cuts
    ``CROPS_PER_IMAGE`` random ``CROP_PX`` squares of each, else the whole scaled frame."""
    crop = split in CROPPED_SPLITS if crop is None else crop
    images = sorted(
        p for p in (stills / "images" / split).iterdir() if p.suffix in (".png", ".jpg")
    )
    if not images:
        raise SystemExit(f"no images in {stills / 'images' / split}: render stills first")
    (out / "images" / split).mkdir(parents=True, exist_ok=True)
    (out / "labels" / split).mkdir(parents=True, exist_ok=True)
    n = 0
    for path in tqdm(images, desc=f"detector {split}", unit="img", disable=None):
        full = cv2.imread(str(path))
        h, w = full.shape[:2]
        boxes = _read_labels(stills / "labels" / split / f"{path.stem}.txt", (w, h))
        small = cv2.resize(
            full, (round(w * DETECT_SCALE), round(h * DETECT_SCALE)), interpolation=cv2.INTER_AREA
        )
        boxes[:, 1:] *= DETECT_SCALE
        sh, sw = small.shape[:2]
        if not crop:
            cv2.imwrite(
                str(out / "images" / split / f"{path.stem}.jpg"),
                small,
                [cv2.IMWRITE_JPEG_QUALITY, 95],
            )
            _write_labels(out / "labels" / split / f"{path.stem}.txt", boxes[:, :], (sw, sh))
            n += 1
            continue
        for k in range(CROPS_PER_IMAGE):
            x0 = int(rng.integers(0, sw - CROP_PX + 1))
            y0 = int(rng.integers(0, sh - CROP_PX + 1))
            piece = small[y0 : y0 + CROP_PX, x0 : x0 + CROP_PX]
            name = f"{path.stem}_{k}"
            cv2.imwrite(
                str(out / "images" / split / f"{name}.jpg"), piece, [cv2.IMWRITE_JPEG_QUALITY, 95]
            )
            _write_labels(
                out / "labels" / split / f"{name}.txt",
                _crop_boxes(boxes, x0, y0, CROP_PX),
                (CROP_PX, CROP_PX),
            )
            n += 1
    return n


def jitter_box(xyxy, rng: np.random.Generator) -> tuple[float, ...]:
    """The box with each edge moved by up to ``BOX_JITTER`` of its size, like a detector's."""
    x1, y1, x2, y2 = xyxy
    w, h = x2 - x1, y2 - y1
    d = rng.uniform(-BOX_JITTER, BOX_JITTER, 4) * np.array([w, h, w, h])
    return x1 + d[0], y1 + d[1], x2 + d[2], y2 + d[3]


def face_split(stills: Path, out: Path, split: str, rng: np.random.Generator) -> int:
    """Face-reader crops (ultralytics classify layout: ``faces/<split>/<class>/*.png``)."""
    rows = [
        json.loads(line) for line in (stills / "truth" / f"{split}.jsonl").read_text().splitlines()
    ]
    for cls in FACE_CLASSES:
        (out / "faces" / split / cls).mkdir(parents=True, exist_ok=True)
    n = 0
    for row in tqdm(rows, desc=f"faces {split}", unit="img", disable=None):
        image = cv2.imread(str(next((stills / "images" / split).glob(f"{row['image']}.*"))))
        for obj in row["objects"]:
            cls = face_class(obj)
            if cls is None:
                continue
            box = jitter_box(obj["xyxy"], rng) if split == "train" else obj["xyxy"]
            crop = crop_square(image, box)
            cv2.imwrite(
                str(out / "faces" / split / cls / f"{row['image']}_{obj['obj_id']}.png"), crop
            )
            n += 1
    return n


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
