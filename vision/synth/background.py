"""The static table on the canvas: floor, rail, felt, printed layout and the float tray.

Rendered once per :class:`~vision.synth.scene.TableLook` (cached by the renderer).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.synth.camera import Canvas
from vision.synth.paint import scale_bgr
from vision.synth.scene import TableLook
from vision.synth.settings import RenderSettings, Sizes
from vision.synth.sprites import CHIP_COLOURS
from vision.synth.table import TableLayout, circle_polygon, rect_polygon, table_outline

_SHIFT_BITS = 4


@dataclass(frozen=True, slots=True)
class PrintStyle:
    """Line widths and text sizes of the printed layout, mm."""

    line_mm: float = 3.0
    thin_mm: float = 1.5
    number_height_mm: float = 34.0
    label_height_mm: float = 11.0
    texture_cell_mm: float = 40.0
    tray_bgr: tuple[int, int, int] = (28, 28, 30)
    tray_rim_mm: float = 6.0
    column_gap_mm: float = 4.0
    slot_bgr: tuple[int, int, int] = (10, 10, 10)
    chip_shades: tuple[float, float] = (1.0, 0.78)
    gain_scale: float = 100.0


def _pts(canvas: Canvas, xy_mm: np.ndarray) -> np.ndarray:
    return np.round(canvas.to_px(xy_mm) * (1 << _SHIFT_BITS)).astype(np.int32)


def _fill(img: np.ndarray, canvas: Canvas, poly_mm: np.ndarray, bgr) -> None:
    cv2.fillPoly(img, [_pts(canvas, poly_mm)], bgr, cv2.LINE_AA, _SHIFT_BITS)


def _outline(img, canvas: Canvas, poly_mm: np.ndarray, bgr, width_mm: float) -> None:
    thickness = max(1, round(width_mm * canvas.px_per_mm))
    cv2.polylines(img, [_pts(canvas, poly_mm)], True, bgr, thickness, cv2.LINE_AA, _SHIFT_BITS)


def _text(
    img, canvas: Canvas, text: str, centre_mm, angle_deg: float, height_mm: float, bgr
) -> None:
    """Text centred at ``centre_mm``, rotated by ``angle_deg`` (drawn on a patch, warped)."""
    font = cv2.FONT_HERSHEY_DUPLEX
    (_, th), _ = cv2.getTextSize(text, font, 1.0, 2)
    font_scale = height_mm * canvas.px_per_mm / th
    thick = max(1, round(font_scale * 2))
    (tw, th), base = cv2.getTextSize(text, font, font_scale, thick)
    patch = np.zeros((th + base + 4, tw + 4), np.uint8)
    cv2.putText(patch, text, (2, th + 2), font, font_scale, 255, thick, cv2.LINE_AA)
    half = np.hypot(*patch.shape) / 2 + 1
    centre_px = canvas.to_px(np.array(centre_mm))[0]
    x0, y0 = (int(max(0, v)) for v in centre_px - half)
    x1, y1 = (
        int(min(img.shape[1], centre_px[0] + half)),
        int(min(img.shape[0], centre_px[1] + half)),
    )
    if x1 <= x0 or y1 <= y0:
        return
    rot = cv2.getRotationMatrix2D((patch.shape[1] / 2, patch.shape[0] / 2), -angle_deg, 1.0)
    rot[:, 2] += centre_px - np.array([patch.shape[1] / 2 + x0, patch.shape[0] / 2 + y0])
    a = cv2.warpAffine(patch, rot, (x1 - x0, y1 - y0))[..., None].astype(np.float32) / 255
    roi = img[y0:y1, x0:x1]
    roi[:] = (roi * (1 - a) + np.array(bgr, np.float32) * a + 0.5).astype(np.uint8)


def _felt(img: np.ndarray, canvas: Canvas, look: TableLook, style: PrintStyle) -> None:
    rng = np.random.default_rng(look.texture_seed)
    cell = style.texture_cell_mm * canvas.px_per_mm
    small = rng.standard_normal((int(img.shape[0] / cell) + 2, int(img.shape[1] / cell) + 2))
    field = cv2.resize(
        small.astype(np.float32), (img.shape[1], img.shape[0]), interpolation=cv2.INTER_CUBIC
    )
    gain = np.clip((1.0 + look.felt_texture * field) * style.gain_scale, 0, 255).astype(np.uint8)
    cv2.multiply(img, cv2.cvtColor(gain, cv2.COLOR_GRAY2BGR), dst=img, scale=1 / style.gain_scale)


def _boxes(
    img: np.ndarray, canvas: Canvas, layout: TableLayout, look: TableLook, style: PrintStyle
) -> None:
    g = layout.geometry
    for box in layout.boxes:
        _outline(img, canvas, layout.zones[f"box_{box.number}"], look.print_bgr, style.line_mm)
        _outline(
            img, canvas, box.to_table(rect_polygon(g.tile_spot_mm)), look.print_bgr, style.thin_mm
        )
        bet = box.to_table(circle_polygon(g.bet_spot_mm, g.bet_radius_mm, 48))
        _outline(img, canvas, bet, look.print_bgr, style.thin_mm)
        number_at = box.to_table(np.array(g.number_spot_mm))[0]
        _text(
            img,
            canvas,
            str(box.number),
            number_at,
            box.angle_deg,
            style.number_height_mm,
            look.print_bgr,
        )


def _tray(
    img: np.ndarray,
    canvas: Canvas,
    layout: TableLayout,
    look: TableLook,
    style: PrintStyle,
    sizes: Sizes,
) -> None:
    """Recessed float tray with chip columns lying on edge (chips stacked towards the players)."""
    rng = np.random.default_rng(look.texture_seed + 1)
    cx, cy, w, h = layout.geometry.float_tray_mm
    _fill(
        img,
        canvas,
        rect_polygon((cx, cy, w + style.tray_rim_mm, h + style.tray_rim_mm)),
        scale_bgr(style.tray_bgr, 2.0),
    )
    _fill(img, canvas, rect_polygon(layout.geometry.float_tray_mm), style.tray_bgr)
    diameter, thick = sizes.chip_diameter_mm, sizes.chip_thickness_mm
    n_cols = int(w // (diameter + style.column_gap_mm))
    names = list(CHIP_COLOURS)
    for c in range(n_cols):
        x = cx - w / 2 + style.column_gap_mm + c * (diameter + style.column_gap_mm) + diameter / 2
        body, insert = CHIP_COLOURS[names[int(rng.integers(len(names)))]]
        n_chips = int(rng.integers(0, int(h / thick)))
        for k in range(n_chips):
            y = cy + h / 2 - (k + 0.5) * thick
            colour = scale_bgr(body, style.chip_shades[k % 2]) if k % 5 else insert
            _fill(img, canvas, rect_polygon((x, y, diameter, thick)), colour)


def _areas(
    img: np.ndarray, canvas: Canvas, layout: TableLayout, look: TableLook, style: PrintStyle
) -> None:
    g = layout.geometry
    z = layout.zones
    for name in ("woodpile", "work_area", "banker_wager", "losing_wager", "dice_area"):
        _outline(img, canvas, z[name], look.print_bgr, style.line_mm)
    _fill(img, canvas, z["drop_box"], style.slot_bgr)
    labels = {"banker_wager": "BANKER", "losing_wager": "LOSING", "dice_area": "DICE"}
    for name, text in labels.items():
        centre = z[name].mean(axis=0)
        _text(img, canvas, text, centre, 0.0, style.label_height_mm, look.print_bgr)
    x, y, _, h = g.work_area_mm
    _text(
        img,
        canvas,
        "PAI GOW",
        (x, y + h / 2 - style.label_height_mm),
        0.0,
        style.label_height_mm,
        look.print_bgr,
    )


def render_background(
    look: TableLook,
    layout: TableLayout,
    canvas: Canvas,
    settings: RenderSettings,
    style: PrintStyle | None = None,
) -> np.ndarray:
    """Canvas image ``(H, W, 3)`` uint8 of the empty table."""
    style = style or PrintStyle()
    w, h = canvas.size_wh
    img = np.empty((h, w, 3), np.uint8)
    img[:] = look.floor_bgr
    g = layout.geometry
    _fill(img, canvas, table_outline(g), look.rail_bgr)
    _fill(img, canvas, table_outline(g, g.rail_width_mm), look.felt_bgr)
    _felt(img, canvas, look, style)
    _boxes(img, canvas, layout, look, style)
    _areas(img, canvas, layout, look, style)
    _tray(img, canvas, layout, look, style, settings.sizes)
    return img
