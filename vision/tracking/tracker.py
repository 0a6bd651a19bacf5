"""Tile tracker for a static table camera: ByteTrack-style matching plus what the table knows.

Association core: per frame, Hungarian assignment (``scipy.optimize.linear_sum_assignment``) on
a cost of ``(1 - IoU)`` plus centre distance in track-box diagonals, in ByteTrack's two stages
(confident detections against all tracks, then weak detections against tracks seen last frame).
Table knowledge on top:

- tiles never vanish: a tile track is kept (long max age); a tile hidden under a hand stays
  where it was unless the hand moves off and the tile is not there: then the hand took it, and
  the track moves with the hand (still findable where it lay); a tile hidden beneath another
  tile (a stack) moves with the tile on top;
- a moving tile is predicted on by its last step (tiles glide a tile width or more a frame);
- lost tile tracks are re-acquired by a third, wider stage, preferring recently lost tracks and
  tracks whose known face agrees with the detection's read face;
- there are exactly ``max_tiles`` (32) tiles: a tile detection that would make a 33rd track is
  given to the best lost tile track instead;
- face memory: the face read while face up is kept when the tile turns face down;
- dice are read over their last few frames: a value is known only while confident readings of
  it hold the window (a die not lying flat reads unsure and stays unknown).

Classes are matched within their kind (``tile_down`` and ``tile_up`` are one kind: tiles turn).
The tracker owns its id counter and never mutates the caller's arrays.

The parts: :mod:`~vision.tracking.config` (the thresholds), :mod:`~vision.tracking.matching`
(cost and assignment, the stages), :mod:`~vision.tracking.occlusion` (covered and carried
tiles), :mod:`~vision.tracking.identity` (faces and dice), :mod:`~vision.tracking.state` (the
per-track memory); this module runs them once per frame.
"""

from __future__ import annotations

import numpy as np

from vision.geometry import iou_matrix
from vision.tracking import identity
from vision.tracking.config import TrackerConfig
from vision.tracking.matching import FrameDetections, Matcher, ZoneOf, kind_of, unused
from vision.tracking.occlusion import Occlusion
from vision.tracking.state import TrackState
from vision.types import DIE, HAND, TILE_DOWN, TILE_UP, Detections, Track


