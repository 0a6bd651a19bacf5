"""Table layout per camera: zones (boxes 1-8, woodpile, dice area, ...) in image pixels.

A layout YAML gives the zones either in table millimetres together with reference points (the
image positions of table points, from which a homography is fitted), or directly as image-pixel
polygons. Validation is strict (unknown keys rejected, coordinates finite and within
``MAX_COORDINATE``) and every error is one line naming the key. A file must be UTF-8 YAML of at
most ``MAX_LAYOUT_BYTES``; one that is not, or is nested too deep to parse, is one line naming
the file.

Schema (``coordinates: table_mm`` needs ``reference_points``; ``image_px`` may have them)::

    version: 1
    camera: default
    image_size_wh: [1920, 1080]
    tile_length_px: 68            # optional: a tile's long side in px (computed when table_mm)
    chung_box: 1
    coordinates: table_mm
    reference_points: {table_mm: [[x, y], ...], image_px: [[u, v], ...]}   # >= 4 pairs
    boxes: {1: [[x, y], ...], ..., 8: [...]}
    areas: {woodpile: ..., dice_area: ..., float_tray: ..., work_area: ..., banker_wager: ...}

:func:`spec_from_scenario` turns a scenario's ``layout`` block (plain JSON) into such a spec.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from vision.view import TILE_LENGTH_MM

BOX_NUMBERS = tuple(range(1, 9))
REQUIRED_AREAS = ("woodpile", "dice_area", "float_tray", "work_area")
OPTIONAL_AREAS = ("banker_wager", "losing_wager", "drop_box", "table")
# Zone lookup order: a point takes the first zone that contains it (boxes before areas,
# ``table`` last so it only names felt that is in no other zone).
AREA_ORDER = (
    "woodpile",
    "dice_area",
    "float_tray",
    "banker_wager",
    "losing_wager",
    "drop_box",
    "work_area",
    "table",
)
OFF_TABLE = "off_table"
MIN_REFERENCE_POINTS = 4
DEFAULT_LAYOUT_RESOURCE = ("pipeline", "data/default_layout.yaml")
MAX_LAYOUT_BYTES = 1 << 20
"""A layout is a few kilobytes: a larger file is no layout, and is refused before it is parsed."""
MAX_COORDINATE = 1e6
"""Largest magnitude of a coordinate (mm or px): far beyond any table or image, and small enough
that fitting the homography cannot overflow."""

Coordinate = Annotated[float, Field(allow_inf_nan=False, ge=-MAX_COORDINATE, le=MAX_COORDINATE)]
XY = tuple[Coordinate, Coordinate]
Polygon = Annotated[list[XY], Field(min_length=3)]
AreaName = Literal[
    "woodpile",
    "dice_area",
    "float_tray",
    "work_area",
    "banker_wager",
    "losing_wager",
    "drop_box",
    "table",
]


class LayoutError(ValueError):
    """A layout file or block that cannot be used; the message is one line naming the key."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReferencePoints(_Strict):
    """Matching points: table millimetres and their image pixels (at least four pairs)."""

    table_mm: Annotated[list[XY], Field(min_length=MIN_REFERENCE_POINTS)]
    image_px: Annotated[list[XY], Field(min_length=MIN_REFERENCE_POINTS)]

    @model_validator(mode="after")
    def _same_count(self) -> ReferencePoints:
        if len(self.table_mm) != len(self.image_px):
            raise ValueError(
                f"table_mm has {len(self.table_mm)} points, image_px {len(self.image_px)}"
            )
        return self


class LayoutSpec(_Strict):
    """The YAML document, validated."""

    version: Literal[1] = 1
    camera: str = "default"
    image_size_wh: tuple[Annotated[int, Field(gt=0)], Annotated[int, Field(gt=0)]] | None = None
    # a tile's long side in image px, measured on the camera's picture: tells the scale where
    # there are no reference points (with them it is computed from the table millimetres)
    tile_length_px: Annotated[float, Field(gt=0, le=MAX_COORDINATE, allow_inf_nan=False)] | None = (
        None
    )
    chung_box: Annotated[int, Field(ge=1, le=8)] = 1
    coordinates: Literal["table_mm", "image_px"]
    reference_points: ReferencePoints | None = None
    boxes: dict[int, Polygon]
    areas: dict[AreaName, Polygon]

    @model_validator(mode="after")
    def _complete(self) -> LayoutSpec:
        if sorted(self.boxes) != list(BOX_NUMBERS):
            raise ValueError(f"boxes must be numbered 1-8 exactly, got {sorted(self.boxes)}")
        missing = [a for a in REQUIRED_AREAS if a not in self.areas]
        if missing:
            raise ValueError(f"areas misses {', '.join(missing)}")
        if self.coordinates == "table_mm" and self.reference_points is None:
            raise ValueError("coordinates: table_mm needs reference_points")
        return self


