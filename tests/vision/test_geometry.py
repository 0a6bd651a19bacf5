"""Box geometry (vision.geometry): IoU, cover and touch on boxes whose answers are known."""

import numpy as np
import pytest

from vision.geometry import UNION_EPS, cover_matrix, iou_matrix, touch_matrix

UNIT = [0, 0, 2, 2]


@pytest.mark.parametrize(
    ("other", "iou"),
    [
        (UNIT, 1.0),  # the same box
        ([1, 0, 3, 2], 1 / 3),  # half of each overlaps: 2 / (4 + 4 - 2)
        ([0, 0, 1, 1], 0.25),  # a quarter of it, inside it
        ([2, 0, 4, 2], 0.0),  # sharing an edge only
        ([5, 5, 7, 7], 0.0),  # apart
        ([1, 1, 1, 1], 0.0),  # a point inside it
    ],
)
def test_iou_of_known_boxes(other, iou):
    assert iou_matrix(np.array([UNIT]), np.array([other]))[0, 0] == pytest.approx(iou)


def test_iou_is_symmetric_and_within_zero_and_one():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 50, (20, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(0, 20, (20, 2))], axis=1)
    iou = iou_matrix(boxes[:12], boxes[8:])
    assert np.array_equal(iou, iou_matrix(boxes[8:], boxes[:12]).T)
    assert ((iou >= 0) & (iou <= 1)).all()
    assert np.allclose(np.diag(iou_matrix(boxes, boxes)), 1.0)


def test_cover_of_a_box_inside_another_is_one_and_the_other_way_the_area_ratio():
    inner, outer = np.array([[2, 2, 4, 3]]), np.array([[0, 0, 10, 10]])
    assert cover_matrix(inner, outer)[0, 0] == 1.0
    assert cover_matrix(outer, inner)[0, 0] == pytest.approx(2 / 100)


def test_empty_boxes_give_zero_without_dividing_by_zero():
    empty = np.array([[3, 3, 3, 8], [4, 4, 4, 4]], float)
    with np.errstate(all="raise"):
        assert not iou_matrix(empty, empty).any()
        assert not cover_matrix(empty, np.array([[0, 0, 10, 10]])).any()
    assert iou_matrix(np.zeros((0, 4)), empty).shape == (0, 2)


def test_float32_boxes_stay_float32_and_integers_become_float64():
    boxes = np.array([[0, 0, 2, 2], [1, 0, 3, 2]])
    assert iou_matrix(boxes.astype(np.float32), boxes.astype(np.float32)).dtype == np.float32
    assert iou_matrix(boxes, boxes.astype(np.float32)).dtype == np.float64
    assert cover_matrix(boxes, boxes).dtype == np.float64


def test_union_eps_puts_an_iou_on_a_threshold_just_below_it():
    """NMS and AP matching add UNION_EPS (as they always did): two boxes at IoU exactly 0.5
    read as 0.5 without it and a hair below with it."""
    a, b = np.array([UNIT], float), np.array([[0, 0, 2, 1]], float)
    assert iou_matrix(a, b)[0, 0] == 0.5
    assert 0.5 - 1e-9 < iou_matrix(a, b, eps=UNION_EPS)[0, 0] < 0.5


def test_touch_counts_shared_edges_and_corners_but_not_gaps():
    others = np.array([[2, 0, 4, 2], [2, 2, 3, 3], [2.5, 0, 4, 2], [1, 1, 1.5, 1.5]])
    assert touch_matrix(np.array([UNIT]), others).tolist() == [[True, True, False, True]]
    assert touch_matrix(np.array([UNIT]), np.zeros((0, 4))).shape == (1, 0)
