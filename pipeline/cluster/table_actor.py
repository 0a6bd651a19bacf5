"""One table's monitor inside a Ray actor: :class:`TableMonitor` runs
:func:`pipeline.live.run.run_monitor` in a thread of its own and answers the supervisor.

The actor's methods run on the actor's own thread, so :meth:`TableMonitor.status` answers while
the monitor works (its host and pid, state, frames, fps, alerts, how long since the last frame
and since the monitor's loop last turned: durations, not clock readings, so no two machines'
clocks are compared). :meth:`TableMonitor.stop` sets the monitor's stop event and waits for its
clean end: the pipeline's closing alerts journaled and published, the publisher and the journal
closed.

A monitor started again after a failure is told why (:class:`Restart`): once its publisher is
bound, it publishes the system notice ``monitor_restarted`` on the table's bus, and again at
each of the next ``notice_checks`` status calls (notices are best effort and not replayed: a
console that reconnects after the restart still hears it). What the monitor prints (alerts, its
status line) goes to Ray's log files for the worker.

Plain Python: :mod:`pipeline.cluster.fleet` makes it a Ray actor, so importing this module
needs no Ray.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from pipeline.live.monitor import ConsoleReport, Monitor, MonitorStats

if TYPE_CHECKING:
    from pipeline.bus import AlertPublisher
    from pipeline.settings import Settings

RESTARTED_NOTICE = "monitor_restarted"


class MonitorState(StrEnum):
    STARTING = "starting"  # opening the source, the journal and the bus; loading the models
    RUNNING = "running"
    ENDED = "ended"  # its file or folder ended (not looped): done, not restarted
    STOPPED = "stopped"  # stopped when asked
    FAILED = "failed"  # the run raised: restarted by the supervisor


@dataclass(frozen=True)
class Restart:
    """Why a monitor is started again: the restart's number for the table and the cause."""

    attempt: int
    why: str

    def message(self) -> str:
        return (
            f"monitor restarted (restart {self.attempt}): {self.why}; alerts its last run left "
            "open were closed (reason: restart)"
        )


@dataclass(frozen=True)
class MonitorStatus:
    """One answer of a table's actor. Ages in seconds, measured by the actor."""

    table: str
    host: str  # the machine it runs on (its endpoints are bound there)
    pid: int
    state: MonitorState
    frames: int  # frames processed by this run
    fps: float
    alerts: int  # alerts emitted by this run
    blind: bool  # the camera is reported lost (a gap): no frame is expected
    last_frame_wall: float | None  # time.time() of the last frame processed; None: none yet
    frame_age_s: float  # since the last frame processed, or since the run started
    loop_age_s: float  # since the monitor's loop last turned (every status_interval_s at most)
    age_s: float  # since the actor started
    error: str | None = None  # why the run failed (FAILED)


class TableMonitor:
    """A table's monitor, run in a thread from construction until it ends or is stopped."""

    def __init__(
        self, source: str, settings: Settings, restart: Restart | None, notice_checks: int
    ) -> None:
        self.table = settings.table or "?"
        self._created_at = time.monotonic()
        self._state = MonitorState.STARTING
        self._error: str | None = None
        self._stop = threading.Event()  # set by the monitor itself too, at its end
        self._asked_to_stop = False
        self._restart, self._notices_left = restart, notice_checks if restart else 0
        self._report = ConsoleReport(settings.monitor.build())
        self._started_at: float | None = None  # when everything was open
        self._monitor: Monitor | None = None
        self._publisher: AlertPublisher | None = None
        self._thread = threading.Thread(
            target=self._run, args=(source, settings), name=f"monitor-{self.table}", daemon=True
        )
        self._thread.start()

    def _run(self, source: str, settings: Settings) -> None:
        from pipeline.live.run import run_monitor

        try:
            settings.journal.path.parent.mkdir(parents=True, exist_ok=True)
            run_monitor(source, settings, self._stop, self._report, self._started)
        except BaseException as exc:  # reported in the status; the supervisor restarts it
            self._error = _one_line(exc)
            self._state = MonitorState.FAILED
            return
        self._state = MonitorState.STOPPED if self._asked_to_stop else MonitorState.ENDED

    def _started(self, monitor: Monitor, publisher: AlertPublisher) -> None:
        self._monitor, self._publisher = monitor, publisher
        self._started_at = time.monotonic()
        self._state = MonitorState.RUNNING
        self._announce()

    def _announce(self) -> None:
        """The restart notice on the table's bus, if this run is a restart (best effort)."""
        if self._restart is None or self._publisher is None:
            return
        with contextlib.suppress(RuntimeError):  # closed meanwhile: the run is over
            self._publisher.notice(RESTARTED_NOTICE, self._restart.message())

    def status(self) -> MonitorStatus:
        """Where the monitor stands; repeats the restart notice while repeats are left."""
        if self._notices_left and self._state is MonitorState.RUNNING:
            self._notices_left -= 1
            self._announce()
        now = time.monotonic()
        monitor = self._monitor
        stats = monitor.stats if monitor is not None else MonitorStats()
        since = self._started_at or self._created_at  # until the first frame, the first turn
        frame_at = (monitor and monitor.last_processed_at) or since
        loop_at = (monitor and monitor.last_tick_at) or since
        processed = monitor is not None and monitor.last_processed_at is not None
        return MonitorStatus(
            table=self.table,
            host=socket.gethostname(),
            pid=os.getpid(),
            state=self._state,
            frames=stats.frames,
            fps=stats.fps,
            alerts=stats.alerts,
            blind=stats.blind,
            last_frame_wall=time.time() - (now - frame_at) if processed else None,
            frame_age_s=now - frame_at,
            loop_age_s=now - loop_at,
            age_s=now - self._created_at,
            error=self._error,
        )

    def stop(self, timeout_s: float) -> MonitorStatus:
        """Stop the monitor and wait up to ``timeout_s`` for its clean end; its last status."""
        self._asked_to_stop = True
        self._stop.set()
        self._thread.join(timeout_s)
        return self.status()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__
