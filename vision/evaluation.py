"""Evaluate the shipped models the way the monitor runs them (ONNX, onnxruntime, numpy).

Used by ``scripts/evaluate_models.py`` (held-out and shifted splits) and by the golden-metric
test (a small fixed set rendered on the fly).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from vision.detector import Detector
from vision.face_reader import FaceReader
from vision.faces import FACE_CLASSES, die_choice
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
    die = np.array([lab.startswith("die") for lab in labels])
    probs = reader.crop_probs(crops, die)
    best = probs.argmax(axis=1)
    if die.any():  # dice read as the monitor reads them (a value unless clearly tipped)
        best[die] = die_choice(probs[die])[0]
    predicted = [FACE_CLASSES[k] for k in best]
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


def video_face_metrics(
    probs: np.ndarray,
    classes: tuple[str, ...],
    labels: list[str],
    min_face_confidence: float,
    min_die_confidence: float,
) -> dict:
    """How a face reader's readings on video crops serve the tracker.

    ``probs (N, C)`` over ``classes``; ``labels`` are class names, ``die_tipped`` for a die not
    lying flat (a reader without that class is right on it when it reads no die value at
    ``min_die_confidence``). Tiles: accuracy, and the share read at ``min_face_confidence``
    (kept) with the accuracy of those. Flat dice: accuracy, kept share and kept accuracy at
    ``min_die_confidence``. Tipped dice: the share taken for a flat die (a value read at
    ``min_die_confidence``): the reading that hides a dice_not_flat.
    """
    best, conf = probs.argmax(axis=1), probs.max(axis=1)
    die = np.array([lab.startswith("die") for lab in labels])
    if die.any() and tuple(classes) == FACE_CLASSES:  # dice read as the monitor reads them
        best[die], conf[die] = die_choice(probs[die])
    predicted = [classes[k] for k in best]
    out: dict = {}
    for kind, threshold in (("tile", min_face_confidence), ("die", min_die_confidence)):
        idx = [i for i, lab in enumerate(labels) if lab.startswith(kind) and lab != "die_tipped"]
        kept = [i for i in idx if conf[i] >= threshold]
        out[kind] = {
            "n": len(idx),
            "accuracy": _share(sum(predicted[i] == labels[i] for i in idx), len(idx)),
            "kept": _share(len(kept), len(idx)),
            "kept_accuracy": _share(sum(predicted[i] == labels[i] for i in kept), len(kept)),
        }
    tipped = [i for i, lab in enumerate(labels) if lab == "die_tipped"]
    taken_flat = sum(
        predicted[i].startswith("die_")
        and predicted[i] != "die_tipped"
        and conf[i] >= min_die_confidence
        for i in tipped
    )
    out["die_tipped"] = {"n": len(tipped), "taken_for_flat": _share(taken_flat, len(tipped))}
    return out


def _share(k: int, n: int) -> float:
    return round(k / n, 4) if n else float("nan")


def median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return float(np.median(times))
