"""A Pai Gow round planned with the ``paigow`` engine: shuffle, woodpile, dice, delivery order,
each box's setting, the bank's setting and the outcomes, with an irregularity injected on demand.

The plan is pure data; :mod:`vision.synth.scenario` turns it into motion and ground truth.
Tile ids are 0..31: tile ``i`` sits in woodpile stack ``i // 4`` at level ``i % 4``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from paigow.dice import delivery_order, first_box
from paigow.hands import Setting, match, settings
from paigow.houseway import load_way
from paigow.settlement import BankMode, split_wager, wager_step, winning_payout
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
    "payout_error",
    "banker_underfunded",
)
DELIVERY_VARIANTS = ("wrong_first_box", "skipped_box", "five_and_three")
CAMERA_VARIANTS = ("frozen", "blank")
PAYOUT_VARIANTS = ("underpaid", "overpaid", "no_commission")
DENOMS = ("white", "red", "green", "black", "purple", "yellow")
CHIP_VALUES = {"white": 1, "red": 5, "green": 25, "black": 100, "purple": 500, "yellow": 1000}
"""The rendered casino's chip set: each colour's value in money units (paigow.settlement's
default denominations)."""
MIN_WAGER_CHIP = "green"  # put under a wager below the table minimum (the smallest payable)
BANK_SEED = 24  # the bank mode is drawn apart, so the rest of a seed's round is unchanged


def stack_value(denoms: tuple[str, ...]) -> int:
    """The value of a stack of chips (colour names) in money units.

    >>> stack_value(("black", "green", "red"))
    130
    """
    return sum(CHIP_VALUES[d] for d in denoms)


def chips_for(amount: int) -> tuple[str, ...]:
    """The fewest chips of the set that make ``amount``, bottom to top (larger chips under
    smaller, 6.3).

    >>> chips_for(95)
    ('green', 'green', 'green', 'red', 'red', 'red', 'red')
    """
    out: list[str] = []
    for colour in sorted(CHIP_VALUES, key=CHIP_VALUES.__getitem__, reverse=True):
        count, amount = divmod(amount, CHIP_VALUES[colour])
        out += [colour] * count
    return tuple(out)


@dataclass(frozen=True)
class PlanConfig:
    """Randomised choices of a round (ranges)."""

    occupied_boxes: tuple[int, int] = (4, 7)  # how many of the 7 player boxes hold wagers
    chips_per_stack: tuple[int, int] = (2, 9)
    player_house_way_rate: float = 0.8  # players who set their hand the house way
    house_way: str = "nz"
    player_banker_rate: float = 0.15  # rounds a player banks alone (11.2), stake covering
    co_bank_rate: float = 0.1  # rounds a player co-banks with the house (11.3)


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
    bank_mode: str = BankMode.HOUSE.value
    bank_stake: tuple[str, ...] = ()  # the player/banker's or co-banker's stake (chips)
    payouts: dict[int, tuple[str, ...]] = field(default_factory=dict)  # box -> chips paid
    payout_variant: str | None = None  # payout_error: how the injected box is mispaid
    payout_box: int | None = None

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
        b: _table_minimum(
            tuple(
                DENOMS[int(i)] for i in rng.integers(0, 4, int(rng.integers(*cfg.chips_per_stack)))
            )
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
    for _ in range(50):  # a mispayment needs a winner: deal again until a box wins
        if "payout_error" not in injections or "win" in plan.outcomes.values():
            break
        plan = replace(plan, faces=_shuffle(rng), settings={}, house_way_settings={}, outcomes={})
        _set_hands(plan, way, rng, cfg)
    return _money(plan, cfg)


def _table_minimum(denoms: tuple[str, ...]) -> tuple[str, ...]:
    """A wager below the smallest payable one (6.18) gets a chip under it: a table minimum."""
    return denoms if stack_value(denoms) >= wager_step() else (MIN_WAGER_CHIP, *denoms)


def _money(plan: RoundPlan, cfg: PlanConfig) -> RoundPlan:
    """The bank mode and its stake, and each winner's payout in chips (6.16, 6.19), with the
    money injections. Drawn from a generator of their own: the rest of the round is unchanged."""
    rng = np.random.default_rng([plan.seed, BANK_SEED])
    total = sum(stack_value(w) for w in plan.wagers.values())
    draw = rng.random()
    mode = BankMode.HOUSE
    if draw < cfg.player_banker_rate + cfg.co_bank_rate:
        mode = BankMode.PLAYER_BANKER if draw < cfg.player_banker_rate else BankMode.CO_BANK
    short = "banker_underfunded" in plan.injections
    if short:
        mode = (BankMode.PLAYER_BANKER, BankMode.CO_BANK)[plan.seed % 2]
    stake = _stake(mode, total, short, rng)
    payouts = {}
    for box in plan.occupied:
        if plan.outcomes.get(box) == "win":
            standing, _ = split_wager(stack_value(plan.wagers[box]))
            payouts[box] = chips_for(winning_payout(standing))
    variant = box = None
    if "payout_error" in plan.injections and payouts:
        variant = PAYOUT_VARIANTS[plan.seed % len(PAYOUT_VARIANTS)]
        box = int(rng.choice(sorted(payouts)))
        payouts[box] = _mispaid(payouts[box], stack_value(plan.wagers[box]), variant)
    return replace(
        plan,
        bank_mode=mode.value,
        bank_stake=chips_for(stake),
        payouts=payouts,
        payout_variant=variant,
        payout_box=box,
    )


def _stake(mode: BankMode, total: int, short: bool, rng: np.random.Generator) -> int:
    """A player/banker's stake (covering the other wagers, 11.2(b)) or a co-banker's (half of
    them, 11.3(b)); ``short``: below that (banker_underfunded). 0 when the house banks."""
    if mode is BankMode.HOUSE:
        return 0
    if mode is BankMode.PLAYER_BANKER:
        if short:
            return max(1, int(total * rng.uniform(0.4, 0.9)) // 5 * 5)
        return -(-total // 100) * 100 + 100 * int(rng.integers(0, 3))
    if short:
        return max(1, int(total * rng.uniform(0.15, 0.45)) // 5 * 5)
    return -(-total // 50) * 25 + 25 * int(rng.integers(0, 3))


def _mispaid(due: tuple[str, ...], wager: int, variant: str) -> tuple[str, ...]:
    """The chips paid instead of ``due``: one chip less (the top one), one more of the top
    chip's colour, or the standing wager in full, commission not taken."""
    if variant == "underpaid":
        return due[:-1]
    if variant == "overpaid":
        return (*due, due[-1])
    standing, _ = split_wager(wager)
    return chips_for(standing)


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
