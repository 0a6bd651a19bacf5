"""Random appearance (camera, felt, lighting, sensor) drawn from a domain-randomisation set.

:func:`sample_look` returns the concrete, non-random parts of a :class:`Scene` for a
:class:`~vision.synth.config.DomainRandomisation`; the scenario engine can keep them fixed for a
whole clip and vary only ``effects.noise_seed`` per frame. Still-scene content is in
:mod:`vision.synth.stills_content`.

The table's structure, frame size, dice and chip design (fields added with look families) are
drawn from a generator spawned from the caller's (:func:`structure_rng`), never from its own
stream: a set whose draws predate them (``training``, ``shifted``) renders exactly what it
always did.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.synth.camera import CameraParams
from vision.synth.config import DomainRandomisation, Range
from vision.synth.scene import (
    BGR,
    DICE_STYLES,
    DIE_BODIES,
    VARIED_DICE,
    DiceLook,
    Effects,
    Glare,
    HandState,
    TableLook,
    TileLook,
)
from vision.synth.shapes import shaped_geometry
from vision.synth.table import LayoutGeometry

_SEED_MAX = 2**31 - 1
# today's aimed point: the middle of the table top (dealer edge -420 mm, rail +480 mm)
TABLE_CENTRE_MM = LayoutGeometry().centre_mm
LIGHT_RUN: Range = (0.3, 1.0)
# varied tile backs (ObjectRanges.varied_backs): OpenCV saturation and value ranges, dark to mid
BACK_SATURATION: Range = (0.0, 230.0)
BACK_VALUE: Range = (25.0, 150.0)
# a back whose red exceeds its green and blue by this is the held-out family's (teal_dim's
# maroon, datasets/recipes/looks/families.yaml): never drawn
HELD_OUT_RED_EXCESS = 30
BACK_SIDE_LIFT = 34  # a tile's side is this much lighter than its back, per channel


@dataclass(frozen=True, slots=True)
class Look:
    """The appearance parts of a scene."""

    camera: CameraParams
    table: TableLook
    tile_look: TileLook
    effects: Effects
    light_dir: tuple[float, float]
    layout: LayoutGeometry = field(default_factory=LayoutGeometry)
    dice: DiceLook = field(default_factory=DiceLook)
    chip_style: str = "classic"


def uniform(rng: np.random.Generator, r: Range) -> float:
    return float(rng.uniform(r[0], r[1]))


def choice(rng: np.random.Generator, options: tuple):
    return options[int(rng.integers(len(options)))]


def _jitter(rng: np.random.Generator, bgr: BGR, amount: float) -> BGR:
    return tuple(int(np.clip(c + rng.uniform(-amount, amount), 0, 255)) for c in bgr)  # type: ignore[return-value]


def structure_rng(rng: np.random.Generator) -> np.random.Generator:
    """A generator for the structure draws, spawned from ``rng`` without drawing from it (the
    same seed gives the same child)."""
    return rng.spawn(1)[0]


def sample_layout(rng: np.random.Generator, dr: DomainRandomisation) -> LayoutGeometry:
    """Shape, box scale and table scale of the table (draw from :func:`structure_rng`)."""
    lay = dr.layout
    return shaped_geometry(
        choice(rng, lay.shapes), uniform(rng, lay.box_scale), uniform(rng, lay.table_scale)
    )


def sample_camera(
    rng: np.random.Generator,
    dr: DomainRandomisation,
    aim_mm: tuple[float, float] = TABLE_CENTRE_MM,
    resolution_wh: tuple[int, int] = (1920, 1080),
) -> CameraParams:
    """A camera aimed at ``aim_mm`` (jittered): the middle of the table top."""
    c = dr.camera
    target = tuple(v + uniform(rng, c.target_jitter_mm) for v in aim_mm)
    return CameraParams(
        resolution_wh=resolution_wh,
        target_mm=target,  # type: ignore[arg-type]
        tilt_deg=uniform(rng, c.tilt_deg),
        azimuth_deg=uniform(rng, c.azimuth_deg),
        roll_deg=uniform(rng, c.roll_deg),
        px_per_mm=uniform(rng, c.px_per_mm),
        distance_mm=uniform(rng, c.distance_mm),
        principal_offset_px=(
            uniform(rng, c.principal_jitter_px),
            uniform(rng, c.principal_jitter_px),
        ),
    )


def sample_table(rng: np.random.Generator, dr: DomainRandomisation) -> TableLook:
    t = dr.table
    return TableLook(
        felt_bgr=_jitter(rng, choice(rng, t.felt_bgr), t.felt_jitter),
        print_bgr=choice(rng, t.print_bgr),
        rail_bgr=choice(rng, t.rail_bgr),
        floor_bgr=choice(rng, t.floor_bgr),
        felt_texture=round(uniform(rng, t.felt_texture), 3),
        texture_seed=int(rng.integers(_SEED_MAX)),
    )


def sample_tile_look(rng: np.random.Generator, dr: DomainRandomisation) -> TileLook:
    o = dr.objects
    return TileLook(
        body_bgr=choice(rng, o.tile_body_bgr),
        side_bgr=choice(rng, o.tile_side_bgr),
        red_bgr=choice(rng, o.red_pip_bgr),
        white_bgr=choice(rng, o.white_pip_bgr),
    )


def sample_effects(
    rng: np.random.Generator, dr: DomainRandomisation, size_wh: tuple[int, int]
) -> Effects:
    light, sensor = dr.lighting, dr.sensor
    n_glare = round(uniform(rng, light.glare_count))
    glares = tuple(
        Glare(
            (uniform(rng, (0, size_wh[0])), uniform(rng, (0, size_wh[1]))),
            uniform(rng, light.glare_radius_px),
            uniform(rng, light.glare_strength),
        )
        for _ in range(n_glare)
    )
    blur = uniform(rng, sensor.motion_blur_px) if rng.random() < sensor.motion_blur_prob else 0.0
    return Effects(
        gain=uniform(rng, light.gain),
        gradient=uniform(rng, light.gradient),
        gradient_angle_deg=uniform(rng, (0.0, 360.0)),
        vignette=uniform(rng, light.vignette),
        colour_cast=tuple(uniform(rng, light.colour_cast) for _ in range(3)),  # type: ignore[arg-type]
        glares=glares,
        noise_sigma=uniform(rng, sensor.noise_sigma),
        motion_blur_px=blur,
        motion_blur_angle_deg=uniform(rng, (0.0, 180.0)),
        jpeg_quality=int(uniform(rng, sensor.jpeg_quality)),
        noise_seed=int(rng.integers(_SEED_MAX)),
    )


def varied_dice(rng: np.random.Generator) -> DiceLook:
    """A die design of its own: a body colour, pips it may carry, the 1 and 4 in red or the
    same as the rest, an opaque or a translucent body."""
    body, pips = choice(rng, DIE_BODIES)
    pip = choice(rng, pips)
    light = sum(body) > 450
    one_four = DiceLook().one_four_bgr if light and rng.random() < 0.5 else pip  # red
    translucent = not light and rng.random() < 0.5
    return DiceLook(
        body_bgr=_jitter(rng, body, 12.0),
        pip_bgr=pip,
        one_four_bgr=one_four,
        side_shade=uniform(rng, (1.1, 1.3)) if translucent else uniform(rng, (0.62, 0.8)),
        core_shade=uniform(rng, (0.75, 0.85)) if translucent else 1.0,
    )


def varied_back(rng: np.random.Generator) -> tuple[BGR, BGR]:
    """A tile back (and its side) of any hue, dark to mid grey, never a red-dominant one."""
    while True:
        hsv = np.array(
            [[[rng.uniform(0, 180), uniform(rng, BACK_SATURATION), uniform(rng, BACK_VALUE)]]]
        ).astype(np.uint8)
        b, g, r = (int(c) for c in cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0])
        if r <= max(b, g) + HELD_OUT_RED_EXCESS:
            side = tuple(min(255, c + BACK_SIDE_LIFT) for c in (b, g, r))
            return (b, g, r), side  # type: ignore[return-value]


def sample_look(rng: np.random.Generator, dr: DomainRandomisation) -> Look:
    """Layout, camera, table, tile and dice colours, effects and light direction for one
    scene; the layout, frame size and dice come from :func:`structure_rng` of ``rng``."""
    structure = structure_rng(rng)
    layout = sample_layout(structure, dr)
    resolution_wh = choice(structure, dr.camera.resolutions_wh)
    style = choice(structure, dr.objects.dice_styles)
    dice = varied_dice(structure) if style == VARIED_DICE else DICE_STYLES[style]
    chip_style = choice(structure, dr.chips.styles)
    camera = sample_camera(rng, dr, layout.centre_mm, resolution_wh)
    angle = uniform(rng, (0.0, 2 * math.pi))
    run = uniform(rng, LIGHT_RUN)
    table, tile_look = sample_table(rng, dr), sample_tile_look(rng, dr)
    if dr.objects.varied_backs:
        body, side = varied_back(structure)
        tile_look = TileLook(body, side, tile_look.red_bgr, tile_look.white_bgr)
    return Look(
        camera=camera,
        table=table,
        tile_look=tile_look,
        effects=sample_effects(rng, dr, camera.resolution_wh),
        light_dir=(run * math.cos(angle), run * math.sin(angle)),
        layout=layout,
        dice=dice,
        chip_style=chip_style,
    )


def sample_hand(
    rng: np.random.Generator,
    dr: DomainRandomisation,
    obj_id: int,
    xy_mm: tuple[float, float],
    from_dealer: bool,
) -> HandState:
    """A hand reaching to ``xy_mm`` from the dealer's side or from the players' side."""
    base = 0.0 if from_dealer else 180.0
    return HandState(
        obj_id=obj_id,
        xy_mm=xy_mm,
        angle_deg=base + uniform(rng, dr.content.hand_angle_jitter_deg),
        height_mm=uniform(rng, dr.content.hand_height_mm),
        left=bool(rng.random() < 0.5),
        skin_bgr=choice(rng, dr.objects.skin_bgr),
        sleeve_bgr=choice(rng, dr.objects.sleeve_bgr),
        pose=round(uniform(rng, (0.0, 1.0)), 1),
    )
