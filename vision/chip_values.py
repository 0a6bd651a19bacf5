"""Chip tracks in money: fill ``Track.chip_value`` from :func:`vision.chips.read_stack`, reading
a stack only when its track is new or its box moved, not every frame.

A chip track seen on this frame is read when its id has no reading yet or its box moved more
than ``box_tolerance_px`` (any edge) from the box it was read at; otherwise, and while it is
hidden (coasting), it keeps the value last read. Readings of tracks that ended are forgotten.
One instance per camera (it remembers that camera's tracks)::

    values = ChipValues(load_chip_set("chips.yaml"))
    tracks = values.update(frame.image, tracker.update(detections, frame.index), frame.index)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from vision.chips import DEFAULT_READER, ChipSet, ReaderConfig, load_chip_set, read_stack
from vision.types import Track

RENDERED_CHIP_SET = Path(__file__).resolve().parents[1] / "datasets" / "chipsets" / "rendered.yaml"


@dataclass(frozen=True)
class ChipValuesConfig:
    """Which chips a table plays with and when a stack is read again."""

    # the deployment's chip set (vision.chips); default: the rendered casino's chips
    chip_set: str = str(RENDERED_CHIP_SET)
    # a box edge moving more than this reads the stack again: higher reads less often (cheaper,
    # slower to see chips added in place), lower reads on every wobble of the detector
    box_tolerance_px: float = 1.5
    reader: ReaderConfig = field(default_factory=lambda: DEFAULT_READER)


@dataclass
class ChipValueStats:
    """Stacks read, and chip tracks given a remembered value."""

    read: int = 0
    reused: int = 0


class ChipValues:
    """``update(image, tracks, frame_index) -> tracks`` with ``chip_value`` filled."""

    def __init__(self, chip_set: ChipSet, config: ChipValuesConfig | None = None) -> None:
        self.chip_set = chip_set
        self.config = config or ChipValuesConfig()
        self.stats = ChipValueStats()
        self.reset()

    @classmethod
    def from_config(cls, config: ChipValuesConfig) -> ChipValues:
        """Load the chip set the config names (ChipSetError, one line, when it is bad)."""
        return cls(load_chip_set(config.chip_set), config)

    def reset(self) -> None:
        """Forget every reading (a camera restored, a new stream)."""
        self._read: dict[int, tuple[np.ndarray, int | None]] = {}

    def update(self, image: np.ndarray, tracks: list[Track], frame_index: int) -> list[Track]:
        """``tracks`` with each chip track's ``chip_value`` (others unchanged)."""
        out, alive = [], set()
        for track in tracks:
            if track.kind != "chip":
                out.append(track)
                continue
            alive.add(track.track_id)
            value = self._value(image, track, frame_index)
            out.append(track if value == track.chip_value else replace(track, chip_value=value))
        for gone in set(self._read) - alive:
            del self._read[gone]
        return out

    def _value(self, image: np.ndarray, track: Track, frame_index: int) -> int | None:
        box = np.asarray(track.xyxy, np.float64)
        known = self._read.get(track.track_id)
        seen_now = track.last_seen_frame == frame_index and image.size > 0
        if known is not None and (
            not seen_now or np.abs(box - known[0]).max() <= self.config.box_tolerance_px
        ):
            self.stats.reused += 1
            return known[1]
        if not seen_now:
            return None
        value = read_stack(image, track.xyxy, self.chip_set, self.config.reader).value
        self.stats.read += 1
        self._read[track.track_id] = (box, value)
        return value
