"""The live monitor: a source's frames through one table's pipeline; every alert to a sink.

Two threads. The *reader* iterates the source and puts frames and gaps into a
:class:`FrameQueue`; the caller's thread runs :meth:`Monitor.run`, which takes them out in order:
a frame goes to ``pipeline.process``, a gap (the source gave no picture) to
``pipeline.no_frame``, so a lost camera becomes a ``camera_lost`` alert and a blind interval,
never an empty table. Every alert goes to ``sink.emit`` (``AlertPublisher``: journal first, then
the bus) the moment the pipeline returns it; alerts never wait in a queue and are never dropped.
With ``snapshots``, each alert's evidence frame is written first (:mod:`pipeline.evidence`),
so the ``evidence.snapshot`` a live alert carries names a file that exists. When the table's
vision degrades or recovers (:mod:`pipeline.live.vision_health`), the sink publishes a
``vision_degraded`` or ``vision_restored`` notice (``sink.notice``).

A frame the pipeline refuses with a ValueError (a picture of a size the detector cannot take,
from a folder of mixed images) is skipped and counted (``unusable`` in the status line), its
reason printed once; it never stops the monitor.

Overload: from a live source (a camera, a stream, a file paced with ``realtime``) the queue keeps
the newest ``queue_size`` frames and drops the oldest, counting them; from an unpaced file or
folder the reader waits instead, so every frame is processed. Gaps are never dropped.

What the metrics and health endpoints read (:mod:`pipeline.live.metrics`, from their own
thread): the counters in :class:`MonitorStats` (with the frames the reader took in and the
alerts by kind and state), ``loop_state``, and the monotonic times of the loop's last turn, the
reader's last frame and the pipeline's last processed frame (the fleet's watchdog reads them
too); ``on_latency`` is told, for each alert a frame raised, the seconds from that frame's
arrival from the source to the alert's publication.

Stopping: set the ``stop`` event (the CLI does on SIGINT/SIGTERM): reading stops, queued frames
are discarded, ``pipeline.finish()`` runs and its alerts are emitted, and ``run`` returns. The end
of a file source ends the run the same way, after its last frame.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TextIO

from pipeline.alerts import Alert, describe_alert
from pipeline.evidence import Snapshots
from pipeline.live.sources import Gap, Source
from pipeline.round.events import RoundEnded, VisionDegraded, VisionRestored
from vision.types import Frame

Item = Frame | Gap
LoopState = Literal["not started", "running", "stopped"]
VISION_DEGRADED = "vision_degraded"
VISION_RESTORED = "vision_restored"


class AlertSink(Protocol):
    """Where alerts go: ``emit`` stores (journal) and publishes, returning the alert numbered;
    ``notice`` publishes a system notice of the table (best effort)."""

    def emit(self, alert: Alert) -> Alert: ...

    def notice(self, name: str, message: str) -> None: ...


class FramePipeline(Protocol):
    """The part of :class:`pipeline.runner.TablePipeline` the monitor uses; results need
    ``alerts``, ``events``, ``blind`` and ``state`` (and ``frame`` and ``tracks`` for
    snapshots)."""

    def process(self, frame: Frame, wall_time: str | None = None): ...

    def no_frame(self, index: int, time_s: float, reason: str, wall_time: str | None = None): ...

    def finish(self, wall_time: str | None = None) -> tuple[list, list[Alert]]: ...


@dataclass(frozen=True)
class MonitorConfig:
    """Settings of the monitor loop; each line says what changing one trades."""

    queue_size: int = 8  # frames waiting for the pipeline; higher: rides out longer stalls
    # without drops, but alerts come later behind the backlog
    status_interval_s: float = 0.25  # refresh of the status line on a terminal (and how long
    # the loop waits for a frame before it refreshes anyway)
    log_interval_s: float = 10.0  # period of the status line when stderr is not a terminal
    stop_wait_s: float = 10.0  # how long the end waits for the reader thread to let go of the
    # source (a live read in progress ends within its read timeout)
    stride: int = 1  # process only frames whose index is a multiple of this (a file's others
    # are not even decoded); 2 halves the work per table (the demo's review reads 1 in 2 and
    # finds its irregularities), at the cost of coarser timing and fewer looks at each face


class FrameQueue:
    """A bounded queue from the reader thread to the processing loop.

    ``put`` never blocks a *lossy* queue: when full it drops the oldest frame (counted in
    ``dropped``). A ``lossless`` queue makes ``put`` wait for room instead. Gaps are never
    dropped (a queue holding only gaps grows past its size; they are rare). ``close()`` ends
    both sides: ``put`` then discards, ``get`` drains what is left and then returns None with
    ``finished`` true.

    >>> q = FrameQueue(1)
    >>> q.put(Gap(0, 0.0, None, "lost"))
    >>> q.put(Gap(0, 0.0, 0.5, "lost"))  # past the size: gaps are kept
    >>> q.dropped, q.get(0).end_s, q.get(0).end_s
    (0, None, 0.5)
    """

    def __init__(self, maxsize: int, lossless: bool = False) -> None:
        if maxsize < 1:
            raise ValueError(f"queue size must be at least 1, not {maxsize}")
        self.maxsize, self.lossless = maxsize, lossless
        self.dropped = 0
        self._items: deque[Item] = deque()
        self._closed = False
        self._changed = threading.Condition()

    def put(self, item: Item) -> None:
        with self._changed:
            if self.lossless:
                while len(self._items) >= self.maxsize and not self._closed:
                    self._changed.wait()
            if self._closed:
                return
            if len(self._items) >= self.maxsize:
                self._drop_oldest_frame()
            self._items.append(item)
            self._changed.notify_all()

    def _drop_oldest_frame(self) -> None:
        for position, queued in enumerate(self._items):
            if isinstance(queued, Frame):
                del self._items[position]
                self.dropped += 1
                return

    def get(self, timeout_s: float) -> Item | None:
        """The oldest item; None when none came within ``timeout_s`` or the queue is finished."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not self._items and not self._closed:
                left_s = deadline - time.monotonic()
                if left_s <= 0:
                    return None
                self._changed.wait(left_s)
            if not self._items:
                return None
            item = self._items.popleft()
            self._changed.notify_all()
            return item

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    @property
    def finished(self) -> bool:
        """Closed, and nothing left to get."""
        with self._changed:
            return self._closed and not self._items


