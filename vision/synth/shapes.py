"""Table geometries of each box shape (:data:`~vision.synth.table.BOX_SHAPES`), built so that
boxes sit inside the felt, apart from each other and from the dealer's areas.

``row`` and ``two_rows`` tables are rounded rectangles sized to hold their boxes and the
dealer's areas; a compact table (``table_scale`` < 1) shrinks the felt and its print about the
middle of the dealer's edge while tiles, chips and the rail keep their size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from vision.synth.table import N_BOXES, LayoutGeometry, Rect


@dataclass(frozen=True, slots=True)
class ShapeRules:
    """Clearances :func:`shaped_geometry` keeps for row layouts, mm (larger: bigger tables)."""

    # felt between the work area's player edge and the nearest row (loose tiles lie there)
    work_clearance_mm: float = 100.0
    # felt between a box and the rail
    felt_margin_mm: float = 45.0
    # felt between the two rows of a two-row layout
    row_gap_mm: float = 24.0
    # a box's outer corner stays this far inside a rounded felt corner
    corner_clearance_mm: float = 20.0
    # table corners (rail outside) of a row and of a two-row table; larger: rounder
    row_corner_mm: float = 180.0
    two_rows_corner_mm: float = 340.0
    # a two-row table reaches this much further towards the players than its outer row needs
    two_rows_extra_reach_mm: float = 90.0


def shaped_geometry(
    shape: str = "arc",
    box_scale: float = 1.0,
    table_scale: float = 1.0,
    rules: ShapeRules | None = None,
) -> LayoutGeometry:
    """A layout of ``shape`` (see :data:`BOX_SHAPES`). ``table_scale`` < 1 is a compact table:
    the whole printed layout shrinks about the middle of the dealer's edge (objects keep their
    size); ``box_scale`` then scales the boxes and what is printed in them. Row layouts get a
    rounded-rectangle table that holds their boxes and the dealer's areas. ``("arc", 1, 1)``
    is today's table.

    >>> shaped_geometry() == LayoutGeometry()
    True
    >>> from vision.synth.table import default_layout
    >>> [round(b.centre_mm[1]) for b in default_layout(shaped_geometry("row")).boxes][:2]
    [156, 156]
    """
    rules = rules or ShapeRules()
    if (shape, box_scale, table_scale) == ("arc", 1.0, 1.0):
        return LayoutGeometry()
    g = _scale_box(_scale_table(replace(LayoutGeometry(), box_shape=shape), table_scale), box_scale)
    if shape == "arc":
        return g
    two = shape == "two_rows"
    box_w, box_h = g.box_size_mm
    inner_y = g.work_area_mm[1] + g.work_area_mm[3] / 2 + rules.work_clearance_mm + box_h / 2
    rows = (inner_y, inner_y + box_h + rules.row_gap_mm if two else inner_y)
    per_row = N_BOXES // 2 if two else N_BOXES
    half_span = per_row * (box_w + g.box_gap_mm) / 2 - g.box_gap_mm / 2
    below = rules.felt_margin_mm + (rules.two_rows_extra_reach_mm if two else 0.0)
    corner = rules.two_rows_corner_mm if two else rules.row_corner_mm
    felt_half = max(
        _felt_half_width(half_span, below, corner - g.rail_width_mm, rules.corner_clearance_mm),
        _dealer_side_half_width(g) + rules.felt_margin_mm,
    )
    return replace(
        g,
        row_y_mm=rows,
        outline="rounded_rect",
        corner_radius_mm=corner,
        half_width_mm=felt_half + g.rail_width_mm,
        player_reach_mm=rows[1] + box_h / 2 + below + g.rail_width_mm - g.dealer_edge_y_mm,
    )


def _felt_half_width(half_span: float, below: float, radius: float, clearance: float) -> float:
    """Felt half width that keeps a row's outer box corner (``half_span`` from the middle,
    ``below`` above the felt's player edge) ``clearance`` inside a felt corner of ``radius``."""
    rise = radius - below  # the box corner's height above the corner circle's centre
    if rise <= 0:
        return half_span + clearance
    reach = math.sqrt(max(0.0, (radius - clearance) ** 2 - rise**2))
    return half_span + radius - reach


def _dealer_side_half_width(g: LayoutGeometry) -> float:
    """How far from the middle the dealer's areas (wagers, dice, drop box) reach, mm."""
    rects = (g.banker_wager_mm, g.losing_wager_mm, g.drop_box_mm, g.float_tray_mm)
    rects += (g.woodpile_mm, g.work_area_mm)
    widest = max(abs(cx) + w / 2 for cx, _, w, _ in rects)
    return max(widest, abs(g.dice_area_mm[0]) + g.dice_radius_mm)


def _scale_rect(rect: Rect, s: float, y0: float) -> Rect:
    cx, cy, w, h = rect
    return (cx * s, y0 + (cy - y0) * s, w * s, h * s)


def _scale_table(g: LayoutGeometry, s: float) -> LayoutGeometry:
    """The felt and its print ``s`` times as large about the middle of the dealer's edge ``y0``
    (the rail keeps its width)."""
    if s == 1.0:
        return g
    y0 = g.dealer_edge_y_mm
    dx, dy = g.dice_area_mm
    return replace(
        g,
        table_scale=s,
        half_width_mm=(g.half_width_mm - g.rail_width_mm) * s + g.rail_width_mm,
        player_reach_mm=(g.player_reach_mm - g.rail_width_mm) * s + g.rail_width_mm,
        box_ring_mm=(g.box_ring_mm[0] * s, g.box_ring_mm[1] * s),
        box_size_mm=(g.box_size_mm[0] * s, g.box_size_mm[1] * s),
        float_tray_mm=_scale_rect(g.float_tray_mm, s, y0),
        woodpile_mm=_scale_rect(g.woodpile_mm, s, y0),
        work_area_mm=_scale_rect(g.work_area_mm, s, y0),
        dice_area_mm=(dx * s, y0 + (dy - y0) * s),
        dice_radius_mm=g.dice_radius_mm,  # the circle holds three dice on any table size
        banker_wager_mm=_scale_rect(g.banker_wager_mm, s, y0),
        losing_wager_mm=_scale_rect(g.losing_wager_mm, s, y0),
        drop_box_mm=_scale_rect(g.drop_box_mm, s, y0),
        corner_radius_mm=g.corner_radius_mm * s,
    )


def _scale_box(g: LayoutGeometry, s: float) -> LayoutGeometry:
    """Boxes and everything printed in them ``s`` times as large (box-local positions too)."""
    k = s * g.box_scale
    if k == 1.0:
        return g
    tx, ty, tw, th = g.tile_spot_mm
    return replace(
        g,
        box_size_mm=(g.box_size_mm[0] * s, g.box_size_mm[1] * s),
        tile_spot_mm=(tx * k, ty * k, tw * k, th * k),
        bet_spot_mm=(g.bet_spot_mm[0] * k, g.bet_spot_mm[1] * k),
        bet_radius_mm=g.bet_radius_mm * k,
        chung_spot_mm=(g.chung_spot_mm[0] * k, g.chung_spot_mm[1] * k),
        number_spot_mm=(g.number_spot_mm[0] * k, g.number_spot_mm[1] * k),
    )
