"""Dice -> first box, delivery order and the delivery check (RULES.md 5; rules 7.3, 8.1-8.2)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paigow.dice import (
    BOX_COUNT,
    DeliveryProblemKind,
    Placement,
    check_delivery,
    delivery_order,
    first_box,
    first_box_distribution,
    first_box_position,
    step_box,
    validate_dice,
)

dice_values = st.tuples(*[st.integers(1, 6)] * 3)
boxes = st.integers(1, BOX_COUNT)

WRONG_FIRST = DeliveryProblemKind.WRONG_FIRST_BOX
SKIPPED = DeliveryProblemKind.SKIPPED_BOX
OUT_OF_ORDER = DeliveryProblemKind.OUT_OF_ORDER
WRONG_COUNT = DeliveryProblemKind.WRONG_COUNT


def test_distribution_over_216_throws():
    assert first_box_distribution() == {1: 28, 2: 28, 3: 28, 4: 28, 5: 27, 6: 25, 7: 25, 8: 27}
    assert sum(first_box_distribution().values()) == 216


def test_offset_rotates_distribution():
    shifted = first_box_distribution(offset=1)
    assert [shifted[p] for p in range(1, 9)] == [27, 28, 28, 28, 28, 27, 25, 25]


@pytest.mark.parametrize(
    ("dice", "chung", "expected"),
    [
        ((1, 1, 1), 1, 3),  # total 3: chung 1, then 2, 3
        ((1, 2, 6), 1, 1),  # total 9: the chung box counts 1 and 9
        ((6, 6, 5), 1, 1),  # total 17: the chung box counts 1, 9 and 17
        ((6, 6, 6), 1, 2),  # total 18
        ((3, 4, 5), 1, 4),  # total 12
        ((2, 2, 2), 7, 4),  # total 6: 7, 8, 1, 2, 3, 4 (wraps 8 -> 1)
        ((6, 6, 6), 8, 1),
        ((1, 1, 2), 5, 8),  # total 4: 5, 6, 7, 8
    ],
)
def test_first_box_examples(dice, chung, expected):
    assert first_box(dice, chung_box=chung) == expected


def test_first_box_offset():
    assert first_box((1, 1, 1), chung_box=1, offset=1) == 4
    assert first_box((1, 1, 1), chung_box=1, offset=-3) == 8


@given(dice_values, boxes, st.integers(-20, 20))
def test_first_box_always_a_box(dice, chung, offset):
    box = first_box(dice, chung, offset)
    assert 1 <= box <= BOX_COUNT
    assert box == (chung + sum(dice) - 1 + offset - 1) % BOX_COUNT + 1


@given(st.integers(3, 18))
def test_position_counts_from_the_chung_as_one(total):
    assert first_box_position(total) == (total - 1) % BOX_COUNT + 1


@pytest.mark.parametrize(
    ("dice", "message"),
    [
        ((1, 2), "expected 3 dice, got 2"),
        ((1, 2, 3, 4), "expected 3 dice, got 4"),
        ((0, 2, 3), "a die shows 1 to 6, got 0"),
        ((1, 7, 3), "a die shows 1 to 6, got 7"),
        ((1, 2.0, 3), "a die shows a whole number, got 2.0"),
        ((1, True, 3), "a die shows a whole number, got True"),
    ],
)
def test_bad_dice(dice, message):
    with pytest.raises(ValueError, match="^" + message.replace(".", r"\.") + "$"):
        validate_dice(dice)
    with pytest.raises(ValueError):
        first_box(dice, chung_box=1)


@pytest.mark.parametrize("chung", [0, 9, -1, "1"])
def test_bad_chung_box(chung):
    with pytest.raises(ValueError, match="chung box must be a box number 1 to 8"):
        first_box((1, 2, 3), chung_box=chung)


def test_delivery_order_wraps():
    assert delivery_order(1) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert delivery_order(6) == [6, 7, 8, 1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="first box must be a box number"):
        delivery_order(0)


@given(boxes)
def test_delivery_order_is_rotation(first):
    order = delivery_order(first)
    assert order[0] == first
    assert sorted(order) == list(range(1, 9))
    assert all(step_box(a, 1) == b for a, b in pairwise(order))


# --- check_delivery -------------------------------------------------------------------------


def _deliver(first: int, tiles: int = 4) -> list[Placement]:
    return [Placement(box, tiles) for box in delivery_order(first)]


def _kinds(problems) -> list[tuple[str, int]]:
    return [(p.kind.value, p.box) for p in problems]


@given(boxes)
def test_correct_delivery_has_no_problem(first):
    assert check_delivery(first, _deliver(first)) == []


def test_adjacent_empty_boxes_may_share_a_group():
    # Expected first box 3; boxes 5 and 6 are empty and get one group of 8 tiles.
    placements = [Placement(b, 4) for b in (3, 4)] + [Placement(5, 8)]
    placements += [Placement(b, 4) for b in (7, 8, 1, 2)]
    assert check_delivery(3, placements, empty_boxes={5, 6}) == []
    # The combined group may lie at either box of the run.
    placements[2] = Placement(6, 8)
    assert check_delivery(3, placements, empty_boxes={5, 6}) == []


def test_group_for_occupied_boxes_is_wrong_count():
    placements = [Placement(b, 4) for b in (3, 4)] + [Placement(5, 8)]
    placements += [Placement(b, 4) for b in (7, 8, 1, 2)]
    problems = check_delivery(3, placements, empty_boxes={5})
    assert _kinds(problems) == [("wrong_count", 5), ("skipped_box", 6)]
    assert "box 5 got 8 tiles" in problems[0].detail


def test_empty_first_box_grouped_with_the_next():
    placements = [Placement(2, 12)] + [Placement(b, 4) for b in (4, 5, 6, 7, 8)]
    assert check_delivery(1, placements, empty_boxes={1, 2, 3}) == []


def test_wrong_first_box_alone_when_the_rest_is_in_order():
    problems = check_delivery(4, _deliver(5))
    assert _kinds(problems) == [("wrong_first_box", 5)]
    assert problems[0].detail == "first group went to box 5; the dice give box 4"


def test_skipped_box():
    placements = [p for p in _deliver(2) if p.box != 6]
    assert _kinds(check_delivery(2, placements)) == [("skipped_box", 6)]


def test_out_of_order():
    order = [2, 3, 5, 4, 6, 7, 8, 1]
    problems = check_delivery(2, [Placement(b, 4) for b in order])
    assert _kinds(problems) == [("out_of_order", 4)]
    assert "against counter-clockwise order" in problems[0].detail


def test_clockwise_delivery():
    order = [2, 1, 8, 7, 6, 5, 4, 3]
    problems = check_delivery(2, [Placement(b, 4) for b in order])
    assert {p.kind for p in problems} == {OUT_OF_ORDER}
    assert [p.box for p in problems] == [8, 7, 6, 5, 4, 3]


def test_box_served_twice():
    placements = [*_deliver(1), Placement(3, 4)]
    problems = check_delivery(1, placements)
    assert _kinds(problems) == [("out_of_order", 3)]
    assert "a second time" in problems[0].detail


@pytest.mark.parametrize("tiles", [3, 5, 2])
def test_wrong_count(tiles):
    placements = _deliver(1)
    placements[4] = Placement(5, tiles)
    assert _kinds(check_delivery(1, placements)) == [("wrong_count", 5)]


def test_incomplete_delivery_only_reports_passed_over_boxes():
    placements = [Placement(b, 4) for b in (7, 8, 2)]
    assert _kinds(check_delivery(7, placements, complete=False)) == [("skipped_box", 1)]
    assert check_delivery(7, placements[:2], complete=False) == []
    assert check_delivery(7, [], complete=False) == []


def test_nothing_delivered_skips_every_box():
    problems = check_delivery(3, [])
    assert [p.box for p in problems] == delivery_order(3)
    assert {p.kind for p in problems} == {SKIPPED}


def test_several_problems_at_once():
    placements = [Placement(b, 4) for b in (6, 7, 1)] + [Placement(8, 3)]
    problems = check_delivery(5, placements)
    kinds = [p.kind for p in problems]
    assert kinds[0] is WRONG_FIRST
    assert WRONG_COUNT in kinds and OUT_OF_ORDER in kinds and SKIPPED in kinds


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, []), "expected first box must be a box number 1 to 8, got 0"),
        ((1, [Placement(9, 4)]), "placement box must be a box number 1 to 8, got 9"),
        ((1, [Placement(2, 0)]), "a placement holds at least one tile, got 0"),
        ((1, [], {0}), "empty box must be a box number 1 to 8, got 0"),
    ],
)
def test_bad_delivery_input(args, message):
    with pytest.raises(ValueError, match=message):
        check_delivery(*args)


@given(boxes, st.permutations(range(1, 9)))
def test_any_delivery_of_all_boxes_never_skips(first, order):
    problems = check_delivery(first, [Placement(b, 4) for b in order])
    assert SKIPPED not in {p.kind for p in problems}
    assert WRONG_COUNT not in {p.kind for p in problems}
    in_order = order == delivery_order(order[0])
    assert (OUT_OF_ORDER in {p.kind for p in problems}) != in_order
