"""Drawing each kind of object (tiles, chip stacks, dice, hands, the chung) on the canvas.

Each ``draw_*`` composites one object through a :class:`~vision.synth.compose.CanvasDrawer`
and returns a :class:`Drawn` record with the image-space geometry its ground truth needs.
Sprites come from a :class:`SpriteBank`, which renders each appearance once.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from vision.synth.compose import CanvasDrawer, ObjectPixels, place, transform
from vision.synth.hands import hand_sprite
from vision.synth.paint import Sprite, circle_points, rounded_rect, scale_bgr
from vision.synth.scene import (
    ChipStack,
    DiceLook,
    DieState,
    Distractor,
    HandState,
    TileLook,
    TileState,
)
from vision.synth.settings import RenderSettings
from vision.synth.sprites import (
    CHIP_COLOURS,
    CHUNG_BGR,
    DISTRACTOR_THICKNESS_MM,
    chip_sprite,
    chung_sprite,
    die_sprite,
    lammer_sprite,
    plaque_sprite,
    tile_back_sprite,
    tile_face_sprite,
    tile_outline,
)

# side bands are darker than the lit top; alternate chips differ so stacks read as layers
CHIP_SIDE_SHADES = (0.82, 0.62)
SEAM_SHADE = 0.5
HAND_POSE_STEP = 0.1
DIE_TILT_STEP_DEG = 5.0
# the hand's shadow falls this many mm per mm of hand height along the light direction
HAND_SHADOW_RUN = 0.6

Source = TileState | ChipStack | DieState | HandState | Distractor


@dataclass
class Drawn:
    """One drawn object: its scene state, label, pixels and image geometry ``(N, 2)`` px."""

    source: Source
    label: int
    pixels: ObjectPixels | None
    extent_px: np.ndarray
    obb_px: np.ndarray


class SpriteBank:
    """Renders and caches sprites by appearance (owned by one renderer; not shared)."""

    def __init__(self, settings: RenderSettings):
        self.settings = settings
        self._cache: OrderedDict[tuple, Sprite] = OrderedDict()
        self.tile_outline = tile_outline(settings)
        z = settings.sizes
        self.chip_outline = circle_points(z.chip_diameter_mm / 2, settings.circle_points)
        self.die_outline = rounded_rect(z.die_mm / 2, z.die_mm / 2, z.die_corner_mm)

    def _get(self, key: tuple, make) -> Sprite:
        """Least-recently-used cache; big hand sprites are capped separately."""
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        sprite = self._cache[key] = make()
        limit = self.settings.max_hand_sprites if key[0] == "hand" else self.settings.max_sprites
        same = [k for k in self._cache if (k[0] == "hand") == (key[0] == "hand")]
        for old in same[: max(0, len(same) - limit)]:
            del self._cache[old]
        return sprite

    def tile(self, face: str | None, look: TileLook) -> Sprite:
        if face is None:
            return self._get(("back", look), lambda: tile_back_sprite(look, self.settings))
        return self._get(("face", face, look), lambda: tile_face_sprite(face, look, self.settings))

    def chip(self, denomination: str, style: str = "classic") -> Sprite:
        return self._get(
            ("chip", denomination, style), lambda: chip_sprite(denomination, self.settings, style)
        )

    def distractor(self, thing: Distractor) -> Sprite:
        if thing.kind == "plaque":
            return self._get(("plaque", thing.bgr), lambda: plaque_sprite(thing.bgr, self.settings))
        key = ("lammer", thing.word, thing.bgr)
        return self._get(key, lambda: lammer_sprite(thing.word, thing.bgr, self.settings))

    def die(self, die: DieState, look: DiceLook) -> Sprite:
        if die.flat:
            return self._get(
                ("die", die.value, look), lambda: die_sprite(die.value, self.settings, None, look)
            )
        tilt = round(die.tilt_deg / DIE_TILT_STEP_DEG) * DIE_TILT_STEP_DEG
        key = ("die", die.value, die.side_value, tilt, look)
        return self._get(
            key, lambda: die_sprite(die.value, self.settings, (die.side_value, tilt), look)
        )

    def hand(self, hand: HandState) -> Sprite:
        pose = round(hand.pose / HAND_POSE_STEP) * HAND_POSE_STEP
        key = ("hand", hand.skin_bgr, hand.sleeve_bgr, pose, hand.left)
        return self._get(
            key, lambda: hand_sprite(hand.skin_bgr, hand.sleeve_bgr, pose, hand.left, self.settings)
        )

    def chung(self) -> Sprite:
        return self._get(("chung",), lambda: chung_sprite(self.settings))


def _image(d: CanvasDrawer, local_pts: np.ndarray, local: np.ndarray, height: float) -> np.ndarray:
    return d.camera.table_to_image(d.camera.lift(transform(local, local_pts), height))


def _rect(w: float, h: float) -> np.ndarray:
    return np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])


def draw_tile(
    d: CanvasDrawer, bank: SpriteBank, tile: TileState, look: TileLook, label: int
) -> Drawn:
    """A tile at its stack level; the side band shows its thickness under a tilted camera."""
    z = bank.settings.sizes
    local = place(tile.xy_mm, tile.angle_deg)
    outline = transform(local, bank.tile_outline)
    h0, h1 = tile.level * z.tile_thickness_mm, (tile.level + 1) * z.tile_thickness_mm
    sprite = bank.tile(tile.face if tile.face_up else None, look)
    d.begin()
    if tile.level == 0:
        d.shadow(sprite, local)
    d.prism(outline, (h0, h1), look.side_bgr, label)
    if tile.level > 0:
        d.seam(outline, h0, scale_bgr(look.side_bgr, SEAM_SHADE))
    d.sprite(sprite, local, h1, label)
    corners = _rect(z.tile_width_mm, z.tile_length_mm)
    top = _image(d, corners, local, h1)
    extent = np.vstack([top, _image(d, corners, local, h0)])
    return Drawn(tile, label, d.end(label), extent, top)


def draw_chips(
    d: CanvasDrawer, bank: SpriteBank, stack: ChipStack, label: int, style: str = "classic"
) -> Drawn:
    """A chip stack: one side band per chip, the top chip's face (of ``style``) on top."""
    thick = bank.settings.sizes.chip_thickness_mm
    local = place(stack.xy_mm, stack.angle_deg)
    outline = transform(local, bank.chip_outline)
    top_sprite = bank.chip(stack.denominations[-1], style)
    d.begin()
    d.shadow(top_sprite, local)
    colours = [
        scale_bgr(CHIP_COLOURS[name][0], CHIP_SIDE_SHADES[k % 2])
        for k, name in enumerate(stack.denominations)
    ]
    top_h = len(stack.denominations) * thick
    d.layers(outline, np.linspace(0.0, top_h, len(colours) + 1), colours, label)
    d.sprite(top_sprite, local, top_h, label)
    top = _image(d, bank.chip_outline, local, top_h)
    extent = np.vstack([top, _image(d, bank.chip_outline, local, 0.0)])
    return Drawn(stack, label, d.end(label), extent, top)


