"""Round reconstructor: a phase machine that turns per-frame tracks into table events.

Each frame, :meth:`RoundReconstructor.update` digests the tracks (motion, where each comes to
rest, tiles turning face up) and runs one small step per part of the round. Phases are inferred
from what lies on the table, never from a clock:

- **wash**: at least ``wash_min_tiles`` face-down tiles in the work area and several moving at
  once. It ends when no tile has moved for ``wash_quiet_s`` (or tiles reach the woodpile); the
  end is dated to the last motion. A new wash starts a new round from any phase but the
  woodpile's (stacking moves the washed tiles too).
- **woodpile**: every tile seen (at least ``woodpile_min_seen_tiles``, the stack tops) at rest
  in the woodpile, face down, for ``woodpile_hold_s``.
- **wagers**: chip stacks coming to rest in a box, or leaving it (:class:`WagerChanged`).
- **no more bets**: there is no visual cue. It is inferred ``no_more_bets_quiet_s`` after the
  last wager change made once the woodpile is built (chips lying from before are no bet of
  this round), or at the latest when the dice appear. Set ``no_more_bets_quiet_s=None`` to
  let only the dice call it.
- **dice**: three dice in the dice area, values unchanged for ``dice_hold_s``; a die that
  stays unread for ``dice_unread_s`` gives ``DiceRead(flat=False)`` if the face reader saw it
  tipped (not lying flat), else ``DiceRead(flat=None)``: the throw is unknown, not irregular.
- **delivery**: tiles coming to rest in a box from outside the boxes; arrivals at one box
  within ``group_gap_s`` form one group, and tiles appearing later in a box already served
  (a stack spread out) join its group. The woodpile seen empty and no arrival for
  ``delivery_quiet_s`` ends the delivery; DeliveryDone carries the final counts. Groups that
  appear in several boxes at once (the camera was blind while they were dealt) are put in
  counter-clockwise order and flagged ``order_seen=False``.
- **setting, merging, exposure, settlement**: see :mod:`pipeline.round.hands`.

Frames carry ``index`` and ``time_s`` (a :class:`vision.types.Frame` does).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from paigow.dice import BOX_COUNT, DICE_COUNT, first_box, step_box
from pipeline.round.events import (
    DeliveryDone,
    DiceRead,
    NoMoreBets,
    Phase,
    RoundEnded,
    TableEvent,
    TableState,
    TileExposed,
    TileFaceUnread,
    WagerChanged,
    WashEnded,
    WoodpileBuilt,
)
from pipeline.round.hands import HAND_STEPS, finish_round, settle_box
from pipeline.round.memory import (
    ChipSighting,
    OpenGroup,
    RoundConfig,
    RoundMemory,
    Throw,
    box_of,
    chips_in_boxes,
    covered_boxes,
    snapshot,
)
from pipeline.round.tracks import FrameView, TrackBook, ZoneMove
from vision.faces import DIE_TIPPED
from vision.types import Track

__all__ = ["STEPS", "FrameLike", "RoundConfig", "RoundReconstructor"]

WORK_AREA = "work_area"
WOODPILE = "woodpile"
DICE_AREA = "dice_area"
NO_NEW_WASH = (Phase.WASH, Phase.WOODPILE)
"""Phases in which tiles moving in the work area are not a new wash: the wash itself, and the
woodpile being stacked from the washed tiles."""


class FrameLike(Protocol):
    """What the reconstructor needs of a frame: its index and capture time."""

    @property
    def index(self) -> int: ...

    @property
    def time_s(self) -> float: ...


def _wash_tiles(view: FrameView) -> tuple[list[Track], list[Track]]:
    """Face-down tiles in the work area, and those of them moving."""
    work = [t for t in view.of_kind("tile") if t.zone == WORK_AREA and t.face_up is False]
    return work, [t for t in work if t.track_id in view.moving]


def _wash_starts(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> bool:
    """Tiles washed in the work area. Between rounds (idle, exposure, settlement) half the
    tiles will do, since a camera sees few of them in the heap a round starts from; mid-round
    (hands delivered and not yet shown) it takes ``wash_min_tiles_mid_round``, so tiles moved
    about in the work area (a bank hand, hands mixed there) do not pass for a new round."""
    work, moving = _wash_tiles(view)
    between = memory.phase in (Phase.IDLE, Phase.EXPOSURE, Phase.SETTLEMENT)
    least = cfg.wash_min_tiles if between else cfg.wash_min_tiles_mid_round
    return (
        memory.phase not in NO_NEW_WASH
        and len(work) >= least
        and len(moving) >= cfg.wash_min_moving_tiles
    )


def _wash_ended(view: FrameView, memory: RoundMemory) -> list[TableEvent]:
    frame, time_s = memory.wash_motion or (view.frame, view.time_s)
    start = memory.wash_start_frame if memory.wash_start_frame is not None else view.frame
    held = [t for t in view.of_kind("tile") if view.frame - t.age_frames <= start]
    known = sum(t.face is not None for t in held)
    lasted_s = None if memory.wash_start_s is None else round(time_s - memory.wash_start_s, 3)
    return [
        WashEnded(frame, time_s, len(held), known, lasted_s),
        *memory.advance(Phase.WOODPILE, frame, time_s),
    ]


def _wash(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """While washing: remember the last motion; end the wash on quiet or at the woodpile."""
    if memory.phase is not Phase.WASH:
        return []
    _, moving = _wash_tiles(view)
    if moving:
        memory.wash_motion = (view.frame, view.time_s)
        return []
    last_s = memory.wash_motion[1] if memory.wash_motion else view.time_s
    if view.time_s - last_s >= cfg.wash_quiet_s or view.resting_in(WOODPILE):
        return _wash_ended(view, memory)
    return []


def _woodpile(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Every tile seen rests still and face down in the woodpile, for a while: it is built;
    wagers may start. Only stack tops are seen: the tiles beneath them are hidden."""
    if memory.phase.order >= Phase.WAGERS.order:
        return []
    seen = [t for t in view.of_kind("tile") if t.last_seen_frame == view.frame]
    stacked = view.resting_in(WOODPILE)
    ids = [t.track_id for t in stacked]
    built = (
        len([t for t in seen if view.resting.get(t.track_id) == WOODPILE])
        >= max(cfg.woodpile_min_seen_tiles, len(seen))
        and view.still(ids)
        and all(t.face_up is False for t in stacked)
    )
    if not built:
        memory.woodpile_since_s = None
        return []
    if memory.woodpile_since_s is None:
        memory.woodpile_since_s = view.time_s
    if view.time_s - memory.woodpile_since_s < cfg.woodpile_hold_s:
        return []
    events = _wash_ended(view, memory) if memory.phase is Phase.WASH else []
    known = sum(t.face is not None for t in stacked)
    events.append(WoodpileBuilt(view.frame, view.time_s, len(stacked), known))
    return events + memory.advance(Phase.WAGERS, view.frame, view.time_s)


