"""Table geometry as data: the printed layout's boxes and zones in table millimetres.

The table is a half-oval: a straight dealer edge at the top (negative ``y``) and a curved player
rail. Boxes 1..8 run counter-clockwise (seen from above, dealer at the top): box 1 at the
dealer's right (image left), along the curve, box 8 at the dealer's left. Each box has a local
frame: ``x`` along the rail towards the next box, ``y`` outwards towards the player.

:func:`zone_polygons_px` maps every zone through a camera, for a layout YAML that matches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vision.synth.camera import Camera

Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # centre x, centre y, width, height (mm)


@dataclass(frozen=True, slots=True)
class LayoutGeometry:
    """Dimensions of the printed layout, mm. Rects are ``(cx, cy, width, height)``."""

    half_width_mm: float = 850.0
    dealer_edge_y_mm: float = -420.0
    player_reach_mm: float = 900.0
    rail_width_mm: float = 70.0
    box_ring_mm: Point = (690.0, 730.0)
    box_arc_deg: Point = (160.0, 20.0)
    box_size_mm: Point = (220.0, 160.0)
    tile_spot_mm: Rect = (0.0, -28.0, 160.0, 80.0)
    bet_spot_mm: Point = (-40.0, 45.0)
    bet_radius_mm: float = 30.0
    chung_spot_mm: Point = (55.0, 45.0)
    number_spot_mm: Point = (-88.0, 52.0)
    float_tray_mm: Rect = (0.0, -372.0, 520.0, 80.0)
    woodpile_mm: Rect = (0.0, -268.0, 300.0, 96.0)
    work_area_mm: Rect = (0.0, -112.0, 700.0, 176.0)
    dice_area_mm: Point = (-420.0, -345.0)
    dice_radius_mm: float = 52.0
    banker_wager_mm: Rect = (-430.0, -232.0, 160.0, 100.0)
    losing_wager_mm: Rect = (430.0, -232.0, 160.0, 100.0)
    drop_box_mm: Rect = (330.0, -400.0, 110.0, 14.0)
    outline_points: int = 96


@dataclass(frozen=True, slots=True)
class Box:
    """One numbered box: centre, rotation (deg, box ``y`` from table ``y``) and size, mm."""

    number: int
    centre_mm: Point
    angle_deg: float
    size_mm: Point

    def to_table(self, local_mm: np.ndarray) -> np.ndarray:
        """Box-local points ``(N, 2)`` mm to table mm ``(N, 2)``."""
        a = math.radians(self.angle_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        return np.asarray(local_mm, dtype=np.float64).reshape(-1, 2) @ rot.T + self.centre_mm


@dataclass(frozen=True)
class TableLayout:
    """Boxes and named zone polygons (``(N, 2)`` mm arrays), in drawing order."""

    geometry: LayoutGeometry
    boxes: tuple[Box, ...]
    zones: dict[str, np.ndarray]

    def box(self, number: int) -> Box:
        return self.boxes[number - 1]


def rect_polygon(rect: Rect) -> np.ndarray:
    """Corners ``(4, 2)`` of an axis-aligned rect ``(cx, cy, w, h)``, clockwise from top-left."""
    cx, cy, w, h = rect
    return np.array(
        [
            [cx - w / 2, cy - h / 2],
            [cx + w / 2, cy - h / 2],
            [cx + w / 2, cy + h / 2],
            [cx - w / 2, cy + h / 2],
        ]
    )


def circle_polygon(centre: Point, radius: float, n: int) -> np.ndarray:
    """``n`` points ``(n, 2)`` on a circle."""
    t = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    return np.column_stack([centre[0] + radius * np.cos(t), centre[1] + radius * np.sin(t)])


def table_outline(geometry: LayoutGeometry, inset_mm: float = 0.0) -> np.ndarray:
    """Outline ``(N, 2)`` of the table top (straight dealer edge, elliptical player rail)."""
    t = np.linspace(0.0, math.pi, geometry.outline_points)
    a = geometry.half_width_mm - inset_mm
    b = geometry.player_reach_mm - inset_mm
    y0 = geometry.dealer_edge_y_mm
    arc = np.column_stack([a * np.cos(t), y0 + b * np.sin(t)])
    return np.vstack([arc, [[-a, y0], [a, y0]]])


def _make_boxes(g: LayoutGeometry) -> tuple[Box, ...]:
    start, stop = (math.radians(d) for d in g.box_arc_deg)
    boxes = []
    for i, t in enumerate(np.linspace(start, stop, 8)):
        a, b = g.box_ring_mm
        centre = (a * math.cos(t), g.dealer_edge_y_mm + b * math.sin(t))
        normal = (math.cos(t) / a, math.sin(t) / b)
        angle = math.degrees(math.atan2(-normal[0], normal[1]))
        boxes.append(Box(i + 1, centre, angle, g.box_size_mm))
    return tuple(boxes)


def default_layout(geometry: LayoutGeometry | None = None) -> TableLayout:
    """The layout the renderer prints; zone names: ``box_1``..``box_8``, areas, ``table``."""
    g = geometry or LayoutGeometry()
    boxes = _make_boxes(g)
    zones: dict[str, np.ndarray] = {}
    for box in boxes:
        zones[f"box_{box.number}"] = box.to_table(rect_polygon((0.0, 0.0, *box.size_mm)))
    zones["woodpile"] = rect_polygon(g.woodpile_mm)
    zones["dice_area"] = circle_polygon(g.dice_area_mm, g.dice_radius_mm, 24)
    zones["float_tray"] = rect_polygon(g.float_tray_mm)
    zones["banker_wager"] = rect_polygon(g.banker_wager_mm)
    zones["losing_wager"] = rect_polygon(g.losing_wager_mm)
    zones["drop_box"] = rect_polygon(g.drop_box_mm)
    zones["work_area"] = rect_polygon(g.work_area_mm)
    zones["table"] = table_outline(g)
    return TableLayout(g, boxes, zones)


def _inside(polygon: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """Even-odd point-in-polygon for points ``(N, 2)`` against ``(M, 2)``; returns ``(N,)``."""
    x, y = xy[:, 0:1], xy[:, 1:2]
    x0, y0 = polygon[:, 0], polygon[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    crosses = (y0 > y) != (y1 > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_cross = x0 + (y - y0) * (x1 - x0) / (y1 - y0)
    return np.count_nonzero(crosses & (x < x_cross), axis=1) % 2 == 1


def zone_at(layout: TableLayout, xy_mm: np.ndarray) -> list[str]:
    """Zone name of each point ``(N, 2)`` mm: first matching zone, else ``off_table``."""
    pts = np.asarray(xy_mm, dtype=np.float64).reshape(-1, 2)
    names = np.full(len(pts), "off_table", dtype=object)
    for name in reversed(list(layout.zones)):
        names[_inside(layout.zones[name], pts)] = name
    return [str(n) for n in names]


def zone_polygons_px(layout: TableLayout, camera: Camera) -> dict[str, np.ndarray]:
    """Every zone polygon in image pixels: name -> ``(N, 2)`` float array (not clipped)."""
    return {name: camera.table_to_image(poly) for name, poly in layout.zones.items()}


def layout_dict(layout: TableLayout, camera: Camera | None = None) -> dict:
    """Plain data for a layout YAML: zones in mm, and in image px when a camera is given."""
    out: dict = {
        "units": "mm",
        "boxes": {
            b.number: {"centre_mm": list(b.centre_mm), "angle_deg": b.angle_deg}
            for b in layout.boxes
        },
        "zones_mm": {k: np.round(v, 2).tolist() for k, v in layout.zones.items()},
    }
    if camera is not None:
        corners = table_outline(layout.geometry)
        out["homography_img_from_table"] = camera.H_img_from_table.tolist()
        out["table_outline_px"] = np.round(camera.table_to_image(corners), 1).tolist()
        out["zones_px"] = {
            k: np.round(v, 1).tolist() for k, v in zone_polygons_px(layout, camera).items()
        }
    return out
