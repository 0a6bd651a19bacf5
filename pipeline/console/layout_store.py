"""The layout editor's documents: the template fitted by four clicks, and the layouts folder.

The editor's page and server speak one JSON shape, a *draft* (zones in image pixels)::

    {"camera": "T7", "image_size_wh": [1920, 1080], "chung_box": 1,
     "zones": {"box_1": [[u, v], ...], ..., "box_8": [...], "woodpile": [...], ...},
     "reference_points": {"table_mm": [[x, y], ...], "image_px": [[u, v], ...]} | None}

Zone names are those of :class:`pipeline.layout.Layout` (``box_1`` .. ``box_8``, then the areas).
The template is the packaged default layout (``pipeline/data/default_layout.yaml``: zones in
table millimetres, its four reference points the table's corners): :func:`fit_template` maps it
onto a camera's picture by the homography from those corners to four clicked image points. A
draft is saved as an ``image_px`` layout YAML (pipeline/layout.py's schema, reference points
kept) only once :func:`pipeline.layout.parse_layout` accepts it and its tile size is one the
pipeline supports (:func:`vision.view.check_tile_px`, default view settings); every error is
one line.
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import ValidationError

from pipeline.layout import (
    AREA_ORDER,
    BOX_NUMBERS,
    DEFAULT_LAYOUT_RESOURCE,
    MAX_LAYOUT_BYTES,
    LayoutError,
    LayoutSpec,
    apply_homography,
    fit_homography,
    parse_layout,
    read_yaml,
)
from vision.view import ViewError, check_tile_px

NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A layout's name: its file is ``NAME.yaml`` in the layouts folder, so no path can hide in it."""
CORNER_COUNT = 4
COLLINEAR_TOLERANCE = 1e-3  # twice a triangle's area over the spread squared: a line
PX_DECIMALS = 2  # a hundredth of a pixel: far below what a click or the detector resolves
BOX_ZONES = tuple(f"box_{n}" for n in BOX_NUMBERS)
ZONE_NAMES = BOX_ZONES + AREA_ORDER
FILE_HEADER = (
    "# Table layout for one camera (schema: pipeline/layout.py), made in the console's layout\n"
    "# editor: zones in image px; reference_points: the template's table corners and where\n"
    "# they lie in the picture.\n"
)


class LayoutStoreError(ValueError):
    """A draft, a name or a file the editor cannot use; the message is one line."""


class LayoutExists(LayoutStoreError):
    """Saving would replace a layout, and the page did not ask to."""


class LayoutMissing(LayoutStoreError):
    """No layout of that name in the folder."""


@dataclass(frozen=True)
class Template:
    """The default layout in table mm: corners ``(4, 2)`` and zone polygons ``(M, 2)``."""

    corners_mm: np.ndarray
    zones_mm: dict[str, np.ndarray]
    chung_box: int

    def as_json(self) -> dict[str, Any]:
        """What the page needs to draw the corner guide and label the zones."""
        return {
            "corners_mm": self.corners_mm.tolist(),
            "zones_mm": {k: v.tolist() for k, v in self.zones_mm.items()},
            "chung_box": self.chung_box,
            "zone_names": list(self.zones_mm),
        }


def load_template() -> Template:
    """The packaged default layout as a :class:`Template` (its reference points: the corners)."""
    package, name = DEFAULT_LAYOUT_RESOURCE
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    spec = LayoutSpec.model_validate(yaml.safe_load(text))
    if spec.coordinates != "table_mm" or spec.reference_points is None:
        raise LayoutError(f"{package}/{name}: the template must be in table_mm with its corners")
    corners = np.asarray(spec.reference_points.table_mm, np.float64)
    if len(corners) != CORNER_COUNT:
        raise LayoutError(f"{package}/{name}: the template needs {CORNER_COUNT} corners")
    zones = {f"box_{n}": spec.boxes[n] for n in BOX_NUMBERS}
    zones |= {a: spec.areas[a] for a in AREA_ORDER if a in spec.areas}
    return Template(
        corners, {k: np.asarray(v, np.float64) for k, v in zones.items()}, spec.chung_box
    )


