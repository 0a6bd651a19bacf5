"""Motion-gated detection: detect only where the picture changed, carry the rest forward.

A ceiling camera over a table sees a still scene most of the time. :class:`GatedDetector` keeps
a small grey *reference* picture of what its current detections describe and, per frame:

- nothing differs from the reference: the previous detections are returned (no inference);
- some places differ: each changed place is grown by the boxes it touches and a context margin,
  and the detector runs on those regions only (``detect_region``, which lays them on the full
  frame's input grid); old detections the change touches are replaced by the region's new ones,
  the rest stay;
- the change is large, the stream jumped, or ``full_every_frames`` passed: a full detection;
- the table has been still for ``settle_frames`` after regions were detected: a full detection,
  so that a still table is carried exactly as a full detection sees it (a region gives the
  network less context than the whole frame, and its confidences differ: a die read at 0.76 in
  the whole frame may read 0.33 in a small region).

Merging a region's detections into the carried ones:

- a new detection touching an inner edge of the region (one that is not the frame's edge) may
  be an object cut by the crop: it is dropped (an object there lies outside the change, so its
  old detection stands);
- an old detection the change touches is stale: it goes (every such box is inside its region,
  which was grown to hold it, so the region's detections stand in for it);
- where nothing changed, an old detection stands and a new one overlapping it (same kind) is
  dropped: a still object keeps its box, whatever the smaller context made of it; a new one
  where none was is added;
- where the change is, a new detection replaces the old ones it overlaps.

The reference is updated only inside the regions detected, so small changes accumulate until
they are large enough to be seen.

The detector is any object with ``detect(image) -> Detections`` and
``detect_region(image, region_xyxy) -> Detections`` (full-frame pixels), such as
:class:`vision.detector.Detector` with a free-input-size model. A ``GatedDetector`` holds one
camera's memory: one per camera, not shared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import cv2
import numpy as np

from vision.geometry import UNION_EPS, iou_matrix, touch_matrix
from vision.types import TILE_DOWN, TILE_UP, Detections, Frame


class RegionDetector(Protocol):
    def detect(self, image: np.ndarray) -> Detections: ...

    def detect_region(self, image: np.ndarray, region_xyxy) -> Detections: ...


@dataclass(frozen=True)
class GatingConfig:
    """When to detect, and where; each threshold with the trade-off it makes."""

    # Change mask resolution, a fraction of the frame: lower is cheaper and averages more noise
    # away, but a small object must move farther to be seen (0.25: a 1080p die is ~5 px).
    mask_scale: float = 0.25
    # Grey-level difference (0-255) from the reference that counts as change: higher ignores
    # sensor noise and flicker, lower sees a dark tile sliding on dark felt sooner.
    diff_threshold: int = 14
    # Changed blobs smaller than this (mask pixels) are noise; changes below it accumulate
    # against the reference until they are seen.
    min_blob_px: int = 2
    # Context around a change, full-frame px: at least an object's size (a 1080p tile is about
    # 35x70 px), so an object touching the change lies wholly inside its region; more context
    # makes a region's detections more like the full frame's, and costs more.
    context_px: int = 128
    # Regions are grown to at least this side, full-frame px: the network learnt on 832-px
    # crops and is less sure of small objects in much smaller ones (docs/performance.md).
    min_region_px: int = 640
    # A new detection within this of an inner region edge is a cut object and is dropped.
    border_px: int = 4
    # A full detection at least this often: catches what the gate misses (higher: cheaper).
    full_every_frames: int = 50
    # A full detection once the picture has been still this many frames after regions were
    # detected (0: never): the still table is then carried as a full detection sees it. Lower:
    # sooner; a pause shorter than this in a busy stretch costs a full detection each time.
    settle_frames: int = 3
    # Regions covering more than this fraction of the frame: one full detection instead (a
    # region costs about its share of a full detection, and sees less; 0.6 instead of 0.45
    # changed 9 key events of the demo instead of 6 for no clear gain in speed).
    max_region_fraction: float = 0.45
    # A jump of more than this in frame index (a blind interval, a skipped stretch): full.
    max_gap_frames: int = 5
    # A region's new box and an old box of the same kind overlapping more than this are one
    # object (which box stays: see the module docstring); lower merges neighbours wrongly.
    duplicate_iou: float = 0.5


@dataclass
class GatingStats:
    """What the gate did so far: frames by decision, region inferences and their area."""

    frames: int = 0
    full: int = 0
    # full detections by reason: start, gap, periodic, large (change), settle
    full_by: dict[str, int] = field(default_factory=dict)
    regional: int = 0
    carried: int = 0
    region_runs: int = 0
    region_area_px: int = 0  # full-frame pixels of all regions detected
    frame_area_px: int = 0  # full-frame pixels of all frames seen

    @property
    def detected_area_fraction(self) -> float:
        """Share of the pixels the detector looked at, against a full detection per frame."""
        looked = self.region_area_px + self.full * (self.frame_area_px / max(self.frames, 1))
        return looked / max(self.frame_area_px, 1)


@dataclass(frozen=True)
class GateDecision:
    """One frame's decision: ``full`` (and why), ``regions`` (in full-frame px) or ``carry``."""

    kind: str
    regions: tuple[tuple[int, int, int, int], ...] = field(default=())
    reason: str = ""


