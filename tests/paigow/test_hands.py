"""Tiles and two-tile hands: the counts of RULES.md section 4 and the ranking rules of section 2."""

import itertools
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paigow.hands import (
    GONG,
    PAIR,
    WONG,
    Outcome,
    Setting,
    hand_rank,
    hand_value,
    match,
    parse_setting,
    settings,
)
from paigow.houseway import strong_type
from paigow.tiles import DECK, FACES, KINDS, GeeRanking, TileError, parse_hand, tile


def v(a: str, b: str, gee=GeeRanking.LAST):
    return hand_value(tile(a), tile(b), gee)


def test_deck_has_32_tiles_21_faces_16_kinds():
    assert (len(DECK), len(FACES), len(KINDS)) == (32, 21, 16)
    assert Counter(t.kind.name for t in DECK) == {k.name: 2 for k in KINDS}
    assert sum(t.kind.civil for t in DECK) == 22


def test_two_tile_counts_match_rules():
    hands = [hand_value(a, b) for a, b in itertools.combinations(DECK, 2)]
    assert len(hands) == 496
    assert sum(h.category == PAIR for h in hands) == 16
    assert sum(h.category == WONG for h in hands) == 8
    assert sum(h.category == GONG for h in hands) == 16
    assert sum(strong_type(h) == "high-nine" for h in hands) == 16
    assert sum(h.key == (0,) for h in hands) == 24


def test_four_tile_counts_match_rules():
    fours = list(itertools.combinations(DECK, 4))
    assert len(fours) == 35_960
    pairs = Counter(sum(n == 2 for n in Counter(t.kind for t in f).values()) for f in fours)
    assert (pairs[2], pairs[1], pairs[0]) == (120, 6_720, 29_120)
    assert len({tuple(sorted(t.kind.pair_rank for t in f)) for f in fours}) == 3_620
    wong_no_pair = [
        f
        for f in fours
        if pairs_in(f) == 0 and any(s.high_value.category == WONG for s in settings(f))
    ]
    assert len(wong_no_pair) == 2_704


def pairs_in(four) -> int:
    return sum(n == 2 for n in Counter(t.kind for t in four).values())


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        (("1-2", "2-4"), ("6-6", "6-6")),  # Gee Joon is the best pair
        (("3-6", "4-5"), ("6-6", "4-5")),  # any pair beats a wong
        (("1-1", "3-6"), ("6-6", "4-4")),  # Day's wong beats Teen's gong
        (("6-6", "3-6"), ("1-1", "4-5")),  # Teen's wong beats Day's
        (("6-6", "1-6"), ("3-3", "3-6")),  # a high nine beats every other 9
        (("3-3", "3-6"), ("1-5", "3-6")),  # equal points: the higher tile decides
        (("1-1", "1-2"), ("2-6", "5-5")),  # Day + Gee Joon is a plain 8 (Gee counts 6)
    ],
)
def test_ranking_examples(better, worse):
    assert v(*better) > v(*worse)


def test_yun_with_chop_bot_is_not_a_pair():
    h = v("4-4", "2-6")
    assert h.category != PAIR and h.points == 6


def test_teen_with_gee_is_a_plain_eight_not_a_gong():
    h = v("6-6", "2-4")
    assert h.category not in (GONG, WONG) and h.points == 8 and h.name == "8 (Teen high)"


def test_copies_and_zeros():
    assert v("6-6", "3-4") == v("6-6", "2-5")  # same points, same high tile: a copy
    assert v("5-5", "4-6") == v("1-3", "1-5") == v("3-3", "2-2")  # every zero equals every zero


def test_gee_ranking_is_a_setting():
    # Both hands are 8 points; the higher single tile decides.
    assert v("2-4", "2-3") == v("1-2", "1-4")  # default: both Gee tiles rank last, a copy
    trad = GeeRanking.TRADITIONAL
    assert v("2-4", "2-3", trad) > v("1-2", "1-4", trad)  # 2-4 above Chop Ng, 1-2 last


def test_bank_wins_copies_and_both_zero():
    player = parse_setting(["6-6", "3-4"], ["5-5", "4-6"])
    bank = parse_setting(["6-6", "2-5"], ["3-3", "2-2"])
    assert match(player, bank) is Outcome.LOSE


def test_win_lose_push():
    strong = parse_setting(["1-2", "2-4"], ["6-6", "4-5"])
    weak = parse_setting(["1-3", "2-2"], ["5-5", "4-6"])
    assert match(strong, weak) is Outcome.WIN
    assert match(weak, strong) is Outcome.LOSE
    mixed = parse_setting(["6-6", "6-6"], ["1-4", "5-5"])
    assert match(mixed, parse_setting(["1-1", "1-1"], ["4-5", "4-4"])) is Outcome.PUSH


@pytest.mark.parametrize(
    ("faces", "message"),
    [
        (["7-7"], "no such Pai Gow tile"),
        (["x"], "not a tile face"),
        (["6-6", "6-6", "6-6"], "only 2 6-6 tiles"),
        (["4-5", "4-5"], "only 1 4-5 tile"),
    ],
)
def test_bad_tiles_are_rejected_with_a_message(faces, message):
    with pytest.raises(TileError, match=message):
        parse_hand(faces)


def test_invalid_setting_is_rejected():
    with pytest.raises(ValueError, match="ranks below"):
        parse_setting(["1-4", "5-5"], ["6-6", "6-6"])


def test_hand_rank_orders_all_distinct_values():
    assert hand_rank(v("1-2", "2-4")) == (1, hand_rank(v("1-2", "2-4"))[1])
    assert hand_rank(v("6-6", "6-6"))[0] == 2
    assert hand_rank(v("5-5", "4-6"))[0] == hand_rank(v("5-5", "4-6"))[1]  # zero is last


tiles_st = st.sampled_from(DECK)


@given(tiles_st, tiles_st, tiles_st)
def test_comparison_is_a_consistent_total_preorder(a, b, c):
    x, y, z = hand_value(a, b), hand_value(b, c), hand_value(a, c)
    assert hand_value(a, b) == hand_value(b, a)  # order of tiles does not matter
    assert (x > y) + (y > x) + (x == y) == 1  # exactly one holds
    if x >= y and y >= z:
        assert x >= z  # transitive


@given(st.permutations(range(32)).map(lambda p: tuple(DECK[i] for i in p[:4])))
def test_settings_are_valid_and_use_the_same_tiles(four):
    out = settings(four)
    assert len(out) == 3
    for s in out:
        assert isinstance(s, Setting) and s.valid
        assert Counter(s.tiles) == Counter(four)
