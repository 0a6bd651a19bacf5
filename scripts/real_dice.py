"""Read the dice of real photographs with the monitor's face reader, shrunk to ceiling-camera sizes.

    python scripts/real_dice.py                        # the check part, default sizes
    python scripts/real_dice.py --part all --out /tmp/real_dice.json

Data: ``../shared/real/dice`` beside the repository (``--data`` to point elsewhere; see
``../shared/real/README.md``): 310 phone photographs (640x480) of white dice with black pips,
YOLO labels ``class xc yc w h`` (normalised; classes 0..5 are the values 1..6), each box around
the die's top face. The photographs are never copied into the repository.

Split rule (fixed: a training recipe that uses these photographs must leave the check part
out): a photograph is in the ``check`` part when the first byte of the sha256 of its file stem
(UTF-8, e.g. ``"dice_1"``) is under 77 (about 30%), else in the ``train`` part. The check part
is never trained on, nor is anything tuned on it; figures on it are the ones to report.

Sizes: a die's top face spans ``S`` px. The renderer's ceiling camera gives a 16 mm die
16-18 px at 1080p (``vision.synth``: 1.0-1.12 px per mm); issue 19's cameras put a tile's long
side (63.5 mm) at 35-120 px at 1080p, so a die at 9-30 px. For each labelled die and each ``S``
the whole photograph is shrunk (``cv2.INTER_AREA``, integrating as a camera's pixels do) so the
die's box has a long side of ``S`` px, and the die is read exactly as the monitor reads one: the
face reader (``vision.face_reader.FaceReader``) on a die detection with that box, which cuts the
crop with ``vision.faces.crop_square`` and chooses the reading with ``vision.faces.die_choice``.
A die is read right when the value is its label's at the tracker's ``min_die_confidence`` or
more; unread when its value's probability is under that; tipped when it reads ``die_tipped``.
A die smaller than ``S`` in the photograph is skipped at that size (it is not enlarged).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.face_reader import FaceReader
from vision.faces import DIE_TIPPED, FACE_CLASSES, FACE_INPUT_PX, crop_square
from vision.onnx import MODELS_DIR, ModelError
from vision.synth.labels import BOX_JITTER
from vision.tracking.config import TrackerConfig
from vision.types import DIE, Detections

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "real" / "dice"
CHECK_FIRST_BYTE_BELOW = 77  # of sha256(stem): 77/256 = 30% of photographs are the check part
PARTS = ("check", "train")
DEFAULT_SIZES = (9, 12, 16, 18, 24, 30)  # px of a die's top face at 1080p (module docstring)
VALUES = range(1, 7)
OUTCOMES = ("right", "wrong", "unread", "tipped")
TIPPED = FACE_CLASSES.index(DIE_TIPPED)


class DataError(ValueError):
    """Photographs or labels that cannot be used: one line for the user."""


@dataclass(frozen=True)
class Photo:
    """A photograph and its labelled dice: ``values (N,)`` 1-6, ``boxes (N, 4)`` normalised
    ``xc yc w h``."""

    path: Path
    values: np.ndarray
    boxes: np.ndarray


def part_of(stem: str) -> str:
    """``"check"`` or ``"train"`` for a photograph's file stem (the module's split rule).

    >>> part_of("dice_1"), part_of("two_7")
    ('train', 'check')
    """
    first = hashlib.sha256(stem.encode("utf-8")).digest()[0]
    return "check" if first < CHECK_FIRST_BYTE_BELOW else "train"


def split(stems) -> dict[str, list[str]]:
    """The stems of each part, sorted."""
    out: dict[str, list[str]] = {part: [] for part in PARTS}
    for stem in sorted(stems):
        out[part_of(stem)].append(stem)
    return out


def photo_folder(data: Path) -> Path:
    """The folder of the photographs: ``data/train`` when there is one, else ``data``."""
    folder = data / "train" if (data / "train").is_dir() else data
    if not folder.is_dir():
        raise DataError(
            f"{data}: no such folder (the real dice photographs, ../shared/real/README.md; "
            "--data to point elsewhere)"
        )
    if not any(folder.glob("*.jpg")):
        raise DataError(f"{folder}: no .jpg photographs")
    return folder


def read_labels(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """``values (N,)`` 1-6 and normalised boxes ``(N, 4)`` from a YOLO label file; DataError
    for a missing file or a malformed line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read the label file ({exc})") from None
    values, boxes = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        try:
            cls, box = int(fields[0]), [float(v) for v in fields[1:]]
        except ValueError:
            cls, box = -1, []
        ok = len(box) == 4 and 0 <= cls < len(VALUES) and all(0 <= v <= 1 for v in box)
        if not ok or box[2] <= 0 or box[3] <= 0:
            raise DataError(
                f"{path}:{n}: malformed label {line.strip()!r} (expected 'class xc yc w h', "
                "class 0..5, the rest normalised to 0..1)"
            )
        values.append(cls + 1)
        boxes.append(box)
    return np.array(values, np.int64), np.array(boxes, np.float64).reshape(-1, 4)


