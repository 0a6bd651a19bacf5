"""Export trained weights to ONNX in ``models/`` and record them in ``models/manifest.json``.

    python scripts/export.py detector .cache/runs/detector/weights/best.pt
    python scripts/export.py faces .cache/runs/faces/weights/best.pt
    python scripts/export.py faces_down .cache/faces_down/runs/faces_down/weights/best.pt
    python scripts/export.py dice .cache/runs/dice/weights/best.pt

The detector is exported with batch 1 and a free input height and width (multiples of 32): the
whole scaled frame (960x544, the manifest's ``input_wh``) for a full detection, and regions of it
for the motion-gated detector (:mod:`vision.gating`, ``Detector.detect_region``); on the whole
frame it gives the same output as a fixed 960x544 export. The face reader and the die reader
(``datasets/recipes/train_dice.yaml``) are exported with a dynamic batch of 96x96 crops. The
export runs on a temporary copy of the weights, so nothing is written beside them. Metrics for
the model cards come from ``scripts/evaluate_models.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
DETECT_INPUT_WH = (960, 544)
FACE_INPUT_PX = 96


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def trained_felts(families: list[str]) -> list[list[int]]:
    """The felts a detector learnt: the training randomisation's and those of ``families``."""
    from vision.synth.config import TRAINING, look_family

    felts = [list(f) for f in TRAINING.table.felt_bgr]
    for name in families:
        felts += [list(f) for f in look_family(name).table.felt_bgr if list(f) not in felts]
    return felts


def trained_backs(families: list[str]) -> list[list[int]]:
    """The tile backs a detector learnt: the training randomisation's and those of
    ``families``."""
    from vision.synth.config import TRAINING, look_family

    backs = [list(b) for b in TRAINING.objects.tile_body_bgr]
    for name in families:
        found = look_family(name).objects.tile_body_bgr
        backs += [list(b) for b in found if list(b) not in backs]
    return backs


def _export_onnx(
    name: str, weights: Path, work: Path, families: list[str] | None = None
) -> tuple[Path, dict]:
    """Export a copy of ``weights`` in ``work``; the ONNX path and the manifest fields."""
    os.environ["YOLO_OFFLINE"] = "1"
    from ultralytics import YOLO

    copy = work / weights.name
    shutil.copyfile(weights, copy)
    model = YOLO(str(copy))
    classes = [model.names[i] for i in range(len(model.names))]
    if name == "detector":
        w, h = DETECT_INPUT_WH
        # dynamic: batch, height and width named; the detector keeps batch 1
        onnx = model.export(format="onnx", imgsz=(h, w), dynamic=True, simplify=False, opset=17)
        entry = {"task": "detect", "input_wh": [w, h], "free_input_size": True}
        # the felts it learnt (the training randomisation's and its look families'):
        # vision.felt shows it others as the nearest of these
        entry["felts_bgr"] = trained_felts(families or [])
        entry["backs_bgr"] = trained_backs(families or [])  # and its tile backs
        if families:
            entry["look_families"] = list(families)
    else:
        onnx = model.export(
            format="onnx", imgsz=FACE_INPUT_PX, dynamic=True, simplify=False, opset=17
        )
        entry = {"task": "classify", "input_wh": [FACE_INPUT_PX, FACE_INPUT_PX]}
    return Path(onnx), entry | {"classes": classes}


def export(name: str, weights: Path, families: list[str] | None = None) -> dict:
    target = MODELS / f"{name}.onnx"
    MODELS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="export-") as work:
        onnx, entry = _export_onnx(name, weights, Path(work), families)
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
    p.add_argument("name", choices=["detector", "faces", "faces_down", "dice"])
    p.add_argument("weights", type=Path)
    p.add_argument(
        "--families",
        nargs="*",
        default=[],
        help="look families the weights were trained on (their felts join the manifest's)",
    )
    args = p.parse_args(argv)
    export(args.name, args.weights.resolve(), args.families)
    return 0


if __name__ == "__main__":
    sys.exit(main())
