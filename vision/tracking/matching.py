"""Association: which detection continues which track, by Hungarian assignment on a cost.

The cost of a (track, detection) pair is ``(1 - IoU)`` plus centre distance in track-box
diagonals (:func:`centre_distance_norm`), plus what the table knows: a face-up track's known
face disagreeing with the detection's read face, frames the track has been lost, a tile a hand
took along judged also where it lay. :func:`assign` solves it with
``scipy.optimize.linear_sum_assignment``. :class:`Matcher` runs the stages of one frame over the
tracker's states (it reads them, never changes them): ByteTrack's two (:meth:`Matcher.match`),
the wider re-acquiring of lost tiles (:meth:`Matcher.reacquire`) and the 32-tile rule's pick of
a lost track for a tile too many (:meth:`Matcher.reuse`). Pairs are ``(track index, detection
index)`` into the tracker's list and the frame's detections.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from vision.geometry import cover_matrix, iou_matrix
from vision.tracking.config import TrackerConfig
from vision.tracking.identity import known_face
from vision.tracking.state import TrackState, frames_lost
from vision.types import CHIP, DIE, HAND, TILE_DOWN, TILE_UP, Detections

_INFEASIBLE = 1e9  # cost of a forbidden pair (implementation constant, not a threshold)

ZoneOf = Callable[[np.ndarray], list[str]]


def kind_of(class_id: np.ndarray) -> np.ndarray:
    """Matching kind per class id ``(N,)``: both tile classes map to ``TILE_DOWN``."""
    class_id = np.asarray(class_id)
    return np.where(class_id == TILE_UP, TILE_DOWN, class_id)


def centre_distance_norm(track_xyxy: np.ndarray, det_xyxy: np.ndarray) -> np.ndarray:
    """Centre distance ``(T, D)`` from tracks to detections, in units of each track's diagonal."""
    tc = (track_xyxy[:, :2] + track_xyxy[:, 2:]) / 2
    dc = (det_xyxy[:, :2] + det_xyxy[:, 2:]) / 2
    diag = np.hypot(*(track_xyxy[:, 2:] - track_xyxy[:, :2]).T)
    dist = np.linalg.norm(tc[:, None, :] - dc[None, :, :], axis=2)
    return dist / np.maximum(diag, 1.0)[:, None]


def assign(
    cost: np.ndarray, feasible: np.ndarray, unmatched_cost: float | None = None
) -> list[tuple[int, int]]:
    """Minimum-cost one-to-one pairs ``(row, col)`` among feasible entries of ``cost (R, C)``.

    Without ``unmatched_cost`` as many feasible pairs as possible are made. With it, a row or
    column may stay unpaired at that cost each, so a pair is made only where it is cheaper than
    leaving both unpaired: one missed detection in a dense row of tiles then leaves one track
    unmatched instead of shifting every neighbour's track along by one.

    >>> cost = np.array([[1.4, 0.1], [9.0, 1.4]])
    >>> assign(cost, cost < 2), assign(cost, cost < 2, unmatched_cost=0.6)
    ([(0, 0), (1, 1)], [(0, 1)])
    """
    if cost.size == 0 or not feasible.any():
        return []
    full = np.where(feasible, cost, _INFEASIBLE)
    if unmatched_cost is not None:
        r, c = full.shape
        alone = np.full((r, r), _INFEASIBLE)
        np.fill_diagonal(alone, unmatched_cost)
        spare = np.full((c, c), _INFEASIBLE)
        np.fill_diagonal(spare, unmatched_cost)
        full = np.block([[full, alone], [spare, np.zeros((c, r))]])
    rows, cols = linear_sum_assignment(full)
    return [
        (int(r), int(c))
        for r, c in zip(rows, cols, strict=True)
        if r < cost.shape[0] and c < cost.shape[1] and feasible[r, c]
    ]


