"""Whether a place in a box changed: a coarse grey sketch of each box, kept frame by frame.

The detector can change its mind where nothing moved: on a felt it never learnt, a box's printed
chip circle or number is read as a chip stack in some frames and not in others, and a count of
stacks that changes is taken for chips put down or taken away after "no more bets"
(``wager_after_no_more_bets``). Chips do not move without their pixels changing. So the
pipeline keeps, for every frame, each box's picture averaged over cells of ``cell_px`` pixels
(:func:`sketch_boxes`: about 2.5 KB a frame for eight boxes at 1080p), and the round asks
:meth:`PlaceMemory.changed` whether the places of the stacks involved (where they lay when the
count was last believed, and where they lie now) look different now from then. Only a "no"
stops a change: where either picture is unknown the round judges as it would without.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import cv2
import numpy as np

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class PlaceConfig:
    """How finely boxes are sketched, how long sketches are kept, what counts as changed."""

    cell_px: int = 8  # frame px averaged into one cell of a box's sketch
    # A place changed when the mean absolute grey difference of its cells, then against now, is
    # this or more (grey levels, cells of ``cell_px``): twice the 99th percentile of a place that
    # stayed, on rendered video of the training families (scripts/evaluate_places.py, 10 rounds:
    # 16,235 samples, 99th percentile 2.0; stacks put down or taken away 19.1 or more;
    # docs/measurements.md, session 33). As low as the noise allows: a place that stayed but
    # reads as changed only has its change judged as before, a place that changed but reads as
    # unchanged stops a real wager's alert (a chip in a dim room changes its place less: 8.0,
    # tried first, held a held-out late wager back by 6 s, at 7.2). Lower: more of the
    # detector's flicker judged as before; higher: chips moved in dim rooms go unjudged.
    min_change: float = 4.0
    keep_frames: int = 9000  # sketches kept (6 minutes at 25 fps); older: unknown

    def __post_init__(self) -> None:
        if self.cell_px < 1 or self.keep_frames < 1 or self.min_change <= 0:
            raise ValueError("cell_px and keep_frames must be 1 or more, min_change above 0")


def box_extents(boxes: dict[int, np.ndarray], frame_wh: tuple[int, int]) -> dict[int, tuple]:
    """Each box polygon's bounding box in whole pixels, clipped to the frame."""
    w, h = frame_wh
    out = {}
    for box, polygon in boxes.items():
        pts = np.asarray(polygon, np.float64)
        x0, y0 = np.clip(np.floor(pts.min(axis=0)), 0, [w, h]).astype(int)
        x1, y1 = np.clip(np.ceil(pts.max(axis=0)), 0, [w, h]).astype(int)
        out[box] = (int(x0), int(y0), int(x1), int(y1))
    return out


def sketch_boxes(image: np.ndarray, extents: dict[int, tuple], cell_px: int) -> dict:
    """Each box's grey picture averaged over ``cell_px`` cells: ``box -> (x0, y0, cells)``, the
    cells (uint8, rows by columns) from frame px (x0, y0) on; a box smaller than a cell, or
    outside the frame, has none."""
    out = {}
    for box, (x0, y0, x1, y1) in extents.items():
        cols, rows = (x1 - x0) // cell_px, (y1 - y0) // cell_px
        if cols < 1 or rows < 1:
            continue
        patch = image[y0 : y0 + rows * cell_px, x0 : x0 + cols * cell_px]
        if patch.ndim == 3:
            patch = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
        out[box] = (x0, y0, cv2.resize(patch, (cols, rows), interpolation=cv2.INTER_AREA))
    return out


def place_difference(
    then: np.ndarray, now: np.ndarray, origin: tuple, spot: Box, cell_px: int, covered=()
):
    """Mean absolute grey difference of the cells inside ``spot`` (frame px; the cell under its
    centre where none lies wholly inside), ``origin`` the sketch's top-left corner in frame px,
    leaving out cells that a box of ``covered`` (frame px) overlaps. None where the spot lies
    outside the sketch, or every cell of it is covered."""
    ox, oy = origin[0], origin[1]
    rows, cols = then.shape
    c0, c1 = math.ceil((spot[0] - ox) / cell_px), math.floor((spot[2] - ox) / cell_px)
    r0, r1 = math.ceil((spot[1] - oy) / cell_px), math.floor((spot[3] - oy) / cell_px)
    if c1 <= c0 or r1 <= r0:  # smaller than a cell: the one under its centre
        c0 = int(((spot[0] + spot[2]) / 2 - ox) // cell_px)
        r0 = int(((spot[1] + spot[3]) / 2 - oy) // cell_px)
        c1, r1 = c0 + 1, r0 + 1
    c0, r0, c1, r1 = max(c0, 0), max(r0, 0), min(c1, cols), min(r1, rows)
    if c1 <= c0 or r1 <= r0:
        return None
    diff = np.abs(then[r0:r1, c0:c1].astype(np.int16) - now[r0:r1, c0:c1].astype(np.int16))
    seen = np.ones(diff.shape, bool)
    for x0, y0, x1, y1 in covered:  # the cells it overlaps, in the spot's cell grid
        a0, a1 = max(int((x0 - ox) // cell_px), c0), min(math.ceil((x1 - ox) / cell_px), c1)
        b0, b1 = max(int((y0 - oy) // cell_px), r0), min(math.ceil((y1 - oy) / cell_px), r1)
        if a1 > a0 and b1 > b0:
            seen[b0 - r0 : b1 - r0, a0 - c0 : a1 - c0] = False
    return float(diff[seen].mean()) if seen.any() else None


class PlaceMemory:
    """The boxes' sketches of the last ``keep_frames`` frames, by frame index, for one camera."""

    def __init__(self, boxes: dict[int, np.ndarray], config: PlaceConfig | None = None) -> None:
        self.config = config or PlaceConfig()
        self.boxes = boxes
        self._extents: dict[int, tuple] = {}
        self._frame_wh: tuple[int, int] | None = None
        self._sketches: OrderedDict[int, dict[int, np.ndarray]] = OrderedDict()
        self._now: int | None = None

    def sketch(self, image: np.ndarray) -> dict[int, np.ndarray]:
        """The boxes' sketches of a frame's picture."""
        h, w = image.shape[:2]
        if self._frame_wh != (w, h):
            self._frame_wh, self._extents = (w, h), box_extents(self.boxes, (w, h))
        return sketch_boxes(image, self._extents, self.config.cell_px)

    def see(self, index: int, sketches: dict[int, np.ndarray] | None) -> None:
        """Remember frame ``index``'s sketches (None: a frame with none, its places unknown)."""
        self._now = index
        if sketches is None:
            return
        self._sketches[index] = sketches
        while len(self._sketches) > self.config.keep_frames:
            self._sketches.popitem(last=False)

    def changed(self, box: int, spots: list[Box], since: int, covered=()) -> bool | None:
        """Whether any of ``spots`` (frame px) in ``box`` looks different in the latest frame
        seen from frame ``since``: True, False, or None where a sketch is unknown. Where a box
        of ``covered`` (frame px: a tile lying there now) overlaps a spot, that part of it is
        not seen and is left out; a spot covered whole is unknown."""
        then = self._sketches.get(since, {}).get(box)
        now = self._sketches.get(self._now, {}).get(box) if self._now is not None else None
        if then is None or now is None or not spots or then[:2] != now[:2]:
            return None
        cell = self.config.cell_px
        diffs = [place_difference(then[2], now[2], then[:2], s, cell, covered) for s in spots]
        if any(d is None for d in diffs):
            return None
        return max(diffs) >= self.config.min_change  # type: ignore[type-var]
