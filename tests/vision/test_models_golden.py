"""The shipped models against the golden metric file, on a small fixed rendered set."""

import json
from pathlib import Path

import pytest

from vision.detector import Detector, FaceReader
from vision.evaluation import detection_metrics, face_accuracy
from vision.synth.fixed_set import fixed_set

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "models.json"


@pytest.fixture(scope="module")
def measured():
    golden = json.loads(GOLDEN.read_text())
    images, crops, labels = fixed_set(golden["fixed_set"]["n_images"])
    det = detection_metrics(Detector(), images)
    faces = face_accuracy(FaceReader(), crops, labels)
    return golden, det, faces


def test_detection_meets_the_golden_metrics(measured):
    golden, det, _ = measured
    for cls, floors in golden["detection_min"].items():
        for metric, floor in floors.items():
            assert det[cls][metric] >= floor, f"{cls} {metric} {det[cls][metric]:.3f} < {floor}"


def test_face_reading_meets_the_golden_metrics(measured):
    golden, _, faces = measured
    for kind, floor in golden["face_accuracy_min"].items():
        assert faces[kind]["accuracy"] >= floor, (kind, faces[kind])
