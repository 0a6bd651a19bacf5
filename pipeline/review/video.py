"""The video a review reads: opened with a worker thread decoding ahead, and what it holds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.live.sources import ReadAhead, Source, open_source


@dataclass(frozen=True)
class VideoInfo:
    """What the file says of the video it holds; ``duration_s`` None when it says not."""

    path: Path
    fps: float
    size_wh: tuple[int, int]
    duration_s: float | None

    @property
    def n_frames(self) -> int:
        """Frames the stated duration holds (0 when unknown)."""
        return round((self.duration_s or 0.0) * self.fps)


def open_video(path: Path, camera: str, keep_every: int = 1, **settings) -> Source:
    """The frames and gaps of a video file (or an image folder), read ahead by a worker
    thread; only frames whose index is a multiple of ``keep_every``. ``settings``: more
    :class:`pipeline.live.sources.SourceConfig` fields. ValueError (one line) for a missing file, a
    file that is not a video, a video without a picture size."""
    if not path.exists():
        raise ValueError(f"{path}: no such file")
    source = open_source(str(path), camera_id=camera, keep_every=keep_every, **settings)
    if source.size_wh is None:
        source.close()
        raise ValueError(f"{path}: the video has no picture size")
    return ReadAhead(source)


def probe_video(path: Path) -> VideoInfo:
    """Check that ``path`` is a readable video and say what it holds (see :func:`open_video`)."""
    with open_video(path, "probe") as source:
        return video_info(path, source)


def video_info(path: Path, source: Source) -> VideoInfo:
    """What ``source``, opened from ``path`` by :func:`open_video`, holds."""
    assert source.size_wh is not None  # open_video refuses a source without one
    return VideoInfo(path, source.fps, source.size_wh, getattr(source, "duration_s", None))


def stated_duration_s(path: Path) -> float | None:
    """The duration ``path`` states, read from its header without decoding; None when it
    states none or cannot be opened (the review that opens it says why)."""
    try:
        source = open_source(str(path), camera_id="probe")
    except ValueError:  # SourceError: missing, not a video
        return None
    try:
        return getattr(source, "duration_s", None)
    finally:
        source.close()
