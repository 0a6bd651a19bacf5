"""Measure the shipped ONNX models on the held-out (test) and shifted splits; latency on 2 cores.

    python scripts/evaluate_models.py --data .cache/datasets --out models/metrics.json

Detection: AP50 and AP50-95 per class on the full-resolution frames, the detector run exactly as
the monitor runs it (scaled to 960x540 for the network, die boxes re-measured at full
resolution). Faces: accuracy on full-resolution crops of face-up tiles at least 70% visible
and of flat dice. Latency: medians, onnxruntime with 2 threads, detector per 1080p frame
(resize + letterbox + inference + decode), face reader per crop.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np

from vision.detector import Detector, DetectorConfig, FaceReader
from vision.evaluation import LabelledImage, detection_metrics, face_accuracy, median_ms
from vision.faces import FACE_INPUT_PX
from vision.types import Frame

LATENCY_REPEATS = 30


def labelled_images(folder: Path, split: str):
    """Full-resolution rendered stills of a split with their YOLO labels, in pixels."""
    for path in sorted((folder / "images" / split).glob("*.jpg")):
        image = cv2.imread(str(path))
        h, w = image.shape[:2]
        lab = folder / "labels" / split / f"{path.stem}.txt"
        a = np.loadtxt(lab, ndmin=2) if lab.read_text().strip() else np.zeros((0, 5))
        cx, cy, bw, bh = a[:, 1] * w, a[:, 2] * h, a[:, 3] * w, a[:, 4] * h
        boxes = np.column_stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2])
        yield LabelledImage(image, boxes, a[:, 0].astype(int))


def face_crops(folder: Path, split: str) -> tuple[np.ndarray, list[str]]:
    crops, labels = [], []
    for cls_dir in sorted((folder / "faces" / split).iterdir()):
        for path in sorted(cls_dir.glob("*.png")):
            img = cv2.imread(str(path))
            crops.append(cv2.resize(img, (FACE_INPUT_PX, FACE_INPUT_PX)))
            labels.append(cls_dir.name)
    return np.stack(crops), labels


def latency(detector: Detector, reader: FaceReader, sample: Path) -> dict:
    frame = Frame("bench", 0, 0.0, cv2.imread(str(sample)))
    detector(frame)  # warm-up
    crop = np.zeros((1, FACE_INPUT_PX, FACE_INPUT_PX, 3), np.uint8)
    reader.probs(crop)
    return {
        "detector_ms_per_1080p_frame": median_ms(lambda: detector(frame), LATENCY_REPEATS),
        "face_reader_ms_per_crop": median_ms(lambda: reader.probs(crop), LATENCY_REPEATS),
        "threads": detector.config.threads,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=Path(".cache/datasets"), help="face crops")
    p.add_argument(
        "--stills",
        type=Path,
        default=Path(".cache/synth/stills"),
        help="full-resolution rendered stills with labels",
    )
    p.add_argument("--out", type=Path, default=Path("models/metrics.json"))
    args = p.parse_args(argv)
    detector, reader = Detector(DetectorConfig(threads=2)), FaceReader(threads=2)
    result: dict = {}
    for split in ("test", "shifted"):
        det = detection_metrics(detector, labelled_images(args.stills, split))
        crops, labels = face_crops(args.data, split)
        result[split] = {"detection": det, "faces": face_accuracy(reader, crops, labels)}
        d = det["all"]
        f = result[split]["faces"]
        print(
            f"{split}: mAP50 {d['ap50']:.3f} mAP50-95 {d['ap50_95']:.3f} | "
            + " ".join(
                f"{c} {v['ap50']:.3f}/{v['ap50_95']:.3f}" for c, v in det.items() if c != "all"
            )
            + f" | tiles {f['tile']['accuracy']:.4f} (n={f['tile']['n']}) "
            f"dice {f['die']['accuracy']:.4f} (n={f['die']['n']})"
        )
    sample = next((args.stills / "images" / "test").glob("*.jpg"))
    result["latency"] = latency(detector, reader, sample)
    print(f"latency (median, 2 threads): {result['latency']}")
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
