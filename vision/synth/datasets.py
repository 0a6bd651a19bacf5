"""The detector's and the face reader's datasets, written from rendered stills and frames.

Detector (:func:`detector_split`): training uses random ``CROP_PX`` crops of the scaled frame
(the object scale the monitor sees, a quarter of the cost); val, test and shifted splits keep
whole scaled frames so evaluation sees exactly what the monitor sees. Face reader
(:func:`face_split`, :func:`face_crops`): axis-aligned crops of readable faces cut from the
*full-resolution* frame around their box (as the runtime cuts them from a detection), padded
square, in the ultralytics classify layout (``<folder>/<class>/*``). Labels:
:mod:`vision.synth.labels`. Used by ``scripts/build_datasets.py``, ``scripts/train_gpu.py``
and ``scripts/train_faces_down.py``; nothing here needs ultralytics or torch.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.faces import FACE_CLASSES, crop_square
from vision.synth.labels import (
    DETECT_SCALE,
    MIN_KEPT_FRACTION,
    face_class,
    jitter_box,
    read_labels,
    write_labels,
)

CROP_PX = 416
CROPS_PER_IMAGE = 2
CROPPED_SPLITS = ("train", "val")  # val is used during training, at the training image size
# one crop of an object per this many frames of a rendered round (neighbouring frames are near
# copies); dice are on the felt for a few seconds only
FACE_GAP_FRAMES = {"tile": 36, "die": 3, "die_tipped": 1}

# How the face reader is trained, besides its data and schedule: ultralytics classify
# arguments, shared by ``train_gpu.py faces`` and ``train_faces_down.py train``
FACE_TRAINING = {
    "fliplr": 0.5,
    "flipud": 0.5,
    "hsv_h": 0.3,
    "hsv_s": 0.7,
    "hsv_v": 0.5,
    "erasing": 0.2,
    "scale": 0.25,  # random crops keep 75-100% of the area: both halves of a tile stay in
    "auto_augment": None,
    "patience": 1000,
    "seed": 0,
}


def _crop_boxes(boxes: np.ndarray, x0: int, y0: int, size: int) -> np.ndarray:
    """Boxes shifted into a crop and clipped; those mostly outside are dropped."""
    b = boxes.copy()
    b[:, [1, 3]] -= x0
    b[:, [2, 4]] -= y0
    area = (b[:, 3] - b[:, 1]) * (b[:, 4] - b[:, 2])
    b[:, 1:] = b[:, 1:].clip(0, size)
    kept = (b[:, 3] - b[:, 1]) * (b[:, 4] - b[:, 2])
    return b[kept >= MIN_KEPT_FRACTION * np.maximum(area, 1e-6)]


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
        boxes = read_labels(stills / "labels" / split / f"{path.stem}.txt", (w, h))
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
            write_labels(out / "labels" / split / f"{path.stem}.txt", boxes[:, :], (sw, sh))
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
            write_labels(
                out / "labels" / split / f"{name}.txt",
                _crop_boxes(boxes, x0, y0, CROP_PX),
                (CROP_PX, CROP_PX),
            )
            n += 1
    return n


def face_split(
    stills: Path, out: Path, split: str, rng: np.random.Generator, prefix: str = ""
) -> int:
    """Face-reader crops (ultralytics classify layout: ``faces/<split>/<class>/*.png``) of the
    classes whose name starts with ``prefix`` (``"die_"``: the die reader's)."""
    rows = [
        json.loads(line) for line in (stills / "truth" / f"{split}.jsonl").read_text().splitlines()
    ]
    for cls in FACE_CLASSES:
        if cls.startswith(prefix):
            (out / "faces" / split / cls).mkdir(parents=True, exist_ok=True)
    n = 0
    for row in tqdm(rows, desc=f"faces {split}", unit="img", disable=None):
        image = cv2.imread(str(next((stills / "images" / split).glob(f"{row['image']}.*"))))
        for obj in row["objects"]:
            cls = face_class(obj)
            if cls is None or not cls.startswith(prefix):
                continue
            box = jitter_box(obj["xyxy"], rng) if split == "train" else obj["xyxy"]
            crop = crop_square(image, box)
            cv2.imwrite(
                str(out / "faces" / split / cls / f"{row['image']}_{obj['obj_id']}.png"), crop
            )
            n += 1
    return n


def in_view(view, objects: list[dict]) -> list[dict]:
    """Truth objects with their boxes in the px of ``view`` (a :class:`vision.view.TableView`);
    those the view cuts below ``MIN_KEPT_FRACTION`` dropped."""
    kept = []
    for o in objects:
        got = view.to_view_box(o["xyxy"])
        if got is not None and got[1] >= MIN_KEPT_FRACTION:
            kept.append({**o, "xyxy": got[0]})
    return kept


def face_crops(
    image,
    objects,
    index,
    last_kept,
    rng,
    faces_dir: Path,
    clip: str,
    tile_gap: int | None = None,
    die_gap: int | None = None,
) -> int:
    """Crops of readable faces in one full-resolution frame, one per object every
    ``FACE_GAP_FRAMES`` (a tile every ``tile_gap`` frames, a flat die every ``die_gap``, where
    given), boxes jittered like a detector's; returns the crops written."""
    gaps = {**FACE_GAP_FRAMES, "tile": tile_gap, "die": die_gap}
    gaps = {k: FACE_GAP_FRAMES[k] if v is None else v for k, v in gaps.items()}
    n = 0
    for o in objects:
        cls = face_class(o)
        if cls is None:
            continue
        gap = gaps[cls if cls == "die_tipped" else o["class"]]
        if index - last_kept.get((o["id"], cls), -gap) < gap:
            continue
        last_kept[(o["id"], cls)] = index
        (faces_dir / cls).mkdir(parents=True, exist_ok=True)
        crop = crop_square(image, jitter_box(o["xyxy"], rng))
        cv2.imwrite(
            str(faces_dir / cls / f"{clip}_{index:05d}_{o['id']}.jpg"),
            crop,
            [cv2.IMWRITE_JPEG_QUALITY, 85],
        )
        n += 1
    return n


def unpack_clip(video: Path, dataset: Path, split: str) -> int:
    """Decode one packed clip into YOLO images and labels; returns the frames written."""
    with gzip.open(video.with_suffix(".jsonl.gz"), "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    cap = cv2.VideoCapture(str(video))
    n = 0
    for row in rows:
        ok, image = cap.read()
        if not ok:
            print(f"{video}: ended after {n} of {len(rows)} frames", flush=True)
            break
        name = f"{video.stem}_{row['frame']:05d}"
        jpg = dataset / "images" / split / f"{name}.jpg"
        cv2.imwrite(str(jpg), image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        boxes = np.array(row["boxes"], np.float64).reshape(-1, 5)
        write_labels(dataset / "labels" / split / f"{name}.txt", boxes, tuple(row["wh"]))
        n += 1
    cap.release()
    return n
