"""The table as the detector learnt it: each frame turned and resampled from the layout.

The detector and the face reader learnt tables seen from the players' side (the dealer at the
top of the picture) at 1920x1080, a tile's long side about ``learnt_tile_px`` long. A casino's
camera may hang lower or higher, film at 720p, or look over the dealer's shoulder (everything
upside down). The layout says all of that before the first frame: where the dealer's side is
(the woodpile) against the boxes, and how long a tile is in pixels (from the layout's table
millimetres, or given). :class:`TableView` is the affine map, a turn by a multiple of 90
degrees and a scale, that takes a frame to a 1920x1080 *view* of the table region in which
tiles have the learnt size and the dealer is at the top. The models run on the view; their
boxes come back to the frame's pixels, where the tracker, the layout zones and everything after
them stay. A camera that already matches (upright, 1080p, scale within ``keep_within``) is used
as it is, at no cost.

Turns are multiples of 90 degrees so that an axis-aligned box stays one: the detector's boxes
are axis-aligned, and a box turned by 30 degrees would come back loose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.types import Detections

TILE_LENGTH_MM = 63.5  # a casino tile: 2.5 x 1 x 0.375 in
# the training cameras: 1.0-1.12 px per mm at 1080p, so a tile's long side is 63.5-71 px
LEARNT_TILE_PX = 67.0


# cv2.rotate's code for k quarter turns clockwise on screen (image axes, y down): _turn(k)
_ROTATIONS = {
    1: cv2.ROTATE_90_CLOCKWISE,
    2: cv2.ROTATE_180,
    3: cv2.ROTATE_90_COUNTERCLOCKWISE,
}


class ViewError(ValueError):
    """A layout whose tile size is outside the range the models can be shown at."""


@dataclass(frozen=True)
class ViewConfig:
    """How frames are fitted to what the models learnt."""

    learnt_tile_px: float = LEARNT_TILE_PX
    size_wh: tuple[int, int] = (1920, 1080)  # the view: the frame size the models learnt
    # a frame whose tiles are within this fraction of the learnt size, upright and of the
    # view's size is used as it is (no resampling, no cost); lower: more cameras resampled
    keep_within: float = 0.15
    # supported tile sizes (long side, frame px): outside, the layout is refused. Below 35 px
    # the pips of a face are under 3 px apart and no resampling brings them back; above 120 px
    # a 1080p frame no longer holds the table (8 boxes and the dealer's side): the largest
    # grows with a higher picture (240 px at 2160)
    min_tile_px: float = 35.0
    max_tile_px: float = 120.0
    margin: float = 0.03  # the table region grown by this fraction of its size on each side
    pad_bgr: tuple[int, int, int] = (24, 24, 28)  # outside the frame: a dark floor


def _turn(k: int) -> np.ndarray:
    """``(2, 2)`` rotation by ``k`` quarter turns (image axes, y down: clockwise on screen)."""
    c, s = round(math.cos(k * math.pi / 2)), round(math.sin(k * math.pi / 2))
    return np.array([[c, -s], [s, c]], np.float64)


def check_tile_px(
    tile_px: float, config: ViewConfig | None = None, frame_wh: tuple[int, int] | None = None
) -> None:
    """Raise :class:`ViewError` (one line) for a tile size the models cannot be shown at.
    The largest is ``max_tile_px`` in a picture as high as the view, proportionally more in a
    higher one (``frame_wh``, the picture's size when known: a 4K camera shows the table as a
    1080p one at twice the pixels); the smallest holds at any size (pips too close to part).

    >>> check_tile_px(67.0)
    >>> check_tile_px(200.0, frame_wh=(3840, 2160))
    >>> check_tile_px(20.0)
    Traceback (most recent call last):
    ...
    vision.view.ViewError: a tile is 20.0 px long in this camera's picture; supported: 35-120 px
    """
    cfg = config or ViewConfig()
    frame_h = frame_wh[1] if frame_wh else 0
    most = cfg.max_tile_px * max(1.0, frame_h / cfg.size_wh[1])
    if not cfg.min_tile_px <= tile_px <= most:
        high = f" in a {frame_h}-px-high picture" if most > cfg.max_tile_px else ""
        raise ViewError(
            f"a tile is {tile_px:.1f} px long in this camera's picture; supported: "
            f"{cfg.min_tile_px:.0f}-{most:.0f} px{high}"
        )


@dataclass(frozen=True)
class TableView:
    """``affine (2, 3)`` maps frame px to view px; None: the frame is the view (identity)."""

    affine: np.ndarray | None
    frame_wh: tuple[int, int]
    config: ViewConfig
    quarter_turns: int = 0
    scale: float = 1.0

    @classmethod
    def fit(
        cls,
        zones_px: dict[str, np.ndarray],
        tile_px: float | None,
        frame_wh: tuple[int, int],
        config: ViewConfig | None = None,
    ) -> TableView:
        """The view of a layout (zones in frame px; the woodpile is the dealer's side) for
        frames of ``frame_wh``. ``tile_px``: a tile's long side in frame px, None when the
        layout cannot tell (the scale is then left as it is)."""
        cfg = config or ViewConfig()
        if tile_px is not None:
            check_tile_px(tile_px, cfg, frame_wh)
        boxes = [np.mean(p, axis=0) for name, p in zones_px.items() if name.startswith("box_")]
        towards_players = np.mean(boxes, axis=0) - np.mean(zones_px["woodpile"], axis=0)
        # the quarter turn that brings the players' side to the bottom of the picture
        k = max(range(4), key=lambda q: (_turn(q) @ towards_players)[1])
        scale = 1.0 if tile_px is None else cfg.learnt_tile_px / tile_px
        if k == 0 and abs(scale - 1.0) <= cfg.keep_within and tuple(frame_wh) == tuple(cfg.size_wh):
            return cls(None, tuple(frame_wh), cfg)
        linear = scale * _turn(k)
        points = np.concatenate([np.asarray(p, np.float64) for p in zones_px.values()])
        turned = points @ linear.T
        lo, hi = turned.min(axis=0), turned.max(axis=0)
        lo, hi = lo - cfg.margin * (hi - lo), hi + cfg.margin * (hi - lo)
        shift = np.array(cfg.size_wh, np.float64) / 2 - (lo + hi) / 2
        return cls(np.column_stack([linear, shift]), tuple(frame_wh), cfg, k, scale)

    @property
    def identity(self) -> bool:
        return self.affine is None

    def warp(self, image: np.ndarray) -> np.ndarray:
        """The view ``(H, W, 3)`` of a frame (the frame itself for an identity view).

        A quarter turn and a scale are separable: the part of the frame the view shows is cut,
        turned (:func:`cv2.rotate`), resized (bilinear, as the affine warp did) and bordered
        with the floor's colour: 2 ms against 5.4 ms for the same :func:`cv2.warpAffine` of a
        1080p frame. The picture lands within 1.5 view px of where the affine puts it (the part
        is cut on whole frame pixels; a turned picture's pixels are counted from the other
        edge), inside the boxes' own jitter."""
        if self.affine is None:
            return image
        w, h = self.config.size_wh
        pad = tuple(int(c) for c in self.config.pad_bgr)
        # the view's corners in the frame; the part of the frame inside them (whole pixels)
        lo, hi = np.sort(self.to_frame_points(np.array([[0.0, 0.0], [w, h]])), axis=0)
        frame_h, frame_w = image.shape[:2]
        x0, y0 = max(0, int(np.floor(lo[0]))), max(0, int(np.floor(lo[1])))
        x1, y1 = min(frame_w, int(np.ceil(hi[0]))), min(frame_h, int(np.ceil(hi[1])))
        # where that part lands in the view
        ends = np.array([[x0, y0], [x1, y1]], np.float64) @ self.affine[:, :2].T
        (u0, v0), (u1, v1) = np.rint(np.sort(ends + self.affine[:, 2], axis=0)).astype(int)
        cu0, cv0, cu1, cv1 = max(u0, 0), max(v0, 0), min(u1, w), min(v1, h)
        if x1 <= x0 or y1 <= y0 or cu1 <= cu0 or cv1 <= cv0:
            return np.full((h, w, 3), pad, np.uint8)
        part = image[y0:y1, x0:x1]
        if self.quarter_turns % 4:
            part = cv2.rotate(part, _ROTATIONS[self.quarter_turns % 4])
        placed = cv2.resize(part, (u1 - u0, v1 - v0), interpolation=cv2.INTER_LINEAR)
        placed = placed[cv0 - v0 : cv1 - v0, cu0 - u0 : cu1 - u0]
        return cv2.copyMakeBorder(
            placed, cv0, h - cv1, cu0, w - cu1, cv2.BORDER_CONSTANT, value=pad
        )

    def to_view_box(self, xyxy) -> tuple[list[float], float] | None:
        """A frame box in view px, clipped to the view, with the fraction of it kept (training
        labels: the inverse of :meth:`to_frame`); None when nothing of it is in the view."""
        x1, y1, x2, y2 = xyxy
        if self.affine is None:
            return [float(x1), float(y1), float(x2), float(y2)], 1.0
        corners = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], np.float64)
        corners = corners @ self.affine[:, :2].T + self.affine[:, 2]
        lo, hi = corners.min(axis=0), corners.max(axis=0)
        area = max(float(np.prod(hi - lo)), 1e-6)
        size = np.array(self.config.size_wh, np.float64)
        lo, hi = np.clip(lo, 0, size), np.clip(hi, 0, size)
        kept = float(np.prod(np.clip(hi - lo, 0, None))) / area
        return ([*map(float, lo), *map(float, hi)], kept) if kept > 0 else None

    def to_view_points(self, xy: np.ndarray) -> np.ndarray:
        """Frame points ``(N, 2)`` to view points ``(N, 2)``."""
        pts = np.asarray(xy, np.float64).reshape(-1, 2)
        return pts if self.affine is None else pts @ self.affine[:, :2].T + self.affine[:, 2]

    def to_frame_points(self, xy: np.ndarray) -> np.ndarray:
        """View points ``(N, 2)`` to frame points ``(N, 2)``."""
        pts = np.asarray(xy, np.float64).reshape(-1, 2)
        if self.affine is None:
            return pts
        linear, shift = self.affine[:, :2], self.affine[:, 2]
        return (pts - shift) @ np.linalg.inv(linear).T

    def to_frame(self, det: Detections) -> Detections:
        """Detections in view px to frame px (boxes stay axis-aligned: quarter turns only),
        clipped to the frame; boxes wholly outside it are dropped."""
        if self.affine is None or not len(det):
            return det
        x1, y1, x2, y2 = det.xyxy.astype(np.float64).T
        corners = np.stack([np.column_stack(c) for c in ((x1, y1), (x2, y1), (x2, y2), (x1, y2))])
        mapped = self.to_frame_points(corners.reshape(-1, 2)).reshape(4, -1, 2)
        lo, hi = mapped.min(axis=0), mapped.max(axis=0)
        w, h = self.frame_wh
        lo = np.clip(lo, 0, [w, h])
        hi = np.clip(hi, 0, [w, h])
        keep = (hi[:, 0] > lo[:, 0]) & (hi[:, 1] > lo[:, 1])
        obb = None
        if det.obb is not None:
            obb = self.to_frame_points(det.obb.reshape(-1, 2)).reshape(-1, 4, 2)
            obb = obb.astype(det.obb.dtype)[keep]
        return Detections(
            np.column_stack([lo, hi]).astype(np.float32)[keep],
            det.class_id[keep],
            det.confidence[keep],
            det.face[keep],
            det.face_confidence[keep],
            obb,
        )