def load_photos(folder: Path, stems) -> list[Photo]:
    photos = []
    for stem in stems:
        values, boxes = read_labels(folder / f"{stem}.txt")
        photos.append(Photo(folder / f"{stem}.jpg", values, boxes))
    return photos


def read_photo(photo: Photo) -> tuple[np.ndarray, np.ndarray]:
    """The photograph and its dice boxes ``(N, 4)`` xyxy in its pixels; DataError when the file
    is no image."""
    image = cv2.imread(str(photo.path))
    if image is None:
        raise DataError(f"{photo.path}: cannot be read as an image")
    h, w = image.shape[:2]
    xc, yc, bw, bh = (photo.boxes[:, i] * s for i, s in enumerate((w, h, w, h)))
    return image, np.column_stack([xc - bw / 2, yc - bh / 2, xc + bw / 2, yc + bh / 2])


def shrunk(image: np.ndarray, box_xyxy: np.ndarray, size: int):
    """The whole image shrunk so the box's long side is ``size`` px, and the box in it; None
    when the box is already smaller (a die is not enlarged)."""
    h, w = image.shape[:2]
    span = float(max(box_xyxy[2] - box_xyxy[0], box_xyxy[3] - box_xyxy[1]))
    if span < size:
        return None
    new_w, new_h = max(1, round(w * size / span)), max(1, round(h * size / span))
    if (new_w, new_h) == (w, h):
        return image, box_xyxy.astype(np.float32)
    small = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_AREA)
    scale = np.array([new_w / w, new_h / h, new_w / w, new_h / h])
    return small, (box_xyxy * scale).astype(np.float32)


def outcome(face: int, confidence: float, value: int, min_confidence: float) -> str:
    """How a die reading serves the tracker: right, wrong, unread or tipped.

    >>> outcome(FACE_CLASSES.index("die_3"), 0.9, 3, 0.3), outcome(TIPPED, 0.8, 3, 0.3)
    ('right', 'tipped')
    """
    if face == TIPPED:
        return "tipped"
    if confidence < min_confidence:
        return "unread"
    return "right" if FACE_CLASSES[face] == f"die_{value}" else "wrong"


def read_name(face: int, confidence: float, min_confidence: float) -> str:
    """The reading as the tracker would take it: a value ``"1"``-``"6"``, tipped or unread."""
    if face == TIPPED:
        return "tipped"
    if confidence < min_confidence:
        return "unread"
    return FACE_CLASSES[face].removeprefix("die_")


def measure(
    photos: list[Photo],
    sizes,
    reader: FaceReader,
    min_confidence: float,
    crops_dir: Path | None = None,
) -> dict:
    """Per size: counts of each outcome, skipped dice, accuracy (right / read dice), the
    confusion of labels against readings, and every die not read right."""
    stats = {
        size: {
            "n": 0,
            **dict.fromkeys(OUTCOMES, 0),
            "skipped": 0,
            "confusion": {str(v): {} for v in VALUES},
            "failures": [],
        }
        for size in sizes
    }
    for photo in photos:
        image, xyxy = read_photo(photo)
        for i, value in enumerate(photo.values.tolist()):
            for size in sizes:
                s = stats[size]
                cut = shrunk(image, xyxy[i], size)
                if cut is None:
                    s["skipped"] += 1
                    continue
                small, box = cut
                det = reader(small, Detections.from_arrays(box[None], [DIE], [1.0]))
                face, conf = int(det.face[0]), float(det.face_confidence[0])
                result = outcome(face, conf, value, min_confidence)
                read = read_name(face, conf, min_confidence)
                s["n"] += 1
                s[result] += 1
                row = s["confusion"][str(value)]
                row[read] = row.get(read, 0) + 1
                if result == "right":
                    continue
                s["failures"].append(
                    {
                        "photo": photo.path.stem,
                        "die": i,
                        "value": value,
                        "read": FACE_CLASSES[face],
                        "confidence": round(conf, 4),
                    }
                )
                if crops_dir is not None:
                    crop = crop_square(small, box, FACE_INPUT_PX)
                    name = f"{size}px_{photo.path.stem}_{i}_v{value}_{read}.png"
                    cv2.imwrite(str(crops_dir / name), crop)
    for s in stats.values():
        s["accuracy"] = round(s["right"] / s["n"], 4) if s["n"] else None
    return {str(size): s for size, s in stats.items()}