@dataclass(frozen=True)
class FrameDetections:
    """The detections of one frame as float64/int copies, with the face each reads (or -1)."""

    xyxy: np.ndarray
    class_id: np.ndarray
    confidence: np.ndarray
    face: np.ndarray
    face_confidence: np.ndarray

    @classmethod
    def of(cls, d: Detections, min_face_confidence: float) -> FrameDetections:
        """Tile faces read below ``min_face_confidence`` are dropped here; dice keep theirs
        (a die's reading is judged against ``min_die_confidence`` when it is read)."""
        face_confidence = np.asarray(d.face_confidence, np.float64)
        class_id = np.array(d.class_id, np.int64)
        sure = (face_confidence >= min_face_confidence) | (class_id == DIE)
        face = np.where(sure, d.face, -1)
        return cls(
            np.array(d.xyxy, np.float64).reshape(-1, 4),
            class_id,
            np.array(d.confidence, np.float64),
            np.asarray(face, np.int64),
            face_confidence,
        )


@dataclass(frozen=True)
class Matcher:
    """The matching stages of one frame over the tracker's ``tracks`` (read, never changed;
    tracks the tracker spawns this frame join the list before :meth:`reuse`). ``last_frame``
    is the tracker's previous frame (None before the first)."""

    config: TrackerConfig
    tracks: list[TrackState]
    last_frame: int | None
    zone_of: ZoneOf | None = None

    def predicted_boxes(self) -> np.ndarray:
        """Track boxes ``(T, 4)`` expected now: moved by velocity only if seen last frame."""
        boxes = [
            t.xyxy + (t.velocity if t.last_seen == self.last_frame else 0.0) for t in self.tracks
        ]
        return np.array(boxes, np.float64).reshape(-1, 4)

    def cost(self, dets: FrameDetections, d_idx: np.ndarray, t_idx: np.ndarray, boxes: np.ndarray):
        """Match cost and centre distance ``(T, D)`` between tracks and detections; a tile a
        hand took along is judged by the nearer of where it went and where it lay."""
        cfg = self.config
        tb, db = boxes[t_idx], dets.xyxy[d_idx]
        dist = centre_distance_norm(tb, db)
        cost = (1.0 - iou_matrix(tb, db)) + cfg.distance_weight * dist
        origins = [self.tracks[t].origin for t in t_idx]
        if any(o is not None for o in origins):  # the hand may only have passed over it
            ob = np.array([tb[i] if o is None else o for i, o in enumerate(origins)])
            dist_o = centre_distance_norm(ob, db)
            took = np.array([o is not None for o in origins])
            cost = np.minimum(
                cost + cfg.carried_cost * took[:, None],
                (1.0 - iou_matrix(ob, db)) + cfg.distance_weight * dist_o,
            )
            dist = np.minimum(dist, dist_o)
        # a face remembered by a face-down tile is a hypothesis (the tile turns up showing
        # what it shows): only a face-up track's face argues against a detection
        track_faces = np.array(
            [
                known_face(self.tracks[t]) if self.tracks[t].class_id != TILE_DOWN else -1
                for t in t_idx
            ],
            np.int64,
        )
        det_faces = dets.face[d_idx]
        clash = (track_faces[:, None] >= 0) & (det_faces[None, :] >= 0)
        clash &= track_faces[:, None] != det_faces[None, :]
        cost = cost + cfg.face_mismatch_cost * clash
        lost_for = np.array(
            [frames_lost(self.tracks[t], self.last_frame) for t in t_idx], np.float64
        )
        cost = (
            cost
            + cfg.lost_frame_cost * np.minimum(lost_for, cfg.lost_frame_cost_cap_frames)[:, None]
        )
        same_kind = kind_of(self._class_ids(t_idx))[:, None] == kind_of(dets.class_id[d_idx])[None]
        return cost, dist, same_kind

    def match(self, dets, d_idx, t_idx, boxes, gate_norm: float) -> list[tuple[int, int]]:
        """Stages 1-2: detections ``d_idx`` against tracks ``t_idx`` at ``boxes``, within
        ``gate_norm`` diagonals; a pair only where cheaper than leaving both unmatched."""
        if len(d_idx) == 0 or len(t_idx) == 0:
            return []
        cost, dist, same_kind = self.cost(dets, d_idx, t_idx, boxes)
        pairs = assign(cost, same_kind & (dist <= gate_norm), self.config.unmatched_cost)
        return [(int(t_idx[r]), int(d_idx[c])) for r, c in pairs]

    def reacquire(self, dets, d_idx, pairs, gate_norm: float) -> list[tuple[int, int]]:
        """Stage 3: confident detections left over against every unmatched track, lost ones
        included (wider gate; a cost per frame lost prefers the track just lost).
        """
        t_idx = unused(np.arange(len(self.tracks)), pairs, 0)
        if len(d_idx) == 0 or len(t_idx) == 0:
            return []
        boxes = np.array([t.xyxy for t in self.tracks], np.float64).reshape(-1, 4)
        cost, dist, same_kind = self.cost(dets, d_idx, t_idx, boxes)
        feasible = same_kind & (dist <= gate_norm) & ~self._other_box(boxes[t_idx], dets, d_idx)
        return [(int(t_idx[r]), int(d_idx[c])) for r, c in assign(cost, feasible)]

    def _other_box(
        self, track_xyxy: np.ndarray, dets: FrameDetections, d_idx: np.ndarray
    ) -> np.ndarray:
        """``(T, D)`` True where a chip or tile track lost in one betting box would be found
        in another: wagers do not travel between boxes (a chip seen in the next box while a
        hand hides this one is another stack), nor do hands. Players setting their hands
        cover them: on a row of boxes the tiles found again, a little moved, took the lost
        tracks of the next box's tiles, one box along (rendered two_rows_wine, clean_10001).
        A tile truly carried to another box (hands mixed) is found there by the 32-tile rule
        (:meth:`reuse`) or as lost where it lay (the round's hidden tiles)."""
        kept = np.isin(dets.class_id[d_idx], (CHIP, TILE_DOWN, TILE_UP))
        if self.zone_of is None or not kept.any() or len(track_xyxy) == 0:
            return np.zeros((len(track_xyxy), len(d_idx)), bool)
        d_xyxy = dets.xyxy[d_idx]
        t_zone = np.array(self.zone_of((track_xyxy[:, :2] + track_xyxy[:, 2:]) / 2), object)
        d_zone = np.array(self.zone_of((d_xyxy[:, :2] + d_xyxy[:, 2:]) / 2), object)
        t_bet = np.array([_betting(z) for z in t_zone], bool)
        d_bet = np.array([_betting(z) for z in d_zone], bool) & kept
        return t_bet[:, None] & d_bet[None, :] & (t_zone[:, None] != d_zone[None, :])

    def reuse(self, dets, d_idx, pairs) -> list[tuple[int, int]]:
        """The 32-tile rule: tiles seen beyond ``max_tiles`` take lost tile tracks, anywhere.
        Only tracks lost for ``reuse_min_lost_frames`` qualify (one that just missed a frame is
        still where it was), and a track under a hand or beneath a tile (hidden, so probably
        still there) costs ``reuse_hidden_cost`` more than one whose place is open to view.
        A track so found far from where it was lost may be another tile: the caller forgets
        its face (:func:`vision.tracking.identity.forget`)."""
        cfg = self.config
        t_idx = np.array(
            [
                t
                for t in unused(np.arange(len(self.tracks)), pairs, 0)
                if frames_lost(self.tracks[t], self.last_frame) >= cfg.reuse_min_lost_frames
            ],
            np.int64,
        )
        if len(d_idx) == 0 or len(t_idx) == 0:
            return []
        boxes = np.array([t.xyxy for t in self.tracks], np.float64).reshape(-1, 4)
        cost, _, same_kind = self.cost(dets, d_idx, t_idx, boxes)
        hands = dets.xyxy[dets.class_id == HAND]
        hidden = np.array([self.tracks[t].carrier is not None for t in t_idx])
        if len(hands):
            hidden |= cover_matrix(boxes[t_idx], hands).max(axis=1) >= cfg.hand_cover_frac
        cost = cost + cfg.reuse_hidden_cost * hidden[:, None]
        return [(int(t_idx[r]), int(d_idx[c])) for r, c in assign(cost, same_kind)]

    def _class_ids(self, t_idx: np.ndarray) -> np.ndarray:
        return np.array([self.tracks[t].class_id for t in t_idx], np.int64)


def unused(idx: np.ndarray, pairs: list[tuple[int, int]], side: int) -> np.ndarray:
    """The entries of ``idx`` not used on ``side`` (0: tracks, 1: detections) of ``pairs``."""
    used = {p[side] for p in pairs}
    return np.array([i for i in idx if i not in used], np.int64)


def _betting(zone: str | None) -> bool:
    return bool(zone) and zone.startswith("box_")
