"""``paigow detect IMAGE... [--json]``: detections and faces for still images.

Every image is read and its size checked (:func:`vision.detector.check_fits`: not too small, not
too thin to letterbox) before any is detected; a bad one is one line naming it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pipeline.cli.common import read_image

CLASS_OUT = {"tile_down": "tile", "tile_up": "tile", "chip": "chip", "die": "die", "hand": "hand"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("detect", help="detect tiles, chips, dice and hands; read faces")
    p.add_argument("images", nargs="+", type=Path, metavar="IMAGE")
    p.add_argument("--json", action="store_true", help="one JSON line per image")
    p.add_argument("--min-confidence", type=float, default=0.25)
    p.add_argument("--threads", type=int, default=2)
    p.set_defaults(func=cmd_detect)


def detection_records(det) -> list[dict]:
    """The JSON records of ``paigow detect`` for one image's detections."""
    from vision.faces import reading
    from vision.types import DETECTOR_CLASSES

    out = []
    for i in range(len(det)):
        name = DETECTOR_CLASSES[det.class_id[i]]
        face = die = None
        if det.face[i] >= 0:
            r = reading(int(det.face[i]), float(det.face_confidence[i]))
            face, die = (r.face, None) if name == "tile_up" else (None, r.die_value)
        out.append(
            {
                "class": CLASS_OUT[name],
                "face_up": {"tile_up": True, "tile_down": False}.get(name),
                "face": face,
                "die_value": die,
                "xyxy": [round(float(v), 1) for v in det.xyxy[i]],
                "obb": None,
                "confidence": round(float(det.confidence[i]), 4),
            }
        )
    return out


def cmd_detect(args: argparse.Namespace) -> int:
    from vision.detector import Detector, DetectorConfig, check_fits
    from vision.face_reader import FaceReader
    from vision.types import Frame

    images = [(p, read_image(p)) for p in args.images]  # every input checked before any work
    detector = Detector(DetectorConfig(min_confidence=args.min_confidence, threads=args.threads))
    for path, image in images:
        try:
            check_fits((image.shape[1], image.shape[0]), detector.model.input_wh)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    reader = FaceReader(threads=args.threads)
    for index, (path, image) in enumerate(images):
        det = reader(image, detector(Frame(str(path), index, 0.0, image)))
        records = detection_records(det)
        h, w = image.shape[:2]
        if args.json:
            print(json.dumps({"image": str(path), "width": w, "height": h, "detections": records}))
            continue
        counts: dict[str, int] = {}
        for r in records:
            counts[r["class"]] = counts.get(r["class"], 0) + 1
        faces = sorted(r["face"] for r in records if r["face"])
        dice = [r["die_value"] for r in records if r["die_value"]]
        print(
            f"{path}: {w}x{h}, "
            + ", ".join(f"{n} {c}" for c, n in sorted(counts.items()))
            + (f"; faces {' '.join(faces)}" if faces else "")
            + (f"; dice {dice}" if dice else "")
        )
    return 0
