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
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from vision.faces import DIE_TIPPED, FACE_CLASSES, is_die_value, reading
from vision.geometry import cover_matrix, iou_matrix
from vision.types import CHIP, DIE, HAND, TILE_DOWN, TILE_UP, Detections, Track

_INFEASIBLE = 1e9  # cost of a forbidden pair (implementation constant, not a threshold)

ZoneOf = Callable[[np.ndarray], list[str]]

TIPPED = FACE_CLASSES.index(DIE_TIPPED)  # the reader's class for a die not lying flat


@dataclass(frozen=True)
class TrackerConfig:
    """Thresholds, each with the trade-off it makes."""

    # ByteTrack split: higher trusts fewer detections in stage 1, leaving more to stage 2.
    high_confidence: float = 0.5
    # Detections below this are ignored; lower rescues faint tiles, admits more clutter.
    low_confidence: float = 0.1
    # Stage 1-2 gate, centre distance in track-box diagonals: higher follows faster pushes,
    # lower avoids swaps between neighbours in a dense woodpile.
    match_gate_norm: float = 1.0
    # Stages 1-2: a track or detection may stay unmatched at this cost each, so a pair is
    # made only below twice this; lower leaves more gliding tiles to the wider stage 3, higher
    # lets one missed detection in a dense row shift its neighbours' tracks along (None: match
    # as many as the gate allows).
    unmatched_cost: float | None = 0.75
    # Weight of centre distance against (1 - IoU) in the match cost.
    distance_weight: float = 0.5
    # Stage 3 gate for re-acquiring a lost tile, in diagonals: higher finds moved tiles again,
    # lower leaves distant re-appearances to the 32-tile rule.
    reacquire_gate_norm: float = 8.0
    # Match cost per frame a track has been lost (capped): a tile gliding onto a hidden one
    # keeps its own track; higher prefers tracks just seen over tiles seen again in place.
    lost_frame_cost: float = 0.02
    lost_frame_cost_cap_frames: int = 40
    # Added when a detection's read face differs from the track's known face; higher trusts
    # the face reader over geometry.
    face_mismatch_cost: float = 1.0
    # Face readings below this confidence are not used for tiles. On rendered video (8 rounds
    # of the standard suite, `scripts/evaluate_models.py --suite`) 96.1% of face-up tile crops
    # read right; 93.7% read at 0.9 or more, 99.2% of those right (0.8: 95.3% kept, 98.9%
    # right). A misread face settles a hand wrongly (false payout alerts); lower knows faces
    # sooner, higher leaves more faces unknown.
    min_face_confidence: float = 0.9
    # Each face reading of a face-up tile counts this much less per later reading: lower lets
    # a track that moved onto another face-up tile take that tile's face sooner (a bank hand
    # once came out with a stale 5-5 for its 1-6); higher needs more misreads in a row to
    # flip a face (at 0.8, three readings at 0.9 or more).
    face_vote_decay: float = 0.8
    # A die is read from its last few frames: each frame's reading counts only when it is a
    # value at this probability or more (the face reader gives a die its most probable value
    # unless it is clearly die_tipped, vision.faces.die_choice). On rendered video (12 rounds
    # of the standard suite, `scripts/evaluate_models.py --suite`): at 0.3 every flat die crop
    # read its value and no tipped die a value; at 0.8, 97% of flat dice read. A die unread
    # read die_tipped (vision.faces.die_choice) in the window's majority is not flat; one that
    # stays unread is doubt (the round reports the throw unread, no alert).
    min_die_confidence: float = 0.3
    die_window_frames: int = 8
    # ...and its value is known only while one value holds this share of the window.
    die_majority: float = 0.6
    # Tiles on the table: a detection that would make one more tile track re-uses a lost one.
    max_tiles: int = 32
    # A tile beyond max_tiles takes a lost tile track only if lost this many frames: higher
    # leaves a tile that merely missed a detection its id, but delays finding moved tiles.
    reuse_min_lost_frames: int = 2
    # Extra cost for giving it a track that is hidden (under a hand or beneath a tile) rather
    # than one whose place is open to view and empty: higher trusts hidden tiles to be there.
    reuse_hidden_cost: float = 0.5
    # Frames an unseen tile track is kept; tiles do not vanish, so very long.
    tile_max_age_frames: int = 100_000
    # Frames an unseen chip, die or hand track is kept: higher bridges longer occlusions.
    other_max_age_frames: int = 25
    # Fraction of a lost tile's box under a hand for it to count as hidden by that hand.
    hand_cover_frac: float = 0.3
    # A hidden tile under a moving hand moves with it (the dealer carries what the hand
    # covers); a tile the hand only passed over is still found where it lay.
    hand_carry: bool = True
    # Added to the cost of finding such a tile where the hand went rather than where it lay:
    # higher trusts that a hand passing over tiles leaves them be.
    carried_cost: float = 0.3
    # Only a tile seen within this many frames before a hand covers it can be in that hand.
    ride_max_lost_frames: int = 3
    # IoU of a lost tile with a seen tile for it to count as beneath it (moves with it).
    carry_min_iou: float = 0.5
    # A face-down tile forgets its face when it comes to lie nearer another tile's last place
    # than its own, and only if it moved at least this share of its short side since the last
    # frame: lower forgets on detection jitter in a dense heap (a weak wash then reads good),
    # higher keeps faces through slow swaps.
    swap_min_move_frac: float = 0.25
    # Weight of the newest displacement in the velocity average (0: no motion model). Tiles
    # glide fast (a tile width or more a frame while a woodpile is built): predicting them on
    # by their last step keeps them from neighbours' tracks (4 clean suite rounds, the
    # detector's boxes as scripts/evaluate_perception.py caches them, tracker alone: IDF1
    # 0.626 -> 0.656 at 1.0 with the deadband below, 0.621 at 0.5).
    velocity_smoothing: float = 1.0
    # A displacement below this share of the box's short side counts as jitter (no motion).
    velocity_min_move_frac: float = 0.1


