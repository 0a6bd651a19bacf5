"""Evaluate the shipped models the way the monitor runs them (ONNX, onnxruntime, numpy).

Used by ``scripts/evaluate_models.py`` (held-out and shifted splits) and by the golden-metric
test (a small fixed set rendered on the fly).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from vision.detector import Detector, FaceReader
from vision.faces import FACE_CLASSES
from vision.metrics import DetectionEvaluator
from vision.types import DETECTOR_CLASSES


@dataclass(frozen=True)
class LabelledImage:
    """A full-resolution frame with ground truth ``boxes (N, 4)`` xyxy px and ``classes``."""

    image: np.ndarray
    boxes: np.ndarray
    classes: np.ndarray


EVAL_MIN_CONFIDENCE = 0.001  # AP integrates over every confidence


def detection_metrics(detector: Detector, images: Iterable[LabelledImage]) -> dict:
    """AP50 and AP50-95 per class, the detector run exactly as the monitor runs it."""
    ev = DetectionEvaluator(DETECTOR_CLASSES)
    for item in images:
        det = detector.detect(item.image, min_confidence=EVAL_MIN_CONFIDENCE)
        ev.add(det.xyxy, det.class_id, det.confidence, item.boxes, item.classes)
    return ev.summary()


def face_accuracy(reader: FaceReader, crops: np.ndarray, labels: list[str]) -> dict:
    """Accuracy of tile faces and die values on square crops with class-name labels."""
    probs = reader.probs(crops)
    predicted = [FACE_CLASSES[k] for k in probs.argmax(axis=1)]
    out = {}
    for kind in ("tile", "die"):
        idx = [i for i, lab in enumerate(labels) if lab.startswith(kind)]
        right = sum(predicted[i] == labels[i] for i in idx)
        out[kind] = {
            "accuracy": right / len(idx) if idx else float("nan"),
            "n": len(idx),
            "errors": [(labels[i], predicted[i]) for i in idx if predicted[i] != labels[i]][:20],
        }
    return out


def median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return float(np.median(times))