class Tracker:
    """Tracks tiles, chips, dice and hands; see the module docstring.

    ``zone_of`` (for example ``pipeline.layout.Layout.zone_of``) names the zone of box centres
    ``(N, 2)`` px; without it ``Track.zone`` is None. Call :meth:`update` once per frame.
    """

    def __init__(self, config: TrackerConfig | None = None, zone_of: ZoneOf | None = None):
        self.config = config or TrackerConfig()
        self._zone_of = zone_of
        self.reset()

    def reset(self) -> None:
        """Forget every track and restart ids at 1."""
        self._tracks: list[TrackState] = []
        self._next_id = 1
        self._last_frame: int | None = None

    def update(self, detections: Detections, frame_index: int) -> list[Track]:
        """Associate one frame's detections; returns every live track (seen or coasting).

        A track with ``last_seen_frame < frame_index`` was not matched this frame: it is hidden
        (tiles keep their last box, or move with the tile above them).
        """
        cfg = self.config
        dets = FrameDetections.of(detections, cfg.min_face_confidence)
        matcher = Matcher(cfg, self._tracks, self._last_frame, self._zone_of)
        before = {t.track_id: t.xyxy.copy() for t in self._tracks}
        recent = np.array(
            [i for i, t in enumerate(self._tracks) if t.last_seen == self._last_frame], np.int64
        )
        was_seen = {self._tracks[i].track_id for i in recent}
        predicted = matcher.predicted_boxes()
        valid = one_box_per_tile(dets, np.flatnonzero(dets.confidence >= cfg.low_confidence), cfg)
        floor = np.where(dets.class_id == DIE, cfg.die_high_confidence, cfg.high_confidence)
        high = valid[dets.confidence[valid] >= floor[valid]]
        low = valid[dets.confidence[valid] < floor[valid]]
        # Lost tracks take part in stage 1: on a still table, a tile seen again where it was is
        # better evidence than a neighbour's track that lost its own detection.
        every = np.arange(len(self._tracks))
        pairs = matcher.match(dets, high, every, predicted, cfg.match_gate_norm)
        pairs += matcher.match(
            dets, unused(low, pairs, 1), unused(recent, pairs, 0), predicted, cfg.match_gate_norm
        )
        pairs += matcher.reacquire(dets, unused(high, pairs, 1), pairs, cfg.reacquire_gate_norm)
        pairs += self._spawn_or_reuse(matcher, dets, unused(high, pairs, 1), pairs, frame_index)
        matched = {self._tracks[t].track_id for t, _ in pairs}
        for t, d in pairs:
            self._apply(self._tracks[t], dets, d, frame_index)
        identity.forget_ambiguous_faces(self._tracks, matched, before, cfg)
        hands = dets.xyxy[dets.class_id == HAND]
        Occlusion(cfg, self._tracks, self._last_frame).coast(matched, before, hands, was_seen)
        self._expire(frame_index)
        self._last_frame = frame_index
        return self._snapshots(frame_index)

    def _spawn_or_reuse(self, matcher: Matcher, dets, d_idx, pairs, frame_index: int):
        """New tracks for the rest; a tile beyond ``max_tiles`` takes the best lost tile track
        (:meth:`Matcher.reuse`), which forgets what it read (it may be another tile)."""
        out: list[tuple[int, int]] = []
        n_tiles = sum(t.is_tile for t in self._tracks)
        for d in d_idx:
            is_tile = kind_of(dets.class_id[d]) == TILE_DOWN
            if is_tile and n_tiles >= self.config.max_tiles:
                continue
            self._tracks.append(self._new_state(dets, int(d), frame_index))
            out.append((len(self._tracks) - 1, int(d)))
            n_tiles += bool(is_tile)
        spawned = {d for _, d in out}
        rest = np.array([d for d in d_idx if d not in spawned], np.int64)
        reused = matcher.reuse(dets, rest, pairs + out)
        for t, _ in reused:  # found far from where it was lost: it may be another tile
            identity.forget(self._tracks[t])
        return out + reused

    def _new_state(self, dets: FrameDetections, d: int, frame_index: int) -> TrackState:
        state = TrackState(
            self._next_id,
            dets.xyxy[d].copy(),
            int(dets.class_id[d]),
            float(dets.confidence[d]),
            frame_index,
            frame_index - 1,
        )
        self._next_id += 1
        return state

    def _apply(self, t: TrackState, dets: FrameDetections, d: int, frame_index: int) -> None:
        """Move a matched track onto its detection; update velocity and face memory."""
        box = dets.xyxy[d]
        alpha = self.config.velocity_smoothing
        step = box - t.xyxy
        short = min(box[2] - box[0], box[3] - box[1])
        still = np.abs(step).max() < self.config.velocity_min_move_frac * short
        if t.last_seen == self._last_frame and self._last_frame is not None:
            t.velocity = alpha * (0.0 if still else step) + (1 - alpha) * t.velocity
        else:
            t.velocity = np.zeros(4)
        if frame_index - t.last_seen > self.config.die_window_frames:
            t.die_reads.clear()  # out of sight this long, a die may have been taken and thrown
        t.xyxy, t.class_id = box.copy(), int(dets.class_id[d])
        t.confidence, t.last_seen, t.carrier = float(dets.confidence[d]), frame_index, None
        t.origin, t.ride, t.held = None, None, False
        if t.class_id == DIE:
            identity.read_die(t, int(dets.face[d]), float(dets.face_confidence[d]), self.config)
        else:
            identity.remember_face(t, int(dets.face[d]), float(dets.confidence[d]), self.config)

    def _expire(self, frame_index: int) -> None:
        cfg = self.config
        self._tracks = [
            t
            for t in self._tracks
            if frame_index - t.last_seen
            <= (cfg.tile_max_age_frames if t.is_tile else cfg.other_max_age_frames)
        ]

    def _snapshots(self, frame_index: int) -> list[Track]:
        tracks = sorted(self._tracks, key=lambda t: t.track_id)
        boxes = np.array([t.xyxy for t in tracks], np.float64).reshape(-1, 4)
        centres = (boxes[:, :2] + boxes[:, 2:]) / 2
        zones = self._zone_of(centres) if self._zone_of and len(tracks) else [None] * len(tracks)
        return [self._snapshot(t, z, frame_index) for t, z in zip(tracks, zones, strict=True)]

    def _snapshot(self, t: TrackState, zone: str | None, frame_index: int) -> Track:
        face, die_value = identity.shown_face(t, self.config.min_face_reads)
        return Track(
            track_id=t.track_id,
            xyxy=tuple(float(v) for v in t.xyxy),
            class_id=t.class_id,
            face_up=(t.class_id == TILE_UP) if t.is_tile else None,
            face=face,
            die_value=die_value,
            die_confidence=identity.die_confidence(t),
            zone=zone,
            age_frames=frame_index - t.first_frame,
            last_seen_frame=t.last_seen,
            confidence=t.confidence,
        )


TileTracker = Tracker


def one_box_per_tile(dets: FrameDetections, valid: np.ndarray, cfg: TrackerConfig) -> np.ndarray:
    """``valid`` detection indices less the less sure of each pair of tile boxes overlapping at
    ``tile_sides_iou`` or more: one tile the detector boxed as both face up and face down (its
    overlap suppression is per class), both then read face up where the face reader turned the
    face-down box up."""
    tiles = valid[np.isin(dets.class_id[valid], (TILE_UP, TILE_DOWN))]
    if len(tiles) < 2:
        return valid
    boxes = dets.xyxy[tiles].astype(np.float64)
    rows, cols = np.nonzero(np.triu(iou_matrix(boxes, boxes) >= cfg.tile_sides_iou, k=1))
    a, b = tiles[rows], tiles[cols]
    drop = np.where(dets.confidence[a] >= dets.confidence[b], b, a)
    return valid[~np.isin(valid, drop)]
