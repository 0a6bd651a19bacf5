"""Supersampled sprite painting in millimetre coordinates, and the :class:`Sprite` type.

A sprite is drawn once per appearance at ``supersample`` times the canvas resolution with
hard-edged OpenCV primitives, then area-downsampled (which anti-aliases it) and stored with
premultiplied colour so that bilinear warping and ``over`` blending stay exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

_SHIFT_BITS = 4  # sub-pixel precision of OpenCV drawing calls


@dataclass(frozen=True)
class Sprite:
    """Premultiplied BGRA ``(h, w, 4)`` uint8 and an optional shadow ``(h, w)`` uint8 alpha.

    Local frame: mm, origin at the pixel centre ``((w - 1) / 2, (h - 1) / 2)``, ``x`` right,
    ``y`` down, ``px_per_mm`` pixels per mm. ``hull_mm`` ``(N, 2)``: outline of the object.
    """

    bgra: np.ndarray
    shadow: np.ndarray | None
    px_per_mm: float
    hull_mm: np.ndarray
    centre_mm: tuple[float, float] = (0.0, 0.0)

    def local_to_px(self) -> np.ndarray:
        """``(3, 3)`` affine from local mm to sprite pixel coordinates."""
        h, w = self.bgra.shape[:2]
        s = self.px_per_mm
        cx, cy = self.centre_mm
        return np.array([[s, 0, (w - 1) / 2 - cx * s], [0, s, (h - 1) / 2 - cy * s], [0, 0, 1]])


class Painter:
    """A drawing surface covering ``centre_mm +- half_wh_mm`` (mm)."""

    def __init__(
        self,
        half_wh_mm: tuple[float, float],
        px_per_mm: float,
        supersample: int,
        centre_mm: tuple[float, float] = (0.0, 0.0),
    ):
        self.px_per_mm = px_per_mm
        self.centre_mm = centre_mm
        self.supersample = supersample
        self.out_wh = tuple(2 * math.ceil(h * px_per_mm) + 2 for h in half_wh_mm)
        big_w, big_h = (n * supersample for n in self.out_wh)
        self.scale = px_per_mm * supersample
        self.centre = np.array([(big_w - 1) / 2, (big_h - 1) / 2])
        self.colour = np.zeros((big_h, big_w, 3), np.uint8)
        self.alpha = np.zeros((big_h, big_w), np.uint8)

    def _pts(self, xy_mm: np.ndarray) -> np.ndarray:
        local = np.asarray(xy_mm, dtype=np.float64).reshape(-1, 2) - self.centre_mm
        px = local * self.scale + self.centre
        return np.round(px * (1 << _SHIFT_BITS)).astype(np.int32)

    def polygon(self, xy_mm: np.ndarray, bgr: tuple[int, ...], opaque: bool = True) -> None:
        """Fill a polygon ``(N, 2)`` mm; ``opaque`` also marks it in the alpha layer."""
        pts = [self._pts(xy_mm)]
        cv2.fillPoly(self.colour, pts, bgr, cv2.LINE_8, _SHIFT_BITS)
        if opaque:
            cv2.fillPoly(self.alpha, pts, 255, cv2.LINE_8, _SHIFT_BITS)

    def circle(self, xy_mm: tuple[float, float], radius_mm: float, bgr: tuple[int, ...]) -> None:
        """Filled circle (colour only: draw inside an opaque shape)."""
        centre = tuple(int(v) for v in self._pts(np.array(xy_mm))[0])
        radius = round(radius_mm * self.scale * (1 << _SHIFT_BITS))
        cv2.circle(self.colour, centre, radius, bgr, -1, cv2.LINE_8, _SHIFT_BITS)

    def line(self, a_mm, b_mm, width_mm: float, bgr: tuple[int, ...], opaque: bool = False) -> None:
        """Thick line with round caps between two points (mm)."""
        pa, pb = (tuple(int(v) for v in self._pts(np.array(p))[0]) for p in (a_mm, b_mm))
        thickness = max(1, round(width_mm * self.scale))
        cv2.line(self.colour, pa, pb, bgr, thickness, cv2.LINE_8, _SHIFT_BITS)
        if opaque:
            cv2.line(self.alpha, pa, pb, 255, thickness, cv2.LINE_8, _SHIFT_BITS)

    def text(self, xy_mm, word: str, height_mm: float, bgr: tuple[int, ...]) -> None:
        """``word`` centred on ``xy_mm``, capitals ``height_mm`` tall (colour only)."""
        font, size = cv2.FONT_HERSHEY_SIMPLEX, 1.0
        (w, h), _ = cv2.getTextSize(word, font, size, 2)
        scale = height_mm * self.scale / h
        thickness = max(1, round(2 * scale))
        (w, h), _ = cv2.getTextSize(word, font, scale, thickness)
        cx, cy = self._pts(np.array(xy_mm))[0] / (1 << _SHIFT_BITS)
        origin = (round(cx - w / 2), round(cy + h / 2))
        cv2.putText(self.colour, word, origin, font, scale, bgr, thickness, cv2.LINE_AA)

    def finish(self, hull_mm: np.ndarray, shadow: ShadowSpec | None = None) -> Sprite:
        """Downsample to the output resolution and premultiply."""
        alpha3 = cv2.cvtColor(self.alpha, cv2.COLOR_GRAY2BGR)
        premult = cv2.multiply(self.colour, alpha3, scale=1 / 255)
        bgra = cv2.merge([*cv2.split(premult), self.alpha])
        small_u8 = cv2.resize(bgra, self.out_wh, interpolation=cv2.INTER_AREA)
        shadow_u8 = None
        if shadow is not None:
            shadow_u8 = make_shadow(small_u8[..., 3], self.px_per_mm, shadow)
        hull = np.asarray(hull_mm, dtype=np.float64)
        return Sprite(small_u8, shadow_u8, self.px_per_mm, hull, self.centre_mm)


@dataclass(frozen=True, slots=True)
class ShadowSpec:
    """Soft contact shadow: dilate the footprint by ``spread_mm``, blur by ``blur_mm``."""

    spread_mm: float
    blur_mm: float
    strength: float


def make_shadow(alpha_u8: np.ndarray, px_per_mm: float, spec: ShadowSpec) -> np.ndarray:
    """Shadow alpha ``(h, w)`` uint8 from a footprint alpha of the same shape."""
    spread = max(1, round(spec.spread_mm * px_per_mm))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * spread + 1, 2 * spread + 1))
    grown = cv2.dilate(alpha_u8, kernel)
    sigma = max(0.5, spec.blur_mm * px_per_mm)
    blurred = cv2.GaussianBlur(grown.astype(np.float32), (0, 0), sigma)
    return np.clip(blurred * spec.strength + 0.5, 0, 255).astype(np.uint8)


def rounded_rect(half_w: float, half_h: float, radius: float, arc_points: int = 6) -> np.ndarray:
    """Outline ``(4 * arc_points, 2)`` of a rounded rectangle centred at the origin (mm)."""
    corners = [(half_w - radius, half_h - radius, 0.0), (-half_w + radius, half_h - radius, 90.0)]
    corners += [
        (-half_w + radius, -half_h + radius, 180.0),
        (half_w - radius, -half_h + radius, 270.0),
    ]
    pts = []
    for cx, cy, start in corners:
        t = np.radians(start + np.linspace(0.0, 90.0, arc_points))
        pts.append(np.column_stack([cx + radius * np.cos(t), cy + radius * np.sin(t)]))
    return np.vstack(pts)


def circle_points(radius: float, n: int) -> np.ndarray:
    """``(n, 2)`` points on a circle of ``radius`` about the origin."""
    t = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    return np.column_stack([radius * np.cos(t), radius * np.sin(t)])


def scale_bgr(bgr: tuple[int, ...], factor: float) -> tuple[int, int, int]:
    """Colour times ``factor``, clipped to 0..255."""
    return tuple(int(min(255, max(0, round(c * factor)))) for c in bgr)  # type: ignore[return-value]
