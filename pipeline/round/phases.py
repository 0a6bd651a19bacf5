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
- **wagers**, **no more bets**: see :mod:`pipeline.round.wagers`.
- **dice**: see :mod:`pipeline.round.throw`.
- **delivery**: see :mod:`pipeline.round.delivery`.
- **setting, merging, exposure, settlement**: see :mod:`pipeline.round.hands`.

Frames carry ``index`` and ``time_s`` (a :class:`vision.types.Frame` does).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from pipeline.round.delivery import delivery
from pipeline.round.events import (
    Phase,
    RoundEnded,
    TableEvent,
    TableState,
    TileExposed,
    TileFaceUnread,
    WashEnded,
    WoodpileBuilt,
)
from pipeline.round.hands import HAND_STEPS, finish_round
from pipeline.round.memory import RoundConfig, RoundMemory, snapshot
from pipeline.round.throw import dice
from pipeline.round.tracks import FrameView, Places, TrackBook
from pipeline.round.wagers import no_more_bets, wagers
from vision.types import Track

__all__ = ["STEPS", "FrameLike", "RoundConfig", "RoundReconstructor"]

WORK_AREA = "work_area"
WOODPILE = "woodpile"
WOODPILE_STARTED = 2  # stacks resting in the woodpile that end the wash (stacking began)
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
    """Face-down tiles seen in the work area, and those of them moving. A tile not seen now is
    where it was last seen only by the tracker's guess: hidden tiles kept there (under the
    woodpile's stacks, under the dealer's hands) are no tiles washed
    (navy_two_rows_dealer/clean_10001: 7 tiles seen mid-delivery, 24 tracks kept in the work
    area, four of them carried by a hand, began a new round)."""
    work = [
        t
        for t in view.of_kind("tile")
        if t.zone == WORK_AREA and t.face_up is False and t.last_seen_frame == view.frame
    ]
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
    """While washing: remember the last motion; end the wash on quiet, or as soon as stacks
    come to rest in the woodpile (the dealer stacking: the tiles still sliding in the work
    area are being gathered, no longer washed, and what is lost of them then is no wash).
    One tile there is not enough: a tile pushed off the heap in the wash may stop there."""
    if memory.phase is not Phase.WASH:
        return []
    if len(view.resting_in(WOODPILE)) >= WOODPILE_STARTED:
        return _wash_ended(view, memory)
    _, moving = _wash_tiles(view)
    if moving:
        memory.wash_motion = (view.frame, view.time_s)
        return []
    last_s = memory.wash_motion[1] if memory.wash_motion else view.time_s
    if view.time_s - last_s >= cfg.wash_quiet_s:
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


NO_TILE_ZONES = frozenset({"float_tray", "drop_box", "off_table"})
"""Zones where no tile is ever played: a 'tile' turning face up there is a misread object
(a chip in the float, say), not an exposure."""


def _exposures(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Every tile turning face up, wherever and whenever (but where no tile is played): the
    rules decide what it means. A tile face up whose face stays unread is only noted
    (:class:`TileFaceUnread`: doubt, which no rule judges). A tile of no hand yet (in the
    wash, the woodpile, the work area) that turned with no hand near and without moving did
    not turn: only the dealer's hands move those tiles, and a back read as a face on a tile
    lying untouched is the reader's doubt (``flip_touch_s``)."""
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
        if f.track.zone not in NO_TILE_ZONES and (f.touched or f.track.track_id in memory.delivered)
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


STEPS = (_wash, _woodpile, wagers, no_more_bets, dice, delivery, _exposures, *HAND_STEPS)
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
            self.config.flip_touch_s,
            self.config.deal_carry_s,
        )
        self._memory = RoundMemory()
        self._last: FrameView | None = None

    def reset(self) -> None:
        self._book.reset()
        self._memory = RoundMemory()
        self._last = None

    def update(
        self, tracks: list[Track], frame: FrameLike, places: Places | None = None
    ) -> tuple[TableState, list[TableEvent]]:
        """Digest one frame's tracks; the state after it and the events it revealed.
        ``places``: whether places in a box changed (:attr:`FrameView.places`), if known."""
        view = replace(self._book.update(tracks, frame.index, frame.time_s), places=places)
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

    def abandon(self, frame: FrameLike, fault: str) -> tuple[TableState, list[TableEvent]]:
        """Give the round up after a fault of the reconstruction's own (``fault`` says which):
        it ends incomplete, its open ends not settled (what it never showed is not known), and
        the next wash starts a fresh round from a fresh view of the tracks."""
        old = self._memory
        self._book.reset()
        self._last = None
        self._memory = RoundMemory(index=old.index + (old.phase is not Phase.IDLE))
        state = TableState(
            frame.index, frame.time_s, self._memory.index, Phase.IDLE, self.config.chung_box
        )
        return state, [RoundEnded(frame.index, frame.time_s, old.index, old.phase, False, fault)]

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
        self._memory.chips, self._memory.amounts = dict(old.chips), dict(old.amounts)
        if old.throw is not None:  # dice left lying from the last round are not a new throw
            self._memory.throw = replace(old.throw, reported=True)
        self._memory.wash_start_frame = view.frame
        self._memory.wash_start_s = view.time_s
        self._memory.wash_motion = (view.frame, view.time_s)
        return events + self._memory.advance(Phase.WASH, view.frame, view.time_s)
