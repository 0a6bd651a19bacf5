"""Two-tile hands: value, ranking, names; four-tile settings; matching a player against the bank.

Ranking (RULES.md section 2), highest first: pairs by pair rank (Gee Joon highest), wong, gong,
then points 9..1 broken by the higher-ranked single tile, then zero (all zeros are equal). Equal
values are a *copy*, which the bank wins. A "high nine" is a 9 whose high tile is Teen or Day; it
beats every other 9 through the tile rank, and is named as a rank of its own.

>>> v = hand_value(tile("6-6"), tile("4-5"))
>>> v.name, v.points
('Wong (Teen)', 1)
>>> hand_value(tile("1-2"), tile("2-4")) > hand_value(tile("6-6"), tile("6-6"))
True
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from enum import Enum
from functools import cache

from paigow.tiles import DECK, GeeRanking, Tile, check_available, tile, tile_rank

# Categories, higher is better.
ZERO, POINTS, GONG, WONG, PAIR = range(5)
_NINE_KINDS = frozenset({"Chop Gow"})
_EIGHT_KINDS = frozenset({"Yun", "Chop Bot"})
_SEVEN_KINDS = frozenset({"Tit", "Chop Chit"})
_TEEN_DAY = frozenset({"Teen", "Day"})


@dataclass(frozen=True, slots=True, order=True)
class HandValue:
    """The value of a two-tile hand. Ordered: ``a > b`` means a beats b; ``a == b`` is a copy.

    ``key`` alone decides order and equality; the other fields describe the hand.
    """

    key: tuple[int, ...]
    name: str = field(compare=False)
    points: int = field(compare=False)
    high_tile_rank: int = field(compare=False)

    @property
    def category(self) -> int:
        return self.key[0]

    @property
    def is_pair(self) -> bool:
        return self.category == PAIR


def _points(a: Tile, b: Tile) -> int:
    """Pips mod 10, a lone Gee Joon tile counting 3 or 6, whichever scores better."""
    options_a = (3, 6) if a.kind.is_gee_joon else (a.pips,)
    options_b = (3, 6) if b.kind.is_gee_joon else (b.pips,)
    return max((x + y) % 10 for x in options_a for y in options_b)


@cache
def hand_value(a: Tile, b: Tile, gee: GeeRanking = GeeRanking.LAST) -> HandValue:
    """Value of the two-tile hand ``{a, b}`` (order of the arguments does not matter)."""
    high, low = sorted((a, b), key=lambda t: tile_rank(t, gee))
    best_rank = tile_rank(high, gee)
    if a.kind == b.kind:
        k = a.kind
        name = "Gee Joon" if k.is_gee_joon else f"Pair of {k.name}"
        return HandValue((PAIR, 17 - k.pair_rank), name, _points(a, b), best_rank)
    points = _points(a, b)
    lead = high.kind.name if high.kind.name in _TEEN_DAY else None
    other = low.kind.name
    if lead and other in _NINE_KINDS:
        return HandValue((WONG, 3 - best_rank), f"Wong ({lead})", points, best_rank)
    if lead and other in _EIGHT_KINDS:
        return HandValue((GONG, 3 - best_rank), f"Gong ({lead})", points, best_rank)
    if points == 0:
        return HandValue((ZERO,), "Zero", 0, best_rank)
    if lead and other in _SEVEN_KINDS:
        name = f"High nine ({lead})"
    else:
        name = f"{points} ({high.kind.name} high)"
    return HandValue((POINTS, points, 20 - best_rank), name, points, best_rank)


class Outcome(Enum):
    """A player's wager against the bank."""

    WIN = "win"
    LOSE = "lose"
    PUSH = "push"


@dataclass(frozen=True, slots=True)
class Setting:
    """Four tiles set as a high hand and a low hand (two tiles each)."""

    high: tuple[Tile, Tile]
    low: tuple[Tile, Tile]
    gee: GeeRanking = GeeRanking.LAST

    @property
    def high_value(self) -> HandValue:
        return hand_value(*self.high, self.gee)

    @property
    def low_value(self) -> HandValue:
        return hand_value(*self.low, self.gee)

    @property
    def valid(self) -> bool:
        """A setting is valid when the high hand ranks at least as high as the low hand."""
        return self.high_value >= self.low_value

    @property
    def tiles(self) -> tuple[Tile, ...]:
        return (*self.high, *self.low)

    def describe(self) -> str:
        hi, lo = self.high_value, self.low_value
        return (
            f"high {self.high[0]} {self.high[1]} ({hi.name}) / "
            f"low {self.low[0]} {self.low[1]} ({lo.name})"
        )


def pairings(four: tuple[Tile, ...]) -> list[tuple[tuple[Tile, Tile], tuple[Tile, Tile]]]:
    """The three ways to split four tiles into two two-tile hands (unordered)."""
    a, b, c, d = four
    return [((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))]


def settings(four: tuple[Tile, ...], gee: GeeRanking = GeeRanking.LAST) -> list[Setting]:
    """The valid settings of four tiles: each pairing, its better hand as the high hand.

    A pairing whose two hands are copies gives one setting. Duplicates (from repeated tiles)
    are kept, so callers see exactly three entries.
    """
    if len(four) != 4:
        raise ValueError(f"a setting needs 4 tiles, got {len(four)}")
    out = []
    for x, y in pairings(tuple(four)):
        hx, hy = hand_value(*x, gee), hand_value(*y, gee)
        out.append(Setting(x, y, gee) if hx >= hy else Setting(y, x, gee))
    return out


def compare(player: HandValue, bank: HandValue) -> int:
    """+1 when the player's hand wins, -1 when the bank's wins (copies go to the bank)."""
    return 1 if player > bank else -1


def match(player: Setting, bank: Setting) -> Outcome:
    """High plays high, low plays low: both won is a win, both lost a loss, else a push."""
    hi = compare(player.high_value, bank.high_value)
    lo = compare(player.low_value, bank.low_value)
    if hi > 0 and lo > 0:
        return Outcome.WIN
    if hi < 0 and lo < 0:
        return Outcome.LOSE
    return Outcome.PUSH


def parse_setting(high: list[str], low: list[str], gee: GeeRanking = GeeRanking.LAST) -> Setting:
    """Build a setting from faces, checking tile availability and validity."""
    hi = tuple(tile(f) for f in high)
    lo = tuple(tile(f) for f in low)
    if len(hi) != 2 or len(lo) != 2:
        raise ValueError("a setting is two tiles high and two tiles low")
    check_available(hi + lo)
    s = Setting(hi, lo, gee)  # type: ignore[arg-type]
    if not s.valid:
        raise ValueError(f"invalid setting: the high hand ranks below the low ({s.describe()})")
    return s


@cache
def _distinct_keys(gee: GeeRanking) -> tuple[tuple[int, ...], ...]:
    keys = {hand_value(a, b, gee).key for a, b in itertools.combinations(DECK, 2)}
    return tuple(sorted(keys, reverse=True))


def hand_rank(v: HandValue, gee: GeeRanking = GeeRanking.LAST) -> tuple[int, int]:
    """(rank, of): the hand's place among all distinct two-tile hand values, 1 = Gee Joon.

    >>> hand_rank(hand_value(tile("1-2"), tile("2-4")))[0]
    1
    """
    keys = _distinct_keys(gee)
    return keys.index(v.key) + 1, len(keys)
