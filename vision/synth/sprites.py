"""Sprites of tiles (faces and backs), chip tops, dice and the chung plaque.

Pip layouts (Chinese dominoes) in units of the pip spacing, listed in the renderer's pip order
(the order :func:`paigow.tiles.half_colours` colours them): 1 one large centred pip,
2 and 3 on a diagonal, 4 the corners, 5 corners and centre, 6 two columns of three (left
column first).
"""

from __future__ import annotations

import cv2
import numpy as np

from paigow.tiles import TILES, PipColour, half_colours
from vision.synth.paint import Painter, ShadowSpec, Sprite, circle_points, rounded_rect, scale_bgr
from vision.synth.scene import DiceLook, TileLook
from vision.synth.settings import RenderSettings, Sizes

PIP_LAYOUT: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((0, 0),),
    2: ((1, -1), (-1, 1)),
    3: ((1, -1), (0, 0), (-1, 1)),
    4: ((-1, -1), (1, -1), (-1, 1), (1, 1)),
    5: ((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)),
    6: ((-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)),
}

# Chips: (body, edge inserts) colours per denomination, BGR.
CHIP_COLOURS: dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    "white": ((225, 225, 222), (190, 110, 40)),
    "red": ((40, 40, 190), (235, 235, 235)),
    "green": ((60, 135, 40), (235, 235, 235)),
    "black": ((32, 30, 30), (235, 235, 235)),
    "purple": ((130, 45, 110), (110, 215, 240)),
    "yellow": ((60, 200, 230), (40, 40, 40)),
}
DEFAULT_DICE = DiceLook()
# a translucent die's darker middle: this many steps, each this much smaller than the last
DIE_CORE_STEPS = 3
DIE_CORE_SHRINK = 0.2
PIP_RING_SHADE = 0.55
TILE_RIM_LIFT = 1.9
CHIP_CENTRE_LIFT = 1.12
CHIP_SPOTS = 4  # the spots style's edge spots
INLAY_BGR = (235, 240, 245)  # the inlay style's printed middle: the body tinted this way
INLAY_TINT = 0.45
PLAQUE_MM = (86.0, 54.0)
LAMMER_DIAMETER_MM = 30.0
DISTRACTOR_THICKNESS_MM = {"plaque": 3.0, "lammer": 2.5}
CHUNG_BGR = (60, 165, 210)
CHUNG_MARK_BGR = (30, 30, 160)


def _shadow(settings: RenderSettings) -> ShadowSpec:
    return ShadowSpec(settings.shadow_spread_mm, settings.shadow_blur_mm, settings.shadow_strength)


def _pad(settings: RenderSettings) -> float:
    """Sprite margin (mm) that holds the blurred shadow."""
    return settings.shadow_spread_mm + 3 * settings.shadow_blur_mm


def tile_outline(settings: RenderSettings) -> np.ndarray:
    """Tile footprint ``(N, 2)`` mm, long axis along ``y``."""
    z = settings.sizes
    return rounded_rect(z.tile_width_mm / 2, z.tile_length_mm / 2, z.tile_corner_mm)


def _pip_centres(count: int, half_centre_y: float, settings: RenderSettings) -> np.ndarray:
    z = settings.sizes
    dy = z.pip_dy_six_mm if count == 6 else z.pip_dy_mm
    grid = np.array(PIP_LAYOUT[count], dtype=np.float64)
    return np.column_stack([grid[:, 0] * z.pip_dx_mm, half_centre_y + grid[:, 1] * dy])


def _tile_body(look: TileLook, settings: RenderSettings) -> Painter:
    z = settings.sizes
    pad = _pad(settings)
    painter = Painter(
        (z.tile_width_mm / 2 + pad, z.tile_length_mm / 2 + pad),
        settings.canvas_px_per_mm,
        settings.supersample,
    )
    painter.polygon(tile_outline(settings), scale_bgr(look.body_bgr, TILE_RIM_LIFT))
    inner = rounded_rect(
        z.tile_width_mm / 2 - z.tile_rim_mm,
        z.tile_length_mm / 2 - z.tile_rim_mm,
        z.tile_corner_mm - z.tile_rim_mm,
    )
    painter.polygon(inner, look.body_bgr)
    return painter


def tile_face_sprite(face: str, look: TileLook, settings: RenderSettings) -> Sprite:
    """Face-up tile with the pips of ``face``; the ``top`` half at negative ``y``."""
    z = settings.sizes
    tile = TILES[face]
    painter = _tile_body(look, settings)
    half_w = z.tile_width_mm / 2 - z.tile_rim_mm - z.tile_corner_mm
    divider = scale_bgr(look.body_bgr, TILE_RIM_LIFT)
    painter.line((-half_w, 0.0), (half_w, 0.0), z.divider_width_mm, divider)
    colours = {PipColour.RED: look.red_bgr, PipColour.WHITE: look.white_bgr}
    quarter = z.tile_length_mm / 4
    for count, centre_y, pip_colours in zip(
        (tile.top, tile.bottom), (-quarter, quarter), half_colours(tile), strict=True
    ):
        radius = z.one_pip_radius_mm if count == 1 else z.pip_radius_mm
        for xy, colour in zip(_pip_centres(count, centre_y, settings), pip_colours, strict=True):
            painter.circle(tuple(xy), radius, scale_bgr(colours[colour], PIP_RING_SHADE))
            painter.circle(tuple(xy), radius * 0.8, colours[colour])
    return painter.finish(tile_outline(settings), _shadow(settings))


