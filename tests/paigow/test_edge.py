"""The exact edge: the published figures, and the bitset count checked against plain counting."""

import itertools
import random

import pytest

from paigow.edge import count_outcomes, edge
from paigow.hands import Outcome, match
from paigow.houseway import load_way
from paigow.tiles import DECK


@pytest.fixture(scope="module")
def nz_edge():
    return edge(load_way("nz"))


def test_nz_edge_matches_the_published_figures(nz_edge):
    r = nz_edge
    assert r.deals == 736_281_000
    assert 0.022 <= r.player_edge <= 0.026
    assert r.win == pytest.approx(0.294, abs=0.003)
    assert r.lose == pytest.approx(0.304, abs=0.003)
    assert r.push == pytest.approx(0.402, abs=0.003)
    assert r.win + r.lose + r.push == pytest.approx(1.0)


def test_second_way_moves_the_split_by_tenths_of_a_percent(nz_edge):
    other = edge(load_way("canberra"))
    assert abs(other.win - nz_edge.win) < 0.005
    assert 0.022 <= other.player_edge <= 0.026


def test_commission_enters_the_player_edge_linearly(nz_edge):
    free = edge(load_way("nz"), commission=0.0)
    assert free.player_edge == pytest.approx(nz_edge.lose - nz_edge.win)
    assert nz_edge.player_edge - free.player_edge == pytest.approx(0.05 * nz_edge.win)


def test_bitset_counts_agree_with_plain_counting():
    """For sampled player hands, count bank outcomes one deal at a time and compare."""
    way = load_way("nz")
    hands = list(itertools.combinations(range(32), 4))
    rng = random.Random(7)
    sample = rng.sample(hands, 12)
    totals = {o: 0 for o in Outcome}
    for p in sample:
        player = way.setting(tuple(DECK[i] for i in p))
        for b in itertools.combinations([i for i in range(32) if i not in p], 4):
            totals[match(player, way.setting(tuple(DECK[i] for i in b)))] += 1
    assert count_outcomes(way, sample) == (totals[Outcome.WIN], totals[Outcome.LOSE])
