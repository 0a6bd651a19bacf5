"""Core perception types: a camera frame and a frame's detections (struct of arrays)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

DETECTOR_CLASSES = ("tile_down", "tile_up", "chip", "die", "hand")
TILE_DOWN, TILE_UP, CHIP, DIE, HAND = range(len(DETECTOR_CLASSES))


@dataclass(frozen=True)
class Frame:
    """One camera frame: ``image (H, W, 3) uint8`` BGR, capture time in seconds."""

    camera_id: str
    index: int
    time_s: float
    image: np.ndarray


def _empty(shape: tuple[int, ...], dtype) -> np.ndarray:
    return np.zeros(shape, dtype=dtype)


@dataclass(frozen=True)
class Detections:
    """Parallel arrays for N detections, in image pixels of the frame they came from.

    ``xyxy (N, 4) float32``, ``class_id (N,) int32`` (index into ``DETECTOR_CLASSES``),
    ``confidence (N,) float32``, ``face (N,) int32`` (index into ``vision.faces.FACE_CLASSES``,
    -1 when unread or face down), ``face_confidence (N,) float32``, optional ``obb (N, 4, 2)``.
    """

    xyxy: np.ndarray = field(default_factory=lambda: _empty((0, 4), np.float32))
    class_id: np.ndarray = field(default_factory=lambda: _empty((0,), np.int32))
    confidence: np.ndarray = field(default_factory=lambda: _empty((0,), np.float32))
    face: np.ndarray = field(default_factory=lambda: _empty((0,), np.int32))
    face_confidence: np.ndarray = field(default_factory=lambda: _empty((0,), np.float32))
    obb: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.xyxy)
        for name in ("class_id", "confidence", "face", "face_confidence"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"Detections.{name} has {len(getattr(self, name))} rows, not {n}")

    def __len__(self) -> int:
        return len(self.xyxy)

    @classmethod
    def from_arrays(cls, xyxy, class_id, confidence) -> Detections:
        n = len(xyxy)
        return cls(
            np.asarray(xyxy, np.float32).reshape(n, 4),
            np.asarray(class_id, np.int32),
            np.asarray(confidence, np.float32),
            np.full(n, -1, np.int32),
            np.zeros(n, np.float32),
        )

    @staticmethod
    def concat(parts: list[Detections]) -> Detections:
        """The rows of ``parts`` in order, as one ``Detections`` (``obb`` kept only where every
        part with rows has one)."""
        parts = [p for p in parts if len(p)]
        if not parts:
            return Detections()
        if len(parts) == 1:
            return parts[0]
        obb = None if any(p.obb is None for p in parts) else np.concatenate([p.obb for p in parts])
        return Detections(
            np.concatenate([p.xyxy for p in parts]),
            np.concatenate([p.class_id for p in parts]),
            np.concatenate([p.confidence for p in parts]),
            np.concatenate([p.face for p in parts]),
            np.concatenate([p.face_confidence for p in parts]),
            obb,
        )

    def __getitem__(self, mask) -> Detections:
        """Rows selected by a boolean mask or an index array, as a new ``Detections``."""
        return Detections(
            self.xyxy[mask],
            self.class_id[mask],
            self.confidence[mask],
            self.face[mask],
            self.face_confidence[mask],
            None if self.obb is None else self.obb[mask],
        )

    def with_faces(
        self, face: np.ndarray, face_confidence: np.ndarray, class_id: np.ndarray | None = None
    ) -> Detections:
        """The same boxes with faces read (and ``class_id`` where the reading changed it)."""
        return Detections(
            self.xyxy,
            self.class_id if class_id is None else np.asarray(class_id, np.int32),
            self.confidence,
            np.asarray(face, np.int32),
            np.asarray(face_confidence, np.float32),
            self.obb,
        )


@dataclass(frozen=True)
class Track:
    """A frozen per-frame snapshot of one tracked object, in full-frame pixels.

    ``face`` is the tile face last read while face up (a face-down tile keeps it; a tile turned
    up again shows None until its face is read again), or None when never seen; ``die_value``
    likewise for dice, whose ``face`` is ``"die_tipped"`` while the reader sees the die not
    lying flat. ``zone`` is the layout zone of the box centre (``box_1``..``box_8``,
    ``woodpile``, ``dice_area``, ``work_area``, ...), filled by the table model; ``None``
    before that. ``age_frames`` counts frames since the track began; ``last_seen_frame`` is the
    last frame a detection was matched (older: coasting, hidden).
    """

    track_id: int
    xyxy: tuple[float, float, float, float]
    class_id: int
    face_up: bool | None
    face: str | None
    die_value: int | None
    zone: str | None
    age_frames: int
    last_seen_frame: int
    confidence: float = 1.0
    die_confidence: float = 1.0
    """How sure the face reader is of ``die_value`` (or of a die read ``die_tipped``): its mean
    probability over the readings of that value in the die's window
    (:func:`vision.tracking.identity.die_confidence`); 1.0 where there is no reading, or where it
    comes from the truth (the oracle)."""
    chip_value: int | None = None
    """A chip stack's value in money units as last read (:mod:`vision.chips`); None when
    never read or unreadable (doubt: the round does not judge amounts then)."""

    @property
    def kind(self) -> str:
        """``tile``, ``chip``, ``die`` or ``hand``."""
        return "tile" if self.class_id in (TILE_DOWN, TILE_UP) else DETECTOR_CLASSES[self.class_id]

    @property
    def centre_xy(self) -> tuple[float, float]:
        x1, y1, x2, y2 = self.xyxy
        return (x1 + x2) / 2, (y1 + y2) / 2