def grey_small(image: np.ndarray, scale: float) -> np.ndarray:
    """``image (H, W, 3)`` BGR -> grey ``(round(H*scale), round(W*scale)) uint8``, area-averaged
    (halved step by step while that is exact: OpenCV's 2x area path is several times faster).

    >>> grey_small(np.full((8, 12, 3), 200, np.uint8), 0.25).shape
    (2, 3)
    """
    global _LAST_GREY
    last = _LAST_GREY  # one read: another thread may replace it
    if last is not None and last[0] is image and last[1] == scale:
        return last[2]
    source = image
    h, w = image.shape[:2]
    target = (max(1, round(w * scale)), max(1, round(h * scale)))
    while image.shape[1] >= 2 * target[0] and image.shape[1] % 2 == 0 == image.shape[0] % 2:
        image = cv2.resize(
            image, (image.shape[1] // 2, image.shape[0] // 2), interpolation=cv2.INTER_AREA
        )
    if (image.shape[1], image.shape[0]) != target:
        image = cv2.resize(image, target, interpolation=cv2.INTER_AREA)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    _LAST_GREY = (source, scale, grey)
    return grey


# The last picture reduced: a review asks the gate about a frame (``unchanged``) before the
# frame's call, and the grey is made once (the picture is held, so its identity is not reused).
# The grey is shared: a caller that changes it in place copies it first.
_LAST_GREY: tuple[np.ndarray, float, np.ndarray] | None = None


def changed_boxes(
    reference: np.ndarray, current: np.ndarray, threshold: int, min_blob_px: int
) -> np.ndarray:
    """Bounding boxes ``(K, 4) int`` xyxy (exclusive ends), in mask pixels, of the blobs where
    ``current`` differs from ``reference`` by more than ``threshold``.

    >>> a = np.zeros((10, 10), np.uint8); b = a.copy(); b[2:4, 5:8] = 50
    >>> changed_boxes(a, b, 10, 2).tolist()
    [[5, 2, 8, 4]]
    """
    mask = (cv2.absdiff(reference, current) > threshold).astype(np.uint8)
    if not mask.any():
        return np.zeros((0, 4), np.int64)
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    stats = stats[1:n]
    stats = stats[stats[:, cv2.CC_STAT_AREA] >= min_blob_px]
    x, y = stats[:, cv2.CC_STAT_LEFT], stats[:, cv2.CC_STAT_TOP]
    return np.column_stack(
        [x, y, x + stats[:, cv2.CC_STAT_WIDTH], y + stats[:, cv2.CC_STAT_HEIGHT]]
    ).astype(np.int64)


def _inside(boxes: np.ndarray, rect) -> np.ndarray:
    """Which ``boxes (N, 4)`` lie wholly inside ``rect``."""
    x1, y1, x2, y2 = rect
    return (boxes[:, 0] >= x1) & (boxes[:, 1] >= y1) & (boxes[:, 2] <= x2) & (boxes[:, 3] <= y2)


def _at_least(lo: float, hi: float, side: float, limit: float) -> tuple[float, float]:
    """The span ``[lo, hi]`` grown about its centre to ``side`` (at most ``limit``), then
    shifted to lie within ``[0, limit]``.

    >>> _at_least(10, 20, 100, 1000), _at_least(950, 990, 100, 1000)
    ((0.0, 100.0), (900.0, 1000.0))
    """
    side = min(side, limit)
    if hi - lo < side:
        centre = (lo + hi) / 2
        lo, hi = centre - side / 2, centre + side / 2
    if lo < 0:
        lo, hi = 0, hi - lo
    if hi > limit:
        lo, hi = lo - (hi - limit), limit
    return float(max(lo, 0)), float(hi)


def merge_rects(rects: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Union overlapping rectangles until none overlap (shared edges do not count).

    >>> merge_rects([(0, 0, 10, 10), (5, 5, 20, 20), (30, 0, 40, 10), (10, 0, 12, 2)])
    [(0, 0, 20, 20), (30, 0, 40, 10)]
    """
    out = list(rects)
    merged = True
    while merged:
        merged = False
        for i in range(len(out)):
            for j in range(i + 1, len(out)):
                a, b = out[i], out[j]
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                    out[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    del out[j]
                    merged = True
                    break
            if merged:
                break
    return sorted(out)


def _same_kind(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(N, M)`` whether class ids are one kind (a tile face up or down is one kind)."""
    tile_a, tile_b = np.isin(a, (TILE_DOWN, TILE_UP)), np.isin(b, (TILE_DOWN, TILE_UP))
    return (a[:, None] == b[None, :]) | (tile_a[:, None] & tile_b[None, :])


class GatedDetector:
    """``Frame -> Detections`` like :class:`vision.detector.Detector`, detecting only where the
    picture changed since the detections were made. Call once per frame, in capture order."""

    def __init__(self, detector: RegionDetector, config: GatingConfig | None = None) -> None:
        self.detector = detector
        self.config = config or GatingConfig()
        self.stats = GatingStats()
        self.last_decision = GateDecision("full")
        self.reset()

    def reset(self) -> None:
        """Forget the picture and detections: the next frame is detected in full."""
        self._reference: np.ndarray | None = None
        self._detections = Detections()
        self._last_index: int | None = None
        self._last_full_index = 0
        self._still_frames = 0  # frames without change since regions were last detected
        self._unsettled = False  # regions detected since the last full detection
        self._tested: tuple[np.ndarray, np.ndarray] | None = None  # (picture, its changes)

    def unchanged(self, frame: Frame) -> bool:
        """Whether ``frame`` shows nothing changed since the detections were made, by the
        gate's own change test (its reference picture and thresholds): its call would detect
        nothing and carry them forward, unless a full detection is due anyway (a gap,
        ``full_every_frames``, ``settle_frames``). False before any detection. The test is
        made once: the frame's call, if it comes next, uses this answer."""
        current = grey_small(frame.image, self.config.mask_scale)
        if self._reference is None or self._reference.shape != current.shape:
            return False
        return not len(self._changes(frame.image, current))

    def __call__(self, frame: Frame) -> Detections:
        """This frame's detections in full-frame px. Carried forward, they are the very object
        returned before (``Detections`` is not to be mutated)."""
        image = frame.image
        current = grey_small(image, self.config.mask_scale)
        self.stats.frames += 1
        self.stats.frame_area_px += image.shape[0] * image.shape[1]
        reason = self._needs_full(frame, current)
        plan = None if reason else self._plan(current, image)
        if plan is None:
            reason = reason or "large"
        elif not plan[0] and self._settled():
            plan, reason = None, "settle"
        if plan is None:
            self._full(image, current, frame.index, reason)
        elif plan[0]:
            self._detect_regions(image, current, *plan)
        else:
            self.stats.carried += 1
            self.last_decision = GateDecision("carry")
        self._last_index = frame.index
        return self._detections

    def _needs_full(self, frame: Frame, current: np.ndarray) -> str:
        """Why this frame needs a full detection before looking at the change ("": no need)."""
        cfg = self.config
        if self._reference is None or self._reference.shape != current.shape:
            return "start"
        if self._last_index is None or not 0 < frame.index - self._last_index <= cfg.max_gap_frames:
            return "gap"
        if frame.index - self._last_full_index >= cfg.full_every_frames:
            return "periodic"
        return ""

    def _settled(self) -> bool:
        """One more still frame; True when that makes the table settled after regions."""
        self._still_frames += 1
        return self._unsettled and self._still_frames >= self.config.settle_frames > 0

    def _full(self, image: np.ndarray, current: np.ndarray, index: int, reason: str) -> None:
        self._detections = self.detector.detect(image)
        self._reference = current.copy()  # updated in place by regions; ``current`` is shared
        self._tested = None
        self._last_full_index = index
        self._unsettled = False
        self.stats.full += 1
        self.stats.full_by[reason] = self.stats.full_by.get(reason, 0) + 1
        self.last_decision = GateDecision("full", reason=reason)

    def _plan(self, current: np.ndarray, image: np.ndarray) -> tuple[list, np.ndarray] | None:
        """Regions to detect (full-frame px, disjoint) and the changed boxes ``(K, 4)`` (full-
        frame px); no regions: nothing changed; None: so much changed that a full detection
        is cheaper."""
        cfg = self.config
        blobs = self._changes(image, current)
        if not len(blobs):
            return [], np.zeros((0, 4))
        h, w = image.shape[:2]
        inv = 1.0 / cfg.mask_scale
        # one mask pixel of slack each side: a change may straddle the pixel grid
        changed = (blobs + np.array([-1, -1, 1, 1])) * inv
        old = self._detections.xyxy
        rects = []
        for x1, y1, x2, y2 in changed:
            touching = old[touch_matrix(old, [(x1, y1, x2, y2)]).any(axis=1)]
            if len(touching):
                x1, y1 = min(x1, touching[:, 0].min()), min(y1, touching[:, 1].min())
                x2, y2 = max(x2, touching[:, 2].max()), max(y2, touching[:, 3].max())
            rects.append(self._grown((x1, y1, x2, y2), w, h))
        self._still_frames = 0
        rects = merge_rects(rects)
        area = sum((r[2] - r[0]) * (r[3] - r[1]) for r in rects)
        return None if area > cfg.max_region_fraction * w * h else (rects, changed)

    def _changes(self, image: np.ndarray, current: np.ndarray) -> np.ndarray:
        """The changed blobs ``(K, 4)`` (mask px) of ``current``, the grey of ``image``,
        against the reference; kept for the picture until the reference changes (the picture
        is held, so its identity is not reused)."""
        tested = self._tested
        if tested is not None and tested[0] is image:
            return tested[1]
        cfg = self.config
        blobs = changed_boxes(self._reference, current, cfg.diff_threshold, cfg.min_blob_px)
        self._tested = (image, blobs)
        return blobs

    def _grown(self, rect, w: int, h: int) -> tuple[int, int, int, int]:
        """``rect`` grown by the context margin and to the minimum side (about its centre,
        kept inside the frame), to whole pixels, clipped to the frame."""
        m, side = self.config.context_px, self.config.min_region_px
        x1, y1, x2, y2 = rect[0] - m, rect[1] - m, rect[2] + m, rect[3] + m
        x1, x2 = _at_least(x1, x2, side, w)
        y1, y2 = _at_least(y1, y2, side, h)
        return (
            max(0, int(np.floor(x1))),
            max(0, int(np.floor(y1))),
            min(w, int(np.ceil(x2))),
            min(h, int(np.ceil(y2))),
        )

    def _interior(self, rect, w: int, h: int) -> tuple[int, int, int, int]:
        """``rect`` shrunk by ``border_px`` on its inner edges (the frame's edges stay)."""
        b = self.config.border_px
        x1, y1, x2, y2 = rect
        return (
            x1 + b if x1 > 0 else 0,
            y1 + b if y1 > 0 else 0,
            x2 - b if x2 < w else w,
            y2 - b if y2 < h else h,
        )

    def _detect_regions(
        self, image: np.ndarray, current: np.ndarray, regions: list, changed: np.ndarray
    ) -> None:
        h, w = image.shape[:2]
        detections = self._detections
        for rect in regions:
            interior = self._interior(rect, w, h)
            new = self.detector.detect_region(image, rect)
            new = new[_inside(new.xyxy, interior)]
            here = changed[touch_matrix(changed, [rect]).any(axis=1)]
            detections = self._merge(detections, new, here)
            self._update_reference(current, interior)
            self.stats.region_runs += 1
            self.stats.region_area_px += (rect[2] - rect[0]) * (rect[3] - rect[1])
        self._detections = detections
        self._unsettled = True
        self.stats.regional += 1
        self.last_decision = GateDecision("regions", tuple(regions))

    def _merge(self, old: Detections, new: Detections, changed: np.ndarray) -> Detections:
        """Carried detections ``old`` and one region's uncut detections ``new``, given the
        region's changed boxes (full-frame px): see the module's docstring."""
        stale = touch_matrix(old.xyxy, changed).any(axis=1)
        fresh = touch_matrix(new.xyxy, changed).any(axis=1)
        dup = np.zeros((len(old), len(new)), bool)
        if len(old) and len(new):
            dup = (
                iou_matrix(old.xyxy, new.xyxy, eps=UNION_EPS) > self.config.duplicate_iou
            ) & _same_kind(old.class_id, new.class_id)
        drop_new = ~fresh & dup[~stale].any(axis=0)
        drop_old = stale | dup[:, fresh].any(axis=1)
        return Detections.concat([old[~drop_old], new[~drop_new]])

    def _update_reference(self, current: np.ndarray, interior) -> None:
        """Take the current picture as the reference on the mask pixels wholly inside
        ``interior`` (full-frame px)."""
        s = self.config.mask_scale
        x1, y1 = int(np.ceil(interior[0] * s)), int(np.ceil(interior[1] * s))
        x2, y2 = int(np.floor(interior[2] * s)), int(np.floor(interior[3] * s))
        self._reference[y1:y2, x1:x2] = current[y1:y2, x1:x2]
        self._tested = None