@dataclass
class MonitorStats:
    """Counters of one run, as the status line shows them."""

    frames_in: int = 0  # frames read from the source (then processed, dropped or unusable)
    frames: int = 0  # frames processed
    dropped: int = 0  # frames dropped by the queue (overload)
    gaps: int = 0  # stretches without a picture reported to the pipeline
    alerts: int = 0  # alerts emitted
    alerts_by: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, state) -> count
    unusable: int = 0  # frames the pipeline refused (an odd size...): skipped like a drop
    fps: float = 0.0  # frames processed per second, lately
    video_s: float = 0.0  # time of the last frame or gap
    phase: str = "-"
    blind: bool = False

    def line(self) -> str:
        sight = "BLIND" if self.blind else "seeing"
        return (
            f"{self.fps:5.1f} fps | t {self.video_s:8.1f} s | {self.frames} frames | "
            f"{self.dropped} dropped | {self.alerts} alerts | phase {self.phase} | {sight}"
            + (f" | {self.unusable} unusable" if self.unusable else "")
        )


class ConsoleReport:
    """Alerts on ``out``, one line each; the status line on ``err``: refreshed in place
    (``\\r``) at most every ``status_interval_s`` on a terminal, else a plain line every
    ``log_interval_s``."""

    def __init__(
        self, config: MonitorConfig, out: TextIO | None = None, err: TextIO | None = None
    ) -> None:
        self._out, self._err = out or sys.stdout, err or sys.stderr
        self._tty = self._err.isatty()
        self._every_s = config.status_interval_s if self._tty else config.log_interval_s
        self._shown_at: float | None = None
        self._showing = False  # a status line is on the terminal, without its newline

    def alert(self, alert: Alert) -> None:
        self._clear()
        print(describe_alert(alert), file=self._out, flush=True)

    def status(self, stats: MonitorStats, force: bool = False) -> None:
        now = time.monotonic()
        if not force and self._shown_at is not None and now - self._shown_at < self._every_s:
            return
        self._shown_at = now
        if self._tty:
            self._err.write(f"\r{stats.line()}\x1b[K")
            self._showing = True
        else:
            self._err.write(stats.line() + "\n")
        self._err.flush()

    def close(self, stats: MonitorStats) -> None:
        """The last status, on its own line."""
        self.status(stats, force=True)
        self._clear()

    def _clear(self) -> None:
        if self._showing:
            self._err.write("\n")
            self._err.flush()
            self._showing = False


