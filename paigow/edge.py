"""Exact house edge: every disjoint player/bank deal, both sides setting the house way.

There are C(32,4) x C(28,4) = 736,281,000 deals. The bank side is counted with bitsets: each of
the 35,960 four-tile hands is one bit, and for a player hand the bank hands it beats (or loses to)
are the AND of "disjoint from the player's tiles" with "high hand below/at least" and "low hand
below/at least" sets, so each player hand costs a handful of big-integer ANDs and popcounts.
Player hands that are the same in play (same kinds and tile ranks) are computed once and weighted.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from math import comb

from paigow.houseway import HouseWay
from paigow.tiles import DECK, Tile, tile_rank

DECK_SIZE = 32
HAND_SIZE = 4


@dataclass(frozen=True, slots=True)
class EdgeResult:
    """Fractions of all deals; edges as fractions of the player's wager.

    ``player_edge``: the house's advantage over a player wagering against a house bank (positive =
    house advantage), commission charged on the player's wins. ``banker_edge``: the expected net of
    a player/banker per unit of opposing wagers, paying commission on net winnings (rule 6.17).
    """

    way: str
    commission: float
    deals: int
    win: float
    lose: float
    push: float
    player_edge: float
    banker_edge: float


def _bitset(indices: list[int]) -> int:
    """An int with the given bit positions set, built in one conversion."""
    if not indices:
        return 0
    buf = bytearray((max(indices) >> 3) + 1)
    for i in indices:
        buf[i >> 3] |= 1 << (i & 7)
    return int.from_bytes(buf, "little")


def _at_least_sets(ranks: list[int]) -> list[int]:
    """``out[r]`` = bitset of hands whose rank index is >= r, for every r (cumulative)."""
    by_rank: dict[int, list[int]] = defaultdict(list)
    for i, r in enumerate(ranks):
        by_rank[r].append(i)
    top = max(ranks)
    out = [0] * (top + 2)
    for r in range(top, -1, -1):
        out[r] = out[r + 1] | _bitset(by_rank.get(r, []))
    return out


def _dense(keys: list[tuple]) -> list[int]:
    order = {k: i for i, k in enumerate(sorted(set(keys)))}
    return [order[k] for k in keys]


def _signature(hand: tuple[Tile, ...], way: HouseWay) -> tuple:
    return tuple(sorted((t.kind.pair_rank, tile_rank(t, way.gee)) for t in hand))


@dataclass(frozen=True)
class _BankTables:
    """Every four-tile hand's house-way ranks, and the bitsets the counting needs."""

    hands: list[tuple[int, ...]]
    high_rank: list[int]
    low_rank: list[int]
    high_ge: list[int]
    low_ge: list[int]
    without: list[int]  # without[t]: hands not holding deck tile t
    everyone: int


def _bank_tables(way: HouseWay) -> _BankTables:
    hands = list(itertools.combinations(range(DECK_SIZE), HAND_SIZE))
    highs, lows = [], []
    for h in hands:
        s = way.setting(tuple(DECK[i] for i in h))
        highs.append(s.high_value.key)
        lows.append(s.low_value.key)
    high_rank, low_rank = _dense(highs), _dense(lows)
    everyone = (1 << len(hands)) - 1
    without = [
        everyone ^ _bitset([i for i, h in enumerate(hands) if t in h]) for t in range(DECK_SIZE)
    ]
    return _BankTables(
        hands,
        high_rank,
        low_rank,
        _at_least_sets(high_rank),
        _at_least_sets(low_rank),
        without,
        everyone,
    )


def _count(tables: _BankTables, i: int) -> tuple[int, int]:
    """(bank hands the player hand ``i`` beats on both sides, bank hands at least as good on both).

    Copies go to the bank, so "at least as good" is a bank win.
    """
    disjoint = tables.everyone
    for t in tables.hands[i]:
        disjoint &= tables.without[t]
    high_ge, low_ge = tables.high_ge[tables.high_rank[i]], tables.low_ge[tables.low_rank[i]]
    win = (disjoint & ~high_ge & ~low_ge).bit_count()
    lose = (disjoint & high_ge & low_ge).bit_count()
    return win, lose


def count_outcomes(way: HouseWay, player_hands: list[tuple[int, ...]]) -> tuple[int, int]:
    """Player wins and losses summed over the given player hands (sorted deck indices)."""
    tables = _bank_tables(way)
    index = {h: i for i, h in enumerate(tables.hands)}
    counts = [_count(tables, index[tuple(sorted(h))]) for h in player_hands]
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


def edge(way: HouseWay, commission: float = 0.05) -> EdgeResult:
    """Enumerate all 736,281,000 deals exactly (about a second on one core)."""
    tables = _bank_tables(way)
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, h in enumerate(tables.hands):
        groups[_signature(tuple(DECK[t] for t in h), way)].append(i)
    win = lose = 0
    for members in groups.values():
        w, lo = _count(tables, members[0])
        win += len(members) * w
        lose += len(members) * lo
    deals = comb(DECK_SIZE, HAND_SIZE) * comb(DECK_SIZE - HAND_SIZE, HAND_SIZE)
    return _result(way.name, commission, deals, win, lose)


def _result(name: str, commission: float, deals: int, win: int, lose: int) -> EdgeResult:
    c = Decimal(str(commission))
    w, lo = Decimal(win) / deals, Decimal(lose) / deals
    player_edge = lo - w * (1 - c)
    banker_edge = (lo - w) * (1 - c)
    push = Decimal(deals - win - lose) / deals
    return EdgeResult(
        name,
        commission,
        deals,
        float(w),
        float(lo),
        float(push),
        float(player_edge),
        float(banker_edge),
    )
