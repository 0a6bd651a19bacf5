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
``realtime=True`` files and folders are paced at their frame rate, as a camera would give them.
A source is a context manager; :meth:`close` may be called from any thread and ends an iteration
in progress at its next item (a live read in progress within ``read_timeout_s``).
"""

from __future__ import annotations

import os
import queue
import re
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Protocol

import av
import numpy as np

from vision.types import Frame

DEFAULT_FPS = 25.0
STREAM_SCHEMES = ("rtsp", "rtsps", "rtmp", "rtmps", "http", "https", "srt", "udp", "tcp")
IMAGE_SUFFIXES = (".bmp", ".jpeg", ".jpg", ".png", ".tif", ".tiff", ".webp")
JPEG_START, JPEG_END = b"\xff\xd8", b"\xff\xd9"  # SOI and EOI markers
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_END = b"\x00\x00\x00\x00IEND\xaeB`\x82"  # the last chunk: IEND, empty, and its CRC
_MAX_DEMUX_RETRIES = 32
"""A file whose demuxer fails this many times in a row without a packet is read no further."""


class SourceError(ValueError):
    """SOURCE cannot be read: one line naming it and why."""


@dataclass(frozen=True)
class Gap:
    """A stretch with no usable picture, from ``start_s`` to ``end_s`` (None while ongoing);
    ``index`` is the first frame index it covers. ``reason`` says what the source saw."""

    index: int
    start_s: float
    end_s: float | None
    reason: str


@dataclass(frozen=True)
class SourceConfig:
    """How a source is read; each line says what changing a setting trades."""

    realtime: bool = False  # pace files and folders at their frame rate (a simulated camera)
    open_timeout_s: float = 10.0  # a stream or camera not open by then is unreachable; lower:
    # faster failure and reconnects, but a slow link may never get in
    read_timeout_s: float = 5.0  # a live source with no usable picture this long is down (a gap,
    # then a reconnect); lower: sooner camera_lost, more reconnects on a jittery link
    fps: float | None = None  # frame rate of an image folder (default 25), and of a video or
    # stream that states none
    reconnect_min_s: float = 0.5  # first wait before a reconnect; doubled after each failure
    reconnect_max_s: float = 10.0  # cap of the back-off; higher: less load on a dead camera,
    # slower recovery once it is back
    min_gap_s: float = 0.2  # in files and folders, shorter stretches without a usable picture
    # are bridged silently; lower: every lost frame reported, more camera_lost for hiccups
    camera_id: str = ""  # Frame.camera_id; empty: the SOURCE text
    rtsp_transport: str = "tcp"  # "tcp" passes firewalls and loses nothing; "udp" has less lag
    keep_every: int = 1  # files and folders: give only frames whose index is a multiple of
    # this (a review at a stride); of the others a file decodes only those other pictures
    # refer to, and converts none, a folder reads none: several times cheaper than dropping
    # them downstream
    skip_unreferenced: bool = True  # with keep_every > 1, a file's pictures between kept ones
    # that no other picture refers to are not decoded (False: decode every picture)


class Source(Protocol):
    """What the monitor reads. ``live``: pictures come at the source's pace whether or not they
    are taken (a camera, a stream, a paced file); a consumer may drop them."""

    fps: float
    size_wh: tuple[int, int] | None
    live: bool

    def __iter__(self) -> Iterator[Frame | Gap]: ...

    def close(self) -> None: ...


def open_source(spec: str, config: SourceConfig | None = None, **settings) -> Source:
    """Open SOURCE ``spec`` (file, URL, camera index or folder); ``settings`` override fields of
    ``config``: ``open_source("clip.mp4", realtime=True)``. Raises :class:`SourceError`."""
    cfg = replace(config or SourceConfig(), **settings)
    _check_config(cfg)
    cfg = replace(cfg, camera_id=cfg.camera_id or spec)
    if spec.isdigit():
        return CameraSource(int(spec), cfg)
    if "://" in spec:
        scheme = spec.split("://", 1)[0].lower()
        if scheme not in STREAM_SCHEMES:
            raise SourceError(
                f"{spec}: unsupported scheme {scheme!r} ({', '.join(STREAM_SCHEMES)})"
            )
        return StreamSource(spec, cfg)
    path = Path(spec)
    if path.is_dir():
        return ImageFolderSource(path, cfg)
    if path.is_file():
        return VideoFileSource(path, cfg)
    raise SourceError(f"{spec}: no such file or folder (nor a camera index or stream URL)")


def _check_config(cfg: SourceConfig) -> None:
    for name in ("open_timeout_s", "read_timeout_s", "reconnect_min_s", "reconnect_max_s"):
        if getattr(cfg, name) <= 0:
            raise SourceError(f"{name} must be > 0, not {getattr(cfg, name)}")
    if cfg.fps is not None and cfg.fps <= 0:
        raise SourceError(f"fps must be > 0, not {cfg.fps}")
    if cfg.keep_every < 1:
        raise SourceError(f"keep_every must be at least 1, not {cfg.keep_every}")


class _Timeline:
    """Times of usable pictures, in order -> frame indices, and the gaps between them.

    An index is the picture's slot at ``fps`` (``round(time_s * fps)``), kept strictly
    increasing, so indices skip across a gap as the frames would have.
    """

    def __init__(self, fps: float, min_gap_s: float, step: int = 1) -> None:
        self._fps, self._min_gap_s, self._step = fps, min_gap_s, step
        self._last_s: float | None = None
        self._last_index = -step

    @property
    def next_index(self) -> int:
        return self._last_index + self._step

    @property
    def expected_s(self) -> float:
        """When the next picture is due: ``step`` periods after the last (0 before the
        first); a source that gives 1 picture in ``step`` expects no more."""
        return 0.0 if self._last_s is None else self._last_s + self._step / self._fps

    def advance(self, time_s: float) -> int:
        """The index of a picture at ``time_s`` (after every earlier one)."""
        self._last_index = max(self._last_index + 1, round(time_s * self._fps))
        self._last_s = time_s
        return self._last_index

    def place(self, time_s: float, reason: str) -> tuple[int, Gap | None] | None:
        """A picture at ``time_s``: its index and the gap before it, if any; None for a
        picture not after the last one (out of order: unusable)."""
        if self._last_s is not None and time_s <= self._last_s:
            return None
        gap = self.gap_until(time_s, reason)
        return self.advance(time_s), gap

    def gap_until(self, until_s: float | None, reason: str) -> Gap | None:
        """The gap from the next picture's due time to ``until_s``, if at least min_gap_s."""
        start_s = self.expected_s
        if until_s is None or until_s - start_s < self._min_gap_s:
            return None
        return Gap(self.next_index, start_s, until_s, reason)


