"""Detection AP: found boxes score 1, a class with truth but no prediction scores 0."""

import numpy as np

from vision.metrics import DetectionEvaluator


def test_ap_is_one_when_found_and_zero_when_a_class_is_never_predicted():
    ev = DetectionEvaluator(("tile", "die"))
    truth = np.array([[0, 0, 10, 20], [50, 50, 60, 60]], float)
    ev.add(truth[:1], np.array([0]), np.array([0.9]), truth, np.array([0, 1]))
    out = ev.summary()
    assert out["tile"]["ap50"] == 1.0 and out["die"]["ap50"] == 0.0
    assert out["die"]["instances"] == 1 and out["all"]["ap50"] == 0.5
