"""Dice are read by the die reader (manifest ``dice``) where the manifest lists one, tiles by the
face reader; a die reader with other classes is one clear model error."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from vision.face_reader import FaceReader
from vision.faces import DIE_CLASSES, DIE_TIPPED, FACE_CLASSES
from vision.onnx import MODELS_DIR, ModelError, load_manifest
from vision.types import DIE, TILE_UP, Detections


class _Fixed:
    """A stand-in model that gives every crop the same probabilities."""

    def __init__(self, probs: list[float]):
        self.probs, self.calls = np.array(probs, np.float32), 0

    def run(self, tensor: np.ndarray) -> np.ndarray:
        self.calls += len(tensor)
        return np.tile(self.probs, (len(tensor), 1))


def _detections() -> Detections:
    xyxy = np.array([[100, 100, 160, 130], [300, 300, 318, 318], [400, 300, 418, 318]])
    return Detections.from_arrays(xyxy, np.array([TILE_UP, DIE, DIE]), np.full(3, 0.9))


def test_the_die_reader_reads_the_dice_and_only_the_dice():
    reader = FaceReader(threads=1, check_down=False, check_pips=False, read_dice=False)
    five = [0.0] * len(DIE_CLASSES)
    five[DIE_CLASSES.index("die_5")] = 0.9
    five[DIE_CLASSES.index(DIE_TIPPED)] = 0.1
    image = np.full((480, 640, 3), 90, np.uint8)
    alone = reader(image, _detections())  # no die reader in this stand-in's place yet
    reader.dice = _Fixed(five)
    out = reader(image, _detections())
    assert reader.dice.calls == 2  # the two dice, never the tile
    assert [FACE_CLASSES[f] for f in out.face[1:]] == ["die_5", "die_5"]
    assert np.allclose(out.face_confidence[1:], 0.9)
    assert out.face[0] == alone.face[0] and out.face_confidence[0] == alone.face_confidence[0]


def test_a_die_reader_sure_of_a_tipped_die_reads_it_tipped():
    reader = FaceReader(threads=1, check_down=False, check_pips=False)
    tipped = [0.0] * len(DIE_CLASSES)
    tipped[DIE_CLASSES.index(DIE_TIPPED)], tipped[0] = 0.8, 0.2
    reader.dice = _Fixed(tipped)
    out = reader(np.full((480, 640, 3), 90, np.uint8), _detections())
    assert [FACE_CLASSES[f] for f in out.face[1:]] == [DIE_TIPPED, DIE_TIPPED]


def test_crop_probs_reads_each_kind_with_its_model():
    reader = FaceReader(threads=1, check_down=False)
    reader.dice = _Fixed([1.0, 0, 0, 0, 0, 0, 0])
    crops = np.full((3, 96, 96, 3), 120, np.uint8)
    probs = reader.crop_probs(crops, np.array([True, False, True]))
    assert probs.shape == (3, len(FACE_CLASSES))
    assert probs[[0, 2], FACE_CLASSES.index("die_1")].tolist() == [1.0, 1.0]
    assert probs[[0, 2], len(DIE_CLASSES) :].sum() == 0  # a die is never a tile
    assert np.isclose(probs[1].sum(), 1.0, atol=1e-3)  # the face reader's own


def test_without_a_die_reader_the_face_reader_reads_the_dice(tmp_path):
    manifest = load_manifest()
    manifest.pop("dice", None)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    shutil.copy(MODELS_DIR / manifest["faces"]["file"], tmp_path)
    reader = FaceReader(threads=1, models_dir=tmp_path, check_down=False)
    assert reader.dice is None
    crops = np.full((2, 96, 96, 3), 120, np.uint8)
    assert np.allclose(reader.die_probs(crops), reader.probs(crops))


def test_a_die_reader_with_other_classes_is_one_clear_model_error(tmp_path):
    manifest = load_manifest()
    manifest["dice"] = dict(manifest["faces"])  # 28 classes, not the die reader's 7
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    shutil.copy(MODELS_DIR / manifest["faces"]["file"], tmp_path)
    with pytest.raises(ModelError, match="dice classes"):
        FaceReader(threads=1, models_dir=tmp_path, check_down=False)