def fit_template(template: Template, corners_px: Any) -> dict[str, Any]:
    """The draft of ``template`` placed by its corners at ``corners_px`` (4 image points, in the
    template's corner order). Raises :class:`LayoutStoreError` for anything but four finite
    points that keep the table on one side of the camera (no fold, no three on a line)."""
    every_mm = np.concatenate([template.corners_mm, *template.zones_mm.values()])
    h, corners = _placed(template.corners_mm, corners_px, every_mm)
    return {
        "camera": "default",
        "image_size_wh": None,
        "chung_box": template.chung_box,
        "zones": {k: _rounded(apply_homography(h, v)) for k, v in template.zones_mm.items()},
        "reference_points": {"table_mm": template.corners_mm.tolist(), "image_px": corners},
    }


def move_draft(draft: Any, corners_px: Any) -> dict[str, Any]:
    """``draft`` carried by its four template corners to ``corners_px``: every zone, points
    dragged by hand included, through the homography from the old corners to the new ones."""
    reference = draft.get("reference_points") if isinstance(draft, dict) else None
    zones = draft.get("zones") if isinstance(draft, dict) else None
    if not isinstance(reference, dict) or not isinstance(zones, dict):
        raise LayoutStoreError("draft: expected zones and the four corners it was placed by")
    old = _points(reference.get("image_px"), "draft.reference_points.image_px")
    if len(old) != CORNER_COUNT:
        raise LayoutStoreError(f"draft.reference_points: {CORNER_COUNT} corners needed")
    polygons = {k: _points(v, f"draft.zones.{k}") for k, v in zones.items()}
    h, corners = _placed(old, corners_px, np.concatenate([old, *polygons.values()]))
    moved = {k: _rounded(apply_homography(h, v)) for k, v in polygons.items()}
    return draft | {"zones": moved, "reference_points": reference | {"image_px": corners}}


def _placed(
    src_xy: np.ndarray, corners_px: Any, every_xy: np.ndarray
) -> tuple[np.ndarray, list[list[float]]]:
    """The homography ``(3, 3)`` taking the corners ``src_xy (4, 2)`` to ``corners_px``, and
    those corners rounded; refused unless it keeps all of ``every_xy (N, 2)`` on one side of
    the camera (a fold mirrors part of the table: corners clicked out of order)."""
    corners = _points(corners_px, "corners_px")
    if len(corners) != CORNER_COUNT:
        raise LayoutStoreError(f"corners_px: {CORNER_COUNT} points needed, got {len(corners)}")
    if _three_on_a_line(corners):
        raise LayoutStoreError("corners_px: three corners on one line place no table")
    try:
        h = fit_homography(src_xy, corners)
    except LayoutError as err:
        raise LayoutStoreError(f"corners_px: {err}") from None
    depth = every_xy @ h[2, :2] + h[2, 2]  # the homography's w: one sign on the whole table
    if not (np.all(depth > 0) or np.all(depth < 0)):
        raise LayoutStoreError("corners_px: these corners fold the table; click them in order")
    return h, _rounded(corners)


def spec_from_draft(draft: Any, source: str = "draft") -> dict[str, Any]:
    """The layout YAML document (``coordinates: image_px``) of a draft, once
    :func:`pipeline.layout.parse_layout` accepts it; else :class:`LayoutStoreError`."""
    if not isinstance(draft, dict):
        raise LayoutStoreError(f"{source}: expected a JSON object")
    zones = draft.get("zones")
    if not isinstance(zones, dict):
        raise LayoutStoreError(f"{source}: zones: expected an object of zone polygons")
    unknown = sorted(set(zones) - set(ZONE_NAMES))
    if unknown:
        raise LayoutStoreError(f"{source}: zones: unknown zone '{unknown[0]}'")
    missing = [z for z in BOX_ZONES if z not in zones]
    if missing:
        raise LayoutStoreError(f"{source}: zones misses {', '.join(missing)}")
    spec: dict[str, Any] = {"version": 1, "camera": draft.get("camera") or "default"}
    if draft.get("image_size_wh") is not None:
        spec["image_size_wh"] = draft["image_size_wh"]
    spec["chung_box"] = draft.get("chung_box", 1)
    spec["coordinates"] = "image_px"
    if draft.get("reference_points") is not None:
        spec["reference_points"] = draft["reference_points"]
    spec["boxes"] = {n: zones[f"box_{n}"] for n in BOX_NUMBERS}
    spec["areas"] = {a: zones[a] for a in AREA_ORDER if a in zones}
    try:
        layout = parse_layout(spec, source)
        if layout.tile_px is not None:  # what the pipeline refuses at start, refused here
            check_tile_px(layout.tile_px, frame_wh=layout.image_size_wh)
    except (LayoutError, ViewError) as err:
        line = f"{source}: {err}" if isinstance(err, ViewError) else str(err)
        raise LayoutStoreError(line) from None
    return spec