def tile_back_sprite(look: TileLook, settings: RenderSettings) -> Sprite:
    """Face-down tile: a plain black back."""
    return _tile_body(look, settings).finish(tile_outline(settings), _shadow(settings))


def chip_sprite(denomination: str, settings: RenderSettings, style: str = "classic") -> Sprite:
    """Top of a chip in one of :data:`~vision.synth.scene.CHIP_STYLES`; ``classic``: body
    colour, edge inserts, an inner ring."""
    z = settings.sizes
    body, insert = CHIP_COLOURS[denomination]
    radius = z.chip_diameter_mm / 2
    painter = Painter(
        (radius + _pad(settings),) * 2, settings.canvas_px_per_mm, settings.supersample
    )
    outline = circle_points(radius, settings.circle_points * 2)
    painter.polygon(outline, body)
    if style != "classic":
        _styled_chip(painter, style, body, insert, radius)
        return painter.finish(circle_points(radius, settings.circle_points), _shadow(settings))
    for k in range(z.chip_inserts):
        t = 2 * np.pi * k / z.chip_inserts
        direction = np.array([np.cos(t), np.sin(t)])
        painter.line(direction * radius * 0.78, direction * radius * 0.98, radius * 0.22, insert)
    painter.circle((0.0, 0.0), radius * 0.66, insert)
    painter.circle((0.0, 0.0), radius * 0.6, scale_bgr(body, CHIP_CENTRE_LIFT))
    return painter.finish(circle_points(radius, settings.circle_points), _shadow(settings))


def _styled_chip(painter: Painter, style: str, body, insert, radius: float) -> None:
    """Another casino's chip face on ``painter`` (its body disc drawn): ``spots``, ``inlay`` or
    ``plain`` (see :class:`vision.synth.config.ChipRanges`)."""
    if style == "spots":
        for k in range(CHIP_SPOTS):
            t = 2 * np.pi * (k + 0.5) / CHIP_SPOTS
            direction = np.array([np.cos(t), np.sin(t)])
            painter.line(direction * radius * 0.8, direction * radius * 0.96, radius * 0.5, insert)
        painter.circle((0.0, 0.0), radius * 0.7, scale_bgr(body, 0.7))
        painter.circle((0.0, 0.0), radius * 0.66, scale_bgr(body, CHIP_CENTRE_LIFT))
    elif style == "inlay":
        for r in (0.92, 0.84):
            painter.circle((0.0, 0.0), radius * r, insert)
            painter.circle((0.0, 0.0), radius * (r - 0.03), body)
        inlay = tuple(round(c + (p - c) * INLAY_TINT) for c, p in zip(body, INLAY_BGR, strict=True))
        painter.circle((0.0, 0.0), radius * 0.62, inlay)
        painter.text((0.0, radius * 0.3), "CASINO", radius * 0.14, scale_bgr(body, 0.8))
    elif style == "plain":
        painter.circle((0.0, 0.0), radius * 0.86, scale_bgr(body, 0.8))
        painter.circle((0.0, 0.0), radius * 0.82, scale_bgr(body, CHIP_CENTRE_LIFT))
    else:
        raise ValueError(f"unknown chip style {style!r}")


def plaque_sprite(bgr, settings: RenderSettings) -> Sprite:
    """A plaque: a pearly rectangle with a border and a printed value, long side along ``x``."""
    half_w, half_h = PLAQUE_MM[0] / 2, PLAQUE_MM[1] / 2
    painter = Painter(
        (half_w + _pad(settings), half_h + _pad(settings)),
        settings.canvas_px_per_mm,
        settings.supersample,
    )
    outline = rounded_rect(half_w, half_h, 3.0)
    painter.polygon(outline, scale_bgr(bgr, 0.8))
    painter.polygon(rounded_rect(half_w - 4.0, half_h - 4.0, 2.0), bgr)
    painter.text((0.0, 0.0), "5000", half_h * 0.5, scale_bgr(bgr, 0.35))
    return painter.finish(outline, _shadow(settings))


def lammer_sprite(word: str, bgr, settings: RenderSettings) -> Sprite:
    """A lammer: a small round marker with ``word`` across it."""
    radius = LAMMER_DIAMETER_MM / 2
    painter = Painter(
        (radius + _pad(settings),) * 2, settings.canvas_px_per_mm, settings.supersample
    )
    painter.polygon(circle_points(radius, settings.circle_points * 2), scale_bgr(bgr, 0.75))
    painter.circle((0.0, 0.0), radius * 0.88, bgr)
    painter.text((0.0, 0.0), word, radius * 0.45, (30, 30, 30))
    return painter.finish(circle_points(radius, settings.circle_points), _shadow(settings))


