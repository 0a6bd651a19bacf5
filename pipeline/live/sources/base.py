"""What every frame source shares: the items besides frames (:class:`Gap`), the settings
(:class:`SourceConfig`), the :class:`Source` protocol, frame indices from picture times
(``_Timeline``) and the base class of the sources (``_Source``: closing from any thread,
realtime pacing, context manager)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol

from vision.types import Frame

DEFAULT_FPS = 25.0


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
    loop: bool = False  # files and folders: start again at the end, times and indices going
    # on (a recording standing in for a camera, in tests and benches); streams refuse it
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


def _why(exc: BaseException) -> str:
    """An exception in words: its OS or FFmpeg error text, else its message or type."""
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
