"""The round after delivery: collected hands, set hands, merged hands, exposure, settlement.

Every delivered tile is remembered with the box it was delivered to, so a hand is a set of
track ids, wherever its tiles lie:

- **collected**: all tiles of a box other than the chung box resting face down in the work area.
- **set**: a box's four tiles, alone in the box, face down and still, lying as two pairs with a
  gap (:func:`~pipeline.round.tracks.split_pairs`). High and low are told apart by the faces when
  the tracker knows them. A new pairing of the same box is a new :class:`HandSet`.
- **merged** (:mod:`pipeline.round.mixing`): a box holds tiles delivered to two or more boxes
  (or tiles the tracker lost and found again under new ids). Reconstructible when every tile
  of the hands still has its id.
- **exposed**: all four tiles of a hand face up and still (while the dealer exposes hands, two
  or three, the others hidden or lying under them: :func:`_partly_seen`); the chung box's hand
  is the bank's.
- **settled**: once a box's hand is exposed, fewer chip stacks than it staked is a loss, more a
  win (a change held uncovered, as after "no more bets"; the dealer settles a box after
  exposing it, so chips changing in a box not yet exposed settle nothing); a wagered box
  passed over (a later box counter-clockwise from the chung settled first) is a push, and
  so is every wagered box left when no chips moved for ``settle_quiet_s``, a new wash began or
  the stream ended. A box taken for a push whose chips then change settles again.
"""

from __future__ import annotations

from math import inf

import numpy as np

from paigow.dice import BOX_COUNT, step_box
from pipeline.round.events import (
    BoxSettled,
    HandCollected,
    HandExposed,
    HandSet,
    Outcome,
    Phase,
    TableEvent,
)
from pipeline.round.memory import Exposing, RoundConfig, RoundMemory
from pipeline.round.mixing import HAND_TILES, merge, seen_in
from pipeline.round.tracks import FrameView, rank_pairs, split_pairs
from vision.geometry import cover_matrix
from vision.types import Track

WORK_AREA = "work_area"


def _hand_tracks(view: FrameView, memory: RoundMemory, box: int) -> list[Track] | None:
    """The present tracks of a box's delivered hand, or None unless all four are present."""
    ids = memory.hands.get(box, [])
    tracks = [view.tracks[i] for i in ids if i in view.tracks]
    return tracks if len(ids) == HAND_TILES and len(tracks) == HAND_TILES else None


