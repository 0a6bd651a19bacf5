"""The renderer: scene -> 1080p BGR frame and per-object ground truth.

>>> from vision.synth.scene import Scene, TileState
>>> result = Renderer().render(Scene(tiles=(TileState(0, "6-6", True, (0.0, -100.0)),)))
>>> result.image.shape, [o.face for o in result.objects]
((1080, 1920, 3), ['6-6'])

A :class:`Renderer` owns its caches (sprites, table backgrounds, layouts, noise pool) and a
working canvas; use one per thread. Rendering is a pure function of the scene: the same scene
gives a byte-identical image and identical truth. A scene with ``layout`` set is drawn on that
table; one without, on the renderer's own ``layout``.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.synth.background import render_background
from vision.synth.camera import Camera, Canvas
from vision.synth.compose import NO_LABEL, CanvasDrawer
from vision.synth.effects import NoisePool, apply_effects
from vision.synth.objects import (
    Drawn,
    SpriteBank,
    draw_chips,
    draw_chung,
    draw_die,
    draw_distractor,
    draw_hand,
    draw_tile,
)
from vision.synth.scene import (
    ChipStack,
    DieState,
    Distractor,
    HandState,
    ObjectTruth,
    Scene,
    TableLook,
    TileState,
)
from vision.synth.settings import DEFAULT_SETTINGS, RenderSettings
from vision.synth.table import LayoutGeometry, TableLayout, default_layout, zone_at

_CHUNG_LABEL = 0
# the golden renders (tests/vision/test_looks.py) were made with OpenCV 5.0, which pyproject.toml
# pins; the train extra's opencv-python 5.1 shadows it and draws some scenes differently
GOLDEN_OPENCV = (5, 0)
_CACHED_BACKGROUNDS = 4
_CACHED_LAYOUTS = 8


@dataclass(frozen=True)
class RenderResult:
    """A rendered frame: ``image (H, W, 3)`` uint8 BGR, truth per visible object, the camera."""

    image: np.ndarray
    objects: tuple[ObjectTruth, ...]
    camera: Camera
    chung_box: int


class Renderer:
    """Renders :class:`~vision.synth.scene.Scene` objects (see module docstring)."""

    def __init__(
        self, settings: RenderSettings = DEFAULT_SETTINGS, layout: TableLayout | None = None
    ):
        self.settings = settings
        self.layout = layout or default_layout()
        self.canvas = Canvas.from_settings(settings)
        self.bank = SpriteBank(settings)
        self._layouts: dict[LayoutGeometry, TableLayout] = {self.layout.geometry: self.layout}
        self._backgrounds: dict[tuple[TableLook, LayoutGeometry], np.ndarray] = {}
        self._pool: NoisePool | None = None
        self._work: np.ndarray | None = None
        self._work_key: tuple[TableLook, LayoutGeometry] | None = None
        self._labels = np.full(self.canvas.size_wh[::-1], NO_LABEL, np.int16)
        self._dirty: list[tuple[int, int, int, int]] = []

    def layout_of(self, scene: Scene) -> TableLayout:
        """The table ``scene`` is drawn on (its own ``layout``, else the renderer's)."""
        if scene.layout is None:
            return self.layout
        if scene.layout not in self._layouts:
            if len(self._layouts) >= _CACHED_LAYOUTS:
                self._layouts.pop(next(iter(self._layouts)))
            self._layouts[scene.layout] = default_layout(scene.layout)
        return self._layouts[scene.layout]

    def background(self, look: TableLook, layout: TableLayout | None = None) -> np.ndarray:
        """The empty table canvas for ``look`` on ``layout`` (default: the renderer's; cached,
        a few are kept)."""
        layout = layout or self.layout
        key = (look, layout.geometry)
        if key not in self._backgrounds:
            if len(self._backgrounds) >= _CACHED_BACKGROUNDS:
                self._backgrounds.pop(next(iter(self._backgrounds)))
            self._backgrounds[key] = render_background(look, layout, self.canvas, self.settings)
        return self._backgrounds[key]

    def _reset_canvas(self, look: TableLook, layout: TableLayout) -> np.ndarray:
        background = self.background(look, layout)
        key = (look, layout.geometry)
        if self._work is None or self._work_key != key:
            self._work = background.copy()
            self._labels.fill(NO_LABEL)
        else:
            for x0, y0, x1, y1 in self._dirty:
                self._work[y0:y1, x0:x1] = background[y0:y1, x0:x1]
                self._labels[y0:y1, x0:x1] = NO_LABEL
        self._work_key = key
        return self._work

    def _draw_all(self, scene: Scene, layout: TableLayout, drawer: CanvasDrawer) -> list[Drawn]:
        chung_xy = layout.box(scene.chung_box).to_table(np.array(layout.geometry.chung_spot_mm))[0]
        draw_chung(drawer, self.bank, tuple(chung_xy), _CHUNG_LABEL)
        drawn: list[Drawn] = []
        label = _CHUNG_LABEL + 1
        for tile in sorted(scene.tiles, key=lambda t: t.level):
            drawn.append(draw_tile(drawer, self.bank, tile, scene.tile_look, label))
            label += 1
        for stack in scene.chips:
            drawn.append(draw_chips(drawer, self.bank, stack, label, scene.chip_style))
            label += 1
        for thing in scene.distractors:
            drawn.append(draw_distractor(drawer, self.bank, thing, label))
            label += 1
        for die in scene.dice:
            drawn.append(draw_die(drawer, self.bank, die, scene.dice_look, label))
            label += 1
        for hand in sorted(scene.hands, key=lambda h: h.height_mm):
            drawn.append(draw_hand(drawer, self.bank, hand, scene.light_dir, label))
            label += 1
        return drawn

    def render(self, scene: Scene) -> RenderResult:
        """Render one frame of ``scene``."""
        camera = Camera.from_params(scene.camera)
        layout = self.layout_of(scene)
        work = self._reset_canvas(scene.table, layout)
        drawer = CanvasDrawer(work, self._labels, self.canvas, camera, self.settings.mask_alpha)
        drawn = self._draw_all(scene, layout, drawer)
        self._dirty = drawer.dirty
        h_img = self.canvas.image_from_canvas(camera)
        w, h = scene.camera.resolution_wh
        floor = tuple(int(c) for c in scene.table.floor_bgr)
        image = cv2.warpPerspective(work, h_img, (w, h), flags=cv2.INTER_LINEAR, borderValue=floor)
        if self._pool is None:
            self._pool = NoisePool(self.settings)
        image = apply_effects(image, scene.effects, self.settings, self._pool)
        zones = zone_at(layout, np.array([d.source.xy_mm for d in drawn]).reshape(-1, 2))
        truths = [self._truth(d, z, drawer, (w, h)) for d, z in zip(drawn, zones, strict=True)]
        return RenderResult(
            image, tuple(t for t in truths if t is not None), camera, scene.chung_box
        )

    def _truth(
        self, d: Drawn, zone: str, drawer: CanvasDrawer, size_wh: tuple[int, int]
    ) -> ObjectTruth | None:
        inside = _in_frame_fraction(d.extent_px, size_wh)
        if inside <= 0 or d.pixels is None:
            return None
        w, h = size_wh
        lo = np.clip(d.extent_px.min(axis=0), 0, (w, h))
        hi = np.clip(d.extent_px.max(axis=0), 0, (w, h))
        obb = (
            _obb(d.obb_px) if isinstance(d.source, ChipStack | HandState | Distractor) else d.obb_px
        )
        visibility = drawer.visibility(d.pixels, d.label) * inside
        base = dict(
            obj_id=d.source.obj_id,
            xyxy=tuple(float(v) for v in (*lo, *hi)),
            obb_px=tuple((float(x), float(y)) for x, y in obb),
            visibility=float(min(1.0, max(0.0, visibility))),
            zone=zone,
        )
        match d.source:
            case TileState(face=face, face_up=up, level=level):
                return ObjectTruth(kind="tile", face=face, face_up=up, level=level, **base)
            case ChipStack(denominations=denoms):
                return ObjectTruth(kind="chip", chips=len(denoms), **base)
            case DieState(value=value, flat=flat):
                return ObjectTruth(kind="die", die_value=value, die_flat=flat, **base)
            case HandState():
                return ObjectTruth(kind="hand", **base)
            case Distractor(kind=kind):
                return ObjectTruth(kind=kind, **base)
        return None


def _obb(points_px: np.ndarray) -> np.ndarray:
    """Minimum-area rectangle ``(4, 2)`` around points ``(N, 2)``."""
    return cv2.boxPoints(cv2.minAreaRect(points_px.astype(np.float32))).astype(np.float64)


def _in_frame_fraction(points_px: np.ndarray, size_wh: tuple[int, int]) -> float:
    """Share of the convex hull of ``points_px`` that lies inside the image."""
    hull = cv2.convexHull(points_px.astype(np.float32))
    area = cv2.contourArea(hull)
    if area <= 0:
        return 0.0
    w, h = size_wh
    frame = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    inter, _ = cv2.intersectConvexConvex(hull, frame)
    return float(min(1.0, inter / area))


def opencv_note(version: str | None = None) -> str | None:
    """One line when the OpenCV in use (``version``: ``cv2.__version__``) is not the one the
    golden renders were made with, else None: its renders may differ from ours."""
    version = version or cv2.__version__
    if tuple(int(v) for v in version.split(".")[:2]) == GOLDEN_OPENCV:
        return None
    return (
        f"note: OpenCV {version} may render differently from the golden renders (OpenCV 5.0); "
        "the train extra's opencv-python shadows the headless 5.0: pip uninstall -y "
        "opencv-python && pip install --force-reinstall opencv-python-headless==5.0.0.93"
    )