def _die_face(
    painter: Painter, value: int, centre_y: float, squash: float, look: DiceLook, sizes: Sizes
) -> None:
    grid = {1: ((0, 0),), 2: ((1, -1), (-1, 1)), 3: ((1, -1), (0, 0), (-1, 1))}
    grid |= {4: PIP_LAYOUT[4], 5: PIP_LAYOUT[5], 6: PIP_LAYOUT[6]}
    colour = look.one_four_bgr if value in (1, 4) else look.pip_bgr
    radius = sizes.die_one_pip_radius_mm if value == 1 else sizes.die_pip_radius_mm
    step = sizes.die_mm * 0.27
    for gx, gy in grid[value]:
        painter.circle(
            (gx * step, centre_y + gy * step * squash), radius * max(squash, 0.5), colour
        )


def _die_core(painter: Painter, look: DiceLook, half_wh: tuple[float, float], centre_y: float):
    """A translucent die's top face darkens towards its middle (a few stepped shades)."""
    for k in range(1, DIE_CORE_STEPS + 1):
        shrink = 1.0 - DIE_CORE_SHRINK * k
        shade = 1.0 - (1.0 - look.core_shade) * k / DIE_CORE_STEPS
        outline = rounded_rect(half_wh[0] * shrink, half_wh[1] * shrink, half_wh[0] * shrink / 2)
        painter.polygon(outline + np.array([0.0, centre_y]), scale_bgr(look.body_bgr, shade))


def die_sprite(
    value: int,
    settings: RenderSettings,
    tilt: tuple[int, float] | None = None,
    look: DiceLook = DEFAULT_DICE,
) -> Sprite:
    """Top face of a die; ``tilt=(side_value, tilt_deg)`` adds the side face below it."""
    z = settings.sizes
    s = z.die_mm
    squash, side = 1.0, 0.0
    if tilt is not None:
        squash, side = float(np.cos(np.radians(tilt[1]))), float(np.sin(np.radians(tilt[1])))
    top_h, side_h = s * squash, s * side
    total = top_h + side_h
    painter = Painter(
        (s / 2 + _pad(settings), total / 2 + _pad(settings)),
        settings.canvas_px_per_mm,
        settings.supersample,
    )
    top_c = -total / 2 + top_h / 2
    painter.polygon(
        rounded_rect(s / 2, total / 2, z.die_corner_mm), scale_bgr(look.body_bgr, look.side_shade)
    )
    painter.polygon(
        rounded_rect(s / 2, top_h / 2, z.die_corner_mm * squash) + np.array([0.0, top_c]),
        look.body_bgr,
    )
    if look.core_shade != 1.0:
        _die_core(painter, look, (s / 2, top_h / 2), top_c)
    _die_face(painter, value, top_c, squash, look, z)
    if tilt is not None:
        _die_face(painter, tilt[0], top_h - total / 2 + side_h / 2, side, look, z)
    return painter.finish(rounded_rect(s / 2, total / 2, z.die_corner_mm), _shadow(settings))


def chung_sprite(settings: RenderSettings) -> Sprite:
    """The chung: a brass disc with a red mark, lying on the banker's box."""
    radius = settings.sizes.chung_radius_mm
    painter = Painter(
        (radius + _pad(settings),) * 2, settings.canvas_px_per_mm, settings.supersample
    )
    painter.polygon(circle_points(radius, settings.circle_points * 2), CHUNG_BGR)
    painter.circle((0.0, 0.0), radius * 0.8, scale_bgr(CHUNG_BGR, 0.8))
    painter.circle((0.0, 0.0), radius * 0.7, CHUNG_BGR)
    painter.line((-radius * 0.35, 0.0), (radius * 0.35, 0.0), radius * 0.14, CHUNG_MARK_BGR)
    painter.line((0.0, -radius * 0.45), (0.0, radius * 0.45), radius * 0.14, CHUNG_MARK_BGR)
    return painter.finish(circle_points(radius, settings.circle_points), _shadow(settings))


def sprite_mask(sprite: Sprite, threshold: float) -> np.ndarray:
    """Boolean object mask ``(h, w)`` of a sprite (alpha above ``threshold`` of 255)."""
    return sprite.bgra[..., 3] > threshold * 255


def upscale_for_view(sprite: Sprite, factor: int) -> np.ndarray:
    """Sprite composited on grey and enlarged (debugging aid)."""
    a = sprite.bgra[..., 3:4].astype(np.float32) / 255
    img = sprite.bgra[..., :3] + (1 - a) * 128
    return cv2.resize(
        img.astype(np.uint8), None, fx=factor, fy=factor, interpolation=cv2.INTER_NEAREST
    )
