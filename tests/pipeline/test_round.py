"""Round reconstructor: hand-made track sequences, then oracle mode on rendered scenarios."""

from __future__ import annotations

import importlib.util
import json
import sys
import typing
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from paigow.dice import delivery_order, first_box
from paigow.tiles import DECK
from pipeline.round.events import (
    BankStaked,
    BoxSettled,
    CameraLost,
    CameraRestored,
    DeliveryDone,
    DiceRead,
    GroupDelivered,
    HandCollected,
    HandExposed,
    HandSet,
    HandsMerged,
    NoMoreBets,
    Outcome,
    Phase,
    PhaseChanged,
    RoundEnded,
    TableEvent,
    TableState,
    TileExposed,
    TileFaceUnread,
    VisionDegraded,
    VisionRestored,
    WagerChanged,
    WashEnded,
    WoodpileBuilt,
    describe,
)
from pipeline.round.oracle import oracle_frames, read_truth, reconstruct, reconstruct_clip
from pipeline.round.phases import RoundConfig, RoundReconstructor
from pipeline.round.tracks import rank_pairs, split_pairs
from vision.faces import DIE_TIPPED
from vision.types import CHIP, DIE, HAND, TILE_DOWN, TILE_UP, Track

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "events_oracle.json"
FPS = 5
TILE_WH = (10.0, 20.0)


@dataclass(frozen=True)
class Stamp:
    index: int
    time_s: float


DECK_FACE = "deck"


def tile(tid: int, xy, zone: str, face_up: bool = False, face: str | None = DECK_FACE) -> Track:
    """A tile track; its face by default that of tile ``tid`` of the set (no face read on
    more tiles than the set holds)."""
    face = DECK[tid % len(DECK)].face if face == DECK_FACE else face
    x, y = xy
    w, h = TILE_WH
    cls = TILE_UP if face_up else TILE_DOWN
    return Track(
        tid, (x - w / 2, y - h / 2, x + w / 2, y + h / 2), cls, face_up, face, None, zone, 10, 0
    )


def chip(tid: int, zone: str, xy=(0.0, 0.0)) -> Track:
    x, y = xy
    return Track(tid, (x - 5, y - 5, x + 5, y + 5), CHIP, None, None, None, zone, 10, 0)


def die(tid: int, value: int | None, sure: float = 1.0) -> Track:
    return Track(tid, (0, 0, 5, 5), DIE, None, None, value, "dice_area", 10, 0, die_confidence=sure)


class Table:
    """A hand-made table: set tracks, step frames, collect events."""

    def __init__(self, config: RoundConfig | None = None) -> None:
        self.round = RoundReconstructor(config)
        self.tracks: dict[int, Track] = {}
        self.index = 0
        self.events: list[TableEvent] = []
        self.state: TableState | None = None
        self.hidden: set[int] = set()  # tracks kept for tiles not seen (not seen this frame)
        self.places: object | None = None  # whether places in a box changed (vision.places)

    def put(self, *tracks: Track) -> None:
        for t in tracks:
            self.tracks[t.track_id] = t

    def drop(self, *ids: int) -> None:
        for i in ids:
            self.tracks.pop(i, None)

    def step(self, frames: int = 1) -> list[TableEvent]:
        new: list[TableEvent] = []
        for _ in range(frames):
            seen = [
                t if t.track_id in self.hidden else replace(t, last_seen_frame=self.index)
                for t in self.tracks.values()
            ]
            stamp = Stamp(self.index, self.index / FPS)
            self.state, out = self.round.update(seen, stamp, self.places)
            new += out
            self.index += 1
        self.events += new
        return new

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


