"""How the face reader and the face-down check read tiles on viewed stills of each look: the
figures behind the two models' agreement in ``vision.faces.turned_up`` and behind comparing a
face reader with the shipped one (docs/measurements.md, sessions 28 and 33).

    python -m vision.synth.stills --n 40 --split val --randomisation LOOK --out /tmp/st_LOOK
    python scripts/view_stills.py --stills /tmp/st_LOOK --out /tmp/vw_LOOK --splits val
    python scripts/face_up_stills.py /tmp/vw_LOOK ... [--other-models DIR]

Every tile of a still at least 80% visible is cut at its true box, as the monitor cuts a
detection (``crop_square``) in its table view, and given to the reader as a face-down box.
Printed per folder: tile backs turned face up by the check alone (``turned_up`` without the
face reader) and with the two models' agreement, face-up tiles turned up so and with a wrong
face. ``--other-models``: a models folder (its manifest and ONNX files) whose face reader is
set beside the shipped one on the face-up tiles: faces read at 0.9 or more, right / wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np

from vision.face_reader import FaceReader
from vision.faces import FACE_CLASSES, PIP_MIN_EVIDENCE, crop_square, pip_evidence, turned_up

MIN_VISIBILITY = 0.8


def tile_crops(folder: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Crops of the tiles of a viewed stills folder's val split, whether each is face up, and
    its face class."""
    crops, up, faces = [], [], []
    for line in (folder / "truth" / "val.jsonl").read_text().splitlines():
        row = json.loads(line)
        image = cv2.imread(str(next((folder / "images" / "val").glob(row["image"] + ".*"))))
        for obj in row["objects"]:
            if obj["kind"] == "tile" and obj["visibility"] >= MIN_VISIBILITY:
                crops.append(crop_square(image, obj["xyxy"]))
                up.append(obj["face_up"])
                faces.append(FACE_CLASSES.index(f"tile_{obj['face']}"))
    return np.stack(crops), np.array(up), np.array(faces)


def face_up_line(reader: FaceReader, crops, up, faces) -> str:
    check = reader.probs(crops, reader.down_check)
    pips = np.array([pip_evidence(c) >= PIP_MIN_EVIDENCE for c in crops])
    alone, face_a, _ = turned_up(check)
    both, face_b, _ = turned_up(check, reader.probs(crops))
    alone, both = alone & pips, both & pips
    return (
        f"backs {int((~up).sum())}: turned up {int(alone[~up].sum())} -> {int(both[~up].sum())}"
        f" | faces {int(up.sum())}: turned up {int(alone[up].sum())} -> {int(both[up].sum())},"
        f" wrong {int((alone & (face_a != faces))[up].sum())} ->"
        f" {int((both & (face_b != faces))[up].sum())}"
    )


def sure_line(reader: FaceReader, crops, faces) -> str:
    probs = reader.probs(crops)
    best, sure = probs.argmax(axis=1), probs.max(axis=1) >= 0.9
    return f"{int((sure & (best == faces)).sum())}/{int((sure & (best != faces)).sum())}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folders", type=Path, nargs="+", help="scripts/view_stills.py outputs")
    p.add_argument("--other-models", type=Path, help="a models folder to compare readers with")
    args = p.parse_args(argv)
    missing = [f for f in args.folders if not (f / "truth" / "val.jsonl").is_file()]
    if missing:
        print(f"face_up_stills: no truth/val.jsonl in {missing[0]}", file=sys.stderr)
        return 2
    reader = FaceReader()
    other = FaceReader(models_dir=args.other_models) if args.other_models else None
    for folder in args.folders:
        crops, up, faces = tile_crops(folder)
        line = f"{folder.name}: {face_up_line(reader, crops, up, faces)}"
        if other is not None:
            mine, theirs = (sure_line(r, crops[up], faces[up]) for r in (reader, other))
            line += f" | faces read at 0.9, right/wrong: shipped {mine}, other {theirs}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
