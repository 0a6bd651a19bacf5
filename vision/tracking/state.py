"""The tracker's mutable memory of one track, shared by its stages and private to the package."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from vision.types import TILE_DOWN, TILE_UP


@dataclass
class TrackState:
    """Mutable per-track state; the tracker hands out frozen :class:`vision.types.Track`
    snapshots of it, never the state itself."""

    track_id: int
    xyxy: np.ndarray  # (4,) float64 px
    class_id: int
    confidence: float
    first_frame: int
    last_seen: int
    velocity: np.ndarray = field(default_factory=lambda: np.zeros(4))
    face_votes: dict[int, float] = field(default_factory=dict)
    face_reads: dict[int, int] = field(default_factory=dict)  # frames each face was read in
    die_reads: deque[tuple[int, float]] = field(default_factory=deque)  # recent die readings:
    # (class, the reader's probability), class -1 unsure
    turned_down: bool = False  # seen face down since the last face reading
    unread: bool = False  # last seen face up with no face read (a back to the face-down check)
    carrier: int | None = None  # id of the tile this hidden tile lies beneath
    origin: np.ndarray | None = None  # (4,) where it lay when a moving hand took it along
    ride: np.ndarray | None = None  # (4,) where it would be if the hand over it carries it
    held: bool = False  # taken by a hand, moving with it

    @property
    def is_tile(self) -> bool:
        return self.class_id in (TILE_DOWN, TILE_UP)


def frames_lost(t: TrackState, last_frame: int | None) -> int:
    """Frames ``t`` went unseen up to ``last_frame`` (the tracker's previous frame; 0 before
    the first)."""
    return 0 if last_frame is None else max(0, last_frame - t.last_seen)