def _collect(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """A box's whole hand resting face down in the work area: collected."""
    events: list[TableEvent] = []
    for box, ids in sorted(memory.hands.items()):
        if box == cfg.chung_box or box in memory.collected:
            continue
        tracks = [view.tracks[i] for i in ids if i in view.tracks]
        if len(tracks) < len(ids) or not tracks:
            continue
        if all(view.resting.get(t.track_id) == WORK_AREA and t.face_up is False for t in tracks):
            memory.collected.add(box)
            events.append(HandCollected(view.frame, view.time_s, box, tuple(ids)))
    return events


def _faces(tracks: list[Track], frame: int | None = None) -> dict[int, str | None]:
    """Each track's face; with ``frame``, None for a tile not seen in it (hidden: unknown)."""
    return {t.track_id: t.face if frame in (None, t.last_seen_frame) else None for t in tracks}


def _set(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Four tiles alone in their box, face down, still, as two pairs: the hand is set."""
    if not memory.delivery_done:
        return []
    events: list[TableEvent] = []
    for box in sorted(memory.hands):
        tracks = _hand_tracks(view, memory, box)
        if tracks is None or box in memory.collected or box in memory.exposed:
            continue
        in_box = {t.track_id for t in view.resting_in(f"box_{box}")}
        ids = {t.track_id for t in tracks}
        if in_box != ids or not view.still(ids) or any(t.face_up is not False for t in tracks):
            continue
        pairs = split_pairs(tracks, cfg.pair_gap_ratio, cfg.pair_gap_norm)
        if pairs is None:
            continue
        high, low, ranked = rank_pairs(*pairs, _faces(tracks))
        old = memory.settings.get(box)
        if old and {frozenset(old[0]), frozenset(old[1])} == {frozenset(high), frozenset(low)}:
            continue
        memory.settings[box] = (high, low)
        events.append(HandSet(view.frame, view.time_s, box, high, low, ranked))
    return events


def _exposed_pairs(
    memory: RoundMemory, cfg: RoundConfig, exposing: Exposing
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The pairs of an exposed hand: as seen lying when found, ranked by the faces read, else
    as set (when the setting's tiles are these, under the same ids), else in the order of
    their ids."""
    box, tracks = exposing.box, exposing.tracks
    pairs = split_pairs(tracks, cfg.pair_gap_ratio, cfg.pair_gap_norm)
    if pairs is not None:
        read = {i: f for i, f in exposing.faces.items() if f is not None}
        high, low, _ = rank_pairs(*pairs, {**_faces(tracks), **read})
        return high, low
    ids = [t.track_id for t in tracks]
    setting = memory.settings.get(box)
    if setting and {*setting[0], *setting[1]} == set(ids):
        return setting
    return tuple(ids[:2]), tuple(ids[2:])


def _face_up_still(view: FrameView, tracks: list[Track] | None) -> list[Track] | None:
    if not tracks or len(tracks) != HAND_TILES:
        return None
    ids = [t.track_id for t in tracks]
    return tracks if view.still(ids) and all(t.face_up is True for t in tracks) else None


def _exposed_tracks(
    view: FrameView, memory: RoundMemory, cfg: RoundConfig, box: int
) -> list[Track] | None:
    """The four tiles of a box's hand lying face up and still. A player's hand is turned over
    in its box: the four tiles seen there, or three and the fourth hidden
    (:func:`_partly_seen`). The bank's may be turned over anywhere: the tiles
    delivered to the chung box, else the four seen in it, else (the chung box emptied and
    the tracker lost the ids under the dealer's hand) four face-up tiles in the work area."""
    in_box = _face_up_still(view, seen_in(view, f"box_{box}"))
    if in_box is not None:
        return in_box
    if box != cfg.chung_box:
        return _partly_seen(view, memory, cfg, box)
    found = _face_up_still(view, _hand_tracks(view, memory, box))
    if found is None and not seen_in(view, f"box_{box}"):
        work = [t for t in seen_in(view, WORK_AREA) if t.face_up is True]
        found = _face_up_still(view, work)
    return found


def _partly_seen(
    view: FrameView, memory: RoundMemory, cfg: RoundConfig, box: int
) -> list[Track] | None:
    """While the dealer exposes hands, a player's hand of which two or three tiles lie face up
    and still in its box and the others are not seen face up, for ``hidden_tile_hold_s``: its
    four tracks, their faces unknown. A tile not seen face up is one of:

    - **hidden**, at most one: not seen (under another tile, or missed by the detector), kept
      where it was last seen: the hand's tile not seen now, or, where the tracker traded ids
      with a neighbouring box's tiles (players' arms over both; brown_row_close/clean_10001 box
      8, whose hand was remembered with box 7's id), the one tile track kept in the box unseen
      now: the box is what holds the hand;
    - **under** a face-up tile of the hand: seen face down, ``under_share`` of its box covered
      by that tile's, one each (a tilted camera
      sees a tile set against its pair partly beneath it; with its pips hidden, a face the
      colour of the backs reads as a back: teal_dim's last boxes, never exposed).

    A tile of the hand seen face down anywhere else (a peek, a tile not turned yet), or a hand
    tile seen elsewhere, is no hand exposed."""
    ids = memory.hands.get(box, [])
    seen = seen_in(view, f"box_{box}")
    up = [t for t in seen if t.face_up is True]
    shown = {t.track_id for t in seen}
    hidden = [view.tracks[i] for i in ids if i not in shown and i in view.tracks]
    if not shown <= set(ids):  # ids traded: the box's own unseen track
        hidden = [t for t in view.resting_in(f"box_{box}") if t.track_id not in shown]
    partly = (
        memory.phase is Phase.EXPOSURE
        and len(ids) == HAND_TILES
        and len(up) >= HAND_TILES // 2
        and len(seen) + len(hidden) == HAND_TILES
        and len(hidden) <= 1
        and all(t.last_seen_frame != view.frame for t in hidden)
        and _each_under([t for t in seen if t.face_up is not True], up, cfg.under_share)
        and view.still(list(shown))
    )
    if not partly:
        memory.partly_seen_s.pop(box, None)
        return None
    since = memory.partly_seen_s.setdefault(box, view.time_s)
    return seen + hidden if view.time_s - since >= cfg.hidden_tile_hold_s else None


def _each_under(down: list[Track], up: list[Track], share: float) -> bool:
    """Whether each of the ``down`` tiles lies under its own one of the ``up`` tiles: at least
    ``share`` of its box is covered by that tile's."""
    if not down:
        return True
    covered = cover_matrix(np.array([t.xyxy for t in down]), np.array([t.xyxy for t in up]))
    free = set(range(len(up)))
    for row in covered:
        over = [k for k in free if row[k] >= share]
        if not over:
            return False
        free.remove(max(over, key=lambda k: row[k]))
    return True


def _expose(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """A hand's four tiles face up and still: the hand is exposed (the chung box's is the
    bank's), reported by :func:`_report_exposed`."""
    if not memory.delivery_done:
        return []
    events: list[TableEvent] = []
    for box in sorted(memory.hands):
        if box in memory.exposed or box in memory.collected:
            continue
        tracks = _exposed_tracks(view, memory, cfg, box)
        if tracks is None:
            continue
        memory.exposed[box] = view.time_s
        if memory.phase.order < Phase.EXPOSURE.order:
            memory.close_bets()  # the stakes the hands play for
        memory.exposing.append(Exposing(box, view.time_s, tracks, _faces(tracks, view.frame)))
        events += _report_exposed(view, memory, cfg)  # at once if read: before the phase
        events += memory.advance(Phase.EXPOSURE, view.frame, view.time_s)
    return events


def _report_exposed(
    view: FrameView, memory: RoundMemory, cfg: RoundConfig, now: bool = False
) -> list[TableEvent]:
    """HandExposed for the hands found exposed, in the order found, each once its four faces
    are read (a tile of it seen face up with its face known), or ``exposed_faces_wait_s``
    after it was found (``now``: at once), its faces still unread unknown."""
    for exposing in memory.exposing:
        for track_id in exposing.faces:
            track = view.tracks.get(track_id)
            seen = track is not None and track.last_seen_frame == view.frame
            if seen and track.face_up is True and track.face is not None:
                exposing.faces[track_id] = track.face
    events: list[TableEvent] = []
    while memory.exposing:
        first = memory.exposing[0]
        waited = view.time_s - first.since_s >= cfg.exposed_faces_wait_s
        if None in first.faces.values() and not (waited or now):
            break
        memory.exposing.pop(0)
        high, low = _exposed_pairs(memory, cfg, first)
        events.append(
            HandExposed(
                view.frame,
                view.time_s,
                first.box,
                first.box == cfg.chung_box,
                tuple(first.faces[i] for i in high),
                tuple(first.faces[i] for i in low),
                high,
                low,
            )
        )
    return events


def _counter_clockwise_from_chung(cfg: RoundConfig) -> list[int]:
    return [step_box(cfg.chung_box, k) for k in range(1, BOX_COUNT)]


def _pushes(memory: RoundMemory, boxes: list[int], frame: int, time_s: float) -> list[TableEvent]:
    """Wagered, unsettled boxes among ``boxes`` were passed over: pushes (until their chips
    are seen to move, :func:`settle_box`)."""
    events: list[TableEvent] = []
    for box in boxes:
        if box in memory.wagered and box not in memory.settled:
            memory.settled[box] = Outcome.PUSH
            events.append(
                BoxSettled(frame, time_s, box, Outcome.PUSH, memory.wager_amounts.get(box))
            )
    return events


def settle_box(
    memory: RoundMemory,
    cfg: RoundConfig,
    box: int,
    stacks: int,
    frame: int,
    time_s: float,
    amount: int | None = None,
) -> list[TableEvent]:
    """A wagered box's chip stacks, changed and held, during exposure or settlement: more than
    it staked a win, fewer a loss; the wagered boxes before it, counted counter-clockwise from
    the chung box, that have not settled were passed over: pushes. A box whose hand is not
    exposed yet settles nothing, nor a change first seen (``time_s``) before its hand lay
    exposed (its chips were misread, or covered); a box taken for a push settles again (a
    payout seen after the dealer moved on), a win or a loss stands. ``amount``: the box's money
    now (None: unknown), less its wager the amount paid."""
    if box not in memory.wagered or time_s < memory.exposed.get(box, inf):
        return []
    staked = memory.stakes.get(box, 0)
    if memory.settled.get(box, Outcome.PUSH) is not Outcome.PUSH or stacks == staked:
        return []  # paid or taken already (the winnings picked up later), or as staked
    outcome = Outcome.WIN if stacks > staked else Outcome.LOSE
    order = _counter_clockwise_from_chung(cfg)
    passed = order[: order.index(box)] if box in order else []
    events = _pushes(memory, passed, frame, time_s)
    memory.settled[box] = outcome
    memory.last_settle = (frame, time_s)
    wager = memory.wager_amounts.get(box)
    paid = None if wager is None or amount is None else amount - wager
    events.append(BoxSettled(frame, time_s, box, outcome, wager, paid))
    return events + memory.advance(Phase.SETTLEMENT, frame, time_s)


def _trailing_pushes(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Boxes left once settlement is over are pushes, dated to the last settlement."""
    frame, time_s = memory.last_settle or (view.frame, view.time_s)
    return _pushes(memory, _counter_clockwise_from_chung(cfg), frame, time_s)


def _settle_quiet(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Settlement quiet for ``settle_quiet_s``: the boxes not settled were pushes."""
    if memory.phase is not Phase.SETTLEMENT or memory.last_settle is None:
        return []
    if view.time_s - memory.last_settle[1] < cfg.settle_quiet_s:
        return []
    return _trailing_pushes(view, memory, cfg)


def finish_round(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Close a round's open ends: a group still open; chips seen changed but not yet held
    settle as seen; wagered boxes never settled are pushes."""
    events: list[TableEvent] = [*memory.close_group(), *_report_exposed(view, memory, cfg, True)]
    if memory.phase.order >= Phase.EXPOSURE.order:
        for box, seen in sorted(memory.chips_changing.items()):
            # seen changed, uncovered, after a hand, as the stream ended before the hold: as
            # seen (a settlement pending at the end is not judged, payout_error); not a count
            # whose places were found unchanged (brown_row_close/dice_not_flat_20800: a
            # printed box number read as a second stack settled two pushes as wins)
            if seen.handled(cfg.wager_reach_s) and not seen.unmoved:
                events += settle_box(memory, cfg, box, seen.count, seen.frame, seen.time_s)
        events += _trailing_pushes(view, memory, cfg)
    return events


HAND_STEPS = (_collect, _set, merge, _expose, _report_exposed, _settle_quiet)
"""Steps after delivery, run each frame after the reconstructor's own."""