def training_crops(
    photos: list[Photo], sizes, out: Path, jitters: int, seed: int = 0
) -> dict[int, int]:
    """Face-reader training crops of the photographs' dice (the train part only): for each die,
    size and jitter, the photograph shrunk so the die spans ``size`` px, the box's edges moved by
    up to ``BOX_JITTER`` of its size (as a detector's boxes wander), cut as the monitor cuts a
    die (``crop_square``), written to ``out/die_<value>/``. Returns the count per value."""
    rng, counts = np.random.default_rng(seed), dict.fromkeys(VALUES, 0)
    for value in VALUES:
        (out / f"die_{value}").mkdir(parents=True, exist_ok=True)
    for photo in photos:
        if part_of(photo.path.stem) != "train":
            raise DataError(f"{photo.path.stem}: a check photograph is never trained on")
        image, xyxy = read_photo(photo)
        for i, value in enumerate(photo.values.tolist()):
            for size in sizes:
                cut = shrunk(image, xyxy[i], size)
                if cut is None:
                    continue
                small, box = cut
                span = np.array([box[2] - box[0], box[3] - box[1]] * 2, np.float32)
                for j in range(jitters):
                    moved = box + rng.uniform(-BOX_JITTER, BOX_JITTER, 4) * span
                    crop = crop_square(small, moved, FACE_INPUT_PX)
                    name = f"real_{photo.path.stem}_{i}_{size}px_{j}.png"
                    cv2.imwrite(str(out / f"die_{value}" / name), crop)
                    counts[value] += 1
    return counts


def table(results: dict) -> str:
    head = f"{'size_px':>7} {'n':>5} " + " ".join(f"{k:>6}" for k in (*OUTCOMES, "skipped"))
    lines = [head + f" {'accuracy':>8}"]
    for size, s in results.items():
        counts = " ".join(f"{s[k]:>6}" for k in (*OUTCOMES, "skipped"))
        acc = "-" if s["accuracy"] is None else f"{s['accuracy']:.4f}"
        lines.append(f"{size:>7} {s['n']:>5} {counts} {acc:>8}")
    return "\n".join(lines)


def outside_repo(path: Path) -> Path:
    """``path``, created; DataError when it is inside the repository (never commit photos)."""
    resolved = path.resolve()
    if resolved == ROOT or ROOT in resolved.parents:
        raise DataError(f"{path}: must be outside the repository (photos are never kept)")
    resolved.mkdir(parents=True, exist_ok=True)
    return resolved


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder of the photographs (or its train/)"
    )
    p.add_argument("--part", choices=(*PARTS, "all"), default="check")
    p.add_argument(
        "--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES), help="die spans in px"
    )
    p.add_argument("--limit", type=int, help="only the part's first N photographs (by name)")
    p.add_argument("--out", type=Path, help="write the figures as JSON")
    p.add_argument("--crops", type=Path, help="write the crops not read right here (PNG)")
    p.add_argument(
        "--training-crops",
        type=Path,
        metavar="DIR",
        help="write face-reader training crops of the train part here (outside the repository) "
        "instead of reading the dice",
    )
    p.add_argument("--jitters", type=int, default=2, help="training crops per die and size")
    p.add_argument("--models", type=Path, default=MODELS_DIR, help="folder of the models")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime threads")
    args = p.parse_args(argv)
    if any(size < 1 for size in args.sizes):
        p.error("--sizes must be positive")
    try:
        folder = photo_folder(args.data)
        parts = split(path.stem for path in folder.glob("*.jpg"))
        stems = parts[args.part] if args.part != "all" else sorted(parts["check"] + parts["train"])
        stems = stems[: args.limit] if args.limit is not None else stems
        photos = load_photos(folder, stems)
        if args.training_crops:
            if args.part != "train":
                raise DataError("--training-crops takes the train part only (--part train)")
            counts = training_crops(
                photos, sorted(set(args.sizes)), outside_repo(args.training_crops), args.jitters
            )
            print(f"{args.training_crops}: {sum(counts.values())} crops, per value {counts}")
            return 0
        crops_dir = outside_repo(args.crops) if args.crops else None
        reader = FaceReader(threads=args.threads, models_dir=args.models, check_down=False)
        min_confidence = TrackerConfig().min_die_confidence
        results = measure(photos, sorted(set(args.sizes)), reader, min_confidence, crops_dir)
    except (DataError, ModelError) as exc:
        print(f"real_dice: {exc}", file=sys.stderr)
        return 2
    n_dice = sum(len(ph.values) for ph in photos)
    print(
        f"{folder}: {sum(map(len, parts.values()))} photographs, check {len(parts['check'])}, "
        f"train {len(parts['train'])}"
    )
    print(
        f"part {args.part}: {len(photos)} photographs, {n_dice} dice; read right = the label's "
        f"value at min_die_confidence {min_confidence} or more"
    )
    print(table(results))
    if args.out:
        report = {
            "data": str(folder),
            "split": {part: len(parts[part]) for part in PARTS},
            "part": args.part,
            "photos": [ph.path.stem for ph in photos],
            "dice": n_dice,
            "min_die_confidence": min_confidence,
            "sizes": results,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