class _Rate:
    """Frames per second over windows of at least ``window_s``."""

    def __init__(self, window_s: float = 1.0) -> None:
        self._window_s = window_s
        self._start = time.monotonic()
        self._count = 0
        self.fps = 0.0

    def tick(self, frames: int) -> float:
        now = time.monotonic()
        if now - self._start >= self._window_s:
            self.fps = (frames - self._count) / (now - self._start)
            self._start, self._count = now, frames
        return self.fps


class Monitor:
    """One table camera: ``source`` -> ``pipeline`` -> ``sink``; :meth:`run` once."""

    def __init__(
        self,
        source: Source,
        pipeline: FramePipeline,
        sink: AlertSink,
        config: MonitorConfig | None = None,
        report: ConsoleReport | None = None,
        snapshots: Snapshots | None = None,
    ) -> None:
        self.source, self.pipeline, self.sink = source, pipeline, sink
        self.config = config or MonitorConfig()
        self.report = report
        self.snapshots = snapshots
        self.stats = MonitorStats()
        self._rate = _Rate()
        self._gap_seen: tuple[int, float] | None = None
        self._reader_failure: BaseException | None = None
        self._unusable_why = ""
        self.loop_state: LoopState = "not started"
        self.last_tick_at: float | None = None  # time.monotonic() of the loop's last turn
        self.last_frame_at: float | None = None  # time.monotonic() the reader last took a frame
        self.last_processed_at: float | None = None  # and the pipeline last processed one
        self.on_latency: Callable[[float], None] | None = None
        self._arrivals: deque[tuple[int, float]] = deque()  # (frame index, arrival), in order
        self._arrived_at: float | None = None  # arrival of the frame being processed
        self.degraded = False  # the table's vision judged unreliable (notices said so)

    def status(self) -> dict[str, Any]:
        """The monitor's word on itself for the bus's heartbeats (read from another thread)."""
        stats = self.stats
        return {
            "fps": round(stats.fps, 1),
            "camera": "lost" if stats.blind else "ok",
            "degraded": self.degraded,
            "phase": stats.phase,
            "state": self.loop_state,
        }

    def run(self, stop: threading.Event | None = None) -> MonitorStats:
        """Process until the source ends or ``stop`` is set; then finish the pipeline and emit
        its last alerts. Returns the counters. Raises what the pipeline or the sink raised (the
        source is still closed), or what the reader thread failed with."""
        stop = stop or threading.Event()
        queue = FrameQueue(self.config.queue_size, lossless=not self.source.live)
        reader = threading.Thread(target=self._read, args=(queue, stop), name="source-reader")
        reader.daemon = True  # a live read stuck past its timeout must not hold the process
        reader.start()
        self.loop_state = "running"
        try:
            try:
                self._loop(queue, stop)
            finally:
                stop.set()
                queue.close()
                self.source.close()
                reader.join(self.config.stop_wait_s)
                self.stats.dropped = queue.dropped
            if self._reader_failure is not None:
                raise self._reader_failure
            self._emit(self.pipeline.finish()[1])
        finally:
            self.loop_state = "stopped"
            if self.report is not None:
                self.report.close(self.stats)
        return self.stats

    def _read(self, queue: FrameQueue, stop: threading.Event) -> None:
        """Reader thread: source -> queue, until the source ends or ``stop`` is set."""
        try:
            for item in self.source:
                if stop.is_set():
                    break
                if isinstance(item, Frame):
                    if item.index % self.config.stride:
                        continue  # not one of the stride's frames: never read in
                    self.stats.frames_in += 1
                    self.last_frame_at = time.monotonic()
                    self._arrivals.append((item.index, self.last_frame_at))
                queue.put(item)
        except BaseException as exc:  # handed to run(), which raises it in the caller's thread
            if not stop.is_set():  # after a stop, the source closed under the read: no failure
                self._reader_failure = exc
        finally:
            queue.close()
            self.source.close()

    def _loop(self, queue: FrameQueue, stop: threading.Event) -> None:
        while not stop.is_set():
            self.last_tick_at = time.monotonic()
            item = queue.get(self.config.status_interval_s)
            if item is None and queue.finished:
                return
            if item is not None and not stop.is_set():
                self._handle(item)
            self.stats.dropped = queue.dropped
            self.stats.fps = self._rate.tick(self.stats.frames)
            if self.report is not None:
                self.report.status(self.stats)

    def _handle(self, item: Item) -> None:
        match item:
            case Frame(time_s=time_s):
                self._arrived_at = self._arrival(item.index)
                try:
                    result = self.pipeline.process(item)
                except ValueError as exc:  # a frame it cannot use never stops the monitor
                    self._unusable(item, exc)
                    return
                self.stats.frames += 1
                self.last_processed_at = time.monotonic()
                if self.snapshots is not None:
                    self.snapshots.push(result.frame, result.tracks)
            case Gap(index=index, start_s=time_s, reason=reason):
                if (index, time_s) == self._gap_seen:
                    return  # the same gap again (still down, or its end): reported already
                self._gap_seen = (index, time_s)
                result = self.pipeline.no_frame(index, time_s, reason)
                self.stats.gaps += 1
            case _:
                raise TypeError(f"a source gave {type(item).__name__}, not a Frame or a Gap")
        self.stats.video_s = time_s
        self.stats.blind = bool(result.blind)
        if result.state is not None:
            self.stats.phase = str(result.state.phase)
        self._announce(result.events)
        self._emit(result.alerts, self._arrived_at if isinstance(item, Frame) else None)

    def _announce(self, events: list) -> None:
        """The table's vision degrading or recovering, as a notice on the bus; a round given up
        on a fault of the monitor's own, as one line on stderr."""
        for event in events:
            match event:
                case RoundEnded(time_s=time_s, round_index=n, fault=fault) if fault:
                    print(
                        f"round {n} given up at {time_s:.1f} s of video: {fault}; watching on",
                        file=sys.stderr,
                        flush=True,
                    )
                case VisionDegraded(time_s=time_s, reason=reason):
                    self.degraded = True
                    self.sink.notice(
                        VISION_DEGRADED,
                        f"since {time_s:.1f} s of video: {reason}; alerts say confidence low",
                    )
                case VisionRestored(time_s=time_s, degraded_s=degraded_s):
                    self.degraded = False
                    self.sink.notice(
                        VISION_RESTORED, f"at {time_s:.1f} s of video, after {degraded_s:.1f} s"
                    )

    def _unusable(self, frame: Frame, exc: ValueError) -> None:
        """Skip the frame, counted; say why on stderr when the reason is new."""
        self.stats.unusable += 1
        if str(exc) != self._unusable_why:
            self._unusable_why = str(exc)
            print(f"frame {frame.index} skipped: {exc}", file=sys.stderr, flush=True)

    def _arrival(self, index: int) -> float | None:
        """When frame ``index`` came from the source; older entries (dropped frames) go."""
        arrived = None
        while self._arrivals and self._arrivals[0][0] <= index:
            seen, at = self._arrivals.popleft()
            arrived = at if seen == index else arrived
        return arrived

    def _emit(self, alerts: list[Alert], arrived_at: float | None = None) -> None:
        for alert in alerts:
            if self.snapshots is not None:
                alert = self.snapshots.snapshot(alert)  # the file its evidence names, first
            stored = self.sink.emit(alert)
            if arrived_at is not None and self.on_latency is not None:
                self.on_latency(time.monotonic() - arrived_at)
            self.stats.alerts += 1
            key = (alert.kind, str(alert.state))
            self.stats.alerts_by[key] = self.stats.alerts_by.get(key, 0) + 1
            if self.report is not None:
                self.report.alert(stored)
