"""Table geometry as data: the printed layout's boxes and zones in table millimetres.

The dealer's edge is straight, at the top (negative ``y``); the players' rail is a half-oval
(``outline="oval"``, today's table) or a rectangle with rounded player-side corners
(``outline="rounded_rect"``). Boxes 1..8 run counter-clockwise (seen from above, dealer at the
top) in one of three shapes (``box_shape``):

- ``arc``: along an elliptical arc, box 1 at the dealer's right (image left) near the dealer's
  edge, box 8 at the dealer's left;
- ``row``: one straight row facing the players, box 1 at the left;
- ``two_rows``: 4 + 4, boxes 1..4 left to right along the rail, 5..8 right to left in the row
  nearer the dealer.

Each box has a local frame: ``x`` along the row towards the next box (for arc and row layouts),
``y`` outwards towards the player. The woodpile, work area, dice, wager areas and float tray are
at the dealer's edge in every shape. :func:`vision.synth.shapes.shaped_geometry` builds a
consistent geometry for a shape, a box scale and a table scale.

:func:`zone_polygons_px` maps every zone through a camera, for a layout YAML that matches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vision.synth.camera import Camera

Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # centre x, centre y, width, height (mm)

BOX_SHAPES: tuple[str, ...] = ("arc", "row", "two_rows")
OUTLINES: tuple[str, ...] = ("oval", "rounded_rect")
N_BOXES = 8
BOX_WIDTH_MM = 220.0  # today's box width; box-local positions are given for it


@dataclass(frozen=True, slots=True)
class LayoutGeometry:
    """Dimensions of the printed layout, mm. Rects are ``(cx, cy, width, height)``."""

    half_width_mm: float = 850.0
    dealer_edge_y_mm: float = -420.0
    player_reach_mm: float = 900.0
    rail_width_mm: float = 70.0
    box_ring_mm: Point = (690.0, 730.0)
    box_arc_deg: Point = (160.0, 20.0)
    box_size_mm: Point = (BOX_WIDTH_MM, 160.0)
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
    box_shape: str = "arc"
    outline: str = "oval"
    # rounded_rect only: radius of the two player-side corners
    corner_radius_mm: float = 180.0
    # row and two_rows only: y of the box centres (row: the first; two_rows: inner, outer)
    row_y_mm: Point = (120.0, 290.0)
    # row and two_rows only: felt between neighbouring boxes along a row
    box_gap_mm: float = 20.0
    # a compact table's size relative to today's (see shapes.shaped_geometry); objects keep theirs
    table_scale: float = 1.0

    @property
    def box_scale(self) -> float:
        """Box width relative to today's (box-local positions scale with it)."""
        return self.box_size_mm[0] / BOX_WIDTH_MM

    def __post_init__(self) -> None:
        if self.box_shape not in BOX_SHAPES:
            raise ValueError(f"unknown box_shape {self.box_shape!r} (known: {BOX_SHAPES})")
        if self.outline not in OUTLINES:
            raise ValueError(f"unknown outline {self.outline!r} (known: {OUTLINES})")

    @property
    def centre_mm(self) -> Point:
        """Centre of the table top's bounding box (where a camera aims)."""
        return (0.0, self.dealer_edge_y_mm + self.player_reach_mm / 2)


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
    """Outline ``(N, 2)`` of the table top: a straight dealer edge and the player rail, which is
    a half-oval or a rectangle with rounded player-side corners (``geometry.outline``)."""
    a = geometry.half_width_mm - inset_mm
    b = geometry.player_reach_mm - inset_mm
    y0 = geometry.dealer_edge_y_mm
    if geometry.outline == "rounded_rect":
        rail = _rounded_rail(a, b, y0, geometry.corner_radius_mm - inset_mm, geometry)
    else:
        t = np.linspace(0.0, math.pi, geometry.outline_points)
        rail = np.column_stack([a * np.cos(t), y0 + b * np.sin(t)])
    return np.vstack([rail, [[-a, y0], [a, y0]]])


