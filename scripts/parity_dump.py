"""Record ultralytics' own predictions on the parity images, for the ONNX parity test.

    python scripts/parity_dump.py .cache/runs/detector/weights/best.pt

Writes ``tests/golden/parity_ultralytics.json``: per image in ``tests/data/parity/``, the boxes,
classes and confidences ultralytics predicts with the same input size and thresholds as the
monitor's ONNX detector. The test (``tests/vision/test_parity.py``) runs the ONNX path on the
same images and matches the two.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "tests" / "data" / "parity"
OUT = ROOT / "tests" / "golden" / "parity_ultralytics.json"
INPUT_HW = (544, 960)
CONF, IOU = 0.25, 0.6


def main(argv: list[str] | None = None) -> int:
    os.environ["YOLO_OFFLINE"] = "1"
    from ultralytics import YOLO

    weights = Path((argv or sys.argv[1:])[0])
    model = YOLO(str(weights))
    records = {}
    for path in sorted(IMAGES.glob("*.jpg")):
        r = model.predict(
            str(path), imgsz=INPUT_HW, conf=CONF, iou=IOU, verbose=False, device="cpu"
        )[0]
        records[path.name] = {
            "xyxy": r.boxes.xyxy.numpy().round(2).tolist(),
            "class_id": r.boxes.cls.numpy().astype(int).tolist(),
            "confidence": r.boxes.conf.numpy().round(4).tolist(),
        }
    OUT.write_text(
        json.dumps(
            {
                "weights": weights.name,
                "imgsz": INPUT_HW,
                "conf": CONF,
                "iou": IOU,
                "images": records,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {OUT} ({sum(len(v['xyxy']) for v in records.values())} boxes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
