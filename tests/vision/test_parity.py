"""The ONNX detector (onnxruntime + numpy decode/NMS) agrees with ultralytics' own prediction:
the float export and its int8 quantization (``scripts/quantize.py``), which the monitor runs.

ultralytics' predictions on ``tests/data/parity`` are recorded by ``scripts/parity_dump.py``
from the training weights the shipped ONNX file was exported from.
"""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.detector import Detector, DetectorConfig, decode, letterbox
from vision.geometry import UNION_EPS, iou_matrix

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "golden" / "parity_ultralytics.json"
MIN_IOU = 0.9
CLEAR_CONFIDENCE = 0.35  # detections near the threshold may fall either side of it


def _match(a_xyxy, a_cls, a_conf, b_xyxy, b_cls) -> list[bool]:
    iou = np.zeros((len(a_xyxy), 0))
    if len(a_xyxy) and len(b_xyxy):
        iou = iou_matrix(a_xyxy, b_xyxy, eps=UNION_EPS)
    same = a_cls[:, None] == b_cls[None, :]
    return [
        bool(((iou[i] > MIN_IOU) & same[i]).any())
        for i in range(len(a_xyxy))
        if a_conf[i] >= CLEAR_CONFIDENCE
    ]


@pytest.mark.parametrize("model", ["detector", "detector_int8"])
def test_onnx_matches_ultralytics(model):
    record = json.loads(RECORD.read_text())
    detector = Detector(
        DetectorConfig(min_confidence=record["conf"], iou_threshold=record["iou"], model=model)
    )
    matched_ours, matched_theirs = [], []
    for name, theirs in record["images"].items():
        image = cv2.imread(str(ROOT / "data" / "parity" / name))
        tensor, lb = letterbox(image, detector.model.input_wh)
        h, w = image.shape[:2]
        ours = decode(detector.model.run(tensor), lb, record["conf"], record["iou"], (w, h))
        t_xyxy = np.array(theirs["xyxy"], float).reshape(-1, 4)
        t_cls, t_conf = np.array(theirs["class_id"]), np.array(theirs["confidence"])
        matched_theirs += _match(t_xyxy, t_cls, t_conf, ours.xyxy, ours.class_id)
        matched_ours += _match(ours.xyxy, ours.class_id, ours.confidence, t_xyxy, t_cls)
    assert len(matched_theirs) >= 20, "too few detections to compare"
    assert all(matched_theirs), f"{matched_theirs.count(False)} ultralytics boxes unmatched"
    assert all(matched_ours), f"{matched_ours.count(False)} ONNX boxes unmatched"