def woodpile_table(**config) -> Table:
    """32 face-down tiles resting in the woodpile, the woodpile built, phase wagers."""
    table = Table(RoundConfig(**config))
    table.put(*(tile(i, (100.0 + 12 * (i // 4), 50.0), "woodpile") for i in range(32)))
    table.step(4)  # rest there (zone_hold_s), then look built for woodpile_hold_s
    return table


def deliver(table: Table, box: int, ids, x: float = 300.0) -> None:
    table.put(*(tile(i, (x + 40 * box, 200.0), f"box_{box}") for i in ids))
    table.step(3)


def test_woodpile_built_once_all_tiles_rest_face_down():
    table = woodpile_table()
    assert [e.tile_count for e in table.of(WoodpileBuilt)] == [32]
    assert table.state.phase is Phase.WAGERS


def test_wash_then_woodpile_reports_tracked_tiles():
    table = Table()
    positions = {i: (50.0 + 15 * (i % 8), 300.0 + 25 * (i // 8)) for i in range(32)}
    table.put(*(tile(i, positions[i], "work_area") for i in range(32)))
    table.step(2)
    for k in range(6):  # the dealer's hands push tiles about
        shift = 8.0 * (1 if k % 2 else -1)
        table.put(
            *(tile(i, (positions[i][0] + shift, positions[i][1]), "work_area") for i in range(32))
        )
        table.step()
    table.step(4)
    (ended,) = table.of(WashEnded)
    assert (ended.tiles_tracked, ended.known_faces) == (32, 32)
    assert ended.frame == 7  # dated to the last motion, not to when the quiet revealed it
    start = table.of(PhaseChanged)[0].frame
    assert ended.duration_s == pytest.approx((7 - start) / FPS)  # start to last motion
    assert [e.after for e in table.of(PhaseChanged)] == [Phase.WASH, Phase.WOODPILE]
    table.put(*(tile(i, (100.0 + 12 * (i // 4), 50.0), "woodpile") for i in range(32)))
    table.step(4)
    assert len(table.of(WoodpileBuilt)) == 1


def test_the_wash_ends_when_stacks_rest_in_the_woodpile_though_tiles_still_slide():
    """The dealer gathers the washed tiles and stacks them with no pause: tiles keep sliding
    in the work area, so the quiet never comes. The wash ends once two stacks rest in the
    woodpile (faces lost while stacking are no wash's doing); one tile pushed there in the
    wash does not end it (std9 `tile_tracking_risk_20000`: the wash ended 2.3 s after it
    really did, with 1 face known instead of 3)."""
    table = Table()
    positions = {i: (50.0 + 15 * (i % 8), 300.0 + 25 * (i // 8)) for i in range(32)}

    def slide(k: int, ids) -> None:
        shift = 8.0 * (1 if k % 2 else -1)
        table.put(*(tile(i, (positions[i][0] + shift, positions[i][1]), "work_area") for i in ids))
        table.step()

    table.put(*(tile(i, positions[i], "work_area") for i in range(32)))
    table.step(2)
    table.put(tile(0, (100.0, 50.0), "woodpile"))  # a stray tile stops in the woodpile
    for k in range(6):
        slide(k, range(1, 32))
    assert not table.of(WashEnded)
    table.put(tile(1, (112.0, 50.0), "woodpile"))  # a second stack: stacking has begun
    for k in range(3):
        slide(k, range(2, 32))
    (ended,) = table.of(WashEnded)
    assert ended.frame < table.index - 1 and ended.tiles_tracked == 32
    assert table.state.phase is Phase.WOODPILE


def test_dice_give_the_first_box_and_call_no_more_bets():
    table = woodpile_table(chung_box=3)
    table.put(die(300, 3), die(301, 4), die(302, 5))
    table.step(3)
    (read,) = table.of(DiceRead)
    assert (read.values, read.total, read.flat) == ((3, 4, 5), 12, True)
    assert read.first_box == first_box((3, 4, 5), 3)
    assert [e.reason for e in table.of(NoMoreBets)] == ["dice"]
    assert table.state.phase is Phase.DICE and table.state.dice == (3, 4, 5)


def test_a_throw_is_as_sure_as_its_least_sure_die():
    table = woodpile_table()
    table.put(die(300, 5, 0.84), die(301, 6, 0.36), die(302, 1))
    table.step(3)
    (read,) = table.of(DiceRead)
    assert read.values == (5, 6, 1) and read.confidence == 0.36
    assert describe(read) == f"dice read 5 6 1 (total 12, sure 0.36): first box {read.first_box}"


def test_four_dice_resting_together_are_read_only_once_three_alone_remain():
    """two_rows_wine/tile_tracking_risk_20400 and payout_error_21100 (session 38): a fourth
    die seen with the throw (the detector's on the print) made which three were the throw a
    guess by track id: "4 1 3" for 1 4 1, a false wrong first box, and a tipped read taken
    for the throw's. Which three they are is not known while more lie there: doubt, no read."""
    table = woodpile_table()
    table.put(die(300, 3), die(301, 4), die(302, 5), die(303, 1))
    table.step(8)
    assert not table.of(DiceRead)
    table.drop(303)  # the fourth gone: the three alone hold
    table.step(3)
    (read,) = table.of(DiceRead)
    assert (read.values, read.flat) == ((3, 4, 5), True)


def test_a_fourth_die_never_read_gives_way_to_three_read_ones():
    """std9/camera_lost_20600: a "die" cut by the frame's edge, never read, lay beside the
    throw; three dice read and one nothing was read of: the three are the throw."""
    table = woodpile_table()
    table.put(die(300, 3), die(301, None), die(302, 4), die(303, 5))
    table.step(4)
    (read,) = table.of(DiceRead)
    assert (read.values, read.flat) == ((3, 4, 5), True)


def test_a_die_unread_but_never_seen_tipped_is_doubt_not_irregular():
    table = woodpile_table()
    table.put(die(300, 2), die(301, None), die(302, 6))  # e.g. red dice the reader cannot read
    table.step(6)
    (read,) = table.of(DiceRead)
    assert (read.flat, read.first_box, read.values) == (None, None, (2, None, 6))
    assert describe(read) == "dice unread: 2 ? 6"


def test_a_die_lying_in_the_dice_area_from_before_is_not_of_the_throw():
    """The dice circle's printed dice, read as a tipped die since the round began (two-row
    table, session 18): the throw's dice come together, and the print is none of them. With one
    die of the throw missed the throw is unread (no "not flat"); with all three it is read."""
    table = woodpile_table()
    table.put(replace(die(299, None), face=DIE_TIPPED))  # the print
    table.step(10)
    table.put(die(300, 3), die(301, 1))  # the third die is not found yet
    table.step(3)
    assert table.of(DiceRead) == []
    table.put(die(302, 5))  # found within throw_window_s of the others
    table.step(2)
    (read,) = table.of(DiceRead)
    assert (read.values, read.flat) == ((3, 1, 5), True)


def test_a_thrown_die_landing_on_the_printed_die_takes_its_track_and_is_of_the_throw():
    """two_rows_wine/clean_10002: the felt's printed die, read as a 6 since 1.28 s, hands its
    track to the thrown 6 that lands half over it (the box moves by more than half a die and
    grows by half): that die came to rest with the others, and the throw is read."""
    table = woodpile_table()
    table.put(replace(die(17, 6), xyxy=(613, 208, 628, 222)))  # the print
    table.step(10)
    table.put(replace(die(17, 6), xyxy=(620, 208, 643, 233)))  # the thrown 6 on it
    table.put(replace(die(35, 4), xyxy=(595, 210, 617, 233)))
    table.put(replace(die(36, 1), xyxy=(605, 185, 626, 206)))
    table.step(4)
    (read,) = table.of(DiceRead)
    assert (read.values, read.flat) == ((6, 4, 1), True)


def test_a_resting_die_whose_box_jitters_still_rests_with_the_throw():
    """A die's box jitters by a pixel or two (and its size with it): it does not rest anew,
    so it stays of the throw, and the print lying there from before stays none of it."""
    table = woodpile_table()
    table.put(replace(die(299, 2), xyxy=(700, 200, 715, 214)))  # the print, read as a 2
    table.step(10)
    at = {300: (600, 200, 620, 220), 301: (640, 190, 660, 210), 302: (610, 240, 630, 260)}
    table.put(*(replace(die(tid, v), xyxy=at[tid]) for tid, v in ((300, 3), (301, 1))))
    table.step(1)
    table.put(replace(die(302, 5), xyxy=at[302]))
    for k in range(int(2.0 * FPS)):  # jitter: 2 px and a size 3 px off, every other frame
        d = 2 * (k % 2)
        for tid, (x1, y1, x2, y2) in at.items():
            value = table.tracks[tid].die_value
            table.put(replace(die(tid, value), xyxy=(x1 + d, y1 - d, x2 + d + 1, y2)))
        table.step(1)
    (read,) = table.of(DiceRead)
    assert read.values == (3, 1, 5)


def test_a_die_read_as_two_values_while_it_lies_still_is_unread():
    """two_rows_wine/clean_10000: a die read 4 while it lay still, then, its box grown over
    the felt's print, 5: a die at rest does not turn, so one of the two is a misread. The
    throw is unread (no first box, no delivery judged against a guess)."""
    table = woodpile_table()
    table.put(die(300, 4), die(301, 3), die(302, None))
    table.step(2)
    table.put(die(300, 5), die(302, 1))
    table.step(6)
    (read,) = table.of(DiceRead)
    assert (read.values, read.flat, read.first_box) == ((None, 3, 1), None, None)


def test_die_not_flat_then_reshaken():
    table = woodpile_table()
    table.put(die(300, 2), replace(die(301, None), face=DIE_TIPPED), die(302, 6))
    table.step(4)
    table.drop(300, 301, 302)
    table.step(2)
    table.put(die(300, 1), die(301, 1), die(302, 2))
    table.step(2)
    reads = table.of(DiceRead)
    assert [(r.flat, r.first_box) for r in reads] == [(False, None), (True, 4)]
    assert reads[0].values == (2, None, 6)


def test_a_throw_read_not_flat_is_as_sure_as_its_least_sure_die_the_tipped_one_too():
    table = woodpile_table()
    table.put(die(300, 5, 0.51), replace(die(301, None, 0.73), face=DIE_TIPPED), die(302, 4))
    table.step(6)
    (read,) = table.of(DiceRead)
    assert (read.flat, read.values, read.confidence) == (False, (5, None, 4), 0.51)
    assert describe(read) == "dice not flat: 5 ? 4 (sure 0.51)"


def test_a_die_read_tipped_where_another_cannot_be_read_is_doubt():
    """A frame so blurred by its codec that one die reads tipped and another nothing
    (two_rows_wine/wager_after_no_more_bets_20900, "? ? 4"): no die is known not flat."""
    table = woodpile_table()
    table.put(die(300, None), replace(die(301, None), face=DIE_TIPPED), die(302, 4))
    table.step(6)
    (read,) = table.of(DiceRead)
    assert (read.flat, read.values) == (None, (None, None, 4))


def test_a_die_read_tipped_then_a_value_is_unread_and_a_reshake_says_it_was_not_flat():
    """teal_dim/dice_not_flat_20800: the tipped 6 read tipped while it lay still, then 6 at
    0.58 by a box grown over its side, was taken for a flat 6. A die at rest does not turn:
    one of the two readings is wrong, so the throw is unread (doubt, no alert). The dealer
    re-shaking the dice settles it: the die was not flat."""
    table = woodpile_table()
    table.put(replace(die(300, None), face=DIE_TIPPED), die(301, 2), die(302, 4))
    table.step(2)  # read tipped, held
    table.put(die(300, 6))
    table.step(10)
    assert [(r.values, r.flat) for r in table.of(DiceRead)] == [((None, 2, 4), None)]
    table.hidden = {300, 301, 302}  # the cup over the dice
    table.step(20)
    table.hidden = set()
    table.put(die(300, 3), die(301, 2), die(302, 6))
    table.step(6)
    reads = [(r.values, r.flat) for r in table.of(DiceRead)]
    assert reads == [((None, 2, 4), None), ((None, 2, 4), False), ((3, 2, 6), True)]


def test_dice_thrown_again_and_not_read_leave_the_round_without_a_first_box():
    """red_dealer_mpeg4/dice_not_flat_20800: the first throw was misread "3 4 6" (the tipped
    6 taken for a value); of the re-shaken dice only two were found, each back in sight with
    another value, and the deal was judged against the first throw's box (a false
    incorrect_delivery). Dice thrown again make the last read void until the new one is read."""
    table = woodpile_table()
    table.put(die(300, 3), die(301, 4), die(302, 6))
    table.step(3)
    assert table.state.first_box is not None
    table.hidden = {300, 301, 302}  # the cup over the dice
    table.step(10)
    table.hidden = set()
    table.drop(302)  # the third die not found
    table.put(die(300, 6), die(301, 3))  # back in sight, each with another value
    table.step(3)
    reads = [(r.values, r.flat) for r in table.of(DiceRead)]
    assert reads == [((3, 4, 6), True), ((None, None, None), None)]
    assert table.state.first_box is None and table.state.dice is None


def test_a_die_thrown_again_where_it_lay_is_of_the_new_throw():
    """two_rows_wine/dice_not_flat_20800: of the first throw only the flat 4 was found (the
    tipped die taken for a chip); the re-shaken dice came back with the 6 where the 4 lay, on
    its track, resting since the first throw: the throw lacked it and was never read. A die
    back in sight reading another value was thrown again: it rests with the new throw. One
    reading what it read before is none of it."""
    table = woodpile_table()
    table.put(die(300, 4))  # the first throw: one die found
    table.step(10)
    table.hidden = {300}  # the cup over the dice
    table.step(20)
    table.hidden = set()
    table.put(die(300, 6), die(301, 2), die(302, 3))
    table.step(6)
    (read,) = table.of(DiceRead)
    assert (read.values, read.flat) == ((6, 2, 3), True)


@pytest.mark.parametrize(
    ("first", "again"),
    [
        ((1, "tipped", 1), (4, 1, 2)),  # std9/dice_not_flat_20400: every die shows another value
        ((6, 2, "tipped"), (3, 2, 6)),  # teal_dim/dice_not_flat_20800: the 2 lands showing 2
    ],
)
def test_dice_thrown_again_where_they_lay_are_read_as_a_new_throw(first, again):
    """The cup re-threw the three dice where the first throw's lay, on their tracks: the one
    that lay tipped rests with the new throw, and so does one that lands showing what it
    showed, as the dice that came back with another value take their throw-mates along."""

    def dice(values):
        return [
            replace(die(300 + k, None), face=DIE_TIPPED) if v == "tipped" else die(300 + k, v)
            for k, v in enumerate(values)
        ]

    table = woodpile_table()
    table.put(*dice(first))
    table.step(10)
    table.hidden = {300, 301, 302}  # the cup over the dice
    table.step(20)
    table.hidden = set()
    table.put(*dice(again))
    table.step(6)
    reads = table.of(DiceRead)
    read_first = tuple(None if v == "tipped" else v for v in first)
    assert [(r.values, r.flat) for r in reads] == [(read_first, False), (again, True)]


def test_a_die_back_in_sight_reading_what_it_read_is_no_new_throw():
    table = woodpile_table()
    table.put(die(300, 4))  # the felt's printed die, read as a 4
    table.step(30)
    table.hidden = {300}  # a hand over it
    table.step(20)
    table.hidden = set()
    table.put(die(301, 2), die(302, 3))  # two dice thrown beside it
    table.step(6)
    assert table.of(DiceRead) == []


def deal_from_box_3(table: Table) -> list[int]:
    """Dice totalling 3 (first box 3), then four tiles to each box in order; the order."""
    table.put(die(300, 1), die(301, 1), die(302, 1))
    table.step(2)
    order = delivery_order(3)
    for k, box in enumerate(order):
        deliver(table, box, range(4 * k, 4 * k + 4))
    return order


def test_delivery_in_order_with_groups_and_counts():
    table = woodpile_table()
    order = deal_from_box_3(table)
    table.step(4)  # the woodpile stays empty for delivery_quiet_s
    groups = table.of(GroupDelivered)
    assert [(g.box, g.order_index, g.tile_count) for g in groups] == [
        (box, k, 4) for k, box in enumerate(order)
    ]
    assert groups[0].track_ids == (0, 1, 2, 3)
    (done,) = table.of(DeliveryDone)
    assert done.boxes == tuple(order) and done.first_box == 3
    assert table.state.phase is Phase.SETTING
    assert table.state.hands[3] == (0, 1, 2, 3)


def test_a_tile_slid_over_its_box_outline_at_the_deals_end_still_counts():
    """teal_dim/clean_10001 (session 26): as the deal ended, a player spreading their tiles slid
    one just over box 3's outline onto the bare felt; the count at DeliveryDone read 3. A tile
    dealt to a box that lies outside every zone is still that box's."""
    table = woodpile_table()
    deal_from_box_3(table)
    table.put(tile(3, (300.0 + 40 * 3, 240.0), "table"))
    table.step(4)
    (done,) = table.of(DeliveryDone)
    assert done.tile_counts == (4,) * 8
    assert len(table.state.hands[3]) == 4


def test_a_tile_swapped_into_a_neighbours_box_as_the_deal_ends_is_no_fifth_tile():
    """teal_dim/tile_tracking_risk_20400 (session 31): as the deal ended, players' hands over
    boxes 3 and 4 made the tracker carry one of box 3's ids into box 4; at DeliveryDone box 4
    held five and box 3 three, adding up to 32 (a false incorrect_delivery). Nothing is dealt
    while the deal ends: a box's count is the fewest tiles it held over that wait."""
    table = woodpile_table()
    deal_from_box_3(table)
    table.step(1)  # the deal's end: quiet, not yet for delivery_quiet_s
    table.put(tile(3, (300.0 + 40 * 4, 200.0), "box_4"))
    table.step(4)
    (done,) = table.of(DeliveryDone)
    counts = dict(zip(done.boxes, done.tile_counts, strict=True))
    assert counts[4] == 4 and counts[3] == 3  # a count is at least what is seen: no five
    assert 3 in table.state.hands[4]  # the hands are the tiles lying in each box


def test_five_dealt_to_a_box_are_still_five_when_the_deal_ends():
    """The fewest over the quiet wait (above) keeps a real five: the five lie there throughout."""
    table = woodpile_table()
    table.put(die(300, 1), die(301, 1), die(302, 1))
    table.step(2)
    ids = iter(range(32))
    for box in delivery_order(3):
        deliver(table, box, [next(ids) for _ in range({3: 5, 4: 3}.get(box, 4))])
    table.step(4)
    (done,) = table.of(DeliveryDone)
    counts = dict(zip(done.boxes, done.tile_counts, strict=True))
    assert counts[3] == 5 and counts[4] == 3 and sum(counts.values()) == 32


def test_the_last_stack_carried_to_a_far_box_after_the_woodpile_empties_is_counted():
    """Two-row table (two_rows_wine, session 24): the last stack leaves the woodpile, which is
    then seen empty, and comes to rest in box 2 a second later, longer than delivery_quiet_s.
    With seven boxes served the deal is not done yet."""
    table = woodpile_table()
    table.put(die(300, 1), die(301, 1), die(302, 1))  # total 3: first box 3
    table.step(2)
    order = delivery_order(3)  # 3, 4, 5, 6, 7, 8, 1, 2
    for k, box in enumerate(order[:-1]):
        deliver(table, box, range(4 * k, 4 * k + 4))
    table.drop(*range(28, 32))  # lifted: the woodpile is empty
    table.step(FPS)  # carried for a second
    assert not table.of(DeliveryDone)
    deliver(table, 2, range(28, 32))
    table.step(4)
    (done,) = table.of(DeliveryDone)
    assert done.boxes == tuple(order) and done.tile_counts == (4,) * 8


def test_groups_whose_order_was_not_seen_take_their_counter_clockwise_place():
    """The dealer's arm lies over box 4 while it is served and over the next boxes: its group
    is seen only when the arm lifts, with box 8's, in one frame (two-row table, session 16).
    DeliveryDone puts it where a counter-clockwise deal from the first box does, not last."""
    table = woodpile_table()
    table.put(die(300, 1), die(301, 1), die(302, 1))  # total 3: first box 3
    table.step(2)
    order = delivery_order(3)  # 3, 4, 5, 6, 7, 8, 1, 2
    seen = [box for box in order if box not in (4, 8)]
    for k, box in enumerate(seen):
        deliver(table, box, range(4 * k, 4 * k + 4))
    table.put(*(tile(i, (300.0 + 40 * 4, 200.0), "box_4") for i in range(24, 28)))
    table.put(*(tile(i, (300.0 + 40 * 8, 200.0), "box_8") for i in range(28, 32)))
    table.step(7)
    assert [(g.box, g.order_seen) for g in table.of(GroupDelivered)][-2:] == [
        (4, False),
        (8, False),
    ]
    (done,) = table.of(DeliveryDone)
    assert done.boxes == tuple(order) and done.tile_counts == (4,) * 8


def test_a_stack_that_came_out_of_sight_or_was_first_found_in_its_box_has_its_place_assumed():
    """two_rows_wine/incorrect_delivery_20600 (session 26): the first stack, lost under the
    dealer's hand, was carried unseen over box 8 to box 1; its coasting track lay still over
    box 8 for a moment, and the deal was read as begun at box 8. Out of sight a tile comes to
    rest nowhere; when tiles first found in a box came there is not known: their group's place
    in the order is assumed (``order_seen=False``), never evidence of the order, unless the box
    was seen bare, uncovered, since the latest group began (the next test)."""
    table = woodpile_table()
    table.put(hand(900, (300.0 + 40 * 4, 200.0), "box_4"))  # the dealer's arm over box 4
    table.put(die(300, 1), die(301, 1), die(302, 1))  # total 3: first box 3
    table.step(2)
    deliver(table, 3, range(4))
    table.step(2)  # box 3's group closes
    table.hidden |= set(range(4, 8))
    table.put(*(tile(i, (300.0 + 40 * 5, 200.0), "box_5") for i in range(4, 8)))
    table.step(4)  # carried unseen over box 5, lying still there longer than zone_hold_s
    table.hidden -= set(range(4, 8))
    table.drop(*range(4, 8))
    table.step(2)
    table.put(*(tile(i, (300.0 + 40 * 4, 200.0), "box_4") for i in range(40, 44)))  # new ids
    table.drop(900)
    table.step(5)
    groups = table.of(GroupDelivered)
    assert [(g.box, g.order_seen) for g in groups] == [(3, True), (4, False)]


def test_a_track_lost_longer_than_a_carry_and_found_in_a_box_came_there_unseen():
    """two_rows_wine/hands_mixed_20700 read 1 frame in 2 (session 27): box 3's stack was set
    down under the dealer's arm and seen only when the arm lifted, after box 7's; the tracker
    joined it to a track lost in the work area 3 s before, and box 3 was judged served out of
    order (a false incorrect_delivery). A track out of sight longer than ``deal_carry_s``
    before it is seen in a box did not come there in sight: its group's place is assumed. One
    lost for a moment as it is carried (the stack under the dealer's hand) is seen arriving."""
    table = woodpile_table()
    table.put(hand(900, (300.0 + 40 * 5, 200.0), "box_5"))  # the dealer's arm over box 5
    table.put(die(300, 1), die(301, 1), die(302, 1))  # total 3: first box 3
    table.put(tile(90, (250.0, 120.0), "work_area"))
    table.step(2)
    table.hidden.add(90)  # lost in the work area
    deliver(table, 3, range(4))
    table.step(2)
    table.drop(*range(5, 8))  # box 4's stack, lifted: its top tile is all one sees
    table.hidden.add(4)
    table.step(2)  # carried a moment under the dealer's hand, its track still where it lay
    table.hidden.discard(4)
    table.put(tile(4, (300.0 + 40 * 4, 200.0), "box_4"))  # set down, found again there
    table.step(3)
    table.step(10)  # 3 s and more after the work-area track was last seen
    table.hidden.discard(90)
    table.put(tile(90, (300.0 + 40 * 5, 200.0), "box_5"))
    table.drop(900)  # the arm lifts
    table.step(4)
    groups = table.of(GroupDelivered)
    assert [(g.box, g.order_seen) for g in groups] == [(3, True), (4, True), (5, False)]


def test_a_tile_found_in_a_box_seen_bare_since_the_latest_group_came_after_it():
    """r_compact_close_petrol_62005 (a training look, session 39): the skipped box's tile,
    served last, was found in its box by a track last seen 10 s before in the work area; its
    place was assumed, and the skip was hidden. Its box was in sight, bare and uncovered,
    while the groups before it were dealt: it came after them."""
    table = woodpile_table()
    table.put(die(300, 1), die(301, 1), die(302, 1))  # total 3: first box 3
    table.put(tile(90, (250.0, 120.0), "work_area"))
    table.step(2)
    table.hidden.add(90)  # lost in the work area
    for k, box in enumerate((3, 4, 6)):  # box 5 skipped
        deliver(table, box, range(4 * k, 4 * k + 4))
    table.step(10)  # 2 s and more after the work-area track was last seen
    table.hidden.discard(90)
    table.put(tile(90, (300.0 + 40 * 5, 200.0), "box_5"))
    table.step(4)
    groups = table.of(GroupDelivered)
    assert [(g.box, g.order_seen) for g in groups] == [(3, True), (4, True), (6, True), (5, True)]


def test_two_boxes_served_within_a_groups_gap_have_their_order_assumed():
    """red_dealer_mpeg4/hand_exposed_by_dealer_20200 read 1 frame in 2 (session 38): box 1's
    stack came to rest 0.08 s after box 2's, though dealt before it, and box 1 was judged
    served out of order. Two boxes served within ``group_gap_s`` of each other: which came
    first is not seen; their places are assumed."""
    table = woodpile_table()
    table.put(die(300, 1), die(301, 1), die(302, 1))  # total 3: first box 3
    table.step(2)
    deliver(table, 3, range(4))
    table.put(*(tile(i, (300.0 + 40 * 5, 200.0), "box_5") for i in range(8, 12)))
    table.step(1)  # box 5 seen at rest a frame (0.2 s) before box 4
    deliver(table, 4, range(4, 8))
    groups = table.of(GroupDelivered)
    assert [(g.box, g.order_seen) for g in groups][:3] == [(3, True), (5, False), (4, False)]
    for k, box in enumerate((6, 7, 8, 1, 2)):
        deliver(table, box, range(12 + 4 * k, 16 + 4 * k))
    table.step(6)
    (done,) = table.of(DeliveryDone)
    assert done.boxes == tuple(delivery_order(3))


def test_a_group_seen_at_rest_only_after_later_groups_has_its_place_assumed():
    """red_dealer_mpeg4/tile_tracking_risk_20400 (session 38): box 4's stack was seen once as
    it was set down, then lay under the dealer's arm while boxes 5 and 6 were served; seen
    again, it came to rest dated to that one sighting, but after their groups, and box 4 was
    judged served out of order (a false incorrect_delivery). A group that comes before one
    already begun is out of its place in what was seen: its place is assumed."""
    table = woodpile_table()
    table.put(die(300, 1), die(301, 1), die(302, 1))  # total 3: first box 3
    table.step(2)
    deliver(table, 3, range(4))
    table.put(*(tile(i, (300.0 + 40 * 4, 200.0), "box_4") for i in range(4, 8)))
    table.step(1)  # seen once as it is set down
    table.hidden |= set(range(4, 8))  # then under the dealer's arm
    deliver(table, 5, range(8, 12))
    deliver(table, 6, range(12, 16))
    table.hidden -= set(range(4, 8))  # the arm lifts: box 4's stack where it was set down
    table.step(3)
    groups = table.of(GroupDelivered)
    assert [(g.box, g.order_seen) for g in groups][:4] == [
        (3, True),
        (5, True),
        (6, True),
        (4, False),
    ]
    for k, box in enumerate((7, 8, 1, 2)):
        deliver(table, box, range(16 + 4 * k, 20 + 4 * k))
    table.step(6)
    (done,) = table.of(DeliveryDone)
    assert done.boxes == tuple(delivery_order(3))


def test_a_track_back_in_sight_where_it_once_rested_arrives_there_anew():
    """teal_dim/exposed_during_stacking_20000 (session 26): a lost tile's track was found for
    a moment in box 3 before the deal (a player's hand read as a tile), went off moving and
    out of sight, and took box 3's stack when it was dealt: it rested in box 3 already, so
    box 3 was served only when the stack was spread, last (a false out of order). A track seen
    again at rest after it was out of sight away from its zone came where it is anew."""
    table = woodpile_table()
    table.put(tile(90, (300.0 + 40 * 3, 200.0), "box_3"))
    table.step(3)  # rests in box 3 while bets are open: no delivery
    table.put(tile(90, (300.0 + 40 * 3, 260.0), "table"))
    table.step(1)
    table.hidden.add(90)
    table.step(2)  # out of sight, away
    table.put(die(300, 1), die(301, 1), die(302, 1))  # total 3: first box 3
    table.step(2)
    assert not table.of(GroupDelivered)
    table.drop(*range(4))  # the first stack, lifted from the woodpile
    table.hidden.discard(90)
    table.put(tile(90, (300.0 + 40 * 3, 200.0), "box_3"))
    table.step(3)
    assert [(g.box, g.track_ids) for g in table.of(GroupDelivered)][:1] == [(3, (90,))]


def test_a_stack_carried_over_a_served_box_takes_its_id_and_still_counts():
    """Two-row table under a low camera (two_rows_wine, session 18): each stack of four shows
    as one detection; carried to box 4 over box 3, the stack landing in box 4 took the id of
    box 3's stack, and the carried stack's id came to rest in box 3. Box 4 is served all the
    same, in its place; box 3 keeps one group."""
    table = woodpile_table()
    table.put(die(300, 1), die(301, 1), die(302, 1))  # total 3: first box 3
    table.step(2)
    order = delivery_order(3)  # 3, 4, 5, 6, 7, 8, 1, 2

    def carry(k: int) -> None:  # stack k leaves the woodpile: its top tile is all one sees
        table.drop(*range(4 * k + 1, 4 * k + 4))

    carry(0)
    deliver(table, 3, [0])
    table.step(2)  # the group closes (group_gap_s)
    carry(1)
    table.put(tile(0, (300.0 + 40 * 4, 200.0), "box_4"), tile(4, (300.0 + 40 * 3, 200.0), "box_3"))
    table.step(3)
    for k, box in enumerate(order[2:], start=2):
        carry(k)
        deliver(table, box, [4 * k])
    table.step(4)
    assert [g.box for g in table.of(GroupDelivered)] == list(order)
    assert all(g.order_seen for g in table.of(GroupDelivered))
    (done,) = table.of(DeliveryDone)
    assert done.boxes == tuple(order) and done.tile_counts == (1,) * 8
    assert table.state.hands[3] == (4,) and table.state.hands[4] == (0,)


def test_five_and_three_is_reported_as_delivered():
    table = woodpile_table()
    deliver(table, 2, range(0, 5))
    deliver(table, 3, range(5, 8))
    assert [(g.box, g.tile_count) for g in table.of(GroupDelivered)] == [(2, 5), (3, 3)]


def test_a_tile_from_nowhere_in_a_box_while_bets_are_open_begins_no_deal():
    """A player's hand over box 8, placing a wager, read as a tile (teal_dim, session 24): a
    tile track lost long ago was found again there. The deal had not begun (no "no more
    bets", no group): only a tile carried from the woodpile begins it. Once the dice call
    the bets closed, the deal is read from the first box."""
    table = woodpile_table()
    table.drop(31)  # a tile lost from the woodpile (it rested there)...
    table.step(int(2.5 * FPS))  # ...longer ago than deal_carry_s
    table.put(tile(31, (300.0 + 40 * 8, 200.0), "box_8"), tile(200, (300.0, 220.0), "box_1"))
    table.step(4)  # and the lost track, and a track never seen before, appear in boxes
    assert not table.of(GroupDelivered) and table.state.phase is Phase.WAGERS
    table.drop(31, 200)
    table.put(die(300, 1), die(301, 1), die(302, 1))  # total 3: first box 3
    table.step(2)
    for k, box in enumerate(delivery_order(3)[:2]):
        deliver(table, box, range(4 * k, 4 * k + 4))
    assert [g.box for g in table.of(GroupDelivered)] == [3, 4]


def test_a_tile_carried_from_the_woodpile_begins_the_deal_before_bets_close():
    table = woodpile_table()
    table.drop(0)  # lifted from the woodpile: carried for a second, unseen
    table.step(FPS)
    deliver(table, 5, [0])
    table.step(3)
    assert [(g.box, g.tile_count) for g in table.of(GroupDelivered)] == [(5, 1)]


def test_tiles_carried_over_other_zones_arrive_where_they_rest():
    table = woodpile_table()
    table.put(*(tile(i, (250.0, 120.0), "banker_wager") for i in range(4)))  # in transit
    table.step()
    deliver(table, 1, range(4))
    assert [g.box for g in table.of(GroupDelivered)] == [1]


def test_wager_after_no_more_bets_is_marked():
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2"))
    table.step(2)
    table.put(chip(101, "box_4"))
    table.step(6)
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]
    table.put(chip(999, "box_6"))  # fingertips read as a chip for a moment: not a wager
    table.step(2)
    table.drop(999)
    table.step(1)
    assert len(table.of(WagerChanged)) == 2
    table.put(chip(103, "box_5", (60.0, 0.0)))  # a misread with no hand near: doubt
    table.step(10)
    table.drop(103)
    assert len(table.of(WagerChanged)) == 2
    table.put(hand(900, (30.0, 20.0), "box_4"))  # a real late wager: a hand puts it there
    table.step(2)
    table.drop(900)
    table.put(chip(102, "box_4", (30.0, 0.0)))  # held, counted
    table.step(4)
    assert len(table.of(WagerChanged)) == 2  # not yet held for wager_hold_s
    table.step(3)
    late = table.of(WagerChanged)[-1]
    assert (late.box, late.before, late.after, late.after_no_more_bets) == (4, 1, 2, True)
    assert (table.index - 1) / FPS - late.time_s >= 1.0  # dated to when it was first seen
    assert [w.after_no_more_bets for w in table.of(WagerChanged)[:2]] == [False, False]


class Places:
    """A stand-in for vision.places.PlaceMemory: every place changed, or none did; the frames
    asked about are kept."""

    def __init__(self, changed: bool | None) -> None:
        self.answer, self.asked = changed, []

    def changed(self, box: int, spots: list, since: int, covered=()) -> bool | None:
        self.asked.append((box, since))
        return self.answer


@pytest.mark.parametrize("changed", [False, True, None])
def test_a_count_changed_where_no_place_did_is_the_detectors_change_of_mind(changed):
    """A box's printed chip circle read as a stack in some frames only (two_rows_wine,
    session 33): after "no more bets" a stack seen to come, or to go, as the dealer's hand
    passes is believed only where its place looks different from before the hand came."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2"))
    table.step(6)
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]
    table.places = Places(changed)
    table.step(25)  # quiet for longer than wager_reach_s
    came = {}  # box -> the frame the dealer's hand came to it
    for box, x in ((4, 30.0), (2, 0.0)):
        came[box] = table.index
        table.put(hand(900, (x + 10.0, 20.0), f"box_{box}"))  # the dealer delivering
        table.step(3)
        table.drop(900)
        if box == 4:
            table.put(chip(102, "box_4", (30.0, 0.0)))  # the circle read as a stack
        else:
            table.drop(100)  # the stack no longer read
        table.step(12)
    late = [(w.box, w.before, w.after) for w in table.of(WagerChanged) if w.after_no_more_bets]
    assert late == ([] if changed is False else [(4, 0, 1), (2, 1, 0)])
    if changed is not None:  # held against the last picture from before the hand came
        assert {(4, came[4] - 1), (2, came[2] - 1)} <= set(table.places.asked)


def test_wagers_carry_their_amounts_and_the_bank_stake_is_told_as_bets_close():
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(replace(chip(500, "banker_wager", (200.0, 0.0)), chip_value=300))
    table.put(replace(chip(100, "box_2"), chip_value=125))
    table.step(2)
    table.put(chip(101, "box_4", (40.0, 0.0)))  # its value not read yet
    table.step(3)
    table.put(replace(table.tracks[101], chip_value=130))  # read later, before bets close
    table.step(4)
    wagers = [(e.box, e.amount_before, e.amount_after) for e in table.of(WagerChanged)]
    assert wagers == [(2, 0, 125), (4, 0, None)]
    (bank,) = table.of(BankStaked)
    assert (bank.mode, bank.stake, bank.house_match, bank.wagers_total) == (
        "player_banker",
        300,
        0,
        255,
    )
    assert bank.time_s < table.of(NoMoreBets)[0].time_s  # dated to when it was first seen


def test_two_stacks_in_the_banker_area_are_a_co_bank_and_unread_values_stay_unknown():
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(replace(chip(500, "banker_wager", (200.0, 0.0)), chip_value=100))
    table.put(replace(chip(501, "banker_wager", (240.0, 0.0)), chip_value=100))
    table.put(chip(100, "box_2"))  # never read
    table.step(8)
    (bank,) = table.of(BankStaked)
    assert (bank.mode, bank.stake, bank.house_match, bank.wagers_total) == (
        "co_bank",
        100,
        100,
        None,
    )


def test_no_stake_in_the_banker_area_tells_no_bank_event():
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(replace(chip(100, "box_2"), chip_value=25))
    table.step(8)
    assert table.of(NoMoreBets) and not table.of(BankStaked)


def test_a_doubtful_chip_in_the_banker_area_makes_no_player_banker():
    """Felt or a marker read as a chip in the banker area must not make a house-banked round a
    player/banker's (whose own hand the house way then does not judge)."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(replace(chip(100, "box_2"), chip_value=25))
    table.put(replace(chip(500, "banker_wager", (200.0, 0.0)), confidence=0.4))
    table.step(8)
    assert table.of(NoMoreBets) and not table.of(BankStaked)


def hand(tid: int, xy, zone: str | None = None) -> Track:
    x, y = xy
    return Track(tid, (x - 15, y - 15, x + 15, y + 15), HAND, None, None, None, zone, 10, 0)


def test_a_player_reaching_into_a_box_without_a_wager_keeps_the_bets_open():
    """Players still reaching into their boxes are still betting: chips set down under a
    hand are seen once it lifts (two_rows_wine, session 24). A hand over a box that holds a
    wager already does not hold the bets open (a late wager there is judged)."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2"))
    table.step(2)
    table.put(hand(900, (420.0, 300.0), "box_3"))  # reaching into box 3, no wager there yet
    table.step(8)
    assert not table.of(NoMoreBets)
    table.drop(900)
    table.put(chip(101, "box_3", (420.0, 300.0)))
    table.step(8)
    assert [(w.box, w.after_no_more_bets) for w in table.of(WagerChanged)] == [
        (2, False),
        (3, False),
    ]
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]
    quiet = woodpile_table(no_more_bets_quiet_s=0.8)
    quiet.put(chip(100, "box_2"))
    quiet.step(2)
    quiet.put(hand(900, (30.0, 20.0), "box_2"))  # over a box with a wager: not held open
    quiet.step(6)
    assert [e.reason for e in quiet.of(NoMoreBets)] == ["quiet"]


def test_a_hand_over_a_box_whose_chips_were_never_sure_keeps_the_bets_open():
    """The felt's printed box number read as a chip at 0.5 is no wager: a player's hand over
    that box may be setting one down (two_rows_wine/clean_10000: "no more bets" was inferred
    under the hand, and the chips it set down became a late wager)."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_3", (420.0, 300.0)))
    table.put(replace(chip(101, "box_2"), confidence=0.5))  # the print, never sure
    table.step(2)
    table.put(hand(900, (30.0, 20.0), "box_2"))
    table.step(8)
    assert not table.of(NoMoreBets)
    table.drop(900)
    table.put(chip(102, "box_2", (14.0, 0.0)))  # set down under the hand
    table.step(8)
    assert [(w.box, w.after, w.after_no_more_bets) for w in table.of(WagerChanged)] == [
        (2, 1, False),
        (3, 1, False),
        (2, 2, False),
    ]
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]


def test_a_stack_whose_place_a_tile_lies_over_is_hidden_not_taken():
    """A player's tiles set down over a stack's place in a tilted view hide it: unknown, not
    a wager taken (two_rows_wine/laja_exposure_excess_20100). Seen bare again, it is judged."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2", (400.0, 300.0)), chip(101, "box_2", (440.0, 300.0)))
    table.step(10)
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]
    table.put(hand(900, (420.0, 330.0), "box_2"))  # the player sets the hand
    table.step(3)
    table.drop(900, 101)
    table.put(tile(40, (440.0, 300.0), "box_2"))  # a tile over stack 101's place
    table.step(20)
    assert [w.after_no_more_bets for w in table.of(WagerChanged)] == [False]
    table.put(hand(900, (440.0, 330.0), "box_2"))  # the tile picked up: the place bare
    table.step(2)
    table.drop(900, 40)
    table.step(20)
    late = table.of(WagerChanged)[-1]
    assert (late.box, late.before, late.after, late.after_no_more_bets) == (2, 2, 1, True)


def test_a_tile_dealt_into_a_box_and_read_as_chips_is_no_late_wager():
    """red_dealer_mpeg4/clean_10001 (session 38): a dark-backed tile dealt into box 3, seen
    from over the dealer's shoulder, was read as a chip stack at 0.7-0.8 once its own
    detection faded, beside the box's stack, under the dealer's hand: a false late wager. A
    tile does not turn into chips; a stack set down beside the tiles is still one."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_3", (400.0, 300.0)))
    table.step(10)
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]
    table.put(hand(900, (440.0, 330.0), "box_3"), tile(40, (440.0, 300.0), "box_3"))
    table.step(3)  # the dealer sets the tile down
    table.hidden.add(40)  # its detection fades; a chip is read where it lies
    table.put(chip(101, "box_3", (441.0, 301.0)))
    table.step(2)
    table.drop(900)
    table.step(20)
    assert [w.after_no_more_bets for w in table.of(WagerChanged)] == [False]
    table.put(hand(901, (480.0, 330.0), "box_3"))  # a late wager beside the tile
    table.step(2)
    table.drop(901)
    table.put(chip(102, "box_3", (480.0, 300.0)))
    table.step(20)
    late = table.of(WagerChanged)[-1]
    assert (late.box, late.before, late.after, late.after_no_more_bets) == (3, 1, 2, True)


def test_chips_under_a_hand_are_unknown_not_gone():
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2", (400.0, 300.0)), chip(101, "box_2", (412.0, 300.0)))
    table.step(6)
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]
    # a player sets the hand: the arm lies over the chips for 3 s and the detector loses them
    table.put(hand(900, (420.0, 320.0), "rail"))
    table.drop(100, 101)
    table.step(15)
    table.drop(900)
    table.step(3)  # seen again, as new tracks, after the arm has gone
    table.put(chip(110, "box_2", (400.0, 300.0)), chip(111, "box_2", (412.0, 300.0)))
    table.step(10)
    assert [(w.before, w.after) for w in table.of(WagerChanged)] == [(0, 2)]
    # the arm comes back and takes a stack away: believed once seen gone, uncovered, held
    table.put(hand(900, (420.0, 320.0), "rail"))
    table.drop(111)
    table.step(5)
    table.drop(900)
    table.step(5)
    assert len(table.of(WagerChanged)) == 1
    table.step(2)
    taken = table.of(WagerChanged)[-1]
    assert (taken.box, taken.before, taken.after, taken.after_no_more_bets) == (2, 2, 1, True)


def test_a_doubtful_chip_is_no_late_wager():
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2"))
    table.step(6)
    table.put(hand(900, (40.0, 20.0), "box_3"))
    table.step(2)
    table.drop(900)
    table.put(replace(chip(101, "box_3", (40.0, 0.0)), confidence=0.4))  # felt read as a chip
    table.step(10)
    assert [(w.box, w.before, w.after) for w in table.of(WagerChanged)] == [(2, 0, 1)]


def test_a_stack_never_seen_surely_before_no_more_bets_is_no_wager_taken():
    """A box counted two stacks, only one of them ever detected surely (one stack seen twice,
    felt read as a chip): when the doubtful one goes as the dealer's hand passes, no wager was
    taken; a stack that was surely there and goes is one."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2"), replace(chip(101, "box_2", (12.0, 0.0)), confidence=0.4))
    table.put(chip(102, "box_4", (200.0, 0.0)), chip(103, "box_4", (212.0, 0.0)))
    table.step(6)
    assert [(w.box, w.after) for w in table.of(WagerChanged)] == [(2, 2), (4, 2)]
    for box, gone, x in ((2, 101, 0.0), (4, 103, 200.0)):
        table.put(hand(900, (x + 10.0, 20.0), f"box_{box}"))  # the dealer delivering
        table.step(3)
        table.drop(900, gone)
        table.step(12)
    assert [(w.box, w.before, w.after) for w in table.of(WagerChanged)] == [
        (2, 0, 2), (4, 0, 2), (4, 2, 1)]  # fmt: skip
    assert table.state.chips_per_box[2] == 1  # the doubtful stack gone, silently


def test_a_change_is_dated_after_the_hand_that_could_have_made_it():
    """A chip seen with no hand near is doubt; a hand then over the box (the chip missed under
    it) and another count afterwards is a new sight, dated after the hand."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2"))
    table.step(6)
    table.put(chip(101, "box_3", (40.0, 0.0)))  # no hand anywhere near: not believed
    table.step(10)
    assert len(table.of(WagerChanged)) == 1
    table.drop(101)
    table.put(hand(900, (40.0, 20.0), "box_3"))
    table.step(3)
    table.drop(900)
    left_s = table.index / FPS
    table.put(chip(101, "box_3", (40.0, 0.0)), chip(102, "box_3", (52.0, 0.0)))
    table.step(8)
    late = table.of(WagerChanged)[-1]
    assert (late.box, late.before, late.after) == (3, 0, 2)
    assert late.time_s >= left_s


def test_a_count_the_same_before_and_after_a_hand_was_not_changed_by_it():
    """Chips seen at another count with no hand near (a stack missed, felt read as a chip) and
    the same after a hand came and went (the dealer delivering): the hand changed nothing, no
    late wager; held ``recount_s`` uncovered, the count is the box's, silently."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2"), chip(101, "box_2", (12.0, 0.0)))
    table.step(6)
    assert [(w.box, w.after) for w in table.of(WagerChanged)] == [(2, 2)]
    table.drop(101)  # lost by the detector, no hand anywhere near
    table.step(4)
    table.put(hand(900, (20.0, 20.0), "box_2"))
    table.step(3)
    table.drop(900)
    table.step(13)
    assert table.state.chips_per_box[2] == 2  # the hold starts again after the cover
    table.step(3)
    assert len(table.of(WagerChanged)) == 1
    assert table.state.chips_per_box[2] == 1  # recounted once held recount_s uncovered


def test_a_change_seen_between_covers_must_hold_uncovered_throughout():
    """Chips gone from view as the dealer's hands pass over the box again and again (a
    printed chip circle under the delivery, two_rows_wine): each cover starts the hold again,
    so a count seen only in glimpses shorter than ``wager_hold_s`` is never believed; held
    uncovered that long, it is."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2"), chip(101, "box_2", (12.0, 0.0)))
    table.step(6)
    assert [(w.box, w.after) for w in table.of(WagerChanged)] == [(2, 2)]
    table.put(hand(900, (20.0, 20.0), "box_2"))
    table.step(2)
    table.drop(101)  # gone under the hand
    for _ in range(4):  # glimpses of 0.8 s between covers: 3.2 s in all
        table.drop(900)
        table.step(4)
        table.put(hand(900, (20.0, 20.0), "box_2"))
        table.step(1)
    assert len(table.of(WagerChanged)) == 1
    table.drop(900)
    table.step(6)
    late = table.of(WagerChanged)[-1]
    assert (late.box, late.before, late.after, late.after_no_more_bets) == (2, 2, 1, True)


@pytest.mark.parametrize("tiles_seen", [0, 3, 4])
def test_a_late_change_on_a_table_whose_tiles_are_unseen_is_doubt(tiles_seen):
    """ivory_olive_spots (a held-out look, session 44): ivory tiles the detector never learnt,
    read as chips as they were dealt into the boxes, were taken for late wagers in every round.
    With fewer than a hand's worth of tiles ever seen at once, nothing tells chips from tiles:
    a change after "no more bets" is taken silently."""
    table = Table(RoundConfig(no_more_bets_quiet_s=None))
    table.put(*(tile(i, (100.0 + 12 * i, 50.0), "work_area") for i in range(tiles_seen)))
    table.put(chip(100, "box_2"))
    table.step(4)
    table.put(die(300, 3), die(301, 4), die(302, 5))  # the dice call the bets closed
    table.step(3)
    assert [e.reason for e in table.of(NoMoreBets)] == ["dice"]
    table.put(hand(900, (20.0, 20.0), "box_2"))
    table.step(2)
    table.drop(900)
    table.put(chip(101, "box_2", (12.0, 0.0)))  # a tile dealt there, read as a stack
    table.step(10)
    late = [w.box for w in table.of(WagerChanged) if w.after_no_more_bets]
    assert late == ([2] if tiles_seen >= 4 else [])
    assert table.state.chips_per_box[2] == 2  # the count is believed, silently


def test_a_late_wager_held_in_a_later_phase_keeps_the_phase_it_was_first_seen_in():
    """two_rows_wine/wager_after_no_more_bets_20900 at review's stride (session 44): chips
    added in the wagers phase, their box covered again and again by the delivery, held only
    in the exposure; the change, dated to when it was first seen, was stamped with the phase
    it was believed in, and the rule took it for the settlement's chips."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2"))
    table.step(6)
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]
    table.put(hand(900, (20.0, 20.0), "box_2"))  # a player's hand adds chips late
    table.step(2)
    table.drop(900)
    table.put(chip(101, "box_2", (12.0, 0.0)))
    table.step(2)  # seen, not yet held
    table.put(hand(900, (20.0, 20.0), "box_2"), die(300, 3), die(301, 4), die(302, 5))
    table.step(3)  # covered as the dice are read: a later phase
    assert table.state.phase is Phase.DICE and len(table.of(WagerChanged)) == 1
    table.drop(900)
    table.step(8)
    late = table.of(WagerChanged)[-1]
    assert (late.box, late.before, late.after, late.phase) == (2, 1, 2, Phase.WAGERS)


def test_stacks_no_hand_was_seen_to_place_are_doubt_and_recounted_silently():
    """A stack seen with no hand near (an arm the detector does not know, or a misread) is
    never a late wager; held ``recount_s`` uncovered, it is the box's count, with no event."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2"))
    table.step(6)
    table.put(chip(101, "box_2", (12.0, 0.0)))
    table.step(25)
    assert len(table.of(WagerChanged)) == 1
    assert table.state.chips_per_box[2] == 2


def test_chips_lying_from_before_the_woodpile_are_no_bet_of_this_round():
    table = Table(RoundConfig(no_more_bets_quiet_s=0.8))
    table.put(chip(100, "box_2"))  # left from the last round
    table.put(*(tile(i, (100.0 + 12 * (i // 4), 50.0), "woodpile") for i in range(32)))
    table.step(10)
    assert table.state.phase is Phase.WAGERS
    assert table.of(NoMoreBets) == []  # no bet placed yet this round: nothing to fall quiet
    table.put(chip(101, "box_4"))
    table.step(8)
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]
    assert not any(w.after_no_more_bets for w in table.of(WagerChanged))


def test_a_recording_that_ends_mid_round_closes_it_as_incomplete():
    table = woodpile_table()
    assert Table().round.finish() == []  # nothing seen: no round to close
    (ended,) = [e for e in table.round.finish() if isinstance(e, RoundEnded)]
    assert (ended.round_index, ended.phase, ended.complete) == (0, Phase.WAGERS, False)
    assert describe(ended) == "round 0 ended at wagers (incomplete)"


def test_no_more_bets_waits_for_the_dice_when_the_quiet_rule_is_off():
    table = woodpile_table(no_more_bets_quiet_s=None)
    table.put(chip(100, "box_2"))
    table.step(20)
    assert table.of(NoMoreBets) == []
    table.put(die(300, 6), die(301, 6), die(302, 6))
    table.step(2)
    assert [e.reason for e in table.of(NoMoreBets)] == ["dice"]


def test_the_deal_calls_no_more_bets_when_neither_the_quiet_nor_the_dice_did():
    """red_dealer_mpeg4/single_tile_exposed_20300 (session 39): the dice unread and a hand
    kept over a box with no bet, "no more bets" was never inferred, and the round dealt with
    the bets open: no stakes, no late wager judged. The dealer deals only after the call."""
    table = woodpile_table(no_more_bets_quiet_s=None)
    table.put(chip(100, "box_2"))
    table.step(20)
    assert table.of(NoMoreBets) == []
    deliver(table, 1, range(4))
    assert [e.reason for e in table.of(NoMoreBets)] == ["deal"]
    assert dict(table.state.chips_per_box) == {2: 1} and table.state.no_more_bets


def _set_hand(table: Table, box: int, ids, faces, gap: float = 40.0) -> None:
    xs = (0.0, 11.0, 11.0 + gap, 22.0 + gap)
    table.put(
        *(
            tile(i, (400.0 + x, 40.0 * box), f"box_{box}", face=f)
            for i, x, f in zip(ids, xs, faces, strict=True)
        )
    )
    table.step(2)


def delivered_table() -> Table:
    table = woodpile_table()
    table.put(chip(105, "box_5"), chip(106, "box_6"))
    table.step(6)
    table.put(die(300, 2), die(301, 1), die(302, 1))  # total 4: first box 4
    table.step(2)
    for k, box in enumerate(delivery_order(4)):
        deliver(table, box, range(4 * k, 4 * k + 4))
    table.step(4)
    return table


def expose_bank(table: Table) -> None:
    """The bank's hand (the chung box's, delivered) turned face up in the work area."""
    bank = table.state.hands[1]
    table.put(
        *(
            tile(i, (100.0 + x, 400.0), "work_area", face_up=True, face=f)
            for i, x, f in zip(bank, (0, 11, 60, 71), ("4-4", "4-4", "1-3", "5-6"), strict=True)
        )
    )


def turn_hand(table: Table, box: int, faces) -> None:
    """A box's delivered hand turned face up where it lies, with these faces (None: unread)."""
    table.put(
        *(
            replace(table.tracks[i], face_up=True, class_id=TILE_UP, face=f)
            for i, f in zip(table.state.hands[box], faces, strict=True)
        )
    )


def test_hand_set_as_two_pairs_ranked_by_faces():
    table = delivered_table()
    ids = table.state.hands[5]
    _set_hand(table, 5, ids, ("1-2", "1-3", "6-6", "6-6"))
    (hand,) = table.of(HandSet)
    assert hand.box == 5 and hand.ranked
    assert set(hand.high) == set(ids[2:]) and set(hand.low) == set(ids[:2])
    _set_hand(table, 5, ids, ("1-2", "1-3", "6-6", "6-6"))
    assert len(table.of(HandSet)) == 1  # the same setting is not reported twice


def test_hands_merged_and_whether_they_can_be_rebuilt():
    table = delivered_table()
    five, six = table.state.hands[5], table.state.hands[6]
    table.put(*(tile(i, (600.0 + 3 * k, 240.0), "box_6") for k, i in enumerate(five)))
    table.step(2)
    assert not table.of(HandsMerged)  # seen together for less than merge_hold_s
    table.step(3)
    (merged,) = table.of(HandsMerged)
    assert merged.boxes == (5, 6) and merged.reconstructible
    assert set(merged.track_ids) == {*five, *six}
    table.put(*(tile(i, (600.0, 200.0), "box_5") for i in five))  # apart again
    table.step(2)
    table.drop(five[0])
    table.put(tile(77, (600.0, 240.0), "box_6"))  # the tracker lost one and found a new id
    table.put(*(tile(i, (600.0, 240.0), "box_6") for i in five[1:]))
    table.step(5)
    assert [m.reconstructible for m in table.of(HandsMerged)] == [True, False]


def test_a_surplus_id_for_a_moment_in_a_neighbours_box_is_no_mixing():
    """Players' hands over boxes 6 and 7 as they set their hands (teal_dim, session 32): for
    four frames box 6 shows five tracks, two of them ids of box 5's hand (the tracker's doubt
    under the hands), then each box its own four again. Mixed hands stay mixed."""
    table = delivered_table()
    home = {i: table.tracks[i] for i in table.state.hands[5][:2]}
    table.put(*(tile(i, (600.0 + 3 * k, 240.0), "box_6") for k, i in enumerate(home)))
    table.step(2)  # 0.4 s, under merge_hold_s
    table.put(*home.values())
    table.step(4)
    assert table.of(HandsMerged) == []


def come_over(table: Table, ids) -> None:
    """Tiles ``ids`` come to box 6 one a frame, each seen there once, then hidden (the first
    stays in sight)."""
    for k, i in enumerate(ids):
        table.put(tile(i, (600.0 + 3 * k, 240.0), "box_6"))
        table.step(1)
        if k:
            table.tracks[i] = replace(table.tracks[i], last_seen_frame=table.index - 1)
            table.hidden.add(i)


def test_a_hand_set_down_over_another_is_mixed_though_its_tiles_are_hidden():
    """A player puts box 5's hand over box 6's (standard look, std9 session 24): each tile of
    box 5 is seen in box 6 for a moment as it comes, then lies hidden beneath or above the
    others; box 6 shows five tiles, one of them box 5's. Hidden tiles lie where they were
    last seen, once hidden for hidden_tile_hold_s."""
    table = delivered_table()
    five = table.state.hands[5]
    come_over(table, five)  # box 5 is empty, box 6 shows five tiles
    assert not table.of(HandsMerged)
    table.step(5)  # hidden for hidden_tile_hold_s, then together for merge_hold_s
    (merged,) = table.of(HandsMerged)
    assert merged.boxes == (5, 6) and set(five) <= set(merged.track_ids)


def test_a_hand_laid_on_another_is_mixed_though_one_of_its_tiles_shows():
    """The dealer lays box 5's hand on box 6's (red_dealer_mpeg4/hands_mixed_20700, a
    held-out look, session 42): box 6 shows five tiles, one of them box 5's; the tracker
    loses the other three where they lay, and box 5 lies bare, uncovered. A hand gone from
    its box lies where its tile is seen, in a box holding more than a hand."""
    table = delivered_table()
    five = table.state.hands[5]
    table.drop(*five[1:])
    table.put(tile(five[0], (600.0, 240.0), "box_6"))
    table.step(8)
    (merged,) = table.of(HandsMerged)
    assert merged.boxes == (5, 6) and set(five) <= set(merged.track_ids)


def carry_hidden(table: Table, ids, to_box: int | None) -> None:
    """Tiles ``ids`` go out of sight in their box (the dealer's hand over them); the tracker
    carries the first, hidden, into box ``to_box`` (None: none)."""
    table.hidden.update(ids)
    table.put(*(replace(table.tracks[i], last_seen_frame=table.index - 1) for i in ids))
    table.step(1)
    if to_box is not None:
        table.put(replace(tile(ids[0], (600.0, 240.0), f"box_{to_box}"), last_seen_frame=-1))
        table.tracks[ids[0]] = replace(
            table.tracks[ids[0]], last_seen_frame=table.tracks[ids[1]].last_seen_frame
        )


def test_a_hand_carried_hidden_onto_another_is_mixed_though_no_tile_of_it_shows():
    """The dealer slides box 5's hand onto box 6's (navy_two_rows_dealer/hands_mixed_20700,
    a held-out look, session 44): the pile shows as four tiles, box 6's ids, and no tile of
    box 5 is seen again; the tracker carried one of them, hidden under the hand, into box 6.
    Box 5 lies bare, uncovered: a hand none of whose tiles is seen anywhere lies where one of
    them was carried."""
    table = delivered_table()
    five = table.state.hands[5]
    carry_hidden(table, five, 6)
    table.step(8)
    (merged,) = table.of(HandsMerged)
    assert merged.boxes == (5, 6) and set(five) <= set(merged.track_ids)


@pytest.mark.parametrize("how", ["seen_elsewhere", "nothing_carried", "no_wager"])
def test_a_hand_carried_away_over_another_box_is_no_mixing(how):
    """The dealer takes a hand away over its neighbour (navy_two_rows_dealer and
    brown_row_close, session 44: unused boxes' hands collected): one of its tracks, carried
    hidden, is left in the next box. Two of its tiles are seen again elsewhere, so the hand
    does not lie hidden there; or nothing was carried there; or the box had no wager, and a
    hand without one is the dealer's to take away."""
    table = delivered_table()
    box = 4 if how == "no_wager" else 5
    assert (box in table.state.chips_per_box) is (how != "no_wager")
    hand = table.state.hands[box]
    carry_hidden(table, hand, None if how == "nothing_carried" else box + 1)
    if how == "seen_elsewhere":
        table.hidden.difference_update(hand[2:])
        table.put(*(tile(i, (100.0 + 12 * k, 400.0), "work_area") for k, i in enumerate(hand[2:])))
    table.step(8)
    assert table.of(HandsMerged) == []


def test_ids_found_again_away_from_where_they_were_lost_are_no_mixing():
    """An unused box's tiles taken away out of sight (red_dealer_mpeg4/dice_not_flat_20800 at
    review's stride, session 44): their tracks, kept where the tiles were last seen, were
    given to tiles of a box they never reached, 205 px off. Which tile such an id follows is
    a guess: box 5 holds its own four and two ids of box 4, but no hands were put together.
    Seen carried there, the same tiles would be."""
    table = delivered_table()
    four, five = table.state.hands[4], table.state.hands[5]
    table.hidden.update(four)
    table.put(*(replace(table.tracks[i], last_seen_frame=table.index - 1) for i in four))
    table.step(2)  # out of sight where they lay
    table.drop(*four[2:])
    table.hidden.difference_update(four[:2])
    table.put(*(tile(i, (505.0 + 3 * k, 200.0), "box_5") for k, i in enumerate(four[:2])))
    table.step(8)
    assert table.of(HandsMerged) == []
    assert all(table.tracks[i].zone == "box_5" for i in (*four[:2], *five))


def test_a_hand_gone_is_not_where_one_of_its_ids_is_found_again_long_after():
    """Box 5's hand taken off the table out of sight (teal_dim/clean_10002 at review's
    stride, session 42: an unused hand carried away), one of its ids found again a second
    later on a tile of box 6, which shows five: the tile was not seen going there."""
    table = delivered_table()
    five = table.state.hands[5]
    table.drop(*five)
    table.step(5)
    table.put(tile(five[0], (600.0, 240.0), "box_6"))
    table.step(8)
    assert table.of(HandsMerged) == []


def test_a_hand_under_a_players_hand_is_not_gone_where_a_swapped_id_shows():
    """Box 5's tiles hidden under its player's hand while the tracker shows one of their ids
    in box 6 among its four: box 5 is covered, not bare, so its hand went nowhere."""
    table = delivered_table()
    five = table.state.hands[5]
    table.drop(*five[1:])
    table.put(tile(five[0], (600.0, 240.0), "box_6"), hand(900, (500.0, 200.0), "box_5"))
    table.step(8)
    assert table.of(HandsMerged) == []


def test_tiles_carried_over_a_box_and_seen_again_elsewhere_are_no_mixing():
    """The dealer carries the bank's tiles to the work area over a box (two_rows_wine,
    session 24): hidden in the hand a moment, they are seen again before the hold."""
    table = delivered_table()
    five = table.state.hands[5]
    come_over(table, five)
    table.hidden.clear()
    table.put(*(tile(i, (100.0 + 12 * k, 400.0), "work_area") for k, i in enumerate(five)))
    table.step(4)
    assert not table.of(HandsMerged)


def test_ids_swapped_between_neighbouring_boxes_are_no_mixing():
    """Players' arms over two neighbouring boxes: the tracker trades two ids of box 5's hand
    for two of box 6's (two-row table, session 18). Each box still holds four tiles: no hands
    were put together."""
    table = delivered_table()
    five, six = table.state.hands[5], table.state.hands[6]
    where = {i: (table.tracks[i].centre_xy, table.tracks[i].zone) for i in (*five, *six)}
    swapped = {five[0]: six[0], six[0]: five[0], five[1]: six[1], six[1]: five[1]}
    table.put(*(tile(i, *where[j]) for i, j in swapped.items()))
    table.step(4)
    assert table.of(HandsMerged) == []


def test_tiles_seen_again_in_their_box_are_not_mixed_where_their_hidden_tracks_went():
    """Two tiles of box 5 hidden under a hand: the tracker carries their tracks over box 6,
    where they come to rest unseen. Seen again lying in box 5, they are not tiles of box 5
    lying with box 6's hand (two-row table, session 16)."""
    table = delivered_table()
    five = table.state.hands[5]
    home = {i: table.tracks[i] for i in five[:2]}
    table.hidden = set(home)
    table.put(*(tile(i, (600.0 + 3 * k, 240.0), "box_6") for k, i in enumerate(home)))
    table.step(4)  # at rest in box 6, never seen there
    table.hidden = set()
    table.put(*home.values())
    table.step(4)
    assert table.of(HandsMerged) == []


def test_a_tile_face_up_without_a_face_read_is_no_exposure_until_its_face_is_read():
    """Tiles at an angle show their side, and the detector may call them face up: no face is
    read, so nothing is exposed; once a face is read the exposure counts, dated to the turn."""
    table = delivered_table()
    tid = table.state.hands[5][0]
    table.put(replace(table.tracks[tid], face_up=True, class_id=TILE_UP, face=None))
    table.step(6)  # well past flip_hold_s, but no face
    assert table.of(TileExposed) == []
    table.put(replace(table.tracks[tid], face_up=False, class_id=TILE_DOWN, face=None))
    table.step(3)  # back down unread: it never was an exposure
    assert table.of(TileExposed) == []
    table.put(replace(table.tracks[tid], face_up=True, class_id=TILE_UP, face=None))
    turned_frame = table.index
    table.step(4)
    table.put(replace(table.tracks[tid], face_up=True, class_id=TILE_UP, face="2-2"))
    table.step(1)
    (exposed,) = table.of(TileExposed)
    assert (exposed.track_id, exposed.face, exposed.frame) == (tid, "2-2", turned_frame)
    assert table.of(TileFaceUnread) == []  # none stayed unread for unread_face_s


def test_a_tile_face_up_unread_for_long_is_noted_once_as_doubt():
    table = delivered_table()
    tid = table.state.hands[5][0]
    table.put(replace(table.tracks[tid], face_up=True, class_id=TILE_UP, face=None))
    turned_frame = table.index
    table.step(20)  # 4 s face up, never read
    assert table.of(TileExposed) == []
    (note,) = table.of(TileFaceUnread)
    assert (note.track_id, note.box, note.frame) == (tid, 5, turned_frame)
    assert "not judged" in describe(note)


def test_a_face_read_on_more_tiles_than_the_set_holds_is_doubt_not_an_exposure():
    """Red tile backs read as 4-4 (the set holds two) on three tiles of the woodpile at once:
    no tile turned face up, the readings are doubt (noted, never judged)."""
    table = woodpile_table()
    misread = [
        replace(table.tracks[i], face_up=True, class_id=TILE_UP, face="4-4") for i in (0, 5, 9)
    ]
    table.put(*misread, hand(900, (100.0, 50.0)))  # the dealer's hand at tile 0 (a real turn)
    table.step(1)
    table.drop(900)
    table.step(14)
    assert table.of(TileExposed) == []
    assert sorted(n.track_id for n in table.of(TileFaceUnread)) == [0, 5, 9]
    table.put(*(replace(t, face_up=False, class_id=TILE_DOWN) for t in misread[1:]))
    table.step(5)  # one left reading 4-4: possible, believed
    assert [(e.track_id, e.face) for e in table.of(TileExposed)] == [(0, "4-4")]


def test_a_tile_of_no_hand_lying_untouched_does_not_turn_but_a_delivered_one_may():
    """teal_dim/clean_10001: a maroon back in the work area, still and with no hand near, read
    4-4 face up (detector and reader both sure) for 0.4 s during stacking: only the dealer's
    hands move those tiles, so no tile turned, and no exposure is raised. The same tile
    turning with the dealer's hand on it is an exposure; a delivered tile's turn (a player
    turning a hand at the showdown) needs no hand seen."""
    table = woodpile_table()
    table.put(replace(table.tracks[3], face_up=True, class_id=TILE_UP, face="4-4"))
    table.step(10)
    assert table.of(TileExposed) == []
    table.put(replace(table.tracks[3], face_up=False, class_id=TILE_DOWN))
    table.step(3)
    table.put(replace(table.tracks[3], face_up=True, class_id=TILE_UP, face="4-4"))
    table.put(hand(900, (100.0, 50.0)))  # the dealer's hand turns it
    table.step(1)
    table.drop(900)
    table.step(3)
    assert [(e.track_id, e.face) for e in table.of(TileExposed)] == [(3, "4-4")]
    table = delivered_table()
    box, tid = 5, table.state.hands[5][0]
    table.put(replace(table.tracks[tid], face_up=True, class_id=TILE_UP, face="6-6"))
    table.step(3)
    assert [(e.track_id, e.box) for e in table.of(TileExposed)] == [(tid, box)]


def test_a_tile_flickering_between_its_sides_where_it_lies_never_turned():
    """r_dealer_side_slate_62004 (a training look, a clean round): a green back the reader
    took for 1-1 now and then, up, down, up, down, up over 0.4 s, the tile never moving and the
    dealer's hand beside it, then down again: counted up (its moments down shorter than
    flip_hold_s) it made a false exposed_during_stacking. A turn that shows its old side twice
    is believed only once its new side holds flip_hold_s without a break."""
    table = woodpile_table()
    up = replace(table.tracks[3], face_up=True, class_id=TILE_UP, face="1-1")
    down = replace(table.tracks[3], face_up=False, class_id=TILE_DOWN)
    table.put(hand(900, (100.0, 50.0)))  # the dealer's hand beside it throughout
    for side in (up, down, up, down, up, down, down, down):  # a frame each
        table.put(side)
        table.step(1)
    assert table.of(TileExposed) == []


def test_a_tile_detected_both_ways_as_it_turns_is_dated_to_its_first_turn():
    """A tile the detector sees face up and face down by turns (both boxes found, the stronger
    winning frame by frame) turned when it first showed its face: a moment of its back is a
    misread, as a moment of its face is, and the dealer's hand that turned it is long gone by
    the time it shows its face without a break (brown_row_close/laja_exposure_excess_20100)."""
    table = woodpile_table()
    up = replace(table.tracks[3], face_up=True, class_id=TILE_UP, face="4-4")
    down = replace(table.tracks[3], face_up=False, class_id=TILE_DOWN)
    table.put(up, hand(900, (100.0, 50.0)))  # the dealer's hand turns it
    table.step(1)
    table.drop(900)
    for side in (down, up, down, up):  # a frame each (shorter than flip_hold_s)
        table.put(side)
        table.step(1)
    table.step(2)
    assert [(e.track_id, e.time_s) for e in table.of(TileExposed)] == [(3, 0.8)]
    other = table.tracks[20]
    table.put(replace(other, face_up=True, class_id=TILE_UP, face="5-5"), hand(900, (160, 50)))
    table.step(1)
    table.drop(900)
    table.put(other)
    table.step(3)  # its back held flip_hold_s: it never turned, its face was a misread
    table.put(replace(other, face_up=True, class_id=TILE_UP, face="5-5"))
    table.step(3)  # seen face up long after the hand left it: not believed (flip_touch_s)
    assert len(table.of(TileExposed)) == 1


def test_exposure_then_settlement_with_pushes():
    table = delivered_table()
    expose_bank(table)
    table.step(2)
    for box, faces in ((5, ("1-1", "1-1", "2-2", "2-2")), (6, ("3-3", "3-3", "5-5", "5-5"))):
        table.put(
            *(
                replace(table.tracks[i], face_up=True, class_id=TILE_UP, face=f)
                for i, f in zip(table.state.hands[box], faces, strict=True)
            )
        )
        table.step(3)  # a turned tile counts once it has shown its face for flip_hold_s
    exposed = table.of(HandExposed)
    assert [(e.box, e.bank) for e in exposed] == [(1, True), (5, False), (6, False)]
    assert exposed[0].high_faces == ("4-4", "4-4")
    assert len(table.of(TileExposed)) == 12
    table.put(hand(900, (0.0, 0.0), "box_6"))  # the dealer takes box 6's chips
    table.step(1)
    table.drop(106, 900)
    table.step(2)
    assert table.of(BoxSettled) == []  # a change holds, uncovered, for settle_hold_s first
    table.step(2)  # box 6 lost: box 5, exposed and passed over, pushed
    settled = table.of(BoxSettled)
    assert [(s.box, s.outcome) for s in settled] == [(5, Outcome.PUSH), (6, Outcome.LOSE)]
    assert table.state.phase is Phase.SETTLEMENT
    table.put(hand(900, (30.0, 0.0), "box_5"))
    table.step(1)
    table.drop(900)
    table.put(chip(205, "box_5", (30.0, 0.0)))  # box 5's payout, seen after the dealer moved on
    table.step(7)
    settled = table.of(BoxSettled)
    assert [(s.box, s.outcome) for s in settled][2:] == [(5, Outcome.WIN)]
    table.put(hand(900, (30.0, 0.0), "box_5"))
    table.step(1)
    table.drop(205, 900)  # the player takes the winnings: the box is settled, nothing more
    table.step(7)
    assert len(table.of(BoxSettled)) == 3


def test_a_hand_found_exposed_is_reported_once_its_faces_are_read():
    """The face reader is often sure of a face only a few frames after the tile comes to rest
    (std9/house_way_violation_20100 with a face reader fine-tuned on the look families: the
    bank's 1-3 and 1-5 read at 0.88 and 0.71 the frame the hand lay still, at 0.96 and 1.0
    the next; the hand was judged on the first frame, two faces unknown, and the house way
    violation went unseen). A hand found exposed is reported once its four faces are read,
    or ``exposed_faces_wait_s`` after it was found, the faces still unread unknown."""
    table = delivered_table()
    bank = table.state.hands[1]
    expose_bank(table)
    one_three = table.tracks[bank[2]]
    table.put(replace(one_three, face=None))
    table.step(3)
    assert table.of(HandExposed) == []  # found exposed, its 1-3 not read yet
    table.put(one_three)
    table.step(1)
    (shown,) = table.of(HandExposed)
    assert sorted((*shown.high_faces, *shown.low_faces)) == ["1-3", "4-4", "4-4", "5-6"]
    assert shown.high_faces == ("4-4", "4-4")  # ranked by the faces read
    turn_hand(table, 6, ("1-1", "1-1", "2-2", None))
    table.step(3)
    assert [e.box for e in table.of(HandExposed)] == [1]
    table.step(5)  # exposed_faces_wait_s: the fourth face stays unread
    assert [e.box for e in table.of(HandExposed)] == [1, 6]
    six_shown = table.of(HandExposed)[1]
    faces = [*six_shown.high_faces, *six_shown.low_faces]
    assert sorted(faces, key=str) == ["1-1", "1-1", "2-2", None]


def test_chips_changed_before_a_box_lay_exposed_settle_nothing_even_as_the_stream_ends():
    """A box settles after its hand is exposed. `two_rows_wine/clean_10001`: box 6's chips
    were seen at another count as the players set their hands (a hand over them, then
    covered again and again, never held) and, once its hand had been found exposed and the
    stream ended, the pending count settled it as a loss: a false payout_error. A change first
    seen before the box's hand lay exposed settles nothing, in the stream or at its end."""
    table = delivered_table()
    table.put(hand(900, (0.0, 0.0), "box_6"))
    table.step(1)
    table.drop(106, 900)  # box 6's chip seen gone before any hand is exposed
    table.step(1)
    expose_bank(table)
    turn_hand(table, 6, ("3-3", "3-3", "5-5", "5-5"))
    table.step(3)
    assert sorted(e.box for e in table.of(HandExposed)) == [1, 6]
    table.step(3)
    settled = [
        *table.of(BoxSettled),
        *(e for e in table.round.finish() if isinstance(e, BoxSettled)),
    ]
    assert [(e.box, e.outcome) for e in settled] == [(5, Outcome.PUSH), (6, Outcome.PUSH)]


class Shadow(Places):
    """No place changed, until ``come()``: then every place looks changed (a hand's shadow
    reaching over a box before the hand is detected over it)."""

    def come(self) -> None:
        self.answer = True


@pytest.mark.parametrize("shadow", [False, True])
def test_a_stack_read_where_no_place_changed_settles_nothing_even_as_the_stream_ends(shadow):
    """brown_row_close/dice_not_flat_20800 (held out, made in session 35): a box's printed
    number, beside its stack, was read as a second stack once the dealer's hand had passed
    over the exposed box; its place looked as before, so the count was never believed, but the
    recording ended with it pending and the box was settled as a win (a false payout_error).
    single_tile_exposed_20300: such a count, held with its place unchanged, was believed a
    frame before a hand was detected over the box, its shadow already changing the place."""
    table = delivered_table()
    expose_bank(table)
    turn_hand(table, 6, ("3-3", "3-3", "5-5", "5-5"))
    table.step(3)
    assert sorted(e.box for e in table.of(HandExposed)) == [1, 6]
    table.places = Shadow(False)
    table.put(hand(900, (10.0, 20.0), "box_6"))  # the dealer passes over box 6
    table.step(1)
    table.drop(900)
    table.put(chip(206, "box_6", (30.0, 0.0)))  # its printed number read as a stack
    table.step(6)  # held longer than settle_hold_s, its place unchanged
    if shadow:
        table.places.come()
        table.step(1)
    settled = [
        *table.of(BoxSettled),
        *(e for e in table.round.finish() if isinstance(e, BoxSettled)),
    ]
    assert (6, Outcome.WIN) not in [(e.box, e.outcome) for e in settled]


class PrintedAt(Places):
    """Places that look as they did in every picture where the felt's print lies (a spot
    centred on ``xy``) and different anywhere else (a stack set down)."""

    def __init__(self, xy) -> None:
        super().__init__(None)
        self.xy = xy

    def changed(self, box: int, spots: list, since: int, covered=()) -> bool | None:
        self.asked.append((box, since))
        centres = [((x1 + x2) / 2, (y1 + y2) / 2) for x1, y1, x2, y2 in spots]
        return any(abs(x - self.xy[0]) + abs(y - self.xy[1]) > 1.0 for x, y in centres)


def test_a_printed_number_read_as_a_stack_is_no_bet_and_keeps_no_bets_open():
    """brown_row_close: a box's printed number, read as a stack on and off, counted as a
    second bet and kept "no more bets" from being inferred until after a late wager
    (`wager_after_no_more_bets_20900`). Where it lies as it lay before the bets opened, it is
    no stake, and its coming and going keeps nothing open."""
    table = Table(RoundConfig(no_more_bets_quiet_s=0.8))
    table.places = PrintedAt((200.0, 0.0))
    printed = chip(103, "box_3", (200.0, 0.0))
    table.put(printed, *(tile(i, (100.0 + 12 * (i // 4), 50.0), "woodpile") for i in range(32)))
    table.step(4)  # the woodpile built, the number read as a stack all along
    table.put(chip(100, "box_2"))  # a bet
    table.step(2)
    bet = table.index
    for _ in range(5):  # the number comes and goes
        table.drop(103)
        table.step(2)
        table.put(printed)
        table.step(2)
    (closed,) = table.of(NoMoreBets)
    assert closed.frame - bet <= 0.8 * FPS + 1
    bets = [(w.box, w.after) for w in table.of(WagerChanged) if w.phase is Phase.WAGERS]
    assert [bet for bet in bets if bet[1]] == [(2, 1)]  # what lay there before is let go


class SetDown(Places):
    """Places where stacks were set down: a place looks different from every picture taken
    before its stack came (``came``: its centre -> that frame) and as it did in every one
    since; the felt elsewhere never changes."""

    def __init__(self) -> None:
        super().__init__(None)
        self.came: dict[tuple[float, float], int] = {}

    def changed(self, box: int, spots: list, since: int, covered=()) -> bool | None:
        self.asked.append((box, since))
        centres = [((x1 + x2) / 2, (y1 + y2) / 2) for x1, y1, x2, y2 in spots]
        return any(since < self.came.get(xy, since + 1) for xy in centres)


def test_a_bet_placed_before_the_woodpile_was_seen_is_a_bet():
    """ivory_olive_spots/wager_after_no_more_bets_20900 (session 46): tiles the detector
    learns only once the woodpile has stood still are seen late, and the bets placed before
    that were judged by the picture of the boxes just before the woodpile was seen, which
    shows them: taken for chips lying from before, every bet was let go as the woodpile
    appeared, and the late wager in box 2 went unjudged."""
    table = Table(RoundConfig(no_more_bets_quiet_s=0.8))
    table.places = SetDown()
    table.step(3)  # the boxes bare; the woodpile stands but is not yet seen
    table.places.came[(0.0, 0.0)] = table.index
    table.put(chip(100, "box_2"))  # a bet
    table.step(6)
    table.put(*(tile(i, (100.0 + 12 * (i // 4), 50.0), "woodpile") for i in range(32)))
    table.step(30)  # the woodpile seen built, then the bets quiet
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]
    table.put(hand(900, (40.0, 20.0), "box_2"))  # a player's hand
    table.step(3)
    table.drop(900)
    table.places.came[(30.0, 0.0)] = table.index
    table.put(chip(101, "box_2", (30.0, 0.0)))  # has set down a late wager
    table.step(30)
    bets = [(w.box, w.before, w.after, w.after_no_more_bets) for w in table.of(WagerChanged)]
    assert bets == [(2, 0, 1, False), (2, 1, 2, True)]


def test_a_printed_number_beside_a_stack_is_judged_by_the_felt_beside_it():
    """brown_row_close/wager_after_no_more_bets_20900: the number's box overlaps the stack set
    down beside it, whose chips changed the number's place; only the part of its box no other
    stack covers is held against the picture from before the bets."""
    from pipeline.round.wagers import _apart

    assert _apart((535, 718, 591, 765), [(574, 700, 631, 761)]) == (535, 718, 574, 765)
    assert _apart((0, 0, 10, 10), [(20, 20, 30, 30)]) == (0, 0, 10, 10)
    assert _apart((0, 0, 10, 10), [(0, 0, 10, 9)]) is None  # too little left: not known


def test_a_hand_that_never_moves_is_the_felts_print_and_covers_nothing():
    """two_rows_wine/hand_exposed_by_dealer_20200: three "hands" over the near row's empty
    felt from the first frame to the last (the printed outlines read as arms) held its boxes
    covered, and a hand over a box not bet keeps the bets open: "no more bets" was never
    inferred from the quiet. One that lay where it was first seen, never moving, for
    `furniture_hand_s` covers nothing; one that moved is a hand again."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(hand(900, (30.0, 20.0), "box_3"))  # over box 3, never moving
    table.put(chip(100, "box_2"))
    table.step(8)
    assert table.of(NoMoreBets) == []  # a hand over a box not bet: still betting
    table.step(24)  # furniture_hand_s (5 s) after it was first seen, then the quiet
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]


def test_an_arm_resting_still_after_the_bets_closed_still_hides_the_chips():
    """Only while the bets are open is a hand that never moves taken for the felt: after they
    close, an arm resting still over a box hides its chips, and their not being seen is no
    wager taken, however long it rests."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2"))
    table.step(6)
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]
    table.put(hand(900, (10.0, 10.0), "box_2"))  # an arm set down over the stack
    table.drop(100)
    table.step(40)  # 8 s, never moving
    assert [w for w in table.of(WagerChanged) if w.after_no_more_bets] == []


def test_a_hand_that_moved_keeps_covering_however_still_it_lies_later():
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(hand(900, (30.0, 20.0), "box_3"))
    table.put(chip(100, "box_2"))
    table.step(2)
    table.put(hand(900, (70.0, 20.0), "box_3"))  # it moves, then lies still
    table.step(30)
    assert table.of(NoMoreBets) == []


def stack_set_down_as_bets_close() -> tuple[Table, WagerChanged, int]:
    """A stack set down in box 4 with the player's hand beside it, and "no more bets" inferred
    before the hand had been gone ``wager_reach_s``: the table, the stack's WagerChanged, and
    the frame from which box 4 lies uncovered."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(100, "box_2"))
    table.step(2)
    table.put(hand(901, (40.0, 20.0), "box_4"))  # a player sets a stack down in box 4
    table.step(2)
    table.put(chip(101, "box_4", (30.0, 0.0)))
    table.step(3)  # it comes to rest, the hand still beside it
    (placed,) = [w for w in table.of(WagerChanged) if w.box == 4]
    table.drop(901)
    gone = table.index
    table.step(6)
    assert [e.reason for e in table.of(NoMoreBets)] == ["quiet"]
    return table, placed, gone


def test_a_late_change_is_held_against_a_picture_of_the_count_believed():
    """brown_row_close/clean_10001: a stack set down with the player's hand still near, and
    "no more bets" inferred before the hand had been gone ``wager_reach_s``: the picture kept
    for the box was of the felt before the stack came, so a printed number read as a second
    stack later was held against the empty box, found changed, and raised a late wager. The
    picture is taken again as the count believed changes."""
    table, placed, _ = stack_set_down_as_bets_close()
    table.places = Places(True)
    table.put(hand(900, (40.0, 20.0), "box_4"))  # the dealer delivering
    table.step(3)
    table.drop(900)
    table.put(chip(102, "box_4", (50.0, 0.0)))  # the printed number read as a stack
    table.step(8)
    asked = {since for box, since in table.places.asked if box == 4}
    assert asked and min(asked) >= placed.frame


class SinceTheHand(Places):
    """Places that look different from every picture before frame ``frame`` (a hand was
    over them then) and the same as in every picture from it on."""

    def __init__(self, frame: int) -> None:
        super().__init__(None)
        self.frame = frame

    def changed(self, box: int, spots: list, since: int, covered=()) -> bool | None:
        self.asked.append((box, since))
        return since < self.frame


def test_a_late_change_is_also_held_against_the_box_as_the_bets_left_it():
    """brown_row_close/clean_10000: a stack set down with the player's hand over the box's
    printed number, and "no more bets" inferred before the hand had been gone
    ``wager_reach_s``: the only picture without a hand near was from before it came, so the
    number, read as a second stack once the bets had closed, looked changed against it. The
    box seen uncovered as the bets closed showed the number as it is: no chips moved."""
    table, _, gone = stack_set_down_as_bets_close()
    table.places = SinceTheHand(gone)
    table.put(chip(102, "box_4", (50.0, 0.0)))  # its printed number read as a stack
    table.step(8)
    assert [w for w in table.of(WagerChanged) if w.after_no_more_bets] == []
    assert any(since >= gone for box, since in table.places.asked if box == 4)


def test_a_hand_exposed_under_ids_other_than_its_setting_keeps_its_own_pairs():
    """A hand set as two pairs, then one of its tiles found again under a new id, then turned
    over in a heap the pairs cannot be told from (session 18: a KeyError that stopped the round
    on a `two_rows_wine` round). The exposure is judged on the tiles seen, not on the setting's
    ids."""
    table = delivered_table()
    five = table.state.hands[5]
    _set_hand(table, 5, five, ("1-1", "1-1", "2-2", "2-2"))
    table.drop(five[0])
    heap = (*five[1:], 77)
    table.put(
        *(
            tile(i, (400.0, 200.0), "box_5", face_up=True, face=f)
            for i, f in zip(heap, ("1-1", "2-2", "2-2", "1-1"), strict=True)
        )
    )
    table.step(4)
    (exposed,) = [e for e in table.of(HandExposed) if e.box == 5]
    assert {*exposed.high_ids, *exposed.low_ids} == set(heap)
    assert sorted((*exposed.high_faces, *exposed.low_faces)) == ["1-1", "1-1", "2-2", "2-2"]


def test_a_hand_whose_fourth_tile_is_hidden_is_exposed_with_that_face_unknown():
    """Under a low, tilted camera a turned hand often shows three tiles: the fourth lies under
    its neighbour (`two_rows_wine/clean_10001`: boxes 3, 4 and 8 never exposed, hand
    membership 20/32). While the dealer exposes hands, three of a hand's tiles face up and
    still in its box with the fourth unseen for `hidden_tile_hold_s` is the hand exposed, the
    hidden face unknown; not before the exposure, nor while a tile of it shows face down
    beside the others."""
    table = delivered_table()
    five, six = table.state.hands[5], table.state.hands[6]

    def turn(ids, faces):
        table.put(
            *(
                replace(table.tracks[i], face_up=True, class_id=TILE_UP, face=f)
                for i, f in zip(ids, faces, strict=True)
            )
        )

    table.hidden.add(five[3])
    turn(five[:3], ("1-1", "1-1", "2-2"))  # a player peeks before the exposure: no hand shown
    table.step(8)
    assert table.of(HandExposed) == []
    table.put(*(replace(table.tracks[i], face_up=False, class_id=TILE_DOWN) for i in five[:3]))
    table.step(3)
    expose_bank(table)
    table.step(3)
    turn(six[:3], ("3-3", "3-3", "5-5"))  # box 6's fourth tile still seen face down
    x1, y1, x2, y2 = table.tracks[six[3]].xyxy  # beside the others, not under them
    table.put(replace(table.tracks[six[3]], xyxy=(x1 + 15.0, y1, x2 + 15.0, y2)))
    turn(five[:3], ("1-1", "1-1", "2-2"))  # box 5's fourth hidden
    table.step(3)
    assert [e.box for e in table.of(HandExposed)] == [1]  # not yet: hidden_tile_hold_s
    table.step(3)  # found exposed; reported once the hidden face is read, or after a wait
    assert [e.box for e in table.of(HandExposed)] == [1]
    table.step(5)  # exposed_faces_wait_s: the hidden tile stays hidden
    assert [e.box for e in table.of(HandExposed)] == [1, 5]
    five_exposed = table.of(HandExposed)[1]
    assert {*five_exposed.high_ids, *five_exposed.low_ids} == set(five)
    faces = [*five_exposed.high_faces, *five_exposed.low_faces]
    assert sorted(faces, key=str) == ["1-1", "1-1", "2-2", None]


def test_a_hand_whose_tiles_lie_under_their_pairs_is_exposed_with_those_faces_unknown():
    """A tilted camera sees a tile set against its pair partly beneath it; with its pips
    hidden, a face the colour of the backs reads as a back (`teal_dim`: the last box's hand,
    two tiles face up over two read face down, never exposed). Two tiles face up, each over
    one seen face down, still in the box for `hidden_tile_hold_s`: the hand exposed, the
    faces beneath unknown. A face-down tile beside them, under none, is no exposure."""
    table = delivered_table()
    five = table.state.hands[5]
    expose_bank(table)
    table.step(3)
    for k, i in enumerate(five):  # two pairs, the second tile of each half under the first
        x, y = 100.0 + 30 * (k // 2), 200.0 + 12 * (k % 2)
        up = k % 2 == 0
        face = ("6-6", None, "2-3", None)[k]
        table.put(
            replace(
                tile(i, (x, y), "box_5", face_up=up, face=face),
                class_id=TILE_UP if up else TILE_DOWN,
            )
        )
    table.step(12)
    (exposed,) = [e for e in table.of(HandExposed) if e.box == 5]
    assert {*exposed.high_ids, *exposed.low_ids} == set(five)
    faces = [*exposed.high_faces, *exposed.low_faces]
    assert sorted(faces, key=str) == ["2-3", "6-6", None, None]


def test_a_tile_face_down_beside_its_pair_is_no_hand_exposed():
    table = delivered_table()
    five = table.state.hands[5]
    expose_bank(table)
    table.step(3)
    for k, i in enumerate(five):  # the second pair side by side: its face-down tile under none
        x, y = 100.0 + 30 * (k // 2), 200.0 + (12 if k == 1 else 0)
        x += 12.0 if k == 3 else 0.0
        up = k != 3 and k != 1
        table.put(
            replace(tile(i, (x, y), "box_5", face_up=up), class_id=TILE_UP if up else TILE_DOWN)
        )
    table.step(12)
    assert [e.box for e in table.of(HandExposed)] == [1]


def test_a_hand_whose_ids_the_tracker_traded_is_exposed_from_the_tiles_in_its_box():
    """Players' arms over two neighbouring boxes trade tile ids between them: box 8's hand was
    remembered with a tile of box 7 (`brown_row_close/clean_10001`, hand membership 28/32).
    Turned over with one tile unseen, the hand is the three tiles face up in its box and the
    one track kept there unseen, whatever ids the delivery remembered."""
    table = delivered_table()
    five = table.state.hands[5]
    table.put(replace(table.tracks[five[0]], track_id=88))  # its tile under another id
    table.drop(five[0])
    table.step(3)
    expose_bank(table)
    table.step(3)
    table.hidden.add(five[3])
    table.put(
        *(
            replace(table.tracks[i], face_up=True, class_id=TILE_UP, face=f)
            for i, f in zip((88, five[1], five[2]), ("1-1", "2-2", "2-2"), strict=True)
        )
    )
    table.step(12)  # hidden_tile_hold_s, then exposed_faces_wait_s
    (exposed,) = [e for e in table.of(HandExposed) if e.box == 5]
    assert {*exposed.high_ids, *exposed.low_ids} == {88, five[1], five[2], five[3]}
    faces = [*exposed.high_faces, *exposed.low_faces]
    assert sorted(faces, key=str) == ["1-1", "2-2", "2-2", None]


def test_chips_moving_in_a_box_not_exposed_settle_nothing():
    """The dealer settles a box after exposing its hand: chips misread in a box whose hand is
    still face down (a payout stack passing over it) settle nothing and pass no box over."""
    table = delivered_table()
    expose_bank(table)
    turn_hand(table, 5, ("1-1", "1-1", "2-2", "2-2"))
    table.step(3)
    assert sorted(e.box for e in table.of(HandExposed)) == [1, 5]
    table.put(hand(900, (0.0, 0.0), "box_6"))
    table.step(1)
    table.drop(900)
    table.put(chip(206, "box_6", (20.0, 0.0)))  # box 6 not exposed: no payout yet
    table.step(7)
    assert [(w.box, w.after) for w in table.of(WagerChanged)][-1] == (6, 2)
    assert table.of(BoxSettled) == []


def test_the_chung_box_takes_no_wagers_so_chips_seen_there_settle_nothing():
    """The chung's box takes no wagers (RULES.md 5): the chung plaque read as a chip stack
    there, coming and going, is no wager, no late wager, and its going is no settlement that
    passes the other boxes over as pushes (`two_rows_wine/exposed_during_stacking_20000`: box
    1's 'loss' pushed boxes 2-8 at once, and two false payout_error followed)."""
    table = woodpile_table(no_more_bets_quiet_s=0.8)
    table.put(chip(101, "box_1"), chip(105, "box_5"))
    table.step(8)
    assert [(w.box, w.after) for w in table.of(WagerChanged)] == [(5, 1)]
    table.put(die(300, 2), die(301, 1), die(302, 1))  # total 4: first box 4
    table.step(2)
    for k, box in enumerate(delivery_order(4)):
        deliver(table, box, range(4 * k, 4 * k + 4))
    table.step(4)
    expose_bank(table)
    table.step(3)
    table.put(hand(900, (0.0, 0.0), "box_1"))
    table.step(1)
    table.drop(900, 101)  # the plaque is read no more
    table.step(6)
    assert [w.box for w in table.of(WagerChanged)] == [5]
    assert table.of(BoxSettled) == []


def test_a_new_wash_closes_the_round_and_starts_the_next_despite_old_dice():
    table = delivered_table()
    for box in (1, 5, 6):
        table.put(
            *(
                replace(table.tracks[i], face_up=True, class_id=TILE_UP)
                for i in table.state.hands[box]
            )
        )
        table.step(2)
    for k in range(3):  # all tiles gathered face down and washed
        table.put(
            *(
                tile(i, (50.0 + 15 * (i % 8) + 9 * (k % 2), 300.0 + 25 * (i // 8)), "work_area")
                for i in range(32)
            )
        )
        table.step()
    pushes = [(e.box, e.outcome) for e in table.of(BoxSettled)]
    assert pushes == [(5, Outcome.PUSH), (6, Outcome.PUSH)]
    last = table.of(PhaseChanged)[-1]
    assert (last.after, last.round_index) == (Phase.WASH, 1)
    assert table.state.round_index == 1 and table.state.hands == {}
    assert len(table.of(DiceRead)) == 1 and table.state.dice is None  # the dice still lying there


def test_update_leaves_the_callers_list_alone_and_reset_forgets():
    table = woodpile_table()
    tracks = list(table.tracks.values())
    before = list(tracks)
    table.round.update(tracks, Stamp(99, 99 / FPS))
    assert tracks == before
    table.round.reset()
    state, events = table.round.update(tracks, Stamp(100, 100 / FPS))
    assert state.phase is Phase.IDLE and events == []


def test_state_is_frozen():
    state = woodpile_table().state
    with pytest.raises(TypeError):
        state.tiles_per_zone["woodpile"] = 0  # type: ignore[index]
    assert state.tiles_per_zone["woodpile"] == 32


def test_pairs_geometry():
    row = [tile(i, (20.0 * i, 0.0), "box_1") for i in range(4)]
    stack = [tile(i, (0.0, 0.0), "box_1") for i in range(4)]
    pairs = [tile(i, (x, 5.0), "box_1") for i, x in enumerate((0, 11, 60, 71))]
    assert split_pairs(row, 1.6, 0.6) is None
    assert split_pairs(stack, 1.6, 0.6) is None
    assert split_pairs(pairs, 1.6, 0.6) == ((0, 1), (2, 3))
    faces = {0: "1-2", 1: "1-3", 2: "6-6", 3: "6-6"}
    assert rank_pairs((0, 1), (2, 3), faces) == ((2, 3), (0, 1), True)
    assert rank_pairs((0, 1), (2, 3), {0: None}) == ((0, 1), (2, 3), False)


EXAMPLES = (
    PhaseChanged(0, 0.0, Phase.IDLE, Phase.WASH, 0),
    WashEnded(1, 0.2, 32, 3),
    WoodpileBuilt(2, 0.4, 32, 3),
    WagerChanged(3, 0.6, 2, 0, 1, False, Phase.WAGERS),
    NoMoreBets(4, 0.8, "quiet"),
    DiceRead(5, 1.0, (1, None, 3), None, None, False),
    GroupDelivered(6, 1.2, 4, 0, 4, (0, 1, 2, 3), False),
    DeliveryDone(7, 1.4, (4,), (4,), 4),
    HandCollected(8, 1.6, 4, (0, 1, 2, 3)),
    TileExposed(9, 1.8, 0, "6-6", "box_4", Phase.SETTING, 4),
    HandSet(10, 2.0, 4, (0, 1), (2, 3), False),
    HandsMerged(11, 2.2, (4, 5), (0, 1, 2, 3, 4, 5, 6, 7), True),
    HandExposed(12, 2.4, 1, True, ("6-6", "1-1"), ("2-2", "3-3"), (0, 1), (2, 3)),
    BoxSettled(13, 2.6, 4, Outcome.WIN),
    CameraLost(14, 2.8, "frozen"),
    CameraRestored(15, 3.0, 0.2),
    VisionDegraded(16, 3.2, "5 dice in the dice area (at most 3)"),
    VisionRestored(17, 3.4, 0.2),
    RoundEnded(18, 3.6, 0, Phase.SETTING, False),
    TileFaceUnread(19, 3.8, 7, "box_5", Phase.SETTING, 5),
    BankStaked(20, 4.0, "co_bank", 300, 300, 500),
)


def test_every_event_kind_describes_itself():
    assert {type(e) for e in EXAMPLES} == set(typing.get_args(TableEvent))
    lines = [describe(e) for e in EXAMPLES]
    assert all(lines) and len(set(lines)) == len(lines)
    with pytest.raises(TypeError):
        describe("not an event")  # type: ignore[arg-type]


# --- oracle mode on rendered scenarios ---------------------------------------------------------

ORACLE_SCENARIOS = ((3, ()), (2, ("incorrect_delivery",)), (7, ("hands_mixed",)))


def _evaluator():
    spec = importlib.util.spec_from_file_location(
        "evaluate_events", ROOT / "scripts" / "evaluate_events.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> list[Path]:
    from vision.synth.clip import ClipConfig, render_scenario
    from vision.synth.scenario import ScenarioTiming

    root = tmp_path_factory.mktemp("oracle")
    out = []
    for seed, injections in ORACLE_SCENARIOS:
        folder = root / f"seed{seed}"
        render_scenario(
            seed, injections, folder, ClipConfig(scale=0.25), ScenarioTiming(fps=5), progress=False
        )
        out.append(folder)
    return out


@pytest.mark.slow
def test_oracle_dice_first_box_and_delivery_order(clips):
    for folder in clips:
        scenario = json.loads((folder / "scenario.json").read_text())
        plan = scenario["plan"]
        events = reconstruct_clip(folder)
        (read,) = [e for e in events if isinstance(e, DiceRead)]
        assert sorted(read.values) == sorted(plan["dice"])
        assert read.first_box == plan["first_box"]
        groups = [
            (g.box, g.tile_count, set(g.track_ids)) for g in events if isinstance(g, GroupDelivered)
        ]
        assert groups == [
            (g["box"], len(g["tile_ids"]), set(g["tile_ids"])) for g in plan["groups"]
        ]


@pytest.mark.slow
def test_oracle_events_match_the_golden_file(clips):
    evaluate = _evaluator()
    summary, scores = evaluate.evaluate(clips)
    golden = json.loads(GOLDEN.read_text())
    assert golden["scenarios"] == [[s, list(i)] for s, i in ORACLE_SCENARIOS]
    for name, floor in golden["at_least"].items():
        assert summary[name] >= floor, (name, summary[name], [s.misses for s in scores])
    for name, ceiling in golden["at_most"].items():
        assert summary[name] <= ceiling, (name, summary[name])
    evidence = {k: v for s in scores for k, v in s.evidence.items()}
    assert evidence == {"incorrect_delivery": True, "hands_mixed": True}


@pytest.mark.slow
def test_oracle_what_the_camera_cannot_see_is_unknown_not_changed(clips):
    """A clean round as a camera sees it: objects less than 30% visible (chips under the
    players' arms while they set their hands, tiles stacked in a delivered group) unseen."""
    folder = clips[0]
    plan = json.loads((folder / "scenario.json").read_text())["plan"]
    assert not plan["injections"]
    truth = list(read_truth(folder / "truth.jsonl.gz"))
    events = reconstruct(oracle_frames(truth, min_visibility=0.3))
    (called,) = [e for e in events if isinstance(e, NoMoreBets)]
    hidden = [
        line["frame"]
        for line in truth
        for o in line["objects"]
        if o["class"] == "chip" and o["zone"].startswith("box_") and o["visibility"] < 0.3
        if line["time_s"] > called.time_s
    ]
    assert hidden  # chips were covered after "no more bets"...
    late = [e for e in events if isinstance(e, WagerChanged) and e.after_no_more_bets]
    assert all(e.phase.order >= Phase.EXPOSURE.order for e in late)  # ...and stayed unknown
    (done,) = [e for e in events if isinstance(e, DeliveryDone)]
    assert list(done.boxes) == [g["box"] for g in plan["groups"]]
    assert min(done.tile_counts) < 4  # stacked tiles hide each other: counts are "at least"


@pytest.mark.slow
def test_oracle_a_recording_cut_during_the_showdown_ends_its_round_incomplete(clips):
    folder = clips[0]
    scenario = json.loads((folder / "scenario.json").read_text())
    cut = min(e["frame"] for e in scenario["events"] if e["type"] == "hand_exposed") + 2
    truth = [line for line in read_truth(folder / "truth.jsonl.gz") if line["frame"] < cut]
    events = reconstruct(oracle_frames(truth))
    assert not [e for e in events if isinstance(e, WashEnded) and e.frame > cut - 20]
    ended = events[-1]
    assert isinstance(ended, RoundEnded) and not ended.complete
    assert ended.phase in (Phase.SETTING, Phase.EXPOSURE)
    whole = reconstruct(oracle_frames(read_truth(folder / "truth.jsonl.gz")))
    assert [e.complete for e in whole if isinstance(e, RoundEnded)] == [True]


def _truth_object(oid: int, kind: str, face_up, **extra) -> dict:
    return {
        "id": oid,
        "class": kind,
        "face": extra.pop("face", None),
        "face_up": face_up,
        "xyxy": [0, 0, 4, 8],
        "zone": extra.pop("zone", "work_area"),
        **extra,
    }


def test_oracle_keeps_faces_once_seen_and_hides_tipped_dice():
    up = _truth_object(1, "tile", True, face="6-6")
    down = _truth_object(1, "tile", False, face="6-6")
    tipped = _truth_object(300, "die", None, die_value=5, die_flat=False, zone="dice_area")
    truth = [
        {"frame": 0, "time_s": 0.0, "blind": None, "objects": [up, tipped]},
        {"frame": 1, "time_s": 0.2, "blind": None, "objects": [down]},
        {"frame": 2, "time_s": 0.4, "blind": "frozen", "objects": []},
    ]
    frames = list(oracle_frames(truth))
    assert frames[0].tracks[1].die_value is None and frames[0].tracks[1].face == DIE_TIPPED
    assert frames[1].tracks[0].face == "6-6" and frames[1].tracks[0].class_id == TILE_DOWN
    assert frames[2].blind == "frozen" and frames[2].tracks == frames[1].tracks


def test_a_face_misread_for_a_frame_is_not_an_exposure_nor_is_a_tile_in_the_float():
    table = delivered_table()
    ids = table.state.hands[5]
    table.put(replace(table.tracks[ids[0]], face_up=True, class_id=TILE_UP))
    table.step(1)  # one frame face up (shorter than flip_hold_s), then face down again
    table.put(replace(table.tracks[ids[0]], face_up=False, class_id=TILE_DOWN))
    table.step(3)
    table.put(tile(90, (900.0, 900.0), "float_tray", face_up=False))
    table.step(3)
    table.put(tile(90, (900.0, 900.0), "float_tray", face_up=True, face=None))
    table.step(4)  # a chip in the float read as a face-up tile
    assert table.of(TileExposed) == []
    table.put(replace(table.tracks[ids[0]], face_up=True, class_id=TILE_UP))
    table.step(3)
    (exposed,) = table.of(TileExposed)
    assert exposed.track_id == ids[0] and exposed.box == 5


def test_the_state_lists_a_hands_tiles_showing_face_up_with_their_face_unread():
    """A delivered tile showing face up, its face not read (or not yet shown flip_hold_s), is
    no exposure; the state lists it (``turning``) so that a rule counting exposed tiles knows
    it is there (single_tile_exposed)."""
    table = delivered_table()
    tid = table.state.hands[5][1]
    table.put(replace(table.tracks[tid], face_up=True, class_id=TILE_UP, face=None))
    table.step(2)
    assert dict(table.state.turning) == {5: (tid,)} and table.of(TileExposed) == []
    table.put(replace(table.tracks[tid], face_up=False, class_id=TILE_DOWN))
    table.step(3)
    assert dict(table.state.turning) == {}


def test_a_round_given_up_on_a_fault_ends_incomplete_and_the_next_round_starts_afresh():
    table = woodpile_table()
    at = Stamp(table.index, table.index / FPS)
    state, events = table.round.abandon(at, "round reconstruction failed (KeyError: 7)")
    assert events == [
        RoundEnded(at.index, at.time_s, 0, Phase.WAGERS, False, "round reconstruction failed "
                   "(KeyError: 7)")
    ]  # fmt: skip
    assert (state.phase, state.round_index) == (Phase.IDLE, 1)
    table.step(4)  # the woodpile seen afresh: a new round, nothing of the old one carried over
    assert (table.state.phase, table.state.round_index) == (Phase.WAGERS, 1)
    assert [e.tile_count for e in table.of(WoodpileBuilt)] == [32, 32]


def test_tiles_kept_unseen_in_the_work_area_are_no_wash():
    """navy_two_rows_dealer/clean_10001 (session 43): mid-delivery, 7 tiles seen, and 24 tracks
    of tiles the tracker keeps in the work area where it last saw them (under the woodpile's
    stacks, the dealer's hands), four carried along by a hand: taken for a wash, they closed
    the round and began another. Only tiles seen are washed."""
    for hidden, washed in ((True, False), (False, True)):
        table = woodpile_table()
        table.put(die(300, 2), die(301, 1), die(302, 1))  # total 4: first box 4
        table.step(2)
        for k, box in enumerate(delivery_order(4)[:6]):
            deliver(table, box, range(4 * k, 4 * k + 4))
        kept = range(200, 224)
        table.put(
            *(tile(i, (60.0 + 9 * (i % 8), 300.0 + 20 * (i // 8)), "work_area") for i in kept)
        )
        table.step(4)
        table.hidden = set(kept) if hidden else set()
        for dx in (20.0, 40.0, 60.0):  # four carried by a hand
            table.put(*(tile(i, (60.0 + 9 * (i % 8) + dx, 300.0), "work_area") for i in kept[:4]))
            table.step()
        began = [e for e in table.of(PhaseChanged) if e.after is Phase.WASH]
        assert bool(began) is washed, hidden
        assert (table.state.phase is Phase.DELIVERY) is not washed
