"""Detector pre/post-processing in numpy, the detections type, and model-file checks."""

import json

import numpy as np
import pytest

from vision.detector import Letterbox, check_fits, decode, letterbox, nms
from vision.faces import crop_square
from vision.onnx import ModelError, OnnxModel
from vision.types import Detections


def raw_output(boxes_cxcywh, class_scores) -> np.ndarray:
    """A YOLO head output (1, 4 + C, N) from rows of boxes and per-class scores."""
    return np.concatenate(
        [np.asarray(boxes_cxcywh, np.float32), np.asarray(class_scores, np.float32)], axis=1
    ).T[None]


def test_letterbox_pads_centred_and_keeps_aspect():
    img = np.full((540, 960, 3), 200, np.uint8)
    t, lb = letterbox(img, (960, 544))
    assert t.shape == (1, 3, 544, 960) and lb.ratio == 1.0 and lb.pad_xy == (0.0, 2.0)
    assert np.allclose(t[0, :, 0, 0], 114 / 255) and np.allclose(t[0, :, 2, 0], 200 / 255)
    t2, lb2 = letterbox(np.zeros((1080, 1920, 3), np.uint8), (960, 544))
    assert lb2.ratio == 0.5 and t2.shape == (1, 3, 544, 960)


@pytest.mark.parametrize(
    ("image_wh", "message"),
    [((5000, 2), "too small"), ((31, 600), "too small"), ((3000, 96), "too thin")],
)
def test_letterbox_refuses_an_image_it_cannot_fit_in_one_line(image_wh, message):
    with pytest.raises(ValueError, match=message):
        letterbox(np.zeros((image_wh[1], image_wh[0], 3), np.uint8), (960, 544))
    check_fits((32, 32), (960, 544))  # the smallest square passes
    check_fits((960, 32), (960, 544))  # as does the widest strip of the input's width


def test_decode_maps_back_to_frame_pixels_and_filters():
    raw = raw_output([[110, 52, 20, 40], [300, 200, 10, 10]], [[0.1, 0.9], [0.05, 0.1]])
    det = decode(raw, Letterbox(0.5, (10.0, 2.0)), min_confidence=0.25, iou_threshold=0.5)
    assert len(det) == 1 and det.class_id.tolist() == [1]
    # input (100..120, 32..72) minus pad (10, 2), divided by ratio 0.5
    assert det.xyxy[0].tolist() == pytest.approx([180, 60, 220, 140])


def test_nms_is_class_aware_in_decode():
    same = [[50, 50, 20, 20], [51, 50, 20, 20]]
    det = decode(raw_output(same, [[0.9, 0.0], [0.8, 0.0]]), Letterbox(1, (0, 0)), 0.25, 0.5)
    assert len(det) == 1
    det = decode(raw_output(same, [[0.9, 0.0], [0.0, 0.8]]), Letterbox(1, (0, 0)), 0.25, 0.5)
    assert len(det) == 2  # different classes never suppress each other


def test_nms_keeps_neighbours_below_threshold():
    boxes = np.array([[0, 0, 10, 20], [10, 0, 20, 20], [1, 0, 11, 20]], float)
    assert nms(boxes, np.array([0.9, 0.8, 0.7]), 0.6).tolist() == [0, 1]


def test_detections_mask_returns_new_object():
    d = Detections.from_arrays([[0, 0, 1, 1], [2, 2, 3, 3]], [0, 3], [0.5, 0.9])
    sub = d[d.class_id == 3]
    assert len(sub) == 1 and sub.confidence.tolist() == pytest.approx([0.9]) and len(d) == 2
    with pytest.raises(ValueError, match="rows"):
        Detections(d.xyxy, d.class_id[:1], d.confidence, d.face, d.face_confidence)


def test_crop_square_centres_and_pads():
    img = np.zeros((100, 100, 3), np.uint8)
    img[40:60, 45:55] = 255
    crop = crop_square(img, (45, 40, 55, 60), 32)
    assert crop.shape == (32, 32, 3) and crop[16, 16].tolist() == [255, 255, 255]
    assert crop_square(img, (-20, -20, 5, 5), 16).shape == (16, 16, 3)  # off the edge


def test_missing_or_corrupt_models_are_one_clear_line(tmp_path):
    with pytest.raises(ModelError, match=r"manifest\.json: missing"):
        OnnxModel("detector", models_dir=tmp_path)
    (tmp_path / "manifest.json").write_text(
        json.dumps({"detector": {"file": "d.onnx", "sha256": "0" * 64, "input_wh": [960, 544]}})
    )
    with pytest.raises(ModelError, match=r"d\.onnx: model file missing"):
        OnnxModel("detector", models_dir=tmp_path)
    (tmp_path / "d.onnx").write_bytes(b"not a model")
    with pytest.raises(ModelError, match="does not match the manifest"):
        OnnxModel("detector", models_dir=tmp_path)
    with pytest.raises(ModelError, match="no model named 'faces'"):
        OnnxModel("faces", models_dir=tmp_path)


def test_die_box_is_remeasured_on_the_bright_blob():
    from vision.refine import refine_bright_box

    img = np.zeros((200, 200, 3), np.uint8)
    img[:] = (40, 120, 30)  # felt
    img[100:118, 60:78] = (235, 235, 235)  # a die, 18 px
    refined = refine_bright_box(img, np.array([57, 98, 77, 119], np.float32))
    assert refined.tolist() == [60, 100, 78, 118]
    nothing = np.array([150, 20, 168, 38], np.float32)
    assert refine_bright_box(img, nothing).tolist() == nothing.tolist()  # no blob: unchanged


def test_die_box_does_not_leak_into_felt_lettering_beside_it():
    from vision.refine import refine_bright_box

    img = np.zeros((200, 200, 3), np.uint8)
    img[:] = (40, 120, 30)
    img[100:118, 60:78] = (235, 235, 235)  # the die
    img[98:120, 83:85] = (230, 230, 230)  # 2-px strokes of printed lettering ("E")...
    img[98:100, 83:95] = (230, 230, 230)
    img[118:120, 83:95] = (230, 230, 230)
    img[108:110, 78:83] = (230, 230, 230)  # ...touching the die through a thin bridge
    refined = refine_bright_box(img, np.array([58, 99, 79, 119], np.float32))
    assert abs(refined[2] - 78) <= 1  # the right edge stays at the die, not the lettering
    assert abs(refined[0] - 60) <= 1


def test_a_die_reads_tipped_only_when_clearly_tipped_else_its_best_value():
    from vision.faces import DIE_TIPPED, FACE_CLASSES, TIPPED_MIN_PROBABILITY, die_choice

    def probs(**named):
        row = np.zeros(len(FACE_CLASSES))
        for name, p in named.items():
            row[FACE_CLASSES.index(name.replace("__", "-"))] = p
        return row

    rows = np.stack(
        [
            probs(die_tipped=0.49, die_3=0.43, die_5=0.08),  # a flat die showing its sides
            probs(die_tipped=TIPPED_MIN_PROBABILITY + 0.05, die_2=0.25),
            probs(tile_1__1=0.7, die_6=0.2, die_tipped=0.1),  # the detector said die
        ]
    )
    face, conf = die_choice(rows)
    assert [FACE_CLASSES[k] for k in face] == ["die_3", DIE_TIPPED, "die_6"]
    assert np.allclose(conf, [0.43, TIPPED_MIN_PROBABILITY + 0.05, 0.2])