def _rounded_rail(a: float, b: float, y0: float, r: float, g: LayoutGeometry) -> np.ndarray:
    """The rail of a rounded rectangle from ``(a, y0)`` round to ``(-a, y0)``, ``(N, 2)``."""
    r = max(r, 0.0)
    t = np.linspace(0.0, math.pi / 2, max(2, g.outline_points // 4))
    right = np.column_stack([a - r + r * np.cos(t), y0 + b - r + r * np.sin(t)])
    left = np.column_stack([-a + r - r * np.sin(t), y0 + b - r + r * np.cos(t)])
    return np.vstack([[[a, y0]], right, left, [[-a, y0]]])


def _arc_boxes(g: LayoutGeometry) -> list[Box]:
    start, stop = (math.radians(d) for d in g.box_arc_deg)
    boxes = []
    for i, t in enumerate(np.linspace(start, stop, N_BOXES)):
        a, b = g.box_ring_mm
        centre = (a * math.cos(t), g.dealer_edge_y_mm + b * math.sin(t))
        normal = (math.cos(t) / a, math.sin(t) / b)
        angle = math.degrees(math.atan2(-normal[0], normal[1]))
        boxes.append(Box(i + 1, centre, angle, g.box_size_mm))
    return boxes


def _row_boxes(g: LayoutGeometry) -> list[Box]:
    pitch = g.box_size_mm[0] + g.box_gap_mm
    if g.box_shape == "row":
        places = [((k - (N_BOXES - 1) / 2) * pitch, g.row_y_mm[0]) for k in range(N_BOXES)]
    else:  # two rows: along the rail left to right, then back right to left nearer the dealer
        half = N_BOXES // 2
        xs = [(k - (half - 1) / 2) * pitch for k in range(half)]
        places = [(x, g.row_y_mm[1]) for x in xs] + [(x, g.row_y_mm[0]) for x in xs[::-1]]
    return [Box(i + 1, xy, 0.0, g.box_size_mm) for i, xy in enumerate(places)]


def _make_boxes(g: LayoutGeometry) -> tuple[Box, ...]:
    return tuple(_arc_boxes(g) if g.box_shape == "arc" else _row_boxes(g))


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


DEALER_ZONES = ("woodpile", "dice_area", "float_tray", "banker_wager", "losing_wager")
DEALER_ZONES += ("drop_box", "work_area")


def layout_problems(layout: TableLayout, extent_mm: Rect | None = None) -> list[str]:
    """What is wrong with a layout, one line each (empty: fine): a box not inside the felt,
    boxes that overlap each other or a dealer's area, a zone outside ``extent_mm``
    ``(x0, y0, x1, y1)`` (the rendered canvas). Today's arc has three pairs of boxes whose
    corners touch (under 50 mm^2); its families shrink the boxes a little."""
    g = layout.geometry
    felt = table_outline(g, g.rail_width_mm)
    boxes = {f"box_{b.number}": layout.zones[f"box_{b.number}"] for b in layout.boxes}
    problems = [f"{k} not inside the felt" for k, z in boxes.items() if not _inside(felt, z).all()]
    names = list(boxes)
    for i, k in enumerate(names):
        others = names[i + 1 :] + list(DEALER_ZONES)
        zones = {**boxes, **layout.zones}
        problems += [f"{k} overlaps {o}" for o in others if convex_overlap(boxes[k], zones[o])]
    if extent_mm is not None:
        x0, y0, x1, y1 = extent_mm
        for k, z in layout.zones.items():
            if z[:, 0].min() < x0 or z[:, 1].min() < y0 or z[:, 0].max() > x1 or z[:, 1].max() > y1:
                problems.append(f"{k} reaches outside {extent_mm}")
    return problems


def convex_overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether convex polygons ``(N, 2)`` and ``(M, 2)`` share area (separating axes; touching
    edges do not count).

    >>> square = rect_polygon((0.0, 0.0, 2.0, 2.0))
    >>> convex_overlap(square, square + 1.0), convex_overlap(square, square + 2.0)
    (True, False)
    """
    for poly in (a, b):
        edges = np.roll(poly, -1, axis=0) - poly
        normals = np.column_stack([-edges[:, 1], edges[:, 0]])
        pa, pb = a @ normals.T, b @ normals.T
        if np.any((pa.max(axis=0) <= pb.min(axis=0)) | (pb.max(axis=0) <= pa.min(axis=0))):
            return False
    return True


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
