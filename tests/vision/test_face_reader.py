"""A face-down box the face-down check reads neither as a sure face nor as a sure back is turned
face up where the face reader surely reads the face the check ranks first (two models
agreeing), and only there."""

from __future__ import annotations

import numpy as np
import pytest

from vision.face_reader import FaceReader
from vision.faces import DOWN_CHECK_CLASSES, FACE_CLASSES, TILE_DOWN
from vision.types import TILE_DOWN as DOWN_BOX
from vision.types import TILE_UP, Detections


class _Fixed:
    """A stand-in model that gives every crop the same probabilities."""

    def __init__(self, classes: tuple[str, ...], probs: dict[str, float]):
        self.probs = np.zeros(len(classes), np.float32)
        for name, p in probs.items():
            self.probs[classes.index(name)] = p
        self.entry, self.calls = {"classes": list(classes)}, 0

    def run(self, tensor: np.ndarray) -> np.ndarray:
        self.calls += len(tensor)
        return np.tile(self.probs, (len(tensor), 1))


def _read(check: dict[str, float], faces: dict[str, float]) -> tuple[Detections, _Fixed]:
    reader = FaceReader(threads=1, check_pips=False, read_dice=False)
    reader.model = _Fixed(FACE_CLASSES, faces)
    reader.down_check = _Fixed(DOWN_CHECK_CLASSES, check)
    box = Detections.from_arrays(np.array([[100, 100, 140, 170]]), np.array([DOWN_BOX]), [0.8])
    return reader(np.full((480, 640, 3), 40, np.uint8), box), reader.model


@pytest.mark.parametrize(
    ("check", "faces", "up"),
    [
        ({"tile_1-4": 0.65, TILE_DOWN: 0.35}, {"tile_1-4": 0.98}, True),  # the two agree
        ({"tile_1-4": 0.65, TILE_DOWN: 0.35}, {"tile_5-6": 0.98}, False),  # on other faces
        ({"tile_1-4": 0.65, TILE_DOWN: 0.35}, {"tile_1-4": 0.8}, False),  # the reader unsure
        ({"tile_1-4": 0.45, TILE_DOWN: 0.4}, {"tile_1-4": 0.98}, True),  # the check unsure
        # a face up among backs, cut with its neighbours' backs (two_rows_wine's woodpile)
        ({TILE_DOWN: 0.62, "tile_1-4": 0.35, "tile_1-1": 0.03}, {"tile_1-4": 0.98}, True),
        ({TILE_DOWN: 0.62, "tile_1-1": 0.35, "tile_1-4": 0.03}, {"tile_1-4": 0.98}, False),
        ({TILE_DOWN: 0.92, "tile_1-4": 0.08}, {"tile_1-4": 0.98}, False),  # a back, surely
    ],
)
def test_a_face_down_box_is_turned_up_where_the_check_and_the_reader_agree(check, faces, up):
    read, _ = _read(check, faces)
    assert bool(read.class_id[0] == TILE_UP) == up
    if up:  # the face reader's probability: the tracker keeps faces read at 0.9 or more
        assert FACE_CLASSES[read.face[0]] == "tile_1-4"
        assert read.face_confidence[0] == pytest.approx(0.98)


def test_the_face_reader_reads_no_face_down_box_the_check_reads_surely():
    _, model = _read({TILE_DOWN: 0.97, "tile_1-4": 0.03}, {"tile_1-4": 0.98})
    assert model.calls == 0
