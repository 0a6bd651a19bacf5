"""Evidence snapshots: the frame where each irregularity began, saved as a JPEG.

An alert is raised some frames after its irregularity began (hold times), so the frames of the
last few seconds are kept in a :class:`SnapshotRing` (JPEG-encoded, one every ``every_s``), and
:class:`Snapshots` writes, once per path, the kept frame nearest the alert's ``started_frame``
to the path its evidence names (``snapshot``, relative to the output folder), zones drawn and
the evidence tracks outlined. Used by ``paigow review`` and ``paigow monitor`` alike, so every
``evidence.snapshot`` an alert carries names a file that exists.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from pipeline.alerts import Alert
from pipeline.layout import Layout
from vision.draw import (
    DEFAULT_STYLE,
    SEVERITY_COLOURS,
    WHITE,
    draw_tracks,
    draw_zones,
    fit_width,
    text_band,
)
from vision.types import Frame, Track


@dataclass(frozen=True, slots=True)
class _Kept:
    """A processed frame kept for snapshots: JPEG bytes of the (reduced) picture, its scale
    from full resolution, and the frame's tracks."""

    index: int
    time_s: float
    jpeg: np.ndarray
    scale: float
    tracks: tuple[Track, ...]


class SnapshotRing:
    """Processed frames of the last ``keep_s`` video seconds, JPEG-encoded at most ``width_px``
    wide, one every ``every_s`` (encoding is the costly part), and the newest frame always: an
    alert is raised some frames after its irregularity began, and its snapshot shows the
    beginning, or the nearest kept frame before it."""

    def __init__(
        self, keep_s: float, width_px: int, jpeg_quality: int, every_s: float = 0.0
    ) -> None:
        self.keep_s, self.width_px, self.jpeg_quality = keep_s, width_px, jpeg_quality
        self.every_s = every_s
        self._kept: deque[_Kept] = deque()
        self._newest: tuple[Frame, tuple[Track, ...]] | None = None  # not encoded until needed
        self._newest_kept: _Kept | None = None  # the newest frame once encoded

    def push(self, frame: Frame, tracks: list[Track]) -> None:
        if self._newest is not None and self._due(self._newest[0]):
            self._kept.append(self._encoded_newest())
        self._newest, self._newest_kept = (frame, tuple(tracks)), None
        while self._kept and self._kept[0].time_s < frame.time_s - self.keep_s:
            self._kept.popleft()

    def _due(self, frame: Frame) -> bool:
        return not self._kept or frame.time_s >= self._kept[-1].time_s + self.every_s - 1e-9

    def _encoded_newest(self) -> _Kept:
        if self._newest_kept is None:
            assert self._newest is not None
            frame, tracks = self._newest
            small, scale = fit_width(frame.image, self.width_px)
            quality = [cv2.IMWRITE_JPEG_QUALITY, self.jpeg_quality]
            ok, jpeg = cv2.imencode(".jpg", small, quality)
            if not ok:
                raise ValueError(f"frame {frame.index}: JPEG encoding failed")
            self._newest_kept = _Kept(frame.index, frame.time_s, jpeg, scale, tracks)
        return self._newest_kept

    def at_or_before(self, index: int) -> _Kept | None:
        """The latest kept frame at or before ``index``; the newest one when ``index`` is no
        longer (or not yet) kept; None when nothing is kept."""
        if self._newest is not None and self._newest[0].index <= index:
            return self._encoded_newest()
        earlier = [k for k in self._kept if k.index <= index]
        if earlier:
            return earlier[-1]
        return None if self._newest is None else self._encoded_newest()


def severity_colour(alert: Alert) -> tuple[int, int, int]:
    return SEVERITY_COLOURS.get(alert.severity, WHITE)


def alert_line(alert: Alert) -> str:
    """The short line an annotated frame shows for an open alert."""
    box = f" box {alert.box}" if alert.box is not None else ""
    return f"{alert.severity.upper()} {alert.kind}{box} (rule {alert.rule}): {alert.action}"


def write_snapshot(
    out_dir: Path, rel_path: str, ring: SnapshotRing, layout: Layout, alert: Alert
) -> int | None:
    """Save the kept frame nearest the alert's start (``started_frame``) at ``out_dir /
    rel_path``, evidence tracks outlined; returns the frame index saved, None if none was (no
    frame kept, a path outside ``out_dir``, a write that failed)."""
    wanted = int(alert.evidence.get("started_frame", alert.frame))
    kept = ring.at_or_before(wanted)
    target = (out_dir / rel_path).resolve()
    if kept is None or not target.is_relative_to(out_dir.resolve()):
        return None
    image = cv2.imdecode(kept.jpeg, cv2.IMREAD_COLOR)
    ids = {int(i) for i in alert.evidence.get("track_ids", ()) if isinstance(i, int)}
    style = DEFAULT_STYLE.for_width(image.shape[1])
    view = draw_zones(image, layout.zones_px, kept.scale, style)
    view = draw_tracks(view, kept.tracks, kept.scale, ids, style, kept.index)
    lines = [
        (alert_line(alert), severity_colour(alert)),
        f"{alert.table} round {alert.round}  frame {kept.index}  {kept.time_s:.2f} s",
    ]
    view = np.vstack([text_band(view.shape[1], lines, len(lines), style=style), view])
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        written = cv2.imwrite(str(target), view, [cv2.IMWRITE_JPEG_QUALITY, ring.jpeg_quality])
    except (OSError, cv2.error):
        return None
    return kept.index if written else None


@dataclass(frozen=True, slots=True)
class SnapshotConfig:
    """What the snapshots keep; each line says what raising it trades."""

    width_px: int = 1920  # snapshots wider than this are reduced; lower: smaller files
    ring_s: float = 6.0  # video seconds of frames kept (JPEG) for start-frame snapshots;
    # higher: irregularities revealed later still get their first frame, more memory
    every_s: float = 0.2  # one frame kept per this many video seconds (each is a JPEG
    # encoding, 5 ms at 1080p); a snapshot shows the start, or the kept frame before it
    jpeg_quality: int = 85


class Snapshots:
    """Frames in (:meth:`push`), snapshots out (:meth:`snapshot`), under ``out_dir``."""

    def __init__(self, out_dir: Path, layout: Layout, config: SnapshotConfig) -> None:
        self.out_dir, self.layout = out_dir, layout
        self._ring = SnapshotRing(
            config.ring_s, config.width_px, config.jpeg_quality, config.every_s
        )
        self._saved: dict[str, int] = {}  # snapshot path -> frame saved there

    def push(self, frame: Frame, tracks: list[Track]) -> None:
        """A processed frame, kept if due."""
        self._ring.push(frame, tracks)

    def snapshot(self, alert: Alert) -> Alert:
        """Write the alert's snapshot (once per path). Returns the alert, with
        ``snapshot_frame`` added to its evidence when the frame saved is not its start, or
        without ``snapshot`` when no frame could be saved (none seen yet, a full disk)."""
        path = alert.evidence.get("snapshot")
        if not isinstance(path, str):
            return alert
        if path not in self._saved:
            saved = write_snapshot(self.out_dir, path, self._ring, self.layout, alert)
            if saved is None:
                evidence = {k: v for k, v in alert.evidence.items() if k != "snapshot"}
                return replace(alert, evidence=evidence)
            self._saved[path] = saved
        saved = self._saved[path]
        if saved == alert.evidence.get("started_frame", alert.frame):
            return alert
        return replace(alert, evidence={**alert.evidence, "snapshot_frame": saved})