@dataclass
class _State:
    """Mutable per-track state, private to the tracker."""

    track_id: int
    xyxy: np.ndarray  # (4,) float64 px
    class_id: int
    confidence: float
    first_frame: int
    last_seen: int
    velocity: np.ndarray = field(default_factory=lambda: np.zeros(4))
    face_votes: dict[int, float] = field(default_factory=dict)
    die_reads: deque[int] = field(default_factory=deque)  # recent die readings, -1 unsure
    turned_down: bool = False  # seen face down since the last face reading
    carrier: int | None = None  # id of the tile this hidden tile lies beneath
    origin: np.ndarray | None = None  # (4,) where it lay when a moving hand took it along
    ride: np.ndarray | None = None  # (4,) where it would be if the hand over it carries it
    held: bool = False  # taken by a hand, moving with it

    @property
    def is_tile(self) -> bool:
        return self.class_id in (TILE_DOWN, TILE_UP)


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
class _Dets:
    """The detections of one frame as float64/int copies, with the face each reads (or -1)."""

    xyxy: np.ndarray
    class_id: np.ndarray
    confidence: np.ndarray
    face: np.ndarray
    face_confidence: np.ndarray

    @classmethod
    def of(cls, d: Detections, min_face_confidence: float) -> _Dets:
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
        self._tracks: list[_State] = []
        self._next_id = 1
        self._last_frame: int | None = None

    def update(self, detections: Detections, frame_index: int) -> list[Track]:
        """Associate one frame's detections; returns every live track (seen or coasting).

        A track with ``last_seen_frame < frame_index`` was not matched this frame: it is hidden
        (tiles keep their last box, or move with the tile above them).
        """
        cfg = self.config
        dets = _Dets.of(detections, cfg.min_face_confidence)
        before = {t.track_id: t.xyxy.copy() for t in self._tracks}
        recent = np.array(
            [i for i, t in enumerate(self._tracks) if t.last_seen == self._last_frame], np.int64
        )
        was_seen = {self._tracks[i].track_id for i in recent}
        predicted = self._predicted_boxes()
        valid = np.flatnonzero(dets.confidence >= cfg.low_confidence)
        high = valid[dets.confidence[valid] >= cfg.high_confidence]
        low = valid[dets.confidence[valid] < cfg.high_confidence]
        # Lost tracks take part in stage 1: on a still table, a tile seen again where it was is
        # better evidence than a neighbour's track that lost its own detection.
        every = np.arange(len(self._tracks))
        pairs = self._match(dets, high, every, predicted, cfg.match_gate_norm)
        pairs += self._match(
            dets, _unused(low, pairs, 1), _unused(recent, pairs, 0), predicted, cfg.match_gate_norm
        )
        pairs += self._reacquire(dets, _unused(high, pairs, 1), pairs, cfg.reacquire_gate_norm)
        pairs += self._spawn_or_reuse(dets, _unused(high, pairs, 1), pairs, frame_index)
        matched = {self._tracks[t].track_id for t, _ in pairs}
        for t, d in pairs:
            self._apply(self._tracks[t], dets, d, frame_index)
        self._forget_ambiguous_faces(matched, before)
        self._coast(matched, before, dets, was_seen)
        self._expire(frame_index)
        self._last_frame = frame_index
        return self._snapshots(frame_index)

    # --- matching stages ---
    def _predicted_boxes(self) -> np.ndarray:
        """Track boxes ``(T, 4)`` expected now: moved by velocity only if seen last frame."""
        boxes = [
            t.xyxy + (t.velocity if t.last_seen == self._last_frame else 0.0) for t in self._tracks
        ]
        return np.array(boxes, np.float64).reshape(-1, 4)

    def _cost(self, dets: _Dets, d_idx: np.ndarray, t_idx: np.ndarray, boxes: np.ndarray):
        """Match cost and centre distance ``(T, D)`` between tracks and detections; a tile a
        hand took along is judged by the nearer of where it went and where it lay."""
        cfg = self.config
        tb, db = boxes[t_idx], dets.xyxy[d_idx]
        dist = centre_distance_norm(tb, db)
        cost = (1.0 - iou_matrix(tb, db)) + cfg.distance_weight * dist
        origins = [self._tracks[t].origin for t in t_idx]
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
                self._known_face(self._tracks[t]) if self._tracks[t].class_id != TILE_DOWN else -1
                for t in t_idx
            ],
            np.int64,
        )
        det_faces = dets.face[d_idx]
        clash = (track_faces[:, None] >= 0) & (det_faces[None, :] >= 0)
        clash &= track_faces[:, None] != det_faces[None, :]
        cost = cost + cfg.face_mismatch_cost * clash
        lost_for = np.array([self._frames_lost(self._tracks[t]) for t in t_idx], np.float64)
        cost = (
            cost
            + cfg.lost_frame_cost * np.minimum(lost_for, cfg.lost_frame_cost_cap_frames)[:, None]
        )
        same_kind = kind_of(self._class_ids(t_idx))[:, None] == kind_of(dets.class_id[d_idx])[None]
        return cost, dist, same_kind

    def _match(self, dets, d_idx, t_idx, boxes, gate_norm: float) -> list[tuple[int, int]]:
        if len(d_idx) == 0 or len(t_idx) == 0:
            return []
        cost, dist, same_kind = self._cost(dets, d_idx, t_idx, boxes)
        pairs = assign(cost, same_kind & (dist <= gate_norm), self.config.unmatched_cost)
        return [(int(t_idx[r]), int(d_idx[c])) for r, c in pairs]

    def _reacquire(self, dets, d_idx, pairs, gate_norm: float) -> list[tuple[int, int]]:
        """Stage 3: confident detections left over against every unmatched track, lost ones
        included (wider gate; a cost per frame lost prefers the track just lost).
        """
        t_idx = _unused(np.arange(len(self._tracks)), pairs, 0)
        if len(d_idx) == 0 or len(t_idx) == 0:
            return []
        boxes = np.array([t.xyxy for t in self._tracks], np.float64).reshape(-1, 4)
        cost, dist, same_kind = self._cost(dets, d_idx, t_idx, boxes)
        feasible = same_kind & (dist <= gate_norm) & ~self._other_box(boxes[t_idx], dets, d_idx)
        return [(int(t_idx[r]), int(d_idx[c])) for r, c in assign(cost, feasible)]

    def _other_box(self, track_xyxy: np.ndarray, dets: _Dets, d_idx: np.ndarray) -> np.ndarray:
        """``(T, D)`` True where a chip track lost in one betting box would be found in
        another: wagers do not travel between boxes (a chip seen in the next box while a
        hand hides this one is another stack)."""
        out = np.zeros((len(track_xyxy), len(d_idx)), bool)
        chips = dets.class_id[d_idx] == CHIP
        if self._zone_of is None or not chips.any() or len(track_xyxy) == 0:
            return out
        t_zone = self._zone_of((track_xyxy[:, :2] + track_xyxy[:, 2:]) / 2)
        d_xyxy = dets.xyxy[d_idx]
        d_zone = self._zone_of((d_xyxy[:, :2] + d_xyxy[:, 2:]) / 2)
        for i, tz in enumerate(t_zone):
            for j, dz in enumerate(d_zone):
                out[i, j] = chips[j] and _betting(tz) and _betting(dz) and tz != dz
        return out

    def _reuse(self, dets, d_idx, pairs) -> list[tuple[int, int]]:
        """The 32-tile rule: tiles seen beyond ``max_tiles`` take lost tile tracks, anywhere.
        Only tracks lost for ``reuse_min_lost_frames`` qualify (one that just missed a frame is
        still where it was), and a track under a hand or beneath a tile (hidden, so probably
        still there) costs ``reuse_hidden_cost`` more than one whose place is open to view."""
        cfg = self.config
        t_idx = np.array(
            [
                t
                for t in _unused(np.arange(len(self._tracks)), pairs, 0)
                if self._frames_lost(self._tracks[t]) >= cfg.reuse_min_lost_frames
            ],
            np.int64,
        )
        if len(d_idx) == 0 or len(t_idx) == 0:
            return []
        boxes = np.array([t.xyxy for t in self._tracks], np.float64).reshape(-1, 4)
        cost, _, same_kind = self._cost(dets, d_idx, t_idx, boxes)
        hands = dets.xyxy[dets.class_id == HAND]
        hidden = np.array([self._tracks[t].carrier is not None for t in t_idx])
        if len(hands):
            hidden |= cover_matrix(boxes[t_idx], hands).max(axis=1) >= cfg.hand_cover_frac
        cost = cost + cfg.reuse_hidden_cost * hidden[:, None]
        pairs = [(int(t_idx[r]), int(d_idx[c])) for r, c in assign(cost, same_kind)]
        for t, _ in pairs:  # found far from where it was lost: it may be another tile
            self._tracks[t].face_votes, self._tracks[t].die_reads = {}, deque()
        return pairs

    def _spawn_or_reuse(self, dets, d_idx, pairs, frame_index: int):
        """New tracks for the rest; a tile beyond ``max_tiles`` takes the best lost tile track."""
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
        return out + self._reuse(dets, rest, pairs + out)

    def _new_state(self, dets: _Dets, d: int, frame_index: int) -> _State:
        state = _State(
            self._next_id,
            dets.xyxy[d].copy(),
            int(dets.class_id[d]),
            float(dets.confidence[d]),
            frame_index,
            frame_index - 1,
        )
        self._next_id += 1
        return state

    # --- state updates ---
    def _apply(self, t: _State, dets: _Dets, d: int, frame_index: int) -> None:
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
        t.xyxy, t.class_id = box.copy(), int(dets.class_id[d])
        t.confidence, t.last_seen, t.carrier = float(dets.confidence[d]), frame_index, None
        t.origin, t.ride, t.held = None, None, False
        if t.class_id == DIE:
            self._read_die(t, int(dets.face[d]), float(dets.face_confidence[d]))
        else:
            self._remember_face(t, int(dets.face[d]), float(dets.confidence[d]))

    def _read_die(self, t: _State, face: int, face_confidence: float) -> None:
        cfg = self.config
        sure = is_die_value(face) and face_confidence >= cfg.min_die_confidence
        t.die_reads.append(face if sure or face == TIPPED else -1)  # tipped: die_choice is sure
        while len(t.die_reads) > cfg.die_window_frames:
            t.die_reads.popleft()
        values = Counter(v for v in t.die_reads if v >= 0)
        best = values.most_common(1)
        held = best and best[0][1] >= cfg.die_majority * len(t.die_reads)
        t.face_votes = {best[0][0]: 1.0} if held else {}

    def _remember_face(self, t: _State, face: int, weight: float) -> None:
        if t.class_id == TILE_DOWN:
            t.turned_down = True
            return
        if face < 0 or t.class_id != TILE_UP or FACE_CLASSES[face].startswith("die_"):
            return  # no reading, or a tile read as a die: ignore it
        if t.turned_down:  # a tile turned up again shows what it shows now
            t.face_votes, t.turned_down = {}, False
        # older readings count less: a track that came to lie on another tile takes its face
        keep = self.config.face_vote_decay
        t.face_votes = {k: v * keep for k, v in t.face_votes.items()}
        t.face_votes[face] = t.face_votes.get(face, 0.0) + weight

    def _forget_ambiguous_faces(self, matched: set[int], before: dict[int, np.ndarray]) -> None:
        """A face-down tile that moved to where another tile lay a frame ago (nearer to that
        tile's last place than to its own, and by more than detection jitter) may have been
        swapped with it: its remembered face is dropped. A good wash does this to nearly every
        tile; a weak one leaves faces known, which is the wash-quality figure (tile-tracking
        risk)."""
        moved = [
            t
            for t in self._tracks
            if t.track_id in matched
            and t.class_id == TILE_DOWN
            and t.face_votes
            and t.track_id in before
        ]
        others = [t.track_id for t in self._tracks if t.is_tile and t.track_id in before]
        if not moved or len(others) < 2:
            return
        old_centres = np.array([(before[i][:2] + before[i][2:]) / 2 for i in others])
        for t in moved:
            centre = (t.xyxy[:2] + t.xyxy[2:]) / 2
            dist = np.linalg.norm(old_centres - centre, axis=1)
            own = others.index(t.track_id)
            dist_own, dist[own] = dist[own], np.inf
            short_side = min(t.xyxy[2] - t.xyxy[0], t.xyxy[3] - t.xyxy[1])
            if dist.min() < dist_own and dist_own >= self.config.swap_min_move_frac * short_side:
                t.face_votes = {}

    def _coast(
        self, matched: set[int], before: dict[int, np.ndarray], dets: _Dets, was_seen: set[int]
    ) -> None:
        """Unseen tiles. Under a hand a tile stays where it lay, while a shadow box (``ride``)
        follows the hand; if the hand moves off and the tile is not seen where it lay, the hand
        took it: the track is ``held`` and goes on from the shadow, moving with the hand until
        no hand covers it (put down); where it lay is kept as ``origin`` (it may still be
        found there). Beneath a seen tile a tile moves with it."""
        cfg = self.config
        hands = dets.xyxy[dets.class_id == HAND]
        seen = [t for t in self._tracks if t.track_id in matched and t.is_tile]
        shift = {t.track_id: t.xyxy - before.get(t.track_id, t.xyxy) for t in seen}
        moving = [
            (before[h.track_id], h.xyxy)
            for h in self._tracks
            if h.class_id == HAND and h.track_id in matched and h.track_id in was_seen
        ]
        for t in self._tracks:
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
                    t.ride is not None or self._frames_lost(t) <= cfg.ride_max_lost_frames
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

    def _hand_over(self, box: np.ndarray, hands: list[tuple[np.ndarray, np.ndarray]]):
        """The (was, now) boxes of the hand that covered ``box`` last frame, or None."""
        if not hands:
            return None
        was = np.array([w for w, _ in hands], np.float64)
        cover = cover_matrix(box[None], was)[0]
        best = int(np.argmax(cover))
        return hands[best] if cover[best] >= self.config.hand_cover_frac else None

    def _with_hand(self, box: np.ndarray, hands: list[tuple[np.ndarray, np.ndarray]]):
        """``box`` moved by the centre shift of the hand that covered it last frame."""
        over = self._hand_over(box, hands)
        return box if over is None else _moved_with(box, *over)

    def _expire(self, frame_index: int) -> None:
        cfg = self.config
        self._tracks = [
            t
            for t in self._tracks
            if frame_index - t.last_seen
            <= (cfg.tile_max_age_frames if t.is_tile else cfg.other_max_age_frames)
        ]

    # --- read-outs ---
    def _frames_lost(self, t: _State) -> int:
        return 0 if self._last_frame is None else max(0, self._last_frame - t.last_seen)

    def _class_ids(self, t_idx: np.ndarray) -> np.ndarray:
        return np.array([self._tracks[t].class_id for t in t_idx], np.int64)

    @staticmethod
    def _known_face(t: _State) -> int:
        return max(t.face_votes, key=t.face_votes.__getitem__) if t.face_votes else -1

    def _snapshots(self, frame_index: int) -> list[Track]:
        tracks = sorted(self._tracks, key=lambda t: t.track_id)
        boxes = np.array([t.xyxy for t in tracks], np.float64).reshape(-1, 4)
        centres = (boxes[:, :2] + boxes[:, 2:]) / 2
        zones = self._zone_of(centres) if self._zone_of and len(tracks) else [None] * len(tracks)
        return [self._snapshot(t, z, frame_index) for t, z in zip(tracks, zones, strict=True)]

    def _snapshot(self, t: _State, zone: str | None, frame_index: int) -> Track:
        face_index = self._known_face(t)
        known = reading(face_index, 1.0) if face_index >= 0 else None
        face = DIE_TIPPED if face_index == TIPPED else known.face if known else None
        if t.class_id == TILE_UP and t.turned_down:
            face = None  # turned up again, not yet read: its old face is no sight of this side
        return Track(
            track_id=t.track_id,
            xyxy=tuple(float(v) for v in t.xyxy),
            class_id=t.class_id,
            face_up=(t.class_id == TILE_UP) if t.is_tile else None,
            face=face,
            die_value=known.die_value if known else None,
            zone=zone,
            age_frames=frame_index - t.first_frame,
            last_seen_frame=t.last_seen,
            confidence=t.confidence,
        )


TileTracker = Tracker


def _moved_with(box: np.ndarray, was: np.ndarray, now: np.ndarray) -> np.ndarray:
    """``box (4,)`` moved by the shift of a hand box's centre from ``was`` to ``now``."""
    return box + np.tile((now[:2] + now[2:] - was[:2] - was[2:]) / 2, 2)


def _betting(zone: str | None) -> bool:
    return bool(zone) and zone.startswith("box_")


def _unused(idx: np.ndarray, pairs: list[tuple[int, int]], side: int) -> np.ndarray:
    """The entries of ``idx`` not used on ``side`` (0: tracks, 1: detections) of ``pairs``."""
    used = {p[side] for p in pairs}
    return np.array([i for i in idx if i not in used], np.int64)