def fit_homography(src_xy: np.ndarray, dst_xy: np.ndarray) -> np.ndarray:
    """Least-squares (DLT) homography ``(3, 3)`` taking ``src (N, 2)`` to ``dst (N, 2)``, N >= 4.

    >>> src = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float)
    >>> (fit_homography(src, src * 2 + 5).round(6) + 0.0).tolist()
    [[2.0, 0.0, 5.0], [0.0, 2.0, 5.0], [0.0, 0.0, 1.0]]
    """
    src, dst = np.asarray(src_xy, np.float64), np.asarray(dst_xy, np.float64)
    # Normalise both point sets for a well-conditioned system (Hartley).
    t_src, t_dst = _normaliser(src), _normaliser(dst)
    s, d = apply_homography(t_src, src), apply_homography(t_dst, dst)
    rows = []
    for (x, y), (u, v) in zip(s, d, strict=True):
        rows.append([-x, -y, -1, 0, 0, 0, u * x, u * y, u])
        rows.append([0, 0, 0, -x, -y, -1, v * x, v * y, v])
    _, singular, vt = np.linalg.svd(np.asarray(rows))
    if singular[-2] <= np.finfo(float).eps * singular[0]:
        raise LayoutError("reference points are degenerate (three or more on one line?)")
    h = np.linalg.inv(t_dst) @ vt[-1].reshape(3, 3) @ t_src
    return h / h[2, 2]


def _normaliser(xy: np.ndarray) -> np.ndarray:
    centre = xy.mean(axis=0)
    spread = np.sqrt(((xy - centre) ** 2).sum(axis=1)).mean() or 1.0
    k = np.sqrt(2) / spread
    return np.array([[k, 0, -k * centre[0]], [0, k, -k * centre[1]], [0, 0, 1.0]])


