"""Frame sources: a video file, a live stream, a camera or an image folder -> frames and gaps.

:func:`open_source` reads SOURCE and returns an iterable of :class:`~vision.types.Frame` and
:class:`Gap` items, in capture order. A gap is a stretch with no usable picture (an unreadable
part of a file, a stream that stopped): the table is *blind* there, never empty (DESIGN.md,
Sources), and the consumer says so (``TablePipeline.no_frame``)::

    with open_source("rtsp://cam7/main", open_timeout_s=5) as source:
        for item in source:
            match item:
                case Frame():
                    pipeline.process(item)
                case Gap(index=index, start_s=start_s, reason=reason):
                    pipeline.no_frame(index, start_s, reason)

SOURCE is one of:

- a **video file** (PyAV). Decode errors in the middle become a gap, and reading goes on from the
  next keyframe; a truncated file gives its frames up to the cut, then a gap to the duration the
  container states (when it states one). Frame times are the file's own timestamps.
- a **stream URL** (``rtsp://``, ``http://`` ... through PyAV, whose interrupt callback bounds
  every blocking call by the open and read timeouts) or a **camera index** (``0``, OpenCV).
  Times are seconds since the source opened. When reading fails (an error, an end, or no usable
  picture for ``read_timeout_s``) the source yields a gap (``end_s`` None) and reconnects with
  exponential back-off, yielding the same gap again after each failed try; once pictures flow
  again it yields the gap with its end, then the frames. Once opened, a live source never raises
  out of its iterator: it ends only when closed (or, for an HTTP file of known length, at its
  end).
- an **image folder**: its images in natural name order (``f2.png`` before ``f10.png``) at
  ``fps`` (default 25); unreadable images become gaps. The folder is listed once, when opened;
  an incomplete image (a JPEG without its end marker, a PNG without its IEND chunk: a file still
  being written, or cut short) is skipped like an unreadable one, never decoded, and listed in
  the source's ``incomplete``; the gap's reason counts them.

Bad input raises :class:`SourceError` (a ValueError) with one line: a missing file, a file that
is not a video, an unreachable stream (after its open timeout), an empty folder. With
``realtime=True`` files and folders are paced at their frame rate, as a camera would give them;
with ``loop=True`` they start again at their end, their times and indices going on growing (a
recording standing in for a camera: the pipeline never sees time go back); a live source refuses
``loop``.
A source is a context manager; :meth:`close` may be called from any thread and ends an iteration
in progress at its next item (a live read in progress within ``read_timeout_s``).

The modules: :mod:`~pipeline.live.sources.base` (what every source shares: :class:`Gap`,
:class:`SourceConfig`, :class:`Source`), :mod:`~pipeline.live.sources.files` (video files),
:mod:`~pipeline.live.sources.folders` (image folders), :mod:`~pipeline.live.sources.streams`
(streams and cameras, reconnecting), :mod:`~pipeline.live.sources.decoder` (PyAV pictures, for
files and streams) and :mod:`~pipeline.live.sources.readahead` (:class:`ReadAhead`). The
package gives :func:`open_source` and re-exports the public names.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pipeline.live.sources.base import DEFAULT_FPS, Gap, Source, SourceConfig, SourceError
from pipeline.live.sources.files import VideoFileSource
from pipeline.live.sources.folders import IMAGE_SUFFIXES, ImageFolderSource
from pipeline.live.sources.readahead import ReadAhead
from pipeline.live.sources.streams import CameraSource, StreamSource

STREAM_SCHEMES = ("rtsp", "rtsps", "rtmp", "rtmps", "http", "https", "srt", "udp", "tcp")


def open_source(spec: str, config: SourceConfig | None = None, **settings) -> Source:
    """Open SOURCE ``spec`` (file, URL, camera index or folder); ``settings`` override fields of
    ``config``: ``open_source("clip.mp4", realtime=True)``. Raises :class:`SourceError`."""
    cfg = replace(config or SourceConfig(), **settings)
    _check_config(cfg)
    cfg = replace(cfg, camera_id=cfg.camera_id or spec)
    if spec.isdigit() or "://" in spec:
        return _live(spec, cfg)
    path = Path(spec)
    if path.is_dir():
        return ImageFolderSource(path, cfg)
    if path.is_file():
        return VideoFileSource(path, cfg)
    raise SourceError(f"{spec}: no such file or folder (nor a camera index or stream URL)")


def _live(spec: str, cfg: SourceConfig) -> Source:
    """A camera (an index) or a stream (a URL)."""
    if cfg.loop:
        raise SourceError(f"{spec}: only a file or a folder can be looped, not a live source")
    if spec.isdigit():
        return CameraSource(int(spec), cfg)
    scheme = spec.split("://", 1)[0].lower()
    if scheme not in STREAM_SCHEMES:
        raise SourceError(f"{spec}: unsupported scheme {scheme!r} ({', '.join(STREAM_SCHEMES)})")
    return StreamSource(spec, cfg)


def _check_config(cfg: SourceConfig) -> None:
    for name in ("open_timeout_s", "read_timeout_s", "reconnect_min_s", "reconnect_max_s"):
        if getattr(cfg, name) <= 0:
            raise SourceError(f"{name} must be > 0, not {getattr(cfg, name)}")
    if cfg.fps is not None and cfg.fps <= 0:
        raise SourceError(f"fps must be > 0, not {cfg.fps}")
    if cfg.keep_every < 1:
        raise SourceError(f"keep_every must be at least 1, not {cfg.keep_every}")


__all__ = [
    "DEFAULT_FPS",
    "IMAGE_SUFFIXES",
    "STREAM_SCHEMES",
    "CameraSource",
    "Gap",
    "ImageFolderSource",
    "ReadAhead",
    "Source",
    "SourceConfig",
    "SourceError",
    "StreamSource",
    "VideoFileSource",
    "open_source",
]
