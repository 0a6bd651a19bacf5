"""The shipped models against the golden metric file, on a small fixed rendered set."""

import json
from pathlib import Path

import numpy as np
import pytest

from vision.detector import Detector
from vision.evaluation import detection_metrics, face_accuracy
from vision.face_reader import FaceReader
from vision.synth.fixed_set import fixed_set
from vision.types import TILE_DOWN, TILE_UP, Detections

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "models.json"


@pytest.fixture(scope="module")
def rendered():
    golden = json.loads(GOLDEN.read_text())
    return golden, fixed_set(golden["fixed_set"]["n_images"])


@pytest.fixture(scope="module")
def measured(rendered):
    golden, (images, crops, labels) = rendered
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


def _tiles_read_as(images, called: int) -> dict[int, list[tuple[int, int]]]:
    """Every tile of the fixed set given to the monitor's reader as a box of class ``called``:
    (class, face) read, by the tile's true class."""
    reader, read_as = FaceReader(), {TILE_UP: [], TILE_DOWN: []}
    for item in images:
        tiles = np.isin(item.classes, (TILE_UP, TILE_DOWN))
        boxes = Detections.from_arrays(
            item.boxes[tiles], np.full(tiles.sum(), called), np.full(tiles.sum(), 0.9)
        )
        read = reader(item.image, boxes)
        for truth, cls, face in zip(item.classes[tiles], read.class_id, read.face, strict=True):
            read_as[truth].append((cls, face))
    return read_as


def test_the_reader_turns_up_face_up_tiles_called_face_down_and_no_face_down_one(rendered):
    """Every tile of the fixed set given to the reader as a face-down box: the face-up ones
    must come back face up with a face, the face-down ones must stay face down."""
    golden, (images, _, _) = rendered
    read_as = _tiles_read_as(images, TILE_DOWN)
    turned = {k: [cls == TILE_UP and face >= 0 for cls, face in v] for k, v in read_as.items()}
    floors = golden["turned_up"]
    assert np.mean(turned[TILE_UP]) >= floors["face_up_min"], np.mean(turned[TILE_UP])
    assert np.mean(turned[TILE_DOWN]) <= floors["face_down_max"], sum(turned[TILE_DOWN])


def test_the_reader_reads_no_face_on_tile_backs_called_face_up(rendered):
    """Every tile of the fixed set given to the reader as a face-up box: the face-down ones
    must come back with no face (the face-down check reads them as backs), the face-up ones
    with theirs."""
    golden, (images, _, _) = rendered
    read_as = _tiles_read_as(images, TILE_UP)
    unread = {k: [cls == TILE_UP and face < 0 for cls, face in v] for k, v in read_as.items()}
    floors = golden["backs_unread"]
    assert np.mean(unread[TILE_DOWN]) >= floors["face_down_min"], np.mean(unread[TILE_DOWN])
    assert np.mean(unread[TILE_UP]) <= floors["face_up_max"], sum(unread[TILE_UP])
