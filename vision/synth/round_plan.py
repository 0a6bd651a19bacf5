"""A Pai Gow round planned with the ``paigow`` engine: shuffle, woodpile, dice, delivery order,
each box's setting, the bank's setting and the outcomes, with an irregularity injected on demand.

The plan is pure data; :mod:`vision.synth.scenario` turns it into motion and ground truth.
Tile ids are 0..31: tile ``i`` sits in woodpile stack ``i // 4`` at level ``i % 4``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from paigow.dice import delivery_order, first_box
from paigow.hands import Setting, match, settings
from paigow.houseway import load_way
from paigow.tiles import DECK, TILES

BOXES = tuple(range(1, 9))
INJECTABLE = (
    "exposed_during_stacking",
    "laja_exposure_excess",
    "hand_exposed_by_dealer",
    "single_tile_exposed",
    "tile_tracking_risk",
    "house_way_violation",
    "incorrect_delivery",
    "hands_mixed",
    "dice_not_flat",
    "wager_after_no_more_bets",
    "camera_lost",
)
DELIVERY_VARIANTS = ("wrong_first_box", "skipped_box", "five_and_three")
CAMERA_VARIANTS = ("frozen", "blank")
DENOMS = ("white", "red", "green", "black", "purple", "yellow")


@dataclass(frozen=True)
class PlanConfig:
    """Randomised choices of a round (ranges)."""

    occupied_boxes: tuple[int, int] = (4, 7)  # how many of the 7 player boxes hold wagers
    chips_per_stack: tuple[int, int] = (2, 9)
    player_house_way_rate: float = 0.8  # players who set their hand the house way
    house_way: str = "nz"


@dataclass(frozen=True)
class Group:
    """One delivered group: the box it went to, its place in the order, the tile ids."""

    box: int
    order_index: int
    tile_ids: tuple[int, ...]


@dataclass(frozen=True)
class RoundPlan:
    seed: int
    injections: tuple[str, ...]
    variant: str | None
    chung_box: int
    faces: tuple[str, ...]  # face of tile id i
    dice_first_throw: tuple[int, int, int] | None  # a throw with a die not flat, re-shaken
    dice: tuple[int, int, int]
    first_box: int
    expected_order: tuple[int, ...]
    groups: tuple[Group, ...]  # as actually delivered
    occupied: tuple[int, ...]  # player boxes with wagers
    wagers: dict[int, tuple[str, ...]]
    settings: dict[int, tuple[tuple[int, int], tuple[int, int]]]  # box -> (high ids, low ids)
    house_way_settings: dict[int, tuple[tuple[int, int], tuple[int, int]]]
    outcomes: dict[int, str] = field(default_factory=dict)

    def box_tiles(self, box: int) -> tuple[int, ...]:
        return tuple(t for g in self.groups if g.box == box for t in g.tile_ids)


def _shuffle(rng: np.random.Generator) -> tuple[str, ...]:
    faces = [t.face for t in DECK]
    return tuple(faces[i] for i in rng.permutation(len(faces)))


def _dice(rng: np.random.Generator) -> tuple[int, int, int]:
    return tuple(int(v) for v in rng.integers(1, 7, size=3))  # type: ignore[return-value]


def _groups(order: list[int], variant: str | None, rng: np.random.Generator) -> list[Group]:
    ids = [list(range(4 * s, 4 * s + 4)) for s in range(8)]
    boxes = list(order)
    if variant == "wrong_first_box":
        boxes = boxes[1:] + boxes[:1]
    elif variant == "skipped_box":
        k = int(rng.integers(1, 6))
        boxes = boxes[:k] + boxes[k + 1 :] + [boxes[k]]
    elif variant == "five_and_three":
        k = int(rng.integers(1, 6))
        ids[k].append(ids[k + 1].pop())
    return [Group(box, i, tuple(ids[i])) for i, box in enumerate(boxes)]


def _ids_setting(
    ids: tuple[int, ...], faces, s: Setting
) -> tuple[tuple[int, int], tuple[int, int]]:
    """Map a setting of faces back onto tile ids."""
    pool = list(ids)
    out = []
    for hand in (s.high, s.low):
        pair = []
        for t in hand:
            i = next(i for i in pool if faces[i] == t.face)
            pool.remove(i)
            pair.append(i)
        out.append(tuple(pair))
    return out[0], out[1]  # type: ignore[return-value]


def _has_alternative(ids: tuple[int, ...], faces, way) -> bool:
    tiles = tuple(TILES[faces[i]] for i in ids)
    return len(ids) == 4 and _other_setting(tiles, way.setting(tiles)) is not None


def _other_setting(tiles, way_setting: Setting) -> Setting | None:
    """A valid setting of the same tiles that differs from the house way in value."""
    key = (way_setting.high_value, way_setting.low_value)
    others = [s for s in settings(tiles) if (s.high_value, s.low_value) != key]
    return others[0] if others else None


def plan_round(
    seed: int, injections: tuple[str, ...] = (), cfg: PlanConfig | None = None
) -> RoundPlan:
    """Plan one round deterministically for ``seed``; ``injections`` are catalogue kinds."""
    for injection in injections:
        if injection not in INJECTABLE:
            raise ValueError(f"cannot inject {injection!r}; choose from {', '.join(INJECTABLE)}")
    cfg = cfg or PlanConfig()
    rng = np.random.default_rng(seed)
    way = load_way(cfg.house_way)
    chung = 1
    variant = None
    if "incorrect_delivery" in injections:
        variant = DELIVERY_VARIANTS[seed % len(DELIVERY_VARIANTS)]
    first_throw = _dice(rng) if "dice_not_flat" in injections else None
    dice = _dice(rng)
    first = first_box(dice, chung)
    order = delivery_order(first)
    groups = _groups(order, variant, rng)
    faces = _shuffle(rng)
    bank_ids = next(g.tile_ids for g in groups if g.box == chung)
    while "house_way_violation" in injections and not _has_alternative(bank_ids, faces, way):
        faces = _shuffle(rng)  # deterministic: the same seed draws the same sequence
    n_occ = int(rng.integers(cfg.occupied_boxes[0], cfg.occupied_boxes[1] + 1))
    occupied = tuple(sorted(int(b) for b in rng.choice(np.arange(2, 9), n_occ, replace=False)))
    wagers = {
        b: tuple(
            DENOMS[int(i)] for i in rng.integers(0, 4, int(rng.integers(*cfg.chips_per_stack)))
        )
        for b in occupied
    }
    plan = RoundPlan(
        seed,
        tuple(injections),
        variant,
        chung,
        faces,
        first_throw,
        dice,
        first,
        tuple(order),
        tuple(groups),
        occupied,
        wagers,
        {},
        {},
    )
    _set_hands(plan, way, rng, cfg)
    return plan


def _set_hands(plan: RoundPlan, way, rng: np.random.Generator, cfg: PlanConfig) -> None:
    """Fill in each playing box's setting, the bank's, and the outcomes (in place)."""
    faces = plan.faces
    for box in (plan.chung_box, *plan.occupied):
        ids = plan.box_tiles(box)
        if len(ids) != 4:
            continue  # a box given 5 or 3 tiles: the round is void, hands are not played
        tiles = tuple(TILES[faces[i]] for i in ids)
        hw = way.setting(tiles)
        chosen = hw
        is_bank = box == plan.chung_box
        if (is_bank and "house_way_violation" in plan.injections) or (
            not is_bank and rng.random() > cfg.player_house_way_rate
        ):
            chosen = _other_setting(tiles, hw) or hw
        plan.settings[box] = _ids_setting(ids, faces, chosen)
        plan.house_way_settings[box] = _ids_setting(ids, faces, hw)
    bank = plan.settings.get(plan.chung_box)
    for box in plan.occupied:
        if bank and box in plan.settings:
            plan.outcomes[box] = match(_setting(plan, box), _setting(plan, plan.chung_box)).value


def _setting(plan: RoundPlan, box: int) -> Setting:
    hi, lo = plan.settings[box]
    t = [TILES[plan.faces[i]] for i in (*hi, *lo)]
    return Setting((t[0], t[1]), (t[2], t[3]))
