"""Box geometry, written once: how much boxes overlap (IoU), how much of one box another
covers, and whether boxes touch.

Boxes are ``(N, 4)`` arrays of ``x1, y1, x2, y2`` (xyxy) in pixels; a box with ``x2 <= x1`` or
``y2 <= y1`` is empty. Results are in the boxes' common float type: two float32 sets give
float32 (the detector's boxes stay as the detector made them), integers give float64.
"""

from __future__ import annotations

import numpy as np

# Added to every union by the IoU of the detector's NMS, of AP matching and of the gate's
# duplicate check, as they always were, so their results stay bit for bit; its one effect is
# that a float64 IoU lying exactly on a threshold reads a hair below it.
UNION_EPS = 1e-9


def iou_matrix(a_xyxy: np.ndarray, b_xyxy: np.ndarray, *, eps: float = 0.0) -> np.ndarray:
    """Intersection over union ``(A, B)`` of boxes ``a_xyxy (A, 4)`` and ``b_xyxy (B, 4)``.

    ``eps`` is added to each union (:data:`UNION_EPS` where a caller always added it); a pair
    whose union is still 0 (two empty boxes) has IoU 0.

    >>> iou_matrix(np.array([[0, 0, 2, 2]]), np.array([[1, 0, 3, 2], [5, 5, 6, 6]])).round(3)
    array([[0.333, 0.   ]])
    >>> iou_matrix(np.array([[1, 1, 1, 5]]), np.array([[1, 1, 1, 5]]))
    array([[0.]])
    """
    a_xyxy, b_xyxy = _common_float(a_xyxy, b_xyxy)
    inter = _intersection(a_xyxy, b_xyxy)
    union = _area(a_xyxy)[:, None] + _area(b_xyxy)[None, :] - inter + eps
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def cover_matrix(a_xyxy: np.ndarray, b_xyxy: np.ndarray) -> np.ndarray:
    """Fraction ``(A, B)`` of each box of ``a_xyxy (A, 4)`` that each box of ``b_xyxy (B, 4)``
    covers: their intersection over the ``a`` box's area (0 for an empty ``a`` box).

    >>> cover_matrix(np.array([[1, 1, 2, 2], [0, 0, 4, 4]]), np.array([[0, 0, 4, 2]])).tolist()
    [[1.0], [0.5]]
    """
    a_xyxy, b_xyxy = _common_float(a_xyxy, b_xyxy)
    inter = _intersection(a_xyxy, b_xyxy)
    area = _area(a_xyxy)[:, None]
    return np.divide(inter, area, out=np.zeros_like(inter), where=area > 0)


def touch_matrix(a_xyxy: np.ndarray, b_xyxy: np.ndarray) -> np.ndarray:
    """Whether each box of ``a_xyxy (A, 4)`` meets each box of ``b_xyxy (B, 4)``: ``(A, B)``
    bool. Unlike a positive IoU, boxes that only share an edge or a corner count.

    >>> touch_matrix(np.array([[0, 0, 2, 2]]), np.array([[2, 2, 4, 4], [3, 0, 4, 2]]))
    array([[ True, False]])
    """
    a, b = np.asarray(a_xyxy), np.asarray(b_xyxy)
    return (
        (a[:, None, 0] <= b[None, :, 2])
        & (a[:, None, 2] >= b[None, :, 0])
        & (a[:, None, 1] <= b[None, :, 3])
        & (a[:, None, 3] >= b[None, :, 1])
    )


def _common_float(a_xyxy, b_xyxy) -> tuple[np.ndarray, np.ndarray]:
    a_xyxy, b_xyxy = np.asarray(a_xyxy), np.asarray(b_xyxy)
    dtype = np.result_type(a_xyxy, b_xyxy, np.float32)
    return a_xyxy.astype(dtype, copy=False), b_xyxy.astype(dtype, copy=False)


def _area(xyxy: np.ndarray) -> np.ndarray:
    """``(N,)`` areas; a box with an edge the wrong way round has area 0."""
    wh = np.maximum(xyxy[:, 2:] - xyxy[:, :2], 0)
    return wh[:, 0] * wh[:, 1]


def _intersection(a_xyxy: np.ndarray, b_xyxy: np.ndarray) -> np.ndarray:
    """``(A, B)`` areas of the overlap of each pair."""
    top_left = np.maximum(a_xyxy[:, None, :2], b_xyxy[None, :, :2])
    bottom_right = np.minimum(a_xyxy[:, None, 2:], b_xyxy[None, :, 2:])
    wh = np.maximum(bottom_right - top_left, 0)
    return wh[..., 0] * wh[..., 1]