def apply_homography(h: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """Apply a ``(3, 3)`` homography to points ``(N, 2)``; returns ``(N, 2)`` float64."""
    pts = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
    homog = pts @ h[:, :2].T + h[:, 2]
    return homog[:, :2] / homog[:, 2:3]


def points_in_polygon(polygon_xy: np.ndarray, points_xy: np.ndarray) -> np.ndarray:
    """Even-odd test of points ``(N, 2)`` against a polygon ``(M, 2)``; returns ``(N,)`` bool.

    >>> square = np.array([[0, 0], [2, 0], [2, 2], [0, 2]], float)
    >>> points_in_polygon(square, np.array([[1, 1], [3, 1]], float)).tolist()
    [True, False]
    """
    x, y = points_xy[:, 0:1], points_xy[:, 1:2]
    x0, y0 = polygon_xy[:, 0], polygon_xy[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    straddles = (y0 > y) != (y1 > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_cross = x0 + (y - y0) * (x1 - x0) / (y1 - y0)
    return np.count_nonzero(straddles & (x < x_cross), axis=1) % 2 == 1


@dataclass(frozen=True)
class Layout:
    """A camera's table layout: zone polygons ``(M, 2)`` in image pixels, in lookup order.

    ``homography_img_from_table (3, 3)`` maps table mm to image px; None when the layout gave
    only pixel polygons and no reference points.
    """

    camera: str
    zones_px: dict[str, np.ndarray]
    chung_box: int
    image_size_wh: tuple[int, int] | None = None
    homography_img_from_table: np.ndarray | None = None
    tile_px: float | None = None  # a tile's long side in image px; None: not known
    # where tile_px came from: "table_mm" (the homography), "given" (tile_length_px),
    # "boxes" (estimated from the boxes' size: an image_px layout without reference points)
    tile_px_from: str | None = None

    @property
    def tile_note(self) -> str | None:
        """One line for an operator when the tile's size is a guess, else None."""
        if self.tile_px_from != "boxes" or self.tile_px is None:
            return None
        return (
            f"a tile's long side estimated from the boxes' size: {self.tile_px:.0f} px "
            "(tile_length_px in the layout sets it)"
        )

    @property
    def box_polygons_px(self) -> dict[int, np.ndarray]:
        """Box number (1-8) -> polygon ``(M, 2)`` px."""
        return {n: self.zones_px[f"box_{n}"] for n in BOX_NUMBERS}

    @property
    def chung_zone(self) -> str:
        """Zone name of the box the chung sits on (``box_1`` when the house banks)."""
        return f"box_{self.chung_box}"

    def zone_of(self, points_xy: np.ndarray) -> list[str]:
        """Zone name of each image point ``(N, 2)`` px: the first zone containing it, else
        ``off_table``.
        """
        pts = np.asarray(points_xy, dtype=np.float64).reshape(-1, 2)
        names = np.full(len(pts), OFF_TABLE, dtype=object)
        unassigned = np.ones(len(pts), bool)
        for name, polygon in self.zones_px.items():
            hit = unassigned & points_in_polygon(polygon, pts)
            names[hit] = name
            unassigned &= ~hit
        return [str(n) for n in names]

    def image_to_table(self, xy_px: np.ndarray) -> np.ndarray:
        """Image points ``(N, 2)`` px to table points ``(N, 2)`` mm on the felt."""
        if self.homography_img_from_table is None:
            raise LayoutError(f"layout '{self.camera}' has no reference_points: no table coords")
        return apply_homography(np.linalg.inv(self.homography_img_from_table), xy_px)

    def table_to_image(self, xy_mm: np.ndarray) -> np.ndarray:
        """Table points ``(N, 2)`` mm to image points ``(N, 2)`` px."""
        if self.homography_img_from_table is None:
            raise LayoutError(f"layout '{self.camera}' has no reference_points: no table coords")
        return apply_homography(self.homography_img_from_table, xy_mm)


def _error_line(err: ValidationError, source: str) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    if first["type"] == "extra_forbidden":
        return f"{source}: unknown key '{where}'"
    if first["type"] == "missing":
        return f"{source}: missing key '{where}'"
    message = first["msg"].removeprefix("Value error, ")
    return f"{source}: {where}: {message}" if where else f"{source}: {message}"


def build_layout(spec: LayoutSpec) -> Layout:
    """The :class:`Layout` of a validated spec (fits the homography, maps mm zones to px)."""
    h = None
    if spec.reference_points is not None:
        ref = spec.reference_points
        h = fit_homography(np.array(ref.table_mm), np.array(ref.image_px))
    polygons = {f"box_{n}": spec.boxes[n] for n in BOX_NUMBERS}
    polygons |= {a: spec.areas[a] for a in AREA_ORDER if a in spec.areas}
    zones = {k: np.asarray(v, np.float64) for k, v in polygons.items()}
    if spec.coordinates == "table_mm":
        zones = {k: apply_homography(h, v) for k, v in zones.items()}
    boxes = [zones[f"box_{n}"] for n in BOX_NUMBERS]
    if spec.tile_length_px is not None:
        tile_px, source = spec.tile_length_px, "given"
    elif h is not None:
        tile_px, source = _tile_px(h, [np.mean(b, axis=0) for b in boxes]), "table_mm"
    else:
        tile_px, source = _tile_px_of_boxes(boxes), "boxes"
    return Layout(spec.camera, zones, spec.chung_box, spec.image_size_wh, h, tile_px, source)


# A betting box's size in tiles: the square root of its area over a tile's long side, on the
# renderer's six training families and training look (per family 2.20 for the compact table to
# 2.96; two_rows_wine and teal_dim, held out, not used); a casino's print may differ, so a
# layout's tile_length_px, where given, is taken instead.
BOX_SIDE_IN_TILES = 2.62


def as_pixel_layout(layout: Layout, scaled: bool = True) -> Layout:
    """``layout``'s zones as a casino might write them: an ``image_px`` layout with neither
    reference points nor ``tile_length_px`` (the tile's length then estimated from the boxes);
    ``scaled=False``: no tile length at all (the models see the picture at its own scale)."""
    zones = {k: v.tolist() for k, v in layout.zones_px.items()}
    spec: dict[str, Any] = {
        "version": 1,
        "camera": layout.camera,
        "chung_box": layout.chung_box,
        "coordinates": "image_px",
        "boxes": {n: zones[f"box_{n}"] for n in BOX_NUMBERS},
        "areas": {a: zones[a] for a in AREA_ORDER if a in zones},
    }
    if layout.image_size_wh is not None:
        spec["image_size_wh"] = list(layout.image_size_wh)
    out = parse_layout(spec, f"{layout.camera} in pixels")
    return out if scaled else replace(out, tile_px=None, tile_px_from=None)


def _tile_px_of_boxes(boxes: list[np.ndarray]) -> float:
    """A tile's long side in image px estimated from the boxes' polygons (px): the square root
    of the median box area over :data:`BOX_SIDE_IN_TILES`.

    >>> round(_tile_px_of_boxes([np.array([[0, 0], [262, 0], [262, 262], [0, 262]])] * 8), 1)
    100.0
    """
    areas = [
        0.5 * abs(float(np.dot(b[:, 0], np.roll(b[:, 1], 1) - np.roll(b[:, 1], -1)))) for b in boxes
    ]
    return math.sqrt(float(np.median(areas))) / BOX_SIDE_IN_TILES


def _tile_px(h: np.ndarray, at_px: list[np.ndarray]) -> float:
    """A tile's long side in image px, averaged over image points (the homography's local
    scale: the square root of the area a table mm^2 takes there)."""
    inverse = np.linalg.inv(h)
    sides = []
    for point in at_px:
        mm = apply_homography(inverse, point.reshape(1, 2))[0]
        square = mm + np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
        (ux, uy), (vx, vy) = apply_homography(h, square)[1:] - apply_homography(h, square)[0]
        sides.append(math.sqrt(abs(ux * vy - uy * vx)))
    return TILE_LENGTH_MM * float(np.mean(sides))


def parse_layout(data: Any, source: str = "layout") -> Layout:
    """Validate a layout document (already parsed YAML/JSON) and build the :class:`Layout`."""
    if not isinstance(data, dict):
        raise LayoutError(f"{source}: expected a mapping at the top level")
    try:
        spec = LayoutSpec.model_validate(data)
    except ValidationError as err:
        raise LayoutError(_error_line(err, source)) from None
    try:
        return build_layout(spec)
    except LayoutError as err:
        raise LayoutError(f"{source}: {err}") from None


def load_layout(path: str | Path) -> Layout:
    """Read and validate a layout YAML file; raises :class:`LayoutError` (one line)."""
    path = Path(path)
    return parse_layout(read_yaml(path, "a layout", LayoutError, MAX_LAYOUT_BYTES), str(path))


def read_yaml(path: Path, what: str, error: type[ValueError], max_bytes: int) -> Any:
    """The parsed YAML of a UTF-8 file of at most ``max_bytes`` (``what`` it should be, for
    the message); anything wrong is ``error`` with one line naming the file."""
    try:
        with path.open("rb") as file:
            raw = file.read(max_bytes + 1)
    except OSError as err:
        raise error(f"{path}: cannot read ({err.strerror})") from None
    if len(raw) > max_bytes:
        raise error(f"{path}: larger than {max_bytes} bytes, not {what}")
    try:
        return yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise error(f"{path}: not UTF-8 text (byte {err.start})") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise error(f"{path}: not valid YAML{where}") from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise error(f"{path}: nested too deep to be {what}") from None


def load_default_layout() -> Layout:
    """The packaged layout that matches the renderer's default camera (1920x1080)."""
    package, name = DEFAULT_LAYOUT_RESOURCE
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return parse_layout(yaml.safe_load(text), f"{package}/{name}")


def _reference_points_mm(zones_mm: dict[str, list]) -> np.ndarray:
    """Four table points ``(4, 2)`` mm: the extremes of all zone points along the diagonals."""
    pts = np.concatenate([np.asarray(p, np.float64).reshape(-1, 2) for p in zones_mm.values()])
    directions = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float64)
    return pts[np.argmax(pts @ directions.T, axis=0)]


def spec_from_scenario(layout_block: dict, camera: str = "scenario") -> dict:
    """A layout document (plain dict, the YAML schema) from a scenario.json ``layout`` block.

    Uses the block's ``zones_mm`` and ``homography_img_from_table``; the reference points are
    four extreme table points and their images.
    """
    try:
        zones_mm = layout_block["zones_mm"]
        h = np.asarray(layout_block["homography_img_from_table"], np.float64).reshape(3, 3)
        ref_mm = _reference_points_mm(zones_mm)
        boxes = {n: zones_mm[f"box_{n}"] for n in BOX_NUMBERS}
    except (KeyError, TypeError, ValueError) as err:
        raise LayoutError(f"scenario layout block: missing or malformed {err}") from None
    spec: dict = {"version": 1, "camera": camera}
    if "resolution_wh" in layout_block:
        spec["image_size_wh"] = list(layout_block["resolution_wh"])
    spec |= {
        "chung_box": int(layout_block.get("chung_box", 1)),
        "coordinates": "table_mm",
        "reference_points": {
            "table_mm": np.round(ref_mm, 2).tolist(),
            "image_px": np.round(apply_homography(h, ref_mm), 3).tolist(),
        },
        "boxes": boxes,
        "areas": {a: zones_mm[a] for a in AREA_ORDER if a in zones_mm},
    }
    return spec


def layout_from_scenario(scenario: dict | str | Path) -> Layout:
    """The layout of a rendered scenario: its ``scenario.json`` path or parsed dict."""
    if not isinstance(scenario, dict):
        scenario = json.loads(Path(scenario).read_text(encoding="utf-8"))
    block = dict(scenario.get("layout") or {})
    if "resolution_wh" in scenario:
        block.setdefault("resolution_wh", scenario["resolution_wh"])
    return parse_layout(spec_from_scenario(block), "scenario layout")
