"""``incorrect_delivery`` (10.14): the first box is not the one the dice give, a box is
skipped, the order is not counter-clockwise, or a box is not given exactly four tiles (groups
for adjacent empty boxes placed together, 8.2, are allowed). The round is void: reshuffle.
Tile counts are at least what the camera sees: only a box seen with more than four is judged
(see :func:`_assumed`), and only if the counts add up to the 32 tiles of the set (every tile
accounted for: a tile of a neighbour's hand counted in a box, or one tile tracked twice, with
some of the round's tiles unseen, is no five; red_dealer_mpeg4/dice_not_flat_20800, counts
0 5 3 3 4 4 4 4; a five-and-three deal seen whole adds up).

Each :class:`GroupDelivered` is checked against the flat dice's first box with
:func:`paigow.dice.check_delivery` while the deal runs (boxes passed over are skipped), and
again, complete, at :class:`DeliveryDone`. Empty boxes are those with no chips and not the
chung. Where the camera missed the order of some groups (``order_seen=False``: dealt while it
was blind, or set down out of its sight under the dealer's hand) their order is assumed, so
no order or first-box problem is raised for them. Boxes passed over are judged only once the
delivery is done: while the deal runs, the dealer's arm may lie over a box already served.
One alert per round, at the box of the first problem; later problems are more evidence.
Without a dice read (unread, not flat, or read less sure than ``sure_throw``: a misread throw
makes a delivery dealt right start at the wrong box) only a box given more than four tiles is
judged, once the delivery is done: a count needs no first box, while the order the camera saw
on a table it never learnt is no evidence without one. Ends with the round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from paigow.dice import BOX_COUNT, DeliveryProblem, DeliveryProblemKind, Placement, check_delivery
from paigow.tiles import DECK
from pipeline.round.events import DeliveryDone, DiceRead, GroupDelivered, TableEvent, TableState
from pipeline.rules.base import Finding, RulesConfig

TILES_PER_BOX = 4


def _assumed(
    problem: DeliveryProblem,
    unseen: set[int],
    complete: bool,
    over: set[int] = frozenset(),
    first: int | None = None,
    served: set[int] = frozenset(),
    whole: bool = True,
) -> bool:
    """A problem that only the assumed order of unseen groups would make: an order problem
    (or a first group at the wrong box) at an unseen group; a first group at the wrong box
    while the box the dice give was served unseen, or, while the deal runs, not yet (it may
    have been served first under the dealer's arm, and be seen when the arm lifts:
    teal_dim/wager_after_no_more_bets_20900, session 38); or, while the deal runs, a box
    passed over (it may yet be served, or have been served under the dealer's arm: a group set
    down there is seen only when the arm lifts, and then with the order unseen); or
    a tile count short of four: a count is *at least* what the camera sees (tiles set down
    together overlap, lie stacked or under the dealer's hand), so only a count over four
    (boxes in ``over``, found with every tile of the set counted) is evidence, and it is
    certain at once. Four tiles short in one box are four too many in another: a
    five-and-three deal is caught at its five. A box that received no tiles by the end of the
    deal likewise needs every tile of the set counted elsewhere (``whole``): with some unseen,
    its hand may be the unseen ones (a look the detector finds few tiles on:
    r_purple_spots_62006, a training look, 3 tiles counted)."""
    if problem.kind is DeliveryProblemKind.WRONG_FIRST_BOX:
        return problem.box in unseen or first in unseen or (not complete and first not in served)
    if problem.kind is DeliveryProblemKind.OUT_OF_ORDER:
        return problem.box in unseen
    if problem.kind is DeliveryProblemKind.WRONG_COUNT:
        return problem.box not in over
    return problem.kind is DeliveryProblemKind.SKIPPED_BOX and not (complete and whole)


class IncorrectDelivery:
    kind: ClassVar[str] = "incorrect_delivery"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._first: int | None = None
        self._groups: list[GroupDelivered] = []
        self._reported: list[DeliveryProblem] = []
        self._box: int | None = None
        self._counts: dict[int, int] = {}  # box -> tiles, once the delivery is done

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        findings: list[Finding] = []
        for event in events:
            match event:
                case DiceRead(flat=True, first_box=int(first), confidence=sure) if not self._groups:
                    self._first = first if sure >= self.config.sure_throw else None  # else doubt
                case DiceRead() if not self._groups:  # thrown again, unread: the first box
                    self._first = None  # the last read gave no longer holds
                case GroupDelivered():
                    self._groups.append(event)
                    findings += self._check(state, event, complete=False)
                case DeliveryDone(boxes=boxes, tile_counts=counts):
                    self._counts = dict(zip(boxes, counts, strict=True))
                    findings += self._check(state, event, complete=True)
        return findings

    def _problems(self, state: TableState, complete: bool) -> list[DeliveryProblem]:
        if not self._groups or (self._first is None and not complete):
            return []
        empty = [
            b
            for b in range(1, BOX_COUNT + 1)
            if b != state.chung_box and not state.chips_per_box.get(b)
        ]
        placements = [Placement(g.box, self._count(g)) for g in self._groups]
        unseen = {g.box for g in self._groups if not g.order_seen}
        whole = sum(p.tiles for p in placements) == len(DECK)  # every tile seen: a five is one
        over = {g.box for g in placements if g.tiles > TILES_PER_BOX} if whole else set()
        if self._first is None:  # no dice read: only a box given more than four needs none
            if not over:
                return []
            started = check_delivery(placements[0].box, placements, empty, complete=True)
            return [
                p for p in started if p.kind is DeliveryProblemKind.WRONG_COUNT and p.box in over
            ]
        problems = check_delivery(self._first, placements, empty, complete=complete)
        served = {p.box for p in placements}
        return [
            p
            for p in problems
            if not _assumed(p, unseen, complete, over, self._first, served, whole)
        ]

    def _count(self, group: GroupDelivered) -> int:
        """A group's tiles: the box's count once the delivery is done, where any are seen there
        (none seen at the end is no count: tiles carried off or hidden; two_rows_wine's
        dice_not_flat_20800 seen at its own scale), else as counted when it was set down."""
        return max(1, self._counts.get(group.box) or group.tile_count)

    def _check(self, state: TableState, event: TableEvent, complete: bool) -> list[Finding]:
        new = [p for p in self._problems(state, complete) if p not in self._reported]
        if not new:
            return []
        self._reported += new
        self._box = self._box or new[0].box
        boxes = {p.box for p in self._reported}
        return [
            Finding(
                self._box,
                event.frame,
                event.time_s,
                f"{self._reported[0].detail}: the round is void, reshuffle",
                {
                    "expected_first_box": self._first,
                    "boxes": [g.box for g in self._groups],
                    "tile_counts": [self._count(g) for g in self._groups],
                    "problems": [f"{p.kind}: {p.detail}" for p in self._reported],
                    "track_ids": [i for g in self._groups if g.box in boxes for i in g.track_ids],
                },
            )
        ]
