"""Read a face once, not every frame: reuse the reading of a box that neither moved nor changed.

:class:`FaceCache` wraps a face reader (``reader(image, detections) -> detections`` with
``face``/``face_confidence`` filled, like :class:`vision.face_reader.FaceReader`) and has the same
call. A tile (face up or down) or die whose box is where a box of the same class was read
recently (every edge within ``box_tolerance_px``) keeps that reading if the pixels there look
the same (a small grey thumbnail of the cached box, taken again on this frame, within
``max_thumbnail_diff`` grey levels of the one taken when it was read), with the class the
reading gave it (a face-down box the reader found face up stays face up); the rest are read.
A face-down box is read only once it rests (a face-down box within ``box_tolerance_px`` of it
in the previous call): tiles sliding in the wash or carried to the woodpile are not checked
frame after frame (on the demo clip that was 14 times the readings of face-up tiles and dice,
and a quarter of the live pipeline's time), and a face-up tile taken for a face-down one is
checked one frame after it comes to rest.
With the motion-gated detector, boxes carried forward are the very same boxes over unchanged
pixels, so their readings are what the reader would give again.

One cache per camera (it remembers that camera's boxes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from vision.types import DIE, TILE_DOWN, TILE_UP, Detections

Reader = Callable[[np.ndarray, Detections], Detections]


@dataclass(frozen=True)
class FaceCacheConfig:
    """When a previous reading still holds; each threshold with its trade-off."""

    # Every box edge within this of a cached box, full-frame px: higher reuses more readings of
    # boxes that jittered, lower reads again on every wobble of the detector. On the demo clip's
    # full-frame detections: 1.5 px reused 95% of readings and 12 of 3856 came out confidently
    # different from a fresh reading, 0.5 px 92% and 2 (boxes the gate carries do not move).
    box_tolerance_px: float = 0.5
    # Mean absolute grey difference of the box's thumbnail from the cached one: higher reuses
    # through more camera noise, lower notices a tile swapped in place sooner.
    max_thumbnail_diff: float = 3.0
    thumbnail_px: int = 8  # side of the thumbnail compared
    # A cached reading not matched for this many calls is forgotten (a tile gone for good).
    max_age_calls: int = 25


@dataclass
class FaceCacheStats:
    """Tiles and dice read by the reader, and those given a remembered reading."""

    read: int = 0
    reused: int = 0

    @property
    def reused_fraction(self) -> float:
        return self.reused / max(self.read + self.reused, 1)


def thumbnail(image: np.ndarray, xyxy, size: int) -> np.ndarray:
    """Grey ``(size, size) float32`` thumbnail of the box ``xyxy`` in ``image (H, W, 3)``.

    >>> thumbnail(np.full((20, 20, 3), 90, np.uint8), (2, 3, 12, 17), 4).mean()
    np.float32(90.0)
    """
    h, w = image.shape[:2]
    x1, y1 = max(int(np.floor(xyxy[0])), 0), max(int(np.floor(xyxy[1])), 0)
    x2, y2 = min(int(np.ceil(xyxy[2])), w), min(int(np.ceil(xyxy[3])), h)
    if x2 <= x1 or y2 <= y1:
        return np.zeros((size, size), np.float32)
    grey = cv2.cvtColor(image[y1:y2, x1:x2], cv2.COLOR_BGR2GRAY)
    return cv2.resize(grey, (size, size), interpolation=cv2.INTER_AREA).astype(np.float32)


class FaceCache:
    """``(image, detections) -> detections`` with faces filled, reading only what changed."""

    def __init__(self, reader: Reader, config: FaceCacheConfig | None = None) -> None:
        self.reader = reader
        self.config = config or FaceCacheConfig()
        self.stats = FaceCacheStats()
        self.reset()

    def reset(self) -> None:
        """Forget every reading (a camera restored, a new stream)."""
        self._xyxy = np.zeros((0, 4), np.float32)
        self._class = np.zeros(0, np.int32)
        self._read_class = np.zeros(0, np.int32)  # the class the reading gave the box
        self._thumbs = np.zeros((0, self.config.thumbnail_px, self.config.thumbnail_px), np.float32)
        self._face = np.zeros(0, np.int32)
        self._conf = np.zeros(0, np.float32)
        self._age = np.zeros(0, np.int64)
        self._down_before = np.zeros((0, 4), np.float32)  # face-down boxes of the last call

    def __call__(self, image: np.ndarray, detections: Detections) -> Detections:
        down = detections.class_id == TILE_DOWN
        resting = down & self._rested(detections.xyxy)
        self._down_before = detections.xyxy[down]
        want = np.flatnonzero(np.isin(detections.class_id, (TILE_UP, DIE)) | resting)
        face, conf = detections.face.copy(), detections.face_confidence.copy()
        read_class = detections.class_id.copy()
        self._age += 1
        if not len(want):
            self._forget()
            return detections.with_faces(face, conf)
        hit = self._lookup(image, detections.xyxy[want], detections.class_id[want])
        found = hit >= 0
        face[want[found]], conf[want[found]] = self._face[hit[found]], self._conf[hit[found]]
        read_class[want[found]] = self._read_class[hit[found]]
        self._age[hit[found]] = 0
        todo = want[~found]
        if len(todo):
            read = self.reader(image, detections[todo])
            face[todo], conf[todo] = read.face, read.face_confidence
            read_class[todo] = read.class_id
        self.stats.reused += int(found.sum())
        self.stats.read += len(todo)
        size = self.config.thumbnail_px
        thumbs = [thumbnail(image, detections.xyxy[i], size) for i in todo]
        self._remember(detections, todo, thumbs, face, conf, read_class)
        return detections.with_faces(face, conf, read_class)

    def _rested(self, xyxy: np.ndarray) -> np.ndarray:
        """Per box: a face-down box of the last call lies within ``box_tolerance_px``."""
        if not len(self._down_before) or not len(xyxy):
            return np.zeros(len(xyxy), bool)
        shift = np.abs(xyxy[:, None, :] - self._down_before[None, :, :]).max(axis=2)
        return (shift <= self.config.box_tolerance_px).any(axis=1)

    def _lookup(self, image: np.ndarray, xyxy: np.ndarray, class_id: np.ndarray) -> np.ndarray:
        """Index of a matching cached reading per box, -1 where none (closest box first; its
        pixels compared where the cached box lies, so detector jitter does not count)."""
        hit = np.full(len(xyxy), -1)
        if not len(self._xyxy):
            return hit
        shift = np.abs(xyxy[:, None, :] - self._xyxy[None, :, :]).max(axis=2)
        ok = (shift <= self.config.box_tolerance_px) & (class_id[:, None] == self._class[None, :])
        best = np.where(ok, shift, np.inf).argmin(axis=1)
        for row in np.flatnonzero(ok[np.arange(len(xyxy)), best]):
            j = best[row]
            now = thumbnail(image, self._xyxy[j], self.config.thumbnail_px)
            if np.abs(now - self._thumbs[j]).mean() <= self.config.max_thumbnail_diff:
                hit[row] = j
        return hit

    def _remember(self, det: Detections, rows, thumbs: list, face, conf, read_class) -> None:
        """Add fresh readings, replacing cached ones at the same place (their pixels changed),
        and forget readings unmatched for too long."""
        if len(rows):
            shift = np.abs(det.xyxy[rows][:, None, :] - self._xyxy[None, :, :]).max(axis=2)
            same = (shift <= self.config.box_tolerance_px) & (
                det.class_id[rows][:, None] == self._class[None, :]
            )
            self._age[same.any(axis=0)] = self.config.max_age_calls
            self._xyxy = np.concatenate([self._xyxy, det.xyxy[rows]])
            self._class = np.concatenate([self._class, det.class_id[rows]])
            self._read_class = np.concatenate([self._read_class, read_class[rows]])
            self._thumbs = np.concatenate([self._thumbs, np.stack(thumbs)])
            self._face = np.concatenate([self._face, face[rows]])
            self._conf = np.concatenate([self._conf, conf[rows]])
            self._age = np.concatenate([self._age, np.zeros(len(rows), np.int64)])
        self._forget()

    def _forget(self) -> None:
        keep = self._age < self.config.max_age_calls
        self._xyxy, self._class, self._read_class, self._thumbs = (
            self._xyxy[keep],
            self._class[keep],
            self._read_class[keep],
            self._thumbs[keep],
        )
        self._face, self._conf, self._age = self._face[keep], self._conf[keep], self._age[keep]
