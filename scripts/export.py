"""Export trained weights to ONNX in ``models/`` and record them in ``models/manifest.json``.

    python scripts/export.py detector .cache/runs/detector/weights/best.pt
    python scripts/export.py faces .cache/runs/faces/weights/best.pt

The detector is exported for the whole scaled frame (960x544, batch 1); the face reader with a
dynamic batch of 96x96 crops. Metrics for the model cards come from ``scripts/evaluate_models.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
DETECT_INPUT_WH = (960, 544)
FACE_INPUT_PX = 96


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def export(name: str, weights: Path) -> dict:
    os.environ["YOLO_OFFLINE"] = "1"
    from ultralytics import YOLO

    model = YOLO(str(weights))
    if name == "detector":
        w, h = DETECT_INPUT_WH
        onnx = model.export(
            format="onnx", imgsz=(h, w), dynamic=False, simplify=False, opset=17, batch=1
        )
        entry = {
            "task": "detect",
            "input_wh": [w, h],
            "classes": [model.names[i] for i in range(len(model.names))],
        }
    else:
        onnx = model.export(
            format="onnx", imgsz=FACE_INPUT_PX, dynamic=True, simplify=False, opset=17
        )
        entry = {
            "task": "classify",
            "input_wh": [FACE_INPUT_PX, FACE_INPUT_PX],
            "classes": [model.names[i] for i in range(len(model.names))],
        }
    target = MODELS / f"{name}.onnx"
    MODELS.mkdir(exist_ok=True)
    shutil.copyfile(onnx, target)
    entry.update(
        {
            "file": target.name,
            "sha256": sha256(target),
            "source_weights": str(weights.relative_to(ROOT))
            if weights.is_relative_to(ROOT)
            else str(weights),
        }
    )
    manifest_path = MODELS / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    manifest[name] = entry
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB) sha256 {entry['sha256']}")
    return entry


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Export weights to models/*.onnx")
    p.add_argument("name", choices=["detector", "faces"])
    p.add_argument("weights", type=Path)
    args = p.parse_args(argv)
    export(args.name, args.weights.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
