"""Dice, the first box and the delivery order (RULES.md section 5, rules 7.1-7.3, 5.8, 8.1-8.2).

Boxes are numbered 1..8 counter-clockwise, so "counter-clockwise" means increasing box number,
wrapping from 8 to 1. Three dice are thrown; counting counter-clockwise from the chung box, which
counts as 1, 9 or 17, the box the dice total reaches receives the first group of tiles (7.3):
``first = chung + (total - 1) mod 8``. Some cut styles shift this (5.8); ``offset`` is that shift
in boxes, counter-clockwise positive.

>>> first_box((3, 4, 5), chung_box=1)
4
>>> delivery_order(7)
[7, 8, 1, 2, 3, 4, 5, 6]
>>> [p.kind.value for p in check_delivery(4, [Placement(box=5, tiles=4)], complete=False)]
['wrong_first_box']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import product

BOX_COUNT = 8
"""Boxes on the layout, numbered 1..BOX_COUNT counter-clockwise."""
DICE_COUNT = 3
DIE_MIN = 1
DIE_MAX = 6
TILES_PER_BOX = 4
"""Tiles in one group (one hand) of the woodpile (8.1)."""


def validate_dice(dice: Sequence[int]) -> tuple[int, ...]:
    """Check a throw: exactly three dice, each an integer 1..6. Returns the values as a tuple.

    Raises ValueError with a one-line message otherwise.
    """
    values = tuple(dice)
    if len(values) != DICE_COUNT:
        raise ValueError(f"expected {DICE_COUNT} dice, got {len(values)}")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"a die shows a whole number, got {value!r}")
        if not DIE_MIN <= value <= DIE_MAX:
            raise ValueError(f"a die shows {DIE_MIN} to {DIE_MAX}, got {value}")
    return values


def validate_box(box: int, what: str = "box") -> int:
    """Check a box number is an integer 1..8; returns it. Raises ValueError otherwise."""
    if isinstance(box, bool) or not isinstance(box, int) or not 1 <= box <= BOX_COUNT:
        raise ValueError(f"{what} must be a box number 1 to {BOX_COUNT}, got {box!r}")
    return box


def step_box(box: int, steps: int) -> int:
    """The box ``steps`` places counter-clockwise from ``box`` (negative: clockwise).

    >>> step_box(8, 1), step_box(1, -1), step_box(3, 16)
    (1, 8, 3)
    """
    return (box - 1 + steps) % BOX_COUNT + 1


def first_box_position(total: int, offset: int = 0) -> int:
    """Position 1..8 of the first box counted from the chung (the chung box is position 1).

    ``total`` is the sum of the three dice (3..18); ``offset`` the rule-5.8 shift in boxes.
    """
    return step_box(1, total - 1 + offset)


def first_box(dice: Sequence[int], chung_box: int, offset: int = 0) -> int:
    """The box that receives the first group of tiles (7.3, shifted by ``offset`` boxes, 5.8).

    ``dice``: the three values thrown; ``chung_box``: the banker's box (1 when the house banks).

    >>> first_box((1, 2, 6), chung_box=3)   # total 9: the chung box counts 1 and 9
    3
    >>> first_box((6, 6, 6), chung_box=8)   # total 18: 8 counts 1, 9, 17, then box 1 counts 18
    1
    """
    validate_box(chung_box, "chung box")
    total = sum(validate_dice(dice))
    return step_box(chung_box, first_box_position(total, offset) - 1)


def delivery_order(first: int) -> list[int]:
    """The 8 boxes in the order they receive tiles: counter-clockwise from ``first`` (8.1)."""
    validate_box(first, "first box")
    return [step_box(first, i) for i in range(BOX_COUNT)]


def first_box_distribution(offset: int = 0) -> dict[int, int]:
    """How many of the 216 throws put the first box at each position 1..8 from the chung.

    >>> list(first_box_distribution().values())
    [28, 28, 28, 28, 27, 25, 25, 27]
    """
    faces = range(DIE_MIN, DIE_MAX + 1)
    counts = Counter(
        first_box_position(sum(throw), offset) for throw in product(faces, repeat=DICE_COUNT)
    )
    return {position: counts[position] for position in range(1, BOX_COUNT + 1)}


# ---------------------------------------------------------------------------------------------
# Checking an observed delivery (feeds the ``incorrect_delivery`` rule, 10.14).


class DeliveryProblemKind(StrEnum):
    WRONG_FIRST_BOX = "wrong_first_box"
    SKIPPED_BOX = "skipped_box"
    OUT_OF_ORDER = "out_of_order"
    WRONG_COUNT = "wrong_count"


@dataclass(frozen=True, slots=True)
class Placement:
    """One group of tiles set down at a box during delivery, listed in the order observed.

    ``box``: where the group was set down (1..8). ``tiles``: how many tiles it holds. A group of
    ``4 * k`` tiles (k >= 2) stands for the hands of k adjacent empty boxes placed together
    (8.2); it may lie at any box of that run.
    """

    box: int
    tiles: int


@dataclass(frozen=True, slots=True)
class DeliveryProblem:
    """One departure from the delivery the dice call for. ``box`` is the box it concerns."""

    kind: DeliveryProblemKind
    box: int
    detail: str


@dataclass(frozen=True, slots=True)
class _Group:
    """A placement resolved to the boxes it serves (in counter-clockwise order)."""

    placement: Placement
    boxes: tuple[int, ...]
    count_ok: bool


def check_delivery(
    expected_first: int,
    placements: Sequence[Placement],
    empty_boxes: Collection[int] = frozenset(),
    *,
    complete: bool = True,
) -> list[DeliveryProblem]:
    """Compare an observed delivery with the one the dice call for; ``[]`` when correct.

    ``expected_first``: the first box from :func:`first_box`. ``placements``: the groups in the
    order they were set down. ``empty_boxes``: boxes where nobody sits or bets; only these may
    share a group (8.2), although they too must be served (8.1). ``complete``: the delivery has
    ended, so boxes never served are skipped; while it is under way only boxes passed over are.

    Problems come grouped by kind: wrong first box, wrong counts, out of order, skipped boxes.
    Order is judged from the box where the dealer actually started, so a delivery that starts
    at the wrong box but then runs counter-clockwise raises ``wrong_first_box`` alone.
    Raises ValueError for box numbers outside 1..8 or a placement of no tiles.
    """
    validate_box(expected_first, "expected first box")
    empty = frozenset(validate_box(b, "empty box") for b in empty_boxes)
    for placement in placements:
        validate_box(placement.box, "placement box")
        if placement.tiles < 1:
            raise ValueError(f"a placement holds at least one tile, got {placement.tiles}")
    groups = _resolve(expected_first, placements, empty)
    return [
        *_first_box_problems(expected_first, groups),
        *_count_problems(groups),
        *_order_problems(groups),
        *_skip_problems(expected_first, groups, complete),
    ]


def _resolve(
    expected_first: int, placements: Sequence[Placement], empty: frozenset[int]
) -> list[_Group]:
    groups: list[_Group] = []
    next_box = expected_first
    for placement in placements:
        group = _cover(placement, next_box, empty)
        groups.append(group)
        next_box = step_box(group.boxes[-1], 1)
    return groups


def _cover(placement: Placement, next_box: int, empty: frozenset[int]) -> _Group:
    """The boxes a placement serves: its own box, or a run of adjacent empty boxes (8.2).

    A combined group is taken to start at the box due next when that run holds the placement's
    box, else to start at the placement's own box. A group that fits neither is a wrong count.
    """
    runs, spare = divmod(placement.tiles, TILES_PER_BOX)
    if spare or runs > BOX_COUNT:
        return _Group(placement, (placement.box,), count_ok=False)
    if runs == 1:
        return _Group(placement, (placement.box,), count_ok=True)
    for start in (next_box, placement.box):
        run = tuple(step_box(start, i) for i in range(runs))
        if placement.box in run and empty.issuperset(run):
            return _Group(placement, run, count_ok=True)
    return _Group(placement, (placement.box,), count_ok=False)


def _first_box_problems(expected_first: int, groups: list[_Group]) -> list[DeliveryProblem]:
    if not groups or expected_first in groups[0].boxes:
        return []
    actual = groups[0].placement.box
    detail = f"first group went to box {actual}; the dice give box {expected_first}"
    return [DeliveryProblem(DeliveryProblemKind.WRONG_FIRST_BOX, actual, detail)]


def _count_problems(groups: list[_Group]) -> list[DeliveryProblem]:
    problems = []
    for group in groups:
        if group.count_ok:
            continue
        box, tiles = group.placement.box, group.placement.tiles
        detail = (
            f"box {box} got {tiles} tiles; each box gets {TILES_PER_BOX}, "
            "and only adjacent empty boxes may share a group"
        )
        problems.append(DeliveryProblem(DeliveryProblemKind.WRONG_COUNT, box, detail))
    return problems


def _order_problems(groups: list[_Group]) -> list[DeliveryProblem]:
    """Groups that go back against the counter-clockwise order, or serve a box again."""
    if not groups:
        return []
    start = groups[0].boxes[0]
    served: set[int] = set()
    last_position, last_box = -1, start
    problems = []
    for group in groups:
        box = group.placement.box
        positions = [(b - start) % BOX_COUNT for b in group.boxes]
        if served.intersection(group.boxes):
            detail = f"box {box} was given tiles a second time"
        elif positions[0] <= last_position:
            detail = f"box {box} was served after box {last_box}, against counter-clockwise order"
        else:
            detail = ""
        if detail:
            problems.append(DeliveryProblem(DeliveryProblemKind.OUT_OF_ORDER, box, detail))
        served.update(group.boxes)
        if max(positions) > last_position:
            last_position, last_box = max(positions), box
    return problems


def _skip_problems(
    expected_first: int, groups: list[_Group], complete: bool
) -> list[DeliveryProblem]:
    """Boxes never served: all of them once delivery is complete, else those passed over."""
    served = {b for group in groups for b in group.boxes}
    if complete:
        candidates = delivery_order(expected_first)
    elif groups:
        start = groups[0].boxes[0]
        furthest = max((b - start) % BOX_COUNT for group in groups for b in group.boxes)
        candidates = [step_box(start, i) for i in range(furthest)]
    else:
        candidates = []
    return [
        DeliveryProblem(DeliveryProblemKind.SKIPPED_BOX, b, f"box {b} received no tiles")
        for b in candidates
        if b not in served
    ]
