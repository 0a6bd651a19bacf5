"""Per-track memory for the round reconstructor: motion, the zone a track rests in, flips.

The reconstructor reasons about *where things came to rest*, not about every pixel of their
path: a tile carried from the woodpile to box 3 passes over other zones on the way. A track's
*resting zone* changes once it has been in a new zone, and still there, for ``zone_hold_s``;
the change is dated to the frame it entered that zone. Also here: the geometry that tells a set
hand (two pairs with a gap) from a row of four, and ranking two pairs by their faces.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from paigow.hands import hand_value
from paigow.tiles import TileError, tile
from vision.types import TILE_DOWN, TILE_UP, Track

TILE_CLASSES = (TILE_DOWN, TILE_UP)
PAIR = 2


@dataclass(frozen=True, slots=True)
class ZoneMove:
    """A track came to rest in ``after`` (it rested in ``before``; None: first rest) at
    ``frame``; ``seen``: it was seen entering ``after`` (not carried there out of sight under
    a hand, nor first found there: then when it came is not known)."""

    track_id: int
    before: str | None
    after: str
    frame: int
    time_s: float
    seen: bool = True


@dataclass(frozen=True, slots=True)
class Flip:
    """A tile track turned face up at ``frame`` (it was seen face down before); ``touched``:
    it moved, or a hand was over or beside it, as it turned (``TrackBook``'s ``touch_s``)."""

    track: Track
    frame: int
    time_s: float
    touched: bool = True


@dataclass(slots=True)
class _Memo:
    centre: tuple[float, float]
    zone: str | None
    zone_frame: int
    zone_time_s: float
    zone_seen: bool = True  # in sight when it entered ``zone``, and not long out of it before
    seen_s: float | None = None  # when it was last in sight
    wandered: bool = False  # out of sight away from the zone it rests in (carried, coasting)
    resting: str | None = None
    face_up: bool | None = None  # the settled side: a change counts once it has held
    turning: tuple[bool, int, float] | None = None  # a change not yet held: side, frame, time
    back_s: float | None = None  # the settled side seen again mid-turn since then (a misread?)
    back_total_s: float = 0.0  # the time the turn spent showing the settled side again
    backs: int = 0  # how many times the turn showed the settled side again
    spell_s: float = 0.0  # since when the turn has shown its new side without a break
    unread_told: bool = False  # this face-up spell, unread, was reported
    touched_s: float | None = None  # last moving, or with a hand over or beside it


class Places(Protocol):
    """Whether places in a box look different now from a frame before
    (:class:`vision.places.PlaceMemory`): True, False, or None where it is not known."""

    def changed(
        self, box: int, spots: list[tuple[float, float, float, float]], since: int, covered=()
    ) -> bool | None: ...


@dataclass(frozen=True, slots=True)
class FrameView:
    """What one frame says, digested: present tracks by id, which move, where each rests."""

    frame: int
    time_s: float
    tracks: dict[int, Track]
    moving: frozenset[int]
    resting: dict[int, str | None]
    moves: tuple[ZoneMove, ...]
    flips: tuple[Flip, ...]
    unread: tuple[Flip, ...] = ()  # tiles face up, face unread, for unread_face_s (doubt)
    places: Places | None = None  # whether places in a box changed; None: not known
    turning_up: frozenset[int] = frozenset()  # tiles showing face up, not yet believed turned

    def of_kind(self, kind: str) -> list[Track]:
        return [t for t in self.tracks.values() if t.kind == kind]

    def resting_in(self, zone: str, kind: str = "tile") -> list[Track]:
        """Tracks of ``kind`` whose resting zone is ``zone`` (present this frame)."""
        return [t for t in self.of_kind(kind) if self.resting.get(t.track_id) == zone]

    def still(self, ids) -> bool:
        return not self.moving.intersection(ids)


def long_side_px(xyxy: tuple[float, float, float, float]) -> float:
    """Longer side of a box, at least one pixel."""
    x1, y1, x2, y2 = xyxy
    return max(x2 - x1, y2 - y1, 1.0)


class TrackBook:
    """Remembers each track between frames. ``update`` once per frame; ``reset`` to forget.

    ``motion_norm``: a centre step per frame above this fraction of the object's long side
    counts as moving. ``zone_hold_s``: time in a zone, still, before the track rests there.
    ``flip_hold_s``: time a tile must show its other side before it counts as turned (a face
    misread for a frame or two while a hand moves the tile is not an exposure), in all: its old
    side seen again for less than that is a misread too, and the turn keeps its start (a tile
    the detector finds both ways flickers between them); the flip is dated to the frame it
    turned. A tile counts as turned face up only once its face has been
    read (the tracker keeps confident readings only): a tile seen at an angle, its side taken
    for its face, is doubt, not an exposure (issue 20). ``touch_s``: a flip is ``touched`` if
    the tile moved, or a hand was over or beside it, within this long before it began to show
    its other side (None: every flip is). ``carry_s``: a track out of sight longer than this
    before it is seen in a new zone did not come there in sight (``ZoneMove.seen``).
    """

    def __init__(
        self,
        motion_norm: float,
        zone_hold_s: float,
        flip_hold_s: float = 0.0,
        unread_face_s: float = 2.0,
        touch_s: float | None = None,
        carry_s: float = float("inf"),
    ) -> None:
        self._motion_norm = motion_norm
        self._carry_s = carry_s
        self._zone_hold_s = zone_hold_s
        self._flip_hold_s = flip_hold_s
        self._unread_face_s = unread_face_s
        self._touch_s = touch_s
        self._memo: dict[int, _Memo] = {}

    def reset(self) -> None:
        self._memo.clear()

    def update(self, tracks: list[Track], frame: int, time_s: float) -> FrameView:
        """Digest one frame's tracks (the list is not modified). A face read on more tiles
        than the set holds (:func:`impossible_faces`) is unread on all of them: doubt."""
        doubted = impossible_faces(tracks, frame)
        if doubted:
            tracks = [replace(t, face=None) if t.face in doubted else t for t in tracks]
        moving: set[int] = set()
        moves: list[ZoneMove] = []
        flips: list[Flip] = []
        unread: list[Flip] = []
        hands = [t.xyxy for t in tracks if t.kind == "hand" and t.last_seen_frame == frame]
        for track in tracks:
            memo = self._memo.get(track.track_id)
            if memo is None:
                # first found where it is: when it came there is not known
                memo = _Memo(track.centre_xy, track.zone, frame, time_s, zone_seen=False)
                self._memo[track.track_id] = memo
            if self._moved(memo, track):
                moving.add(track.track_id)
            if track.track_id in moving or _beside_a_hand(track.xyxy, hands):
                memo.touched_s = time_s
            seen = track.last_seen_frame == frame
            if track.zone != memo.zone:
                memo.zone, memo.zone_frame, memo.zone_time_s = track.zone, frame, time_s
                # seen entering: in sight now, and out of sight before no longer than a carry
                # takes (a stack lifted and set down under the dealer's hand); a track lost
                # long before, then joined by the tracker to a tile found elsewhere, got
                # there out of sight
                memo.zone_seen = seen and (
                    memo.seen_s is not None and time_s - memo.seen_s <= self._carry_s
                )
            if seen:
                memo.seen_s = time_s
            memo.wandered |= not seen and memo.zone != memo.resting
            rest = track.track_id not in moving and time_s - memo.zone_time_s >= self._zone_hold_s
            rest &= seen  # out of sight (carried, coasting), a track comes to rest nowhere new
            if rest and memo.wandered:  # seen again at rest: it came where it is anew
                memo.resting, memo.wandered = None, False
            if rest and memo.zone is not None and memo.zone != memo.resting:
                moves.append(
                    ZoneMove(
                        track.track_id,
                        memo.resting,
                        memo.zone,
                        memo.zone_frame,
                        memo.zone_time_s,
                        memo.zone_seen,
                    )
                )
                memo.resting = memo.zone
            flip = self._turn(memo, track, frame, time_s)
            if flip is not None:
                flips.append(flip)
            doubt = self._unread(memo, track, time_s)
            if doubt is not None:
                unread.append(doubt)
            memo.centre = track.centre_xy
        present = {t.track_id: t for t in tracks}
        resting = {tid: self._memo[tid].resting for tid in present}
        turning_up = frozenset(
            tid for tid in present if (turn := self._memo[tid].turning) is not None and turn[0]
        )
        return FrameView(
            frame,
            time_s,
            present,
            frozenset(moving),
            resting,
            tuple(moves),
            tuple(flips),
            tuple(unread),
            turning_up=turning_up,
        )

    def _turn(self, memo: _Memo, track: Track, frame: int, time_s: float) -> Flip | None:
        """Follow the side a tile shows; a Flip when it has turned face up and held."""
        side = track.face_up
        if side is None or track.class_id not in TILE_CLASSES:
            return None
        if memo.face_up is None or side == memo.face_up:
            if memo.turning is not None:
                if track.last_seen_frame != frame:
                    return None  # out of sight mid-turn: its side is old
                if memo.back_s is None:
                    memo.back_s, memo.backs = time_s, memo.backs + 1
                if time_s - memo.back_s < self._flip_hold_s:
                    return None  # the old side for a moment mid-turn: a misread, as a new
                    # side for a moment is (a tile detected both ways flickers between them)
            memo.face_up, memo.turning, memo.back_s, memo.back_total_s = side, None, None, 0.0
            return None
        if memo.turning is None or memo.turning[0] != side:
            memo.turning, memo.back_s, memo.back_total_s = (side, frame, time_s), None, 0.0
            memo.backs, memo.spell_s = 0, time_s
        if memo.back_s is not None:  # the new side again after a moment of the old one
            memo.back_total_s += time_s - memo.back_s
            memo.back_s, memo.spell_s = None, time_s
        _, since_frame, since_s = memo.turning
        if time_s - since_s - memo.back_total_s < self._flip_hold_s:
            return None  # not shown long enough (the moments of the old side not counted)
        if memo.backs >= FLICKERS and time_s - memo.spell_s < self._flip_hold_s:
            return None  # flickering between its sides: believed once the new one holds
        if track.last_seen_frame != frame:
            return None  # not seen now (a coasting track's side is old)
        if side and track.face is None:
            return None  # face up, face unread: not believed yet (still turning, dated as such)
        memo.face_up, memo.turning, memo.back_s, memo.back_total_s = side, None, None, 0.0
        if not side:
            return None
        touched = self._touch_s is None or (
            memo.touched_s is not None and memo.touched_s >= since_s - self._touch_s
        )
        return Flip(track, since_frame, since_s, touched)

    def _unread(self, memo: _Memo, track: Track, time_s: float) -> Flip | None:
        """A tile turning face up whose face stays unread ``unread_face_s``: once a spell."""
        if memo.turning is None or not memo.turning[0]:
            memo.unread_told = False
            return None
        _, since_frame, since_s = memo.turning
        if memo.unread_told or time_s - since_s < self._unread_face_s:
            return None
        memo.unread_told = True
        return Flip(track, since_frame, since_s)

    def _moved(self, memo: _Memo, track: Track) -> bool:
        (x0, y0), (x1, y1) = memo.centre, track.centre_xy
        step = float(np.hypot(x1 - x0, y1 - y0))
        return step > self._motion_norm * long_side_px(track.xyxy)


FLICKERS = 2
"""A turn that showed the settled side again this many times (a tile flickering between its sides
where it lies: a back the reader takes for a face now and then; r_dealer_side_slate_62004, a
training look, up, down, up, down, up over 0.4 s, never moved) is believed only once its new side
has held ``flip_hold_s`` without a break (still dated to its first turn)."""


def _beside_a_hand(xyxy, hands) -> bool:
    """A box within half its long side of a hand's box."""
    grow = long_side_px(xyxy) / 2
    x1, y1, x2, y2 = xyxy
    return any(
        a < x2 + grow and x1 - grow < c and b < y2 + grow and y1 - grow < d for a, b, c, d in hands
    )


def impossible_faces(tracks: list[Track], frame: int) -> dict[str, int]:
    """Faces read on more tiles seen face up at ``frame`` than the set holds (two of each
    pair tile, one of the others), with how many: a misread shared by many tiles (a tile back
    whose colour and marks read as pips), not tiles turned.

    >>> up = [Track(k, (0, 0, 9, 9), TILE_UP, True, "4-4", None, "box_2", 9, 5) for k in range(3)]
    >>> impossible_faces(up, 5), impossible_faces(up[:2], 5)
    ({'4-4': 3}, {})
    """
    shown = Counter(
        t.face
        for t in tracks
        if t.class_id in TILE_CLASSES and t.face_up and t.face and t.last_seen_frame == frame
    )
    out = {}
    for face, n in shown.items():
        try:
            copies = tile(face).copies
        except TileError:
            continue  # not a tile's face (a die's): not judged here
        if n > copies:
            out[face] = n
    return out


def split_pairs(
    tracks: list[Track], gap_ratio: float, gap_norm: float
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Two pairs of track ids when four tiles lie as two pairs with a gap, else None.

    The centres are ordered along their main axis; the middle gap must exceed ``gap_ratio``
    times each outer gap and ``gap_norm`` tile long sides (a stack or an even row does not).
    Pairs come in order along the axis.
    """
    if len(tracks) != 2 * PAIR:
        return None
    centres = np.array([t.centre_xy for t in tracks], dtype=np.float64)
    offsets = centres - centres.mean(axis=0)
    _, _, axes = np.linalg.svd(offsets, full_matrices=False)
    along = offsets @ axes[0]
    order = np.argsort(along)
    gaps = np.diff(along[order])
    size = float(np.median([long_side_px(t.xyxy) for t in tracks]))
    if gaps[1] < gap_norm * size or gaps[1] < gap_ratio * max(gaps[0], gaps[2]):
        return None
    ids = [tracks[i].track_id for i in order]
    return (ids[0], ids[1]), (ids[2], ids[3])


def rank_pairs(
    first: tuple[int, int], second: tuple[int, int], faces: dict[int, str | None]
) -> tuple[tuple[int, int], tuple[int, int], bool]:
    """``(high, low, ranked)``: the pair whose two faces make the better hand is high.

    Unknown or unreadable faces, or two hands of equal value, keep the given order and say
    ``ranked=False``.
    """
    try:
        values = [hand_value(*(tile(faces[t] or "") for t in pair)) for pair in (first, second)]
    except TileError:
        return first, second, False
    if values[0] == values[1]:
        return first, second, False
    return (first, second, True) if values[0] > values[1] else (second, first, True)