def draw_distractor(d: CanvasDrawer, bank: SpriteBank, thing: Distractor, label: int) -> Drawn:
    """A plaque or a lammer: a thin slab (its side darker) with its sprite on top."""
    sprite = bank.distractor(thing)
    height = DISTRACTOR_THICKNESS_MM[thing.kind]
    local = place(thing.xy_mm, thing.angle_deg + (90.0 if thing.kind == "plaque" else 0.0))
    d.begin()
    d.shadow(sprite, local)
    d.prism(transform(local, sprite.hull_mm), (0.0, height), scale_bgr(thing.bgr, 0.6), label)
    d.sprite(sprite, local, height, label)
    top = _image(d, sprite.hull_mm, local, height)
    extent = np.vstack([top, _image(d, sprite.hull_mm, local, 0.0)])
    return Drawn(thing, label, d.end(label), extent, top)


def draw_die(d: CanvasDrawer, bank: SpriteBank, die: DieState, look: DiceLook, label: int) -> Drawn:
    """A die: flat (top face plus sides) or tipped (two faces showing)."""
    size = bank.settings.sizes.die_mm
    local = place(die.xy_mm, die.angle_deg)
    sprite = bank.die(die, look)
    outline = transform(local, sprite.hull_mm)
    d.begin()
    d.shadow(sprite, local)
    d.prism(outline, (0.0, size), scale_bgr(look.body_bgr, look.side_shade), label)
    d.sprite(sprite, local, size, label)
    top = _image(d, _rect(size, size), local, size)
    extent = np.vstack(
        [_image(d, sprite.hull_mm, local, size), _image(d, sprite.hull_mm, local, 0.0)]
    )
    return Drawn(die, label, d.end(label), extent, top)


def draw_hand(d: CanvasDrawer, bank: SpriteBank, hand: HandState, light_dir, label: int) -> Drawn:
    """A hand held ``height_mm`` above the felt, its soft shadow offset along the light."""
    sprite = bank.hand(hand)
    local = place(hand.xy_mm, hand.angle_deg)
    run = np.asarray(light_dir, dtype=np.float64) * hand.height_mm * HAND_SHADOW_RUN
    d.begin()
    d.shadow(sprite, place(tuple(np.asarray(hand.xy_mm) + run), hand.angle_deg))
    d.sprite(sprite, local, hand.height_mm, label)
    hull = _image(d, sprite.hull_mm, local, hand.height_mm)
    return Drawn(hand, label, d.end(label), hull, hull)


def draw_chung(d: CanvasDrawer, bank: SpriteBank, xy_mm: tuple[float, float], label: int) -> None:
    """The chung plaque (not an annotated object, but it occludes like one)."""
    sprite = bank.chung()
    height = bank.settings.sizes.chung_height_mm
    local = place(xy_mm, 0.0)
    d.begin()
    d.shadow(sprite, local)
    d.prism(
        transform(local, sprite.hull_mm), (0.0, height), scale_bgr(CHUNG_BGR, SEAM_SHADE), label
    )
    d.sprite(sprite, local, height, label)