def _points(value: Any, key: str) -> np.ndarray:
    """``value`` as finite points ``(N, 2)`` float64, else one line naming ``key``."""
    try:
        points = np.asarray(value, np.float64)
    except (TypeError, ValueError):
        points = np.empty(0)
    if points.ndim != 2 or points.shape[1] != 2 or not np.all(np.isfinite(points)):
        raise LayoutStoreError(f"{key}: expected a list of [x, y] number pairs")
    return points


def _three_on_a_line(points: np.ndarray) -> bool:
    """Any three of ``points (N, 2)`` on one line, to a thousandth of the points' spread."""
    spread = np.ptp(points, axis=0).max()
    for i, j, k in itertools.combinations(range(len(points)), 3):
        (ax, ay), (bx, by) = points[j] - points[i], points[k] - points[i]
        if abs(ax * by - ay * bx) <= COLLINEAR_TOLERANCE * spread**2:
            return True
    return False


def _rounded(points: np.ndarray) -> list[list[float]]:
    return np.round(points, PX_DECIMALS).tolist()


class LayoutFolder:
    """The layouts a console serves: ``NAME.yaml`` files in one folder (made when first saved)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def names(self) -> list[str]:
        """Names of the layouts in the folder, sorted (none when the folder is missing)."""
        if not self.root.is_dir():
            return []
        stems = (p.stem for p in self.root.glob("*.yaml") if p.is_file())
        return sorted(s for s in stems if NAME_PATTERN.fullmatch(s))

    def path(self, name: str) -> Path:
        """The file of layout ``name``; a name that is not letters, digits, ``_`` or ``-`` (at
        most 64) is a :class:`LayoutStoreError`."""
        if not NAME_PATTERN.fullmatch(name):
            raise LayoutStoreError(
                f"name '{name[:80]}': use 1-64 letters, digits, '_' or '-' (no spaces, no dots)"
            )
        return self.root / f"{name}.yaml"

    def read(self, name: str) -> dict[str, Any]:
        """The draft of layout ``name`` (any valid layout: table mm zones come back in px)."""
        path = self.path(name)
        if not path.is_file():
            raise LayoutMissing(f"no layout '{name}' in {self.root}")
        raw = read_yaml(path, "a layout", LayoutStoreError, MAX_LAYOUT_BYTES)
        try:
            layout = parse_layout(raw, name)
            spec = LayoutSpec.model_validate(raw)
        except (LayoutError, ValidationError) as err:
            raise LayoutStoreError(str(err).splitlines()[0]) from None
        ref = spec.reference_points
        return {
            "camera": layout.camera,
            "image_size_wh": list(layout.image_size_wh) if layout.image_size_wh else None,
            "chung_box": layout.chung_box,
            "zones": {k: _rounded(v) for k, v in layout.zones_px.items()},
            "reference_points": None
            if ref is None
            else {
                "table_mm": [list(p) for p in ref.table_mm],
                "image_px": [list(p) for p in ref.image_px],
            },
        }

    def write(self, name: str, draft: Any, overwrite: bool = False) -> Path:
        """Validate ``draft`` and write it as ``NAME.yaml`` (atomically); an existing layout is
        replaced only with ``overwrite`` (else :class:`LayoutExists`)."""
        path = self.path(name)
        spec = spec_from_draft(draft, name)
        if path.exists() and not overwrite:
            raise LayoutExists(f"layout '{name}' exists in {self.root}; save again to replace it")
        self.root.mkdir(parents=True, exist_ok=True)
        text = FILE_HEADER + yaml.safe_dump(spec, sort_keys=False, default_flow_style=None)
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=self.root, prefix=f".{name}.", delete=False
        ) as file:
            file.write(text)
        os.replace(file.name, path)
        return path
