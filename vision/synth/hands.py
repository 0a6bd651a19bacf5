"""Hand-and-forearm sprites: the dealer's and players' hands that occlude tiles.

Local frame (mm): palm centre at the origin, fingers towards ``+y``, forearm towards ``-y``;
a right hand seen from above, palm down, has its thumb on the ``+x`` side (``left`` mirrors).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.synth.paint import Painter, ShadowSpec, Sprite, scale_bgr
from vision.synth.settings import RenderSettings


@dataclass(frozen=True, slots=True)
class HandShape:
    """Proportions of a hand, mm (``pose`` scales finger length and spread)."""

    palm_half_wh_mm: tuple[float, float] = (41.0, 46.0)
    finger_x_mm: tuple[float, ...] = (27.0, 9.0, -9.0, -26.0)
    finger_length_mm: tuple[float, ...] = (76.0, 84.0, 78.0, 62.0)
    finger_width_mm: tuple[float, ...] = (18.5, 19.5, 18.5, 16.5)
    finger_base_y_mm: float = 26.0
    curl_shortening: float = 0.45
    spread_deg: float = 7.0
    thumb_base_mm: tuple[float, float] = (30.0, -2.0)
    thumb_length_mm: float = 58.0
    thumb_width_mm: float = 21.0
    thumb_angle_deg: float = 50.0
    forearm_y_mm: tuple[float, float] = (-40.0, -650.0)
    forearm_half_w_mm: tuple[float, float] = (32.0, 42.0)
    sleeve_start_y_mm: float = -180.0
    sleeve_half_w_mm: float = 52.0
    cuff_width_mm: float = 12.0
    crease_width_mm: float = 2.2
    nail_fraction: float = 0.3
    extent_mm: tuple[float, float, float, float] = (-100.0, -660.0, 100.0, 135.0)
    # shading: edges darkened to this fraction, over this many mm in from the outline
    edge_shade: float = 0.72
    edge_depth_mm: float = 9.0
    supersample: int = 2


def _finger_tips(shape: HandShape, pose: float) -> list[tuple[np.ndarray, np.ndarray, float]]:
    fingers = []
    spread = np.radians(shape.spread_deg * (1.0 - pose))
    for k, (x, length, width) in enumerate(
        zip(shape.finger_x_mm, shape.finger_length_mm, shape.finger_width_mm, strict=True)
    ):
        angle = spread * (1.5 - k)
        visible = length * (1.0 - shape.curl_shortening * pose)
        base = np.array([x, shape.finger_base_y_mm])
        tip = base + visible * np.array([np.sin(angle), np.cos(angle)])
        fingers.append((base, tip, width))
    return fingers


def _arm(painter: Painter, shape: HandShape, skin, sleeve) -> None:
    y0, y1 = shape.forearm_y_mm
    w0, w1 = shape.forearm_half_w_mm
    painter.polygon(np.array([[-w0, y0], [w0, y0], [w1, y1], [-w1, y1]]), skin)
    ys, wv = shape.sleeve_start_y_mm, shape.sleeve_half_w_mm
    painter.polygon(np.array([[-wv, ys], [wv, ys], [wv, y1], [-wv, y1]]), sleeve)
    cuff = ys - shape.cuff_width_mm
    painter.line(
        (-wv, cuff), (wv, cuff), shape.crease_width_mm, scale_bgr(sleeve, shape.edge_shade)
    )


def _hand(painter: Painter, shape: HandShape, skin, pose: float) -> None:
    crease = scale_bgr(skin, shape.edge_shade)
    thumb_dir = np.radians(shape.thumb_angle_deg * (1.0 - 0.5 * pose))
    base = np.array(shape.thumb_base_mm)
    tip = base + shape.thumb_length_mm * np.array([np.sin(thumb_dir), np.cos(thumb_dir)])
    painter.line(base, tip, shape.thumb_width_mm, crease, opaque=True)
    painter.line(base, tip, shape.thumb_width_mm - shape.crease_width_mm, skin)
    t = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    hw, hh = shape.palm_half_wh_mm
    painter.polygon(np.column_stack([hw * np.cos(t), hh * np.sin(t)]), skin)
    nail = scale_bgr(skin, 1.0 / shape.edge_shade)
    for f_base, f_tip, width in _finger_tips(shape, pose):
        painter.line(f_base, f_tip, width, crease, opaque=True)
        painter.line(f_base, f_tip, width - shape.crease_width_mm, skin)
        nail_at = f_tip - (f_tip - f_base) / np.linalg.norm(f_tip - f_base) * width * 0.35
        painter.circle(tuple(nail_at), width * shape.nail_fraction, nail)


def _shade(painter: Painter, shape: HandShape) -> None:
    """Darken towards the outline so the arm and fingers read as rounded."""
    depth = shape.edge_depth_mm * painter.scale
    dist = cv2.distanceTransform(painter.alpha, cv2.DIST_L2, 3)
    factor = shape.edge_shade + (1 - shape.edge_shade) * np.clip(dist / depth, 0.0, 1.0)
    painter.colour[:] = np.clip(painter.colour * factor[..., None], 0, 255).astype(np.uint8)


def hand_sprite(
    skin_bgr,
    sleeve_bgr,
    pose: float,
    left: bool,
    settings: RenderSettings,
    shape: HandShape | None = None,
) -> Sprite:
    """A hand with forearm and sleeve; its shadow is a wide soft blur of the silhouette."""
    shape = shape or HandShape()
    x0, y0, x1, y1 = shape.extent_mm
    pad = 3 * settings.hand_shadow_blur_mm
    centre = ((x0 + x1) / 2, (y0 + y1) / 2)
    half = ((x1 - x0) / 2 + pad, (y1 - y0) / 2 + pad)
    painter = Painter(half, settings.canvas_px_per_mm, shape.supersample, centre)
    _arm(painter, shape, skin_bgr, sleeve_bgr)
    _hand(painter, shape, skin_bgr, pose)
    _shade(painter, shape)
    if left:
        painter.colour[:] = painter.colour[:, ::-1].copy()
        painter.alpha[:] = painter.alpha[:, ::-1].copy()
    contours, _ = cv2.findContours(painter.alpha, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    hull_px = cv2.convexHull(np.vstack(contours)).reshape(-1, 2).astype(np.float64)
    hull_mm = (hull_px - painter.centre) / painter.scale + centre
    spec = ShadowSpec(0.0, settings.hand_shadow_blur_mm, settings.hand_shadow_strength)
    return painter.finish(hull_mm, spec)
