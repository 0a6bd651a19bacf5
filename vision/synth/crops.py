"""Upright crops from oriented boxes, for face-reader training data.

>>> img = np.zeros((100, 100, 3), np.uint8)
>>> quad = np.array([[10, 10], [30, 10], [30, 60], [10, 60]], float)
>>> upright_crop(img, quad, (64, 160)).shape
(160, 64, 3)
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True, slots=True)
class CropSpec:
    """Crop output sizes (w, h) in px and the margin added around the box (fraction)."""

    tile_wh: tuple[int, int] = (64, 160)
    die_wh: tuple[int, int] = (48, 48)
    margin: float = 0.08


def upright_crop(
    image: np.ndarray, quad_px: np.ndarray, size_wh: tuple[int, int], margin: float = 0.08
) -> np.ndarray:
    """Warp the quad ``(4, 2)`` (TL, TR, BR, BL) to an upright ``(h, w, 3)`` crop.

    The quad is grown by ``margin`` of its size about its centre so edges are kept.
    """
    quad = np.asarray(quad_px, dtype=np.float64)
    centre = quad.mean(axis=0)
    grown = centre + (quad - centre) * (1.0 + 2.0 * margin)
    w, h = size_wh
    dst = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], dtype=np.float32)
    m = cv2.getPerspectiveTransform(grown.astype(np.float32), dst)
    return cv2.warpPerspective(
        image, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