def _wagers(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Chip stacks per box: every change is a WagerChanged; in exposure, a settlement. After
    "no more bets" a change must hold, uncovered (:func:`_guarded_counts`): chips hidden under
    a hand, or misread for a moment as the dealer pays, are not chips moved."""
    chips = chips_in_boxes(view)
    counts = {box: len(stacks) for box, stacks in chips.items()}
    spots = {box: [c.xyxy for c in stacks] for box, stacks in chips.items()}
    guarded = memory.no_more_bets  # wagers placed: a change must hold, uncovered (payouts too)
    if guarded:
        floor = cfg.late_chip_confidence
        sure = {box: sum(c.confidence >= floor for c in stacks) for box, stacks in chips.items()}
        seen = _evidence(counts, sure, memory.chips)
        counts = _guarded_counts(view, memory, cfg, seen, spots)
    else:
        memory.chips_changing.clear()
        memory.chip_spots = spots
    events: list[TableEvent] = []
    for box in sorted(set(counts) | set(memory.chips)):
        before, after = memory.chips.get(box, 0), counts.get(box, 0)
        if before == after:
            continue
        memory.chips[box] = after
        frame, time_s = view.frame, view.time_s
        if guarded:
            sighting = memory.chips_changing.pop(box)
            frame, time_s = sighting.frame, sighting.time_s
        events.append(
            WagerChanged(frame, time_s, box, before, after, memory.no_more_bets, memory.phase)
        )
        if memory.phase.order >= Phase.EXPOSURE.order:
            events += settle_box(memory, cfg, box, after, frame, time_s)
        elif memory.phase is Phase.WAGERS and not memory.no_more_bets:
            memory.last_wager_s = view.time_s  # this round's bets: placed on the built woodpile
            memory.wagers_placed = any(memory.chips.values())
    return events


def _evidence(seen: dict[int, int], sure: dict[int, int], believed: dict[int, int]):
    """Per box, the count the chips seen are evidence for: more stacks than believed only as
    many as were detected surely, fewer only if even the doubtful detections are gone."""
    out = {}
    for box in set(seen) | set(believed):
        before = believed.get(box, 0)
        if sure.get(box, 0) > before:
            out[box] = sure[box]
        elif seen.get(box, 0) < before:
            out[box] = seen.get(box, 0)
        else:
            out[box] = before
    return {box: n for box, n in out.items() if n}


def _guarded_counts(
    view: FrameView,
    memory: RoundMemory,
    cfg: RoundConfig,
    seen: dict[int, int],
    spots: dict[int, list[tuple[float, float, float, float]]],
) -> dict[int, int]:
    """The chip counts to believe after "no more bets": a box a hand lies over keeps its
    count (unknown, not changed); a box seen uncovered with another count gets it once that
    count has held ``wager_hold_s`` (``settle_hold_s`` once hands are exposed), if a hand was
    near the box in the ``wager_reach_s`` before it was first seen so. Chips are judged before
    the cover and after it: a count first seen with no hand near (the detector's doubt) that
    is the same after a hand came and went was not changed by the hand. Held ``recount_s``
    uncovered, it is taken as the box's count, silently: chips do not move by themselves, so
    a change no hand was seen to make is doubt, never a late wager (one whose hand the
    detector misses goes unreported)."""
    covered = covered_boxes(view, memory, cfg)
    for box in covered:
        memory.covered_s[box] = view.time_s
    believed = dict(memory.chips)
    hold_s = cfg.wager_hold_s if memory.phase.order < Phase.EXPOSURE.order else cfg.settle_hold_s
    for box in set(seen) | set(memory.chips) | set(memory.chips_changing):
        if box in covered:
            continue  # unknown: what was seen before the cover stands
        now = seen.get(box, 0)
        if now == memory.chips.get(box, 0):
            memory.chips_changing.pop(box, None)
            if now:
                memory.chip_spots[box] = spots[box]
            continue
        sighting = memory.chips_changing.get(box)
        if sighting is None or sighting.count != now:
            reached_s = memory.covered_s.get(box)
            memory.chips_changing[box] = ChipSighting(now, view.frame, view.time_s, reached_s)
            continue
        held_s = view.time_s - sighting.time_s
        if sighting.handled(cfg.wager_reach_s):
            if held_s >= hold_s:
                believed[box] = now
                memory.chip_spots[box] = spots.get(box, [])
        elif held_s >= cfg.recount_s:  # no hand seen: the detector's count was wrong
            believed[box] = memory.chips[box] = now
            memory.chip_spots[box] = spots.get(box, [])
            del memory.chips_changing[box]
    return {box: n for box, n in believed.items() if n}


def _call_no_more_bets(view: FrameView, memory: RoundMemory, reason: str) -> list[TableEvent]:
    memory.no_more_bets, memory.no_more_bets_s = True, view.time_s
    memory.close_bets()
    return [NoMoreBets(view.frame, view.time_s, reason)]


def _no_more_bets(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """The quiet rule: wagers down, woodpile built, no change for ``no_more_bets_quiet_s``."""
    quiet_s = cfg.no_more_bets_quiet_s
    if memory.no_more_bets or quiet_s is None or memory.phase is not Phase.WAGERS:
        return []
    if not memory.wagers_placed or memory.last_wager_s is None:
        return []
    if view.time_s - memory.last_wager_s < quiet_s:
        return []
    return _call_no_more_bets(view, memory, "quiet")


def _read_throw(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    throw = memory.throw
    if throw is None or throw.reported:
        return []
    waited_s = view.time_s - throw.since_s
    if None in throw.values:
        if waited_s < cfg.dice_unread_s:
            return []
        throw.reported = True
        flat = False if throw.tipped else None  # unread and not seen tipped: doubt
        return [DiceRead(throw.since_frame, throw.since_s, throw.values, None, None, flat)]
    if waited_s < cfg.dice_hold_s:
        return []
    throw.reported = True
    values = tuple(v for v in throw.values if v is not None)
    memory.dice = values
    memory.first_box = first_box(values, cfg.chung_box, cfg.first_box_offset)
    read = DiceRead(throw.since_frame, throw.since_s, values, sum(values), memory.first_box, True)
    return [read, *memory.advance(Phase.DICE, throw.since_frame, throw.since_s)]


def _dice(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Three dice in the dice area: a throw; read once its values hold still."""
    dice = sorted(
        (t for t in view.of_kind("die") if t.zone == DICE_AREA and t.last_seen_frame == view.frame),
        key=lambda t: t.track_id,
    )  # dice seen now: a die track coasting after the cup took the dice is not on the felt
    if len(dice) < DICE_COUNT:
        memory.throw = None
        return []
    values = tuple(t.die_value for t in dice[:DICE_COUNT])
    events: list[TableEvent] = []
    if memory.throw is None:
        if not memory.no_more_bets:
            events += _call_no_more_bets(view, memory, "dice")
        memory.throw = Throw(values, view.frame, view.time_s)
    elif memory.throw.values != values and not (memory.throw.reported and None in values):
        # changed before it was read, or a new readable throw after one was reported
        memory.throw = Throw(values, view.frame, view.time_s)
    memory.throw.tipped = any(t.face == DIE_TIPPED for t in dice[:DICE_COUNT])  # seen so now
    return events + _read_throw(view, memory, cfg)


def _arrivals(view: FrameView, memory: RoundMemory) -> list[ZoneMove]:
    """Tiles coming to rest in a box from outside the boxes, between the woodpile and the end
    of the delivery. A tile's path from the woodpile is not always seen (a stack carries
    hidden tiles; the tracker may find a tile again under an id last seen elsewhere)."""
    if memory.delivery_done or not Phase.WOODPILE.order <= memory.phase.order:
        return []
    return [
        m
        for m in view.moves
        if box_of(m.after)
        and not box_of(m.before)
        and view.tracks[m.track_id].kind == "tile"
        and m.track_id not in memory.delivered
    ]


def _next_box(memory: RoundMemory) -> int:
    """The box a correct delivery serves next (the dice's first box to begin with)."""
    last = memory.group.box if memory.group else (memory.groups[-1][0] if memory.groups else None)
    return step_box(last, 1) if last else (memory.first_box or 1)


def _in_order(moves: list[ZoneMove], memory: RoundMemory) -> tuple[list[ZoneMove], set[int]]:
    """Arrivals sorted by frame; where one frame brings tiles to several boxes (the camera
    missed the order, e.g. after a blind interval) they are put in counter-clockwise order from
    the box due next. Returns the moves and the frames whose order is assumed."""
    boxes_at: dict[int, set[int]] = {}
    for m in moves:
        boxes_at.setdefault(m.frame, set()).add(box_of(m.after) or 0)
    assumed = {frame for frame, boxes in boxes_at.items() if len(boxes) > 1}
    start = _next_box(memory)

    def key(m: ZoneMove) -> tuple[int, int, int]:
        return m.frame, ((box_of(m.after) or 0) - start) % BOX_COUNT, m.track_id

    return sorted(moves, key=key), assumed


def _delivery(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Tiles coming to rest in a box form groups, in order of arrival; tiles appearing later
    in a box already served join its group."""
    events: list[TableEvent] = []
    moves, assumed = _in_order(_arrivals(view, memory), memory)
    for move in moves:
        box = box_of(move.after) or 0
        events += memory.advance(Phase.DELIVERY, move.frame, move.time_s)
        memory.delivery_quiet_since_s = None
        group = memory.group
        if group and group.box == box and move.time_s - group.last_s <= cfg.group_gap_s:
            group.ids.append(move.track_id)
            group.last_s = move.time_s
            continue
        if box in memory.hands and not (group and group.box == box):
            memory.join_group(box, move.track_id)
            continue
        events += memory.close_group()
        memory.group = OpenGroup(
            box,
            [move.track_id],
            move.frame,
            move.time_s,
            move.time_s,
            order_seen=move.frame not in assumed,
        )
    if memory.group and view.time_s - memory.group.last_s > cfg.group_gap_s:
        events += memory.close_group()
    return events + _delivery_done(view, memory, cfg)


def _delivery_done(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """The woodpile seen empty and no tile arriving for ``delivery_quiet_s``: done."""
    if memory.delivery_done or memory.group or not memory.groups:
        return []
    if any(t.last_seen_frame == view.frame for t in view.resting_in(WOODPILE)):
        memory.delivery_quiet_since_s = None
        return []
    if memory.delivery_quiet_since_s is None:
        memory.delivery_quiet_since_s = view.time_s
    if view.time_s - memory.delivery_quiet_since_s < cfg.delivery_quiet_s:
        return []
    memory.delivery_done = True
    memory.recount(
        {box: [t.track_id for t in view.resting_in(f"box_{box}")] for box in memory.hands}
    )
    boxes = tuple(box for box, _ in memory.groups)
    counts = tuple(n for _, n in memory.groups)
    done = DeliveryDone(view.frame, view.time_s, boxes, counts, memory.first_box)
    return [done, *memory.advance(Phase.SETTING, view.frame, view.time_s)]


NO_TILE_ZONES = frozenset({"float_tray", "drop_box", "off_table"})
"""Zones where no tile is ever played: a 'tile' turning face up there is a misread object
(a chip in the float, say), not an exposure."""


def _exposures(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Every tile turning face up, wherever and whenever (but where no tile is played): the
    rules decide what it means. A tile face up whose face stays unread is only noted
    (:class:`TileFaceUnread`: doubt, which no rule judges)."""
    exposed: list[TableEvent] = [
        TileExposed(
            f.frame,
            f.time_s,
            f.track.track_id,
            f.track.face,
            f.track.zone,
            memory.phase,
            memory.delivered.get(f.track.track_id),
        )
        for f in view.flips
        if f.track.zone not in NO_TILE_ZONES
    ]
    unread = [
        TileFaceUnread(
            f.frame,
            f.time_s,
            f.track.track_id,
            f.track.zone,
            memory.phase,
            memory.delivered.get(f.track.track_id),
        )
        for f in view.unread
        if f.track.zone not in NO_TILE_ZONES
    ]
    return exposed + unread


STEPS = (_wash, _woodpile, _wagers, _no_more_bets, _dice, _delivery, _exposures, *HAND_STEPS)
"""The per-frame steps, in order; each reads the frame and the round memory."""


class RoundReconstructor:
    """Tracks in, table state and events out, one frame at a time.

    ``update(tracks, frame)`` once per frame, in order; ``finish()`` at the end of a stream
    settles what only the end reveals (pushes not yet passed, a group still open);
    ``reset()`` forgets everything. The caller's track list is never modified.
    """

    def __init__(self, config: RoundConfig | None = None) -> None:
        self.config = config or RoundConfig()
        self._book = TrackBook(
            self.config.motion_norm,
            self.config.zone_hold_s,
            self.config.flip_hold_s,
            self.config.unread_face_s,
        )
        self._memory = RoundMemory()
        self._last: FrameView | None = None

    def reset(self) -> None:
        self._book.reset()
        self._memory = RoundMemory()
        self._last = None

    def update(self, tracks: list[Track], frame: FrameLike) -> tuple[TableState, list[TableEvent]]:
        """Digest one frame's tracks; the state after it and the events it revealed."""
        view = self._book.update(tracks, frame.index, frame.time_s)
        self._last = view
        events: list[TableEvent] = []
        if _wash_starts(view, self._memory, self.config):
            events += self._new_round(view)
        for step in STEPS:
            events += step(view, self._memory, self.config)
        return snapshot(view, self._memory, self.config), events

    def finish(self) -> list[TableEvent]:
        """End of stream: close the round's open ends (call once, after the last update)."""
        if self._last is None:
            return []
        return self._close_round(self._last, self._memory)

    def _close_round(self, view: FrameView, memory: RoundMemory) -> list[TableEvent]:
        """The round's open ends, and its RoundEnded (none for a round never begun)."""
        if memory.phase is Phase.IDLE:
            return []
        complete = memory.phase is Phase.SETTLEMENT
        ended = RoundEnded(view.frame, view.time_s, memory.index, memory.phase, complete)
        return [*finish_round(view, memory, self.config), ended]

    def _new_round(self, view: FrameView) -> list[TableEvent]:
        """A wash begins: close the old round, start a fresh memory (chips and dice lying on the
        felt stay known)."""
        old = self._memory
        events = self._close_round(view, old)
        self._memory = RoundMemory(index=old.index + (old.phase is not Phase.IDLE))
        self._memory.chips = dict(old.chips)
        if old.throw is not None:  # dice left lying from the last round are not a new throw
            self._memory.throw = replace(old.throw, reported=True)
        self._memory.wash_start_frame = view.frame
        self._memory.wash_start_s = view.time_s
        self._memory.wash_motion = (view.frame, view.time_s)
        return events + self._memory.advance(Phase.WASH, view.frame, view.time_s)
