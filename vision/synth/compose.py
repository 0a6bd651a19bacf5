"""Drawing on the table-plane canvas while keeping an object-label buffer for occlusion.

Every drawing call writes the object's label where it paints, so after a frame each object's
visible pixels are those still carrying its label. Only touched regions are dirtied, so the
next frame restores them from the background instead of copying the whole canvas.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.synth.camera import Camera, Canvas
from vision.synth.paint import Sprite

_SHIFT_BITS = 4
NO_LABEL = -1
Roi = tuple[int, int, int, int]  # x0, y0, x1, y1 canvas pixels


def _union(a: Roi | None, b: Roi) -> Roi:
    if a is None:
        return b
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def place(xy_mm: tuple[float, float], angle_deg: float) -> np.ndarray:
    """``(3, 3)`` affine from object-local mm to table mm (rotate, then translate)."""
    a = np.radians(angle_deg)
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, xy_mm[0]], [s, c, xy_mm[1]], [0.0, 0.0, 1.0]])


def transform(affine: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Apply a ``(3, 3)`` affine to points ``(N, 2)``."""
    return np.asarray(pts, dtype=np.float64) @ affine[:2, :2].T + affine[:2, 2]


@dataclass
class ObjectPixels:
    """Where an object was drawn: its canvas ROI and its own-pixel mask at drawing time."""

    roi: Roi
    mask: np.ndarray


class CanvasDrawer:
    """Draws sprites and extruded sides onto ``image`` with labels in ``labels``."""

    def __init__(
        self,
        image: np.ndarray,
        labels: np.ndarray,
        canvas: Canvas,
        camera: Camera,
        mask_alpha: float,
    ):
        self.image = image
        self.labels = labels
        self.canvas = canvas
        self.camera = camera
        self.mask_alpha_u8 = mask_alpha * 255
        self.dirty: list[Roi] = []
        self._current: Roi | None = None

    def _roi(self, pts_px: np.ndarray, margin: int = 2) -> Roi | None:
        w, h = self.canvas.size_wh
        x0, y0 = np.floor(pts_px.min(axis=0)).astype(int) - margin
        x1, y1 = np.ceil(pts_px.max(axis=0)).astype(int) + margin
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
        if x1 <= x0 or y1 <= y0:
            return None
        self.dirty.append((x0, y0, x1, y1))
        return (x0, y0, x1, y1)

    def _warp(
        self, src: np.ndarray, sprite: Sprite, table_from_local: np.ndarray, height_mm: float
    ):
        full = self.canvas.px_from_mm @ self.camera.lift_affine(height_mm) @ table_from_local
        m = full @ np.linalg.inv(sprite.local_to_px())
        h, w = src.shape[:2]
        corners = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], dtype=np.float64)
        roi = self._roi(transform(m, corners))
        if roi is None:
            return None, None
        m_roi = m.copy()
        m_roi[0, 2] -= roi[0]
        m_roi[1, 2] -= roi[1]
        size = (roi[2] - roi[0], roi[3] - roi[1])
        return roi, cv2.warpAffine(src, m_roi[:2], size, flags=cv2.INTER_LINEAR, borderValue=0)

    def shadow(self, sprite: Sprite, table_from_local: np.ndarray, height_mm: float = 0.0) -> None:
        """Darken the canvas under the sprite's shadow (no label)."""
        if sprite.shadow is None:
            return
        roi, warped = self._warp(sprite.shadow, sprite, table_from_local, height_mm)
        if roi is None:
            return
        view = self.image[roi[1] : roi[3], roi[0] : roi[2]]
        keep = cv2.cvtColor(255 - warped, cv2.COLOR_GRAY2BGR)
        cv2.multiply(view, keep, dst=view, scale=1 / 255)

    def sprite(
        self, sprite: Sprite, table_from_local: np.ndarray, height_mm: float, label: int
    ) -> None:
        """Composite a sprite ``height_mm`` above the felt and label its opaque pixels."""
        roi, warped = self._warp(sprite.bgra, sprite, table_from_local, height_mm)
        if roi is None:
            return
        view = self.image[roi[1] : roi[3], roi[0] : roi[2]]
        keep = cv2.cvtColor(255 - warped[..., 3], cv2.COLOR_GRAY2BGR)
        behind = cv2.multiply(view, keep, scale=1 / 255)
        cv2.add(behind, cv2.cvtColor(warped, cv2.COLOR_BGRA2BGR), dst=view)
        self.labels[roi[1] : roi[3], roi[0] : roi[2]][warped[..., 3] > self.mask_alpha_u8] = label
        self._current = _union(self._current, roi)

    def prism(
        self, outline_mm: np.ndarray, heights_mm: tuple[float, float], bgr, label: int
    ) -> None:
        """Fill the side of an extruded outline (table mm) between two heights."""
        self.layers(outline_mm, np.asarray(heights_mm, dtype=np.float64), [bgr], label)

    def layers(self, outline_mm: np.ndarray, heights_mm: np.ndarray, colours, label: int) -> None:
        """Sides of a stack: layer ``k`` spans ``heights_mm[k]..heights_mm[k + 1]`` (``K + 1``)."""
        ground = self.camera.centre_mm[:2]
        cam_h = self.camera.height_mm
        scale = cam_h / (cam_h - heights_mm)
        lifted = ground + (outline_mm - ground)[None] * scale[:, None, None]
        px = ((lifted - self.canvas.origin_mm) * self.canvas.px_per_mm).astype(np.float32)
        roi = self._roi(px.reshape(-1, 2))
        if roi is None:
            return
        for k, bgr in enumerate(colours):
            hull = cv2.convexHull(np.vstack([px[k], px[k + 1]])).reshape(-1, 2)
            fixed = np.round(hull * (1 << _SHIFT_BITS)).astype(np.int32)
            cv2.fillConvexPoly(self.image, fixed, bgr, cv2.LINE_AA, _SHIFT_BITS)
            cv2.fillConvexPoly(self.labels, fixed, label, cv2.LINE_8, _SHIFT_BITS)
        self._current = _union(self._current, roi)

    def seam(self, outline_mm: np.ndarray, height_mm: float, bgr) -> None:
        """A thin line along an outline lifted to ``height_mm`` (stack seams)."""
        pts = self.canvas.to_px(self.camera.lift(outline_mm, height_mm))
        if self._roi(pts) is None:
            return
        fixed = np.round(pts * (1 << _SHIFT_BITS)).astype(np.int32)
        cv2.polylines(self.image, [fixed], True, bgr, 1, cv2.LINE_AA, _SHIFT_BITS)

    def begin(self) -> None:
        """Start a new object (resets the object's ROI)."""
        self._current = None

    def end(self, label: int) -> ObjectPixels | None:
        """Finish an object: record its own-pixel mask (pixels currently carrying ``label``)."""
        if self._current is None:
            return None
        x0, y0, x1, y1 = self._current
        return ObjectPixels(self._current, self.labels[y0:y1, x0:x1] == label)

    def visibility(self, pixels: ObjectPixels, label: int) -> float:
        """Fraction of an object's drawn pixels that still carry its label (not overdrawn)."""
        total = int(np.count_nonzero(pixels.mask))
        if total == 0:
            return 0.0
        x0, y0, x1, y1 = pixels.roi
        still = self.labels[y0:y1, x0:x1][pixels.mask] == label
        return float(np.count_nonzero(still)) / total