class _Source:
    """What every source shares: closing from any thread, realtime pacing, context manager.
    Subclasses give ``_items()`` and ``_release()``."""

    native_live = False

    def __init__(self, name: str, config: SourceConfig) -> None:
        self.name, self.config = name, config
        self.fps: float = config.fps or DEFAULT_FPS
        self.size_wh: tuple[int, int] | None = None
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self._released = False
        self._reading: Iterator[Frame | Gap] | None = None

    @property
    def live(self) -> bool:
        return self.native_live or self.config.realtime

    def __iter__(self) -> Iterator[Frame | Gap]:
        if self._reading is not None:
            raise RuntimeError(f"{self.name}: a source can be read once")
        self._reading = self._run()
        return self._reading

    def _run(self) -> Iterator[Frame | Gap]:
        try:
            paced = self.config.realtime and not self.native_live
            items = self._paced(self._items()) if paced else self._items()
            for item in items:
                if self._closing.is_set():
                    return
                yield item
        finally:
            self._release_once()

    def _paced(self, items: Iterator[Frame | Gap]) -> Iterator[Frame | Gap]:
        """Hold each frame back until its time has come, counted from the first frame."""
        origin: tuple[float, float] | None = None  # (wall clock, frame time) of the first frame
        for item in items:
            if isinstance(item, Frame):
                if origin is None:
                    origin = (time.monotonic(), item.time_s)
                due = origin[0] + item.time_s - origin[1]
                if self._closing.wait(max(0.0, due - time.monotonic())):
                    return
            yield item

    def close(self) -> None:
        """Stop reading and let go of the file, stream or camera; idempotent, any thread."""
        self._closing.set()
        reading = self._reading
        if reading is not None:
            try:
                reading.close()  # type: ignore[attr-defined]
            except ValueError:  # running in another thread, which lets go when it sees the flag
                return
        self._release_once()

    def _release_once(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        self._release()

    def _items(self) -> Iterator[Frame | Gap]:
        raise NotImplementedError

    def _release(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class ReadAhead:
    """A file or folder source read by a worker thread up to ``depth`` items ahead of its
    consumer, so that decoding the next frames overlaps the work on this one (PyAV, OpenCV and
    NumPy let go of the GIL while they work). The items, their order and the errors raised are
    the source's own; a live source gains nothing (it already runs at its own pace).
    ``close()`` (any thread) stops the worker and closes the source."""

    def __init__(self, source: Source, depth: int = 4) -> None:
        if depth < 1:
            raise ValueError(f"depth must be at least 1, not {depth}")
        self.source, self._depth = source, depth
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None

    def __getattr__(self, name: str):  # fps, size_wh, live, duration_s ... of the source
        return getattr(self.source, name)

    def __iter__(self) -> Iterator[Frame | Gap]:
        if self._worker is not None:
            raise RuntimeError("a source can be read once")
        items: queue.Queue = queue.Queue(self._depth)
        self._worker = threading.Thread(target=self._read, args=(items,), daemon=True)
        self._worker.start()
        return self._take(items)

    def _read(self, items: queue.Queue) -> None:
        try:
            for item in self.source:
                if not self._put(items, item):
                    return
        except BaseException as exc:  # handed to the consumer, raised there
            self._put(items, _Failed(exc))
            return
        self._put(items, _END)

    def _put(self, items: queue.Queue, item) -> bool:
        """Queue ``item`` once there is room; False when stopped first."""
        while not self._stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _take(self, items: queue.Queue) -> Iterator[Frame | Gap]:
        try:
            while not self._stop.is_set():
                try:
                    item = items.get(timeout=0.1)
                except queue.Empty:
                    continue
                if item is _END:
                    return
                if isinstance(item, _Failed):
                    raise item.error
                yield item
        finally:
            self.close()

    def close(self) -> None:
        self._stop.set()
        self.source.close()
        worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


@dataclass(frozen=True)
class _Failed:
    error: BaseException


_END = object()  # the worker's last item: the source has no more


def _why(exc: BaseException) -> str:
    """An exception in words: its OS or FFmpeg error text, else its message or type."""
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


class _Decoder:
    """The decoded pictures of one PyAV video stream, None for each one that cannot be used.

    Unusable: a packet the decoder rejects, a picture without a timestamp or flagged corrupt,
    and every picture after a decode error until the next keyframe (their references are
    broken). ``retry_demux``: a demuxer error is counted and reading goes on (files) instead of
    raising (streams, where it means the connection failed).
    """

    def __init__(self, container, stream, retry_demux: bool) -> None:
        self._container, self._stream, self._retry_demux = container, stream, retry_demux
        self.errors = 0
        self.last_error = ""

    def _note(self, exc: Exception) -> None:
        self.errors += 1
        self.last_error = _why(exc)

    def frames(self, wanted: Callable[[int], bool] | None = None) -> Iterator[av.VideoFrame | None]:
        """The pictures in order. ``wanted(pts)`` False: the packet's picture may be skipped
        if no other picture refers to it (H.264 with B-frames: typically half of them, never
        decoded; a picture others need is decoded and given all the same)."""
        codec = self._stream.codec_context
        packets = self._container.demux(self._stream)
        resync, retries = False, 0
        while True:
            try:
                packet = next(packets)
            except StopIteration:
                return
            except av.FFmpegError as exc:
                if not self._retry_demux:
                    raise
                self._note(exc)
                retries += 1
                if retries > _MAX_DEMUX_RETRIES:
                    return
                packets = self._container.demux(self._stream)
                yield None
                continue
            retries = 0
            if wanted is not None and packet.pts is not None:
                codec.skip_frame = "DEFAULT" if wanted(packet.pts) else "NONREF"
            try:
                pictures = packet.decode()
            except av.FFmpegError as exc:
                self._note(exc)
                resync = True
                yield None
                continue
            for picture in pictures:
                resync = resync and not picture.key_frame
                usable = not (resync or picture.pts is None or picture.is_corrupt)
                yield picture if usable else None


class VideoFileSource(_Source):
    """A video file through PyAV; frame times from its timestamps (see the module doc)."""

    def __init__(self, path: Path, config: SourceConfig) -> None:
        super().__init__(str(path), config)
        try:
            self._container = av.open(str(path))
        except (av.FFmpegError, OSError) as exc:
            raise SourceError(f"{path}: not a video ({_why(exc)}){_cut_hint(path)}") from None
        if not self._container.streams.video:
            self._container.close()
            raise SourceError(f"{path}: no video stream in the file")
        stream = self._stream = self._container.streams.video[0]
        rate = stream.average_rate or stream.guessed_rate
        self.fps = float(rate) if rate else self.fps
        width, height = stream.codec_context.width, stream.codec_context.height
        self.size_wh = (width, height) if width and height else None
        self.duration_s = _stated_duration_s(self._container, stream)
        self.decoded = 0  # pictures decoded so far (with keep_every, fewer than in the file)

    def _items(self) -> Iterator[Frame | Gap]:
        stream = self._stream
        start = stream.start_time or 0
        decoder = _Decoder(self._container, stream, retry_demux=True)
        every = self.config.keep_every
        timeline = _Timeline(self.fps, self.config.min_gap_s)

        def wanted(pts: int) -> bool:  # a picture at a multiple of keep_every
            return round(float((pts - start) * stream.time_base) * self.fps) % every == 0

        seen_errors = 0
        skipping = every > 1 and self.config.skip_unreferenced
        for picture in decoder.frames(wanted if skipping else None):
            if picture is None:
                continue
            self.decoded += 1
            time_s = float((picture.pts - start) * stream.time_base)
            reason = _file_reason(decoder, seen_errors, "frames missing from the file")
            placed = timeline.place(time_s, reason)
            if placed is None:
                continue
            seen_errors = decoder.errors
            index, gap = placed
            if gap is not None:
                yield gap
            if index % every == 0:
                image = picture.to_ndarray(format="bgr24")
                yield Frame(self.config.camera_id, index, time_s, image)
        end_s = self.duration_s
        end_reason = f"no readable video after {timeline.expected_s:.2f} s of the {end_s} s stated"
        gap = timeline.gap_until(end_s, f"{end_reason} (truncated or damaged file)")
        if gap is not None:
            yield gap

    def _release(self) -> None:
        self._container.close()


def _file_reason(decoder: _Decoder, seen_errors: int, otherwise: str) -> str:
    new = decoder.errors - seen_errors
    if new <= 0:
        return otherwise
    return f"unreadable video data ({new} errors: {decoder.last_error})"


def _cut_hint(path: Path) -> str:
    if path.suffix.lower() in (".mp4", ".mov", ".m4v"):
        return "; an MP4 cut off before its index was written cannot be read"
    return ""


def _stated_duration_s(container, stream) -> float | None:
    """The duration the file states, in seconds from its first picture; None if unknown."""
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / av.time_base
    return None


def _natural_key(path: Path) -> list[int | str]:
    """``f2.png`` before ``f10.png``: digit runs compare as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name)]


class ImageFolderSource(_Source):
    """The images of a folder, in natural name order, at ``config.fps`` (default 25).
    ``incomplete``: the images skipped so far as incomplete (:func:`_is_complete`)."""

    def __init__(self, folder: Path, config: SourceConfig) -> None:
        super().__init__(str(folder), config)
        self._paths = sorted(
            (p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()),
            key=_natural_key,
        )
        if not self._paths:
            raise SourceError(f"{folder}: no images in the folder ({' '.join(IMAGE_SUFFIXES)})")
        self.incomplete: list[Path] = []
        first = _read_image(self._paths[0]) if _is_complete(self._paths[0]) else None
        self.size_wh = None if first is None else (first.shape[1], first.shape[0])

    def _items(self) -> Iterator[Frame | Gap]:
        timeline = _Timeline(self.fps, self.config.min_gap_s, self.config.keep_every)
        incomplete = 0  # since the last frame
        for number, path in enumerate(self._paths):
            if number % self.config.keep_every:  # not read at all
                continue
            if not _is_complete(path):
                self.incomplete.append(path)
                incomplete += 1
                continue
            image = _read_image(path)
            if image is None:
                continue
            time_s = number / self.fps
            gap = timeline.gap_until(time_s, _folder_reason(incomplete))
            if gap is not None:
                yield gap
            incomplete = 0
            yield Frame(self.config.camera_id, timeline.advance(time_s), time_s, image)
        gap = timeline.gap_until(len(self._paths) / self.fps, _folder_reason(incomplete))
        if gap is not None:
            yield gap

    def _release(self) -> None:
        """Nothing held between images."""


def _folder_reason(incomplete: int) -> str:
    if not incomplete:
        return "unreadable images"
    return f"unreadable images ({incomplete} incomplete: still being written?)"


def _is_complete(path: Path) -> bool:
    """False for a JPEG that does not end with its EOI marker or a PNG that does not end with
    its IEND chunk (trailing bytes count as incomplete); True for any other file, which its
    decoder judges, and for one that cannot be opened (unreadable, not incomplete)."""
    try:
        with path.open("rb") as file:
            head = file.read(len(PNG_SIGNATURE))
            size = file.seek(0, os.SEEK_END)
            file.seek(max(0, size - len(PNG_END)))
            tail = file.read()
    except OSError:
        return True
    if head.startswith(JPEG_START):
        return tail.endswith(JPEG_END)
    if head == PNG_SIGNATURE:
        return tail == PNG_END
    return True


def _read_image(path: Path) -> np.ndarray | None:
    import cv2

    return cv2.imread(str(path), cv2.IMREAD_COLOR)


class _Down(Exception):
    """A live source stopped giving pictures; the message says why."""


class _LiveSource(_Source):
    """A stream or camera: reconnects with back-off after a failure (see the module doc).
    Subclasses give ``_connect()`` (raising :class:`_Down`), ``_images()`` (None for an
    unusable picture; any exception means the source is down) and ``_disconnect()``."""

    native_live = True
    finite = False  # ends for good at the end of its data (an HTTP file of known length)

    def __init__(self, name: str, config: SourceConfig) -> None:
        super().__init__(name, config)
        try:
            self._connect()
        except _Down as exc:
            raise SourceError(f"{name}: {exc}") from None
        self._origin = time.monotonic()

    def _now_s(self) -> float:
        return time.monotonic() - self._origin

    def _items(self) -> Iterator[Frame | Gap]:
        timeline = _Timeline(self.fps, self.config.min_gap_s)
        gap: Gap | None = None
        while not self._closing.is_set():
            last_s = self._now_s()
            try:
                for image in self._images():
                    now_s = self._now_s()
                    if image is None:
                        if now_s - last_s > self.config.read_timeout_s:
                            raise _Down(f"no usable picture for {self.config.read_timeout_s:g} s")
                        continue
                    if gap is not None:
                        yield replace(gap, end_s=now_s)
                        gap = None
                    yield Frame(self.config.camera_id, timeline.advance(now_s), now_s, image)
                    last_s = now_s
                if self.finite:
                    return
                reason = "the stream ended"
            except Exception as exc:  # a live source never raises once open: any failure is an
                reason = self._failure(exc)  # outage, reported as a gap while reconnecting
            self._disconnect()
            if gap is None:
                start_s = min(timeline.expected_s, self._now_s())
                gap = Gap(timeline.next_index, start_s, None, f"{self.name} lost: {reason}")
            yield gap
            if not (yield from self._reconnect(gap)):
                return

    def _reconnect(self, gap: Gap) -> Generator[Gap, None, bool]:
        """Try again after reconnect_min_s, doubling the wait up to reconnect_max_s; yield the
        gap after each failed try. True once connected, False when closed meanwhile."""
        wait_s = self.config.reconnect_min_s
        while not self._closing.wait(wait_s):
            try:
                self._connect()
                return True
            except _Down:
                yield gap
            wait_s = min(2 * wait_s, self.config.reconnect_max_s)
        return False

    def _release(self) -> None:
        self._disconnect()

    def _failure(self, exc: Exception) -> str:
        """Why reading failed, in words."""
        return _why(exc)

    def _connect(self) -> None:
        raise NotImplementedError

    def _images(self) -> Iterator[np.ndarray | None]:
        raise NotImplementedError

    def _disconnect(self) -> None:
        raise NotImplementedError


class StreamSource(_LiveSource):
    """A network stream (RTSP, HTTP, ...) through PyAV, every blocking call bounded by the open
    and read timeouts."""

    def __init__(self, url: str, config: SourceConfig) -> None:
        self._container = None
        super().__init__(url, config)

    def _connect(self) -> None:
        cfg = self.config
        options = {"rtsp_transport": cfg.rtsp_transport} if self.name.startswith("rtsp") else {}
        started = time.monotonic()
        try:
            container = av.open(
                self.name, options=options, timeout=(cfg.open_timeout_s, cfg.read_timeout_s)
            )
        except Exception as exc:  # whatever FFmpeg or the network says: the stream is not there
            waited_s = time.monotonic() - started
            if isinstance(exc, av.error.ExitError) or waited_s >= cfg.open_timeout_s:
                raise _Down(f"no stream within the {cfg.open_timeout_s:g} s open timeout") from None
            raise _Down(f"cannot open the stream ({_why(exc)})") from None
        if not container.streams.video:
            container.close()
            raise _Down("no video in the stream")
        self._container, self._stream = container, container.streams.video[0]
        rate = self._stream.average_rate or self._stream.guessed_rate
        self.fps = float(rate) if rate else self.config.fps or DEFAULT_FPS
        cc = self._stream.codec_context
        self.size_wh = (cc.width, cc.height) if cc.width and cc.height else None
        self.finite = self.name.startswith("http") and container.duration is not None

    def _failure(self, exc: Exception) -> str:
        if isinstance(exc, av.error.ExitError):  # PyAV's interrupt callback: the read timed out
            return f"no data for {self.config.read_timeout_s:g} s"
        return _why(exc)

    def _images(self) -> Iterator[np.ndarray | None]:
        decoder = _Decoder(self._container, self._stream, retry_demux=False)
        for picture in decoder.frames():
            yield None if picture is None else picture.to_ndarray(format="bgr24")

    def _disconnect(self) -> None:
        if self._container is not None:
            self._container.close()
            self._container = None


class CameraSource(_LiveSource):
    """A local camera by index, through OpenCV."""

    def __init__(self, index: int, config: SourceConfig) -> None:
        self.index, self._capture = index, None
        super().__init__(f"camera {index}", config)

    def _connect(self) -> None:
        import cv2

        device = Path(f"/dev/video{self.index}")
        if sys.platform.startswith("linux") and not device.exists():
            raise _Down(f"no such device ({device})")
        capture = cv2.VideoCapture(self.index)
        if not capture.isOpened():
            capture.release()
            raise _Down("the camera does not open")
        self._capture = capture
        rate = capture.get(cv2.CAP_PROP_FPS)
        self.fps = float(rate) if rate and rate > 0 else self.config.fps or DEFAULT_FPS
        width, height = (
            capture.get(cv2.CAP_PROP_FRAME_WIDTH),
            capture.get(cv2.CAP_PROP_FRAME_HEIGHT),
        )
        self.size_wh = (int(width), int(height)) if width and height else None

    def _images(self) -> Iterator[np.ndarray | None]:
        while self._capture is not None:
            ok, image = self._capture.read()
            if not ok:
                raise _Down("the camera gave no picture")
            yield image

    def _disconnect(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None
