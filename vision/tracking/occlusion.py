"""Tracks not seen this frame: what is covered stays put, what is carried moves.

A tile under a hand stays where it lay, while a shadow box (``ride``) follows the hand; if the
hand moves off and the tile is not seen where it lay, the hand took it: the track is ``held``
and goes on from the shadow, moving with the hand until no hand covers it (put down); where it
lay is kept as ``origin`` (the matcher may still find it there). A tile beneath a seen tile (a
stack) moves with the tile on top.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.geometry import cover_matrix, iou_matrix
from vision.tracking.config import TrackerConfig
from vision.tracking.state import TrackState, frames_lost
from vision.types import HAND

Hand = tuple[np.ndarray, np.ndarray]  # a moving hand's (was, now) boxes, (4,) px each


@dataclass(frozen=True)
class Occlusion:
    """Coasting of one frame over the tracker's ``tracks`` (its list, changed in place).
    ``last_frame`` is the tracker's previous frame (None before the first)."""

    config: TrackerConfig
    tracks: list[TrackState]
    last_frame: int | None

    def coast(
        self,
        matched: set[int],
        before: dict[int, np.ndarray],
        hands: np.ndarray,
        was_seen: set[int],
    ) -> None:
        """Move the tracks not in ``matched`` (ids seen this frame) as the module docstring
        says; unseen tracks stop. ``before``: each track's box ``(4,)`` a frame ago, by id;
        ``hands (H, 4)``: this frame's hand boxes, px; ``was_seen``: ids seen the frame
        before (only a hand seen both frames moves what it covers)."""
        cfg = self.config
        seen = [t for t in self.tracks if t.track_id in matched and t.is_tile]
        shift = {t.track_id: t.xyxy - before.get(t.track_id, t.xyxy) for t in seen}
        moving = [
            (before[h.track_id], h.xyxy)
            for h in self.tracks
            if h.class_id == HAND and h.track_id in matched and h.track_id in was_seen
        ]
        for t in self.tracks:
            if t.track_id in matched:
                continue
            t.velocity = np.zeros(4)
            if not t.is_tile:
                continue
            holder = self._hand_over(t.xyxy, moving) if t.held else None
            if holder is not None:
                t.xyxy = _moved_with(t.xyxy, *holder)
                continue
            t.held = False  # put down (or never taken)
            if len(hands) and cover_matrix(t.xyxy[None], hands).max() >= cfg.hand_cover_frac:
                t.carrier = None
                # only a tile the hand hid (just seen) may be in it, not one long lost
                if cfg.hand_carry and (
                    t.ride is not None
                    or frames_lost(t, self.last_frame) <= cfg.ride_max_lost_frames
                ):
                    t.ride = self._with_hand(t.xyxy if t.ride is None else t.ride, moving)
            elif t.ride is not None:  # the hand left and the tile is not where it lay
                t.origin, t.xyxy = t.xyxy, self._with_hand(t.ride, moving)
                t.ride, t.held = None, True
            elif t.carrier in shift:
                t.xyxy = t.xyxy + shift[t.carrier]
            elif seen:
                overlap = iou_matrix(t.xyxy[None], np.array([s.xyxy for s in seen]))[0]
                best = int(np.argmax(overlap))
                t.carrier = seen[best].track_id if overlap[best] >= cfg.carry_min_iou else None

    def _hand_over(self, box: np.ndarray, hands: list[Hand]) -> Hand | None:
        """The (was, now) boxes of the hand that covered ``box`` last frame, or None."""
        if not hands:
            return None
        was = np.array([w for w, _ in hands], np.float64)
        cover = cover_matrix(box[None], was)[0]
        best = int(np.argmax(cover))
        return hands[best] if cover[best] >= self.config.hand_cover_frac else None

    def _with_hand(self, box: np.ndarray, hands: list[Hand]) -> np.ndarray:
        """``box`` moved by the centre shift of the hand that covered it last frame."""
        over = self._hand_over(box, hands)
        return box if over is None else _moved_with(box, *over)


def _moved_with(box: np.ndarray, was: np.ndarray, now: np.ndarray) -> np.ndarray:
    """``box (4,)`` moved by the shift of a hand box's centre from ``was`` to ``now``.

    >>> _moved_with(np.zeros(4), np.array([0, 0, 2, 2.0]), np.array([3, 1, 5, 3.0])).tolist()
    [3.0, 1.0, 3.0, 1.0]
    """
    return box + np.tile((now[:2] + now[2:] - was[:2] - was[2:]) / 2, 2)
