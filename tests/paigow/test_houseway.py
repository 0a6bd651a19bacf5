"""House ways as data: a golden example per rule, validity over every hand, rejected files."""

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paigow.houseway import load_way
from paigow.tiles import DECK, GeeRanking, parse_hand
from paigow.waylang import WayError


def setting_of(way: str, faces: str) -> tuple[list[str], list[str], int]:
    s, line = load_way(way).decision(parse_hand(faces.split()))
    return sorted(t.face for t in s.high), sorted(t.face for t in s.low), line


# (rule of RULES.md section 4, tiles, expected high, expected low)
NZ_GOLDEN = [
    ("1 two pairs", "6-6 1-1 6-6 1-1", ["6-6", "6-6"], ["1-1", "1-1"]),
    ("2 never split 4s", "1-3 1-3 6-6 4-5", ["1-3", "1-3"], ["4-5", "6-6"]),
    ("3 split Gee Joon with 6&5", "1-2 2-4 3-3 2-3", ["1-2", "3-3"], ["2-3", "2-4"]),
    ("3 keep Gee Joon otherwise", "1-2 2-4 3-3 1-1", ["1-2", "2-4"], ["1-1", "3-3"]),
    ("4 split Teens with 9&7", "6-6 6-6 4-5 3-4", ["4-5", "6-6"], ["3-4", "6-6"]),
    ("4 keep Teens with 9&10", "6-6 6-6 4-5 4-6", ["6-6", "6-6"], ["4-5", "4-6"]),
    ("5 split 9s with Teen and Day", "3-6 4-5 6-6 1-1", ["3-6", "6-6"], ["1-1", "4-5"]),
    ("6 split 8s with 11&9", "4-4 4-4 5-6 3-6", ["4-4", "5-6"], ["3-6", "4-4"]),
    ("7 split 7s with 10&10", "1-6 1-6 5-5 4-6", ["1-6", "5-5"], ["1-6", "4-6"]),
    (
        "8 high nine when the low reaches Harmony 3",
        "6-6 1-6 4-5 1-3",
        ["1-6", "6-6"],
        ["1-3", "4-5"],
    ),
    (
        "8 wong first when no low reaches Harmony 3",
        "6-6 4-5 4-4 2-2",
        ["4-5", "6-6"],
        ["2-2", "4-4"],
    ),
    (
        "9 maximise the low hand at Harmony 3 or better",
        "6-6 5-6 2-2 1-4",
        ["2-2", "6-6"],
        ["1-4", "5-6"],
    ),
    ("9 else a high hand of 8", "1-2 6-6 5-5 4-6", ["1-2", "6-6"], ["4-6", "5-5"]),
    ("9 else maximise the low hand", "1-5 3-3 2-5 1-4", ["1-5", "3-3"], ["1-4", "2-5"]),
    (
        "10 highest tile in the low hand when the low is 7 or less",
        "6-6 1-1 4-5 2-3",
        ["1-1", "4-5"],
        ["2-3", "6-6"],
    ),
]


@pytest.mark.parametrize(("rule", "faces", "high", "low"), NZ_GOLDEN, ids=[g[0] for g in NZ_GOLDEN])
def test_new_zealand_way_golden(rule, faces, high, low):
    got_high, got_low, _ = setting_of("nz", faces)
    assert (got_high, got_low) == (high, low)


def test_every_nz_rule_line_decides_some_hands():
    lines = Counter(line for *_, line in load_way("nz").table.values())
    text = (DECK[0].__class__.__module__, lines)  # keep the counter in the failure message
    assert len(lines) == 12, text
    assert lines[9] == 120  # every two-pair hand is decided by the two-pairs rule


