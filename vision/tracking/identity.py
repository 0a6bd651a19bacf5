"""What each track is: the face a tile showed and the value a die reads.

Face memory: a face-up tile's readings are votes that count less with each later reading, so a
track that came to lie on another face-up tile takes that tile's face; the face is kept when
the tile turns face down and dropped when it turns up again (it shows what it shows now).
Forgetting: a face-down tile that may have been swapped with another in the wash forgets its
face (:func:`forget_ambiguous_faces`), as does a track the 32-tile rule gave to a tile found
far away (:func:`forget`). Dice are read over their last few frames (:func:`read_die`).
"""

from __future__ import annotations

from collections import Counter, deque

import numpy as np

from vision.faces import DIE_TIPPED, FACE_CLASSES, is_die_value, reading
from vision.tracking.config import TrackerConfig
from vision.tracking.state import TrackState
from vision.types import TILE_DOWN, TILE_UP

TIPPED = FACE_CLASSES.index(DIE_TIPPED)  # the reader's class for a die not lying flat


def read_die(t: TrackState, face: int, face_confidence: float, config: TrackerConfig) -> None:
    """Add a die's reading this frame to its window; its value is known only while one value
    holds ``die_majority`` of the window, and it is tipped only while die_tipped holds
    ``die_tipped_majority`` of it, read ``die_tipped_min_reads`` times or more (a flat die the
    reader doubts flips between its value and die_tipped; a tipped die reads tipped frame
    after frame)."""
    sure = is_die_value(face) and face_confidence >= config.min_die_confidence
    read = face if sure or face == TIPPED else -1  # tipped: die_choice is sure
    t.die_reads.append((read, face_confidence))
    while len(t.die_reads) > config.die_window_frames:
        t.die_reads.popleft()
    values = Counter(v for v, _ in t.die_reads if v >= 0)
    best = values.most_common(1)
    if best and best[0][0] == TIPPED:
        reads = len(t.die_reads)
        held = reads >= config.die_tipped_min_reads and (
            best[0][1] >= config.die_tipped_majority * reads
        )
    else:
        held = best and best[0][1] >= config.die_majority * len(t.die_reads)
    t.face_votes = {best[0][0]: 1.0} if held else {}


def die_confidence(t: TrackState) -> float:
    """How sure the die's value (or its reading tipped) is: the reader's mean probability over
    the window's readings of it; 1.0 where it holds none (a tile, a die unread)."""
    held = known_face(t)
    probs = [p for v, p in t.die_reads if v == held] if held >= 0 else []
    return sum(probs) / len(probs) if probs else 1.0


def remember_face(t: TrackState, face: int, weight: float, config: TrackerConfig) -> None:
    """A tile track seen this frame (``face``: the class read, -1 for none): face down, it
    keeps its face; face up, the reading is a vote of ``weight``."""
    if t.class_id == TILE_DOWN:
        t.turned_down = True
        return
    t.unread = face < 0 or FACE_CLASSES[face].startswith("die_")
    if t.unread or t.class_id != TILE_UP:
        return  # no reading, or a tile read as a die: ignore it
    if t.turned_down:  # a tile turned up again shows what it shows now
        t.face_votes, t.face_reads, t.turned_down = {}, {}, False
    # older readings count less: a track that came to lie on another tile takes its face
    keep = config.face_vote_decay
    t.face_votes = {k: v * keep for k, v in t.face_votes.items()}
    t.face_votes[face] = t.face_votes.get(face, 0.0) + weight
    t.face_reads[face] = t.face_reads.get(face, 0) + 1


def forget_ambiguous_faces(
    tracks: list[TrackState],
    matched: set[int],
    before: dict[int, np.ndarray],
    config: TrackerConfig,
) -> None:
    """A face-down tile that moved to where another tile lay a frame ago (nearer to that
    tile's last place than to its own, and by more than detection jitter) may have been
    swapped with it: its remembered face is dropped. A good wash does this to nearly every
    tile; a weak one leaves faces known, which is the wash-quality figure (tile-tracking
    risk). ``matched``: ids seen this frame; ``before``: each track's box ``(4,)`` a frame ago,
    by id."""
    moved = [
        t
        for t in tracks
        if t.track_id in matched
        and (t.class_id == TILE_DOWN or (t.class_id == TILE_UP and t.unread))
        and t.face_votes
        and t.track_id in before
    ]
    others = [t.track_id for t in tracks if t.is_tile and t.track_id in before]
    if not moved or len(others) < 2:
        return
    old_centres = np.array([(before[i][:2] + before[i][2:]) / 2 for i in others])
    now = {t.track_id: (t.xyxy[:2] + t.xyxy[2:]) / 2 for t in tracks if t.track_id in matched}
    for t in moved:
        centre = now[t.track_id]
        dist = np.linalg.norm(old_centres - centre, axis=1)
        own = others.index(t.track_id)
        dist_own, dist[own] = dist[own], np.inf
        short_side = min(t.xyxy[2] - t.xyxy[0], t.xyxy[3] - t.xyxy[1])
        nearer = dist.min() < dist_own and dist_own >= config.swap_min_move_frac * short_side
        if nearer and not _moved_together(t.track_id, others[int(dist.argmin())], now, before):
            t.face_votes, t.face_reads = {}, {}


def _moved_together(a: int, b: int, now: dict[int, np.ndarray], before: dict) -> bool:
    """Tiles ``a`` and ``b``, both seen now, are more plausibly where they were taken to be
    than swapped: their two moves cost less than each going to the other's place. Tiles
    pushed along together (a weak wash slides a heap) travel near each other's old places
    without trading them; a swap would make the shorter pair of moves."""
    if b not in now:
        return False  # the other is hidden: the tile may be it
    a0, b0 = ((before[i][:2] + before[i][2:]) / 2 for i in (a, b))
    straight = np.linalg.norm(now[a] - a0) + np.linalg.norm(now[b] - b0)
    swapped = np.linalg.norm(now[a] - b0) + np.linalg.norm(now[b] - a0)
    return straight < swapped


def forget(t: TrackState) -> None:
    """Drop everything read of ``t`` (the track now follows what may be another object)."""
    t.face_votes, t.face_reads, t.die_reads = {}, {}, deque()


def known_face(t: TrackState) -> int:
    """The class index the track's votes hold most, or -1."""
    return max(t.face_votes, key=t.face_votes.__getitem__) if t.face_votes else -1


def shown_face(t: TrackState, min_reads: int = 1) -> tuple[str | None, int | None]:
    """``(face, die_value)`` as a :class:`vision.types.Track` reports them: a tile's face
    ("6-6"; ``DIE_TIPPED`` for a die not lying flat), a die's value; None where unknown, a
    tile's face read in fewer than ``min_reads`` frames included, and a tile turned up again
    has no face until it is read."""
    face_index = known_face(t)
    if t.is_tile and t.face_reads.get(face_index, 0) < min_reads:
        face_index = -1  # one frame's reading is no evidence yet
    known = reading(face_index, 1.0) if face_index >= 0 else None
    face = DIE_TIPPED if face_index == TIPPED else known.face if known else None
    if t.class_id == TILE_UP and t.turned_down:
        face = None  # turned up again, not yet read: its old face is no sight of this side
    return face, known.die_value if known else None
