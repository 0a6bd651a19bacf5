"""Random, plausible table states for still datasets.

A still holds all 32 tiles somewhere sensible: part of the woodpile, groups of four in boxes
(stacked, in a row, or set as two pairs, face down or exposed), the rest washed across the
work area at any angle, face up or down; chips in the boxes (larger denominations at the
bottom), three dice in the dice area (sometimes one not flat), and hands, often over a tile.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import cv2
import numpy as np

from paigow.tiles import DECK
from vision.synth.config import DomainRandomisation
from vision.synth.sampling import choice, sample_hand, sample_look, structure_rng, uniform
from vision.synth.scene import (
    DENOMINATIONS,
    ChipStack,
    DieState,
    Distractor,
    HandState,
    Scene,
    TileState,
)
from vision.synth.settings import DEFAULT_SETTINGS, RenderSettings
from vision.synth.table import Box, TableLayout, default_layout, rect_polygon


@dataclass(frozen=True, slots=True)
class Arrangement:
    """Spacing of generated still content, mm and degrees."""

    stack_gap_mm: float = 2.0
    pair_gap_mm: float = 14.0
    jitter_mm: float = 1.5
    jitter_deg: float = 4.0
    scatter_margin_mm: float = 60.0
    scatter_tries: int = 60
    clearance_mm: float = 3.0
    occupancy_px_per_mm: float = 0.5
    chip_gap_mm: float = 4.0
    dice_min_gap_mm: float = 4.0
    die_tilt_deg: tuple[float, float] = (20.0, 40.0)
    hand_offset_mm: float = 30.0
    house_chung_prob: float = 0.5
    exposed_set_prob: float = 0.5
    side_wager_prob: float = 0.5
    hand_region_mm: tuple[float, float, float, float] = (-600.0, -250.0, 600.0, 350.0)


class Occupancy:
    """Coarse raster of the table used to keep scattered tiles from interpenetrating."""

    def __init__(self, settings: RenderSettings, arrangement: Arrangement):
        x0, y0, x1, y1 = settings.canvas_extent_mm
        self.origin = np.array([x0, y0])
        self.scale = arrangement.occupancy_px_per_mm
        self.grid = np.zeros(
            (int((y1 - y0) * self.scale) + 1, int((x1 - x0) * self.scale) + 1), np.uint8
        )

    def _poly(self, corners_mm: np.ndarray) -> np.ndarray:
        return np.round((corners_mm - self.origin) * self.scale).astype(np.int32)

    def free(self, corners_mm: np.ndarray) -> bool:
        probe = np.zeros_like(self.grid)
        cv2.fillConvexPoly(probe, self._poly(corners_mm), 1)
        return not np.any(probe & self.grid)

    def add(self, corners_mm: np.ndarray) -> None:
        cv2.fillConvexPoly(self.grid, self._poly(corners_mm), 1)


def _footprint(xy, angle_deg: float, wl: tuple[float, float]) -> np.ndarray:
    a = np.radians(angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return rect_polygon((0.0, 0.0, *wl)) @ rot.T + np.asarray(xy)


def _woodpile(
    rng, faces: list[str], n_stacks: int, layout: TableLayout, ids: Iterator[int], arr, settings
):
    z = settings.sizes
    cx, cy, _, _ = layout.geometry.woodpile_mm
    pitch = z.tile_width_mm + arr.stack_gap_mm
    tiles = []
    for s in range(n_stacks):
        x = cx + (s - 3.5) * pitch
        for level in range(4):
            dx, dy = rng.uniform(-arr.jitter_mm, arr.jitter_mm, 2)
            angle = rng.uniform(-arr.jitter_deg, arr.jitter_deg) / 2
            tiles.append(TileState(next(ids), faces.pop(), False, (x + dx, cy + dy), angle, level))
    return tiles


def _box_group(
    rng, faces: list[str], box: Box, box_spot, ids: Iterator[int], arr: Arrangement, settings
):
    """Four tiles in a box at ``box_spot`` (box-local mm): a stack, a row, or two pairs."""
    z = settings.sizes
    g_x, g_y = box_spot
    style = int(rng.integers(3))
    pitch = z.tile_width_mm + arr.stack_gap_mm
    if style == 0:
        local = [(g_x, g_y)] * 4
        levels, face_up = [0, 1, 2, 3], False
    else:
        gaps = [-1.5, -0.5, 0.5, 1.5]
        extra = [-arr.pair_gap_mm / 2] * 2 + [arr.pair_gap_mm / 2] * 2 if style == 2 else [0.0] * 4
        local = [(g_x + k * pitch + e, g_y) for k, e in zip(gaps, extra, strict=True)]
        levels, face_up = [0] * 4, bool(style == 2 and rng.random() < arr.exposed_set_prob)
    centres = box.to_table(np.array(local))
    tiles = []
    for (x, y), level in zip(centres, levels, strict=True):
        angle = box.angle_deg + rng.uniform(-arr.jitter_deg, arr.jitter_deg)
        tiles.append(TileState(next(ids), faces.pop(), face_up, (float(x), float(y)), angle, level))
    return tiles


def _scatter(
    rng, faces: list[str], layout: TableLayout, occ: Occupancy, ids, arr, settings, up_prob: float
):
    """The rest of the tiles washed across the work area, without overlaps."""
    z = settings.sizes
    cx, cy, w, h = layout.geometry.work_area_mm
    wl = (z.tile_width_mm + arr.clearance_mm, z.tile_length_mm + arr.clearance_mm)
    tiles = []
    while faces:
        face = faces.pop()
        for _ in range(arr.scatter_tries):
            xy = (
                cx + uniform(rng, (-w / 2, w / 2)),
                cy + uniform(rng, (-h / 2, h / 2 + arr.scatter_margin_mm)),
            )
            angle = uniform(rng, (0.0, 360.0))
            corners = _footprint(xy, angle, wl)
            if occ.free(corners):
                occ.add(corners)
                tiles.append(TileState(next(ids), face, bool(rng.random() < up_prob), xy, angle))
                break
    return tiles


def _tiles(
    rng, dr: DomainRandomisation, layout: TableLayout, ids, arr, settings
) -> list[TileState]:
    faces = [t.face for t in DECK]
    rng.shuffle(faces)
    n_stacks = round(uniform(rng, dr.content.woodpile_stacks))
    tiles = _woodpile(rng, faces, n_stacks, layout, ids, arr, settings)
    n_groups = int(rng.integers(0, min(8, len(faces) // 4) + 1))
    for number in rng.choice(8, n_groups, replace=False) + 1:
        spot = layout.geometry.tile_spot_mm[:2]
        tiles += _box_group(rng, faces, layout.box(int(number)), spot, ids, arr, settings)
    occ = Occupancy(settings, arr)
    z = settings.sizes
    for t in tiles:
        occ.add(_footprint(t.xy_mm, t.angle_deg, (z.tile_width_mm, z.tile_length_mm)))
    return tiles + _scatter(
        rng, faces, layout, occ, ids, arr, settings, dr.content.loose_face_up_prob
    )


def _stack(rng, dr: DomainRandomisation, obj_id: int, xy, angle: float) -> ChipStack:
    n = round(uniform(rng, dr.content.chips_per_stack))
    kinds = rng.choice(len(DENOMINATIONS), size=min(2, n), replace=False)
    values = sorted((int(choice(rng, tuple(kinds))) for _ in range(n)), reverse=True)
    return ChipStack(obj_id, xy, tuple(DENOMINATIONS[v] for v in values), angle)


def _chips(
    rng, dr, layout: TableLayout, chung_box: int, ids, arr: Arrangement, settings
) -> list[ChipStack]:
    g = layout.geometry
    pitch = settings.sizes.chip_diameter_mm + arr.chip_gap_mm
    stacks = []
    for box in layout.boxes:
        if box.number == chung_box:
            continue
        for k in range(round(uniform(rng, dr.content.chip_stacks_per_box))):
            local = np.array(
                [g.bet_spot_mm[0] + (k % 2) * pitch, g.bet_spot_mm[1] - (k // 2) * pitch]
            )
            xy = box.to_table(local + rng.uniform(-arr.jitter_mm, arr.jitter_mm, 2))[0]
            stacks.append(
                _stack(rng, dr, next(ids), (float(xy[0]), float(xy[1])), uniform(rng, (0, 360)))
            )
    for rect in (g.banker_wager_mm, g.losing_wager_mm):
        if rng.random() < arr.side_wager_prob:
            xy = (rect[0] + uniform(rng, (-rect[2] / 4, rect[2] / 4)), rect[1])
            stacks.append(_stack(rng, dr, next(ids), xy, uniform(rng, (0, 360))))
    return stacks


PLAQUE_BGR = ((225, 228, 232), (235, 215, 190), (200, 215, 240))
LAMMER_BGR = ((60, 200, 235), (235, 235, 235), (40, 130, 240), (50, 50, 200))
LAMMER_WORDS = ("BUY", "LAMMER", "1000", "CALL")


def _distractors(
    rng, dr: DomainRandomisation, layout: TableLayout, ids, arr: Arrangement, settings
) -> list[Distractor]:
    """Plaques and lammers in random boxes, beside the bet spot (none unless ``dr.chips``
    asks for them)."""
    g = layout.geometry
    pitch = settings.sizes.chip_diameter_mm + arr.chip_gap_mm
    out = []
    counts = (round(uniform(rng, dr.chips.plaques)), round(uniform(rng, dr.chips.lammers)))
    for kind, n in zip(("plaque", "lammer"), counts, strict=True):
        for _ in range(n):
            box = layout.boxes[int(rng.integers(len(layout.boxes)))]
            local = np.array([g.bet_spot_mm[0] - 1.5 * pitch, g.bet_spot_mm[1] + pitch])
            xy = box.to_table(local + rng.uniform(-arr.jitter_mm, arr.jitter_mm, 2))[0]
            colours = PLAQUE_BGR if kind == "plaque" else LAMMER_BGR
            word = choice(rng, LAMMER_WORDS) if kind == "lammer" else ""
            angle = uniform(rng, (0, 360))
            out.append(
                Distractor(
                    next(ids), (float(xy[0]), float(xy[1])), kind, choice(rng, colours), word, angle
                )
            )
    return out


def _dice(
    rng, dr: DomainRandomisation, layout: TableLayout, ids, arr: Arrangement, settings
) -> list[DieState]:
    g = layout.geometry
    size = settings.sizes.die_mm
    placed: list[np.ndarray] = []
    while len(placed) < 3:
        r = (g.dice_radius_mm - size) * np.sqrt(rng.random())
        t = uniform(rng, (0, 2 * np.pi))
        xy = np.array(g.dice_area_mm) + r * np.array([np.cos(t), np.sin(t)])
        if all(np.linalg.norm(xy - p) > size * np.sqrt(2) + arr.dice_min_gap_mm for p in placed):
            placed.append(xy)
    dice = []
    for k, xy in enumerate(placed):
        value = int(rng.integers(1, 7))
        flat = not (k == 0 and rng.random() < dr.content.die_not_flat_prob)
        side = int(choice(rng, tuple(v for v in range(1, 7) if v not in (value, 7 - value))))
        tilt = uniform(rng, arr.die_tilt_deg)
        dice.append(
            DieState(
                next(ids),
                (float(xy[0]), float(xy[1])),
                value,
                uniform(rng, (0, 360)),
                flat,
                side,
                tilt,
            )
        )
    return dice


def _hands(
    rng, dr: DomainRandomisation, tiles: list[TileState], ids, arr: Arrangement
) -> list[HandState]:
    hands = []
    for _ in range(round(uniform(rng, dr.content.hands))):
        if tiles and rng.random() < dr.content.hand_over_tile_prob:
            target = np.array(choice(rng, tuple(tiles)).xy_mm)
        else:
            x0, y0, x1, y1 = arr.hand_region_mm
            target = np.array([uniform(rng, (x0, x1)), uniform(rng, (y0, y1))])
        xy = target + rng.uniform(-arr.hand_offset_mm, arr.hand_offset_mm, 2)
        hands.append(sample_hand(rng, dr, next(ids), (float(xy[0]), float(xy[1])), bool(xy[1] < 0)))
    return hands


def random_scene(
    rng: np.random.Generator,
    dr: DomainRandomisation,
    layout: TableLayout | None = None,
    settings: RenderSettings = DEFAULT_SETTINGS,
) -> Scene:
    """A random still scene; the same generator state gives the same scene. It is set on
    ``layout`` when given, else on the layout sampled from ``dr``."""
    arr = Arrangement()
    ids = itertools.count()
    look = sample_look(rng, dr)
    layout = layout or default_layout(look.layout)
    chung = 1 if rng.random() < arr.house_chung_prob else int(rng.integers(1, 9))
    tiles = _tiles(rng, dr, layout, ids, arr, settings)
    chips = _chips(rng, dr, layout, chung, ids, arr, settings)
    dice = _dice(rng, dr, layout, ids, arr, settings)
    hands = _hands(rng, dr, tiles, ids, arr)
    distractors = []
    if max(dr.chips.plaques) > 0 or max(dr.chips.lammers) > 0:  # else no draw: scenes as before
        distractors = _distractors(structure_rng(rng), dr, layout, ids, arr, settings)
    return Scene(
        tiles=tuple(tiles),
        chips=tuple(chips),
        dice=tuple(dice),
        hands=tuple(hands),
        chung_box=chung,
        camera=look.camera,
        table=look.table,
        tile_look=look.tile_look,
        effects=look.effects,
        light_dir=look.light_dir,
        dice_look=look.dice,
        layout=layout.geometry,
        chip_style=look.chip_style,
        distractors=tuple(distractors),
    )