CANBERRA_GOLDEN = [
    ("A 3-wong", "6-6 6-6 4-5 5-6", ["4-5", "6-6"], ["5-6", "6-6"]),
    ("G 3-gong differs from NZ", "6-6 4-5 4-4 2-2", ["4-4", "6-6"], ["2-2", "4-5"]),
    ("1A never split Gee Joon", "1-2 2-4 3-3 2-3", ["1-2", "2-4"], ["2-3", "3-3"]),
    ("1E keep 7s without 7-high nine", "1-6 1-6 5-5 4-6", ["1-6", "1-6"], ["4-6", "5-5"]),
]


@pytest.mark.parametrize(
    ("rule", "faces", "high", "low"), CANBERRA_GOLDEN, ids=[g[0] for g in CANBERRA_GOLDEN]
)
def test_canberra_way_golden(rule, faces, high, low):
    got_high, got_low, _ = setting_of("canberra", faces)
    assert (got_high, got_low) == (high, low)


four_tiles = st.permutations(range(32)).map(lambda p: tuple(DECK[i] for i in p[:4]))


@settings(max_examples=300, deadline=None)
@given(four_tiles, st.sampled_from(["nz", "canberra"]), st.sampled_from(list(GeeRanking)))
def test_house_way_returns_a_valid_setting_of_the_same_tiles(four, way, gee):
    s = load_way(way, gee).setting(four)
    assert s.valid
    assert Counter(s.tiles) == Counter(four)


def test_copy_hands_keep_the_orientation_the_way_chose():
    """Regression: 1-5 6-6 3-3 6-6 splits Teens into two equal 8s; the look-up found none."""
    s = load_way("nz").setting(parse_hand(["1-5", "6-6", "3-3", "6-6"]))
    assert s.valid and s.high_value == s.low_value
    assert Counter(s.tiles) == Counter(parse_hand(["1-5", "6-6", "3-3", "6-6"]))


def test_every_hand_of_the_deck_has_a_setting():
    """All 35,960 four-tile hands, both ways: the look-up always returns a valid setting."""
    import itertools

    for way in ("nz", "canberra"):
        hw = load_way(way)
        for four in itertools.combinations(DECK, 4):
            assert hw.setting(four).valid


def write_way(tmp_path, body: str) -> str:
    path = tmp_path / "bad.way"
    path.write_text("name test\n" + body + "maximise low\n")
    return str(path)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("two-pairs\nsplat teen with 9&9\n", r"line 3: unknown rule 'splat'"),
        ("split teen with 9&13\n", r"line 2: no tile has 13 pips"),
        ("split teen with 9\n", r"line 2: expected two tile classes"),
        ("keep-pairs 9\nsplit 9 with teen&day\n", r"line 3: splits Chop Gow, which line 2"),
        ("keep-pairs any\nsplit teen with 9&7\n", r"line 3: contradicts line 2"),
        ("exception teen+5 / teen+9\n", r"line 2: the high group ranks below the low group"),
        ("exception teen+9 , day+7\nexception teen+7 , day+9\n", r"line 3: contradicts line 2"),
        ("maximise high\nkeep-pairs any\n", r"line 3: unreachable, line 2"),
        (
            "strong-hands gong if-low 3 else wong\nstrong-hands wong if-low 3 else gong\n",
            r"line 3: a second strong-hands rule",
        ),
        ("maximise low if-low 9@nobody\n", r"line 2: unknown kind 'nobody'"),
    ],
)
def test_malformed_or_contradictory_way_files_name_the_line(tmp_path, body, message):
    with pytest.raises(WayError, match=message):
        load_way(write_way(tmp_path, body))


def test_a_way_that_leaves_hands_unset_is_rejected(tmp_path):
    path = tmp_path / "partial.way"
    path.write_text("name partial\ntwo-pairs\nmaximise low if-low 9\n")
    with pytest.raises(WayError, match=r"sets no hand for .* end the file with an unconditional"):
        load_way(str(path))


def test_unknown_way_name():
    with pytest.raises(WayError, match="unknown house way 'atlantis'"):
        load_way("atlantis")
