"""``paigow fleet``'s engine: one monitor per table as a Ray actor, and the supervisor that keeps
each one running.

Each table's monitor is a Ray actor (:class:`~pipeline.cluster.table_actor.TableMonitor`)
asking for as many CPUs as its detector has threads, with ``max_restarts=0``: restarts are the
supervisor's, so it can wait between them and say why. The :class:`Supervisor` runs in the
driver (the ``paigow fleet`` process) and asks every monitor for its status each
``watchdog.check_s``, one call in flight per monitor. A monitor is killed and started again
when

- its process died (the status call raises ``RayActorError``: killed, crashed, its node lost);
- it did not answer a status call within ``heartbeat_s`` (``start_s`` before its first answer:
  it may be waiting for a CPU);
- it is stalled: running, its camera not reported lost, and no frame processed for
  ``stall_s``; or its loop not turning for ``stall_s``; or still starting after ``start_s``;
- its run failed (an error it could not get past: the error is the reason given).

The restart waits ``backoff_first_s``, doubled for each restart in a row up to
``backoff_max_s``; a monitor that had run ``healthy_s`` counts from the first again. Every
restart is one line on stderr, and the restarted monitor publishes a ``monitor_restarted``
notice on its table's bus (its own publisher, at the table's fixed endpoints) saying why. Its
journal is the same file: the journal's id stays, its numbering goes on, and what the killed run
left open is closed with ``reason: restart``. A monitor whose file or folder ended (not looped)
is done and not restarted; :meth:`Supervisor.run` returns when every one is done, or when its
stop event is set: then every monitor is stopped cleanly (its closing alerts journaled).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from pipeline.cluster.fleet_config import Fleet, FleetTable, WatchdogConfig
from pipeline.cluster.runtime import cluster_cpus
from pipeline.cluster.table_actor import MonitorState, MonitorStatus, Restart, TableMonitor
from pipeline.settings import Settings

STOP_WAIT_S = 30.0
"""How long stopping waits for every monitor's clean end before it kills what is left."""
WAITING = "waiting"  # the state of a table between a failure and its restart


def _stderr(line: str) -> None:
    print(f"paigow fleet: {line}", file=sys.stderr, flush=True)


def fleet_cpus(fleet: Fleet) -> int:
    """CPUs the fleet's monitors ask for together (each: its detector threads)."""
    return sum(settings.detector.threads for settings in fleet.settings.values())


def local_cpus(fleet: Fleet) -> int:
    """CPUs a local Ray instance offers the fleet: the machine's, or what the monitors ask
    for when that is more (Ray's CPUs are a count for placement, not a limit)."""
    return max(os.cpu_count() or 1, fleet_cpus(fleet))


@dataclass
class _Slot:
    """One table as the supervisor keeps it: its actor, the call in flight, its restarts."""

    table: FleetTable
    settings: Settings
    actor: Any = None
    call: Any = None  # the status call in flight
    asked_at: float = 0.0
    answered: bool = False  # this actor has answered once
    started_at: float = 0.0
    status: MonitorStatus | None = None
    frames_before: int = 0  # frames processed by the runs before this one
    restarts: int = 0
    in_row: int = 0  # restarts since the monitor last ran healthy_s
    restart_at: float | None = None
    why: str = ""
    done: bool = False


@dataclass(frozen=True)
class TableView:
    """A table in the status line."""

    table: str
    state: str
    frames: int  # processed, all runs together
    fps: float
    alerts: int  # emitted by the current run
    restarts: int
    pid: int | None


class Supervisor:
    """Starts a monitor per table of ``fleet`` on the ``ray`` instance and keeps them running
    (see the module doc). ``say`` gets a line for each restart; ``clock`` gives the seconds the
    back-off and the deadlines are counted in. Call from one thread."""

    def __init__(
        self,
        ray: ModuleType,
        fleet: Fleet,
        say: Callable[[str], None] = _stderr,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ray, self._say, self._clock = ray, say, clock
        self._watchdog: WatchdogConfig = fleet.watchdog
        self._actor_class = ray.remote(TableMonitor)
        self._slots = [_Slot(table, fleet.settings[table.table]) for table in fleet.tables]
        self._need_cpus = fleet_cpus(fleet)

    @property
    def done(self) -> bool:
        """Every table's source ended."""
        return all(slot.done for slot in self._slots)

    def run(self, stop: threading.Event, checked: Callable[[], None] | None = None) -> None:
        """Start every monitor, check them each ``check_s`` (then call ``checked``) until
        ``stop`` is set or every table is done, and stop them cleanly. An exception (a second
        Ctrl-C) kills them at once."""
        self.start()
        try:
            while not stop.is_set() and not self.done:
                began = self._clock()
                self.check()
                if checked is not None:
                    checked()
                stop.wait(max(0.0, self._watchdog.check_s - (self._clock() - began)))
        except BaseException:
            self.kill()
            raise
        self.stop()

    def start(self) -> None:
        have = cluster_cpus(self._ray)
        if self._need_cpus > have:
            self._say(
                f"warning: the monitors ask for {self._need_cpus} CPUs, Ray offers {have}: "
                "some tables wait for a CPU"
            )
        for slot in self._slots:
            self._start(slot, None)

    def check(self) -> None:
        """One round: restarts that are due, a status call to every monitor without one in
        flight, the answers that come within ``check_s``, judged; late ones restarted."""
        now = self._clock()
        for slot in self._slots:
            if slot.restart_at is not None and now >= slot.restart_at:
                self._start(slot, Restart(slot.restarts, slot.why))
            if slot.actor is not None and slot.call is None:
                slot.call, slot.asked_at = slot.actor.status.remote(), now
        calls = {slot.call: slot for slot in self._slots if slot.call is not None}
        if not calls:
            return
        check_s = self._watchdog.check_s
        ready, _ = self._ray.wait(list(calls), num_returns=len(calls), timeout=check_s)
        for ref in ready:
            calls[ref].call = None
            self._answered(calls[ref], ref)
        now = self._clock()
        for slot in calls.values():
            deadline_s = self._watchdog.heartbeat_s if slot.answered else self._watchdog.start_s
            if slot.call is not None and now - slot.asked_at > deadline_s:
                self._restart(slot, f"no answer to its status call in {deadline_s:g} s")

    def _answered(self, slot: _Slot, ref: Any) -> None:
        errors = self._ray.exceptions
        try:
            status: MonitorStatus = self._ray.get(ref)
        except errors.RayActorError:
            pid = f" {slot.status.pid}" if slot.status is not None else ""
            self._restart(slot, f"its process{pid} died")
            return
        except errors.RayError as exc:
            self._restart(slot, f"its status call failed: {str(exc).strip()[:200]}")
            return
        slot.answered, slot.status = True, status
        if status.state is MonitorState.ENDED:
            self._say(f"{slot.table.table}: its source ended ({self._frames(slot)} frames)")
            self._kill(slot)
            slot.done = True
            return
        why = self._trouble(status)
        if why:
            self._restart(slot, why)

    def _trouble(self, status: MonitorStatus) -> str | None:
        """Why a monitor that answered must be restarted, or None."""
        watchdog = self._watchdog
        match status.state:
            case MonitorState.FAILED:
                return f"its run failed ({status.error})"
            case MonitorState.STARTING if status.age_s > watchdog.start_s:
                return f"still starting after {status.age_s:.0f} s"
            case MonitorState.RUNNING if status.loop_age_s > watchdog.stall_s:
                return f"stalled: its loop has not turned for {status.loop_age_s:.0f} s"
            case MonitorState.RUNNING if not status.blind and status.frame_age_s > watchdog.stall_s:
                return f"stalled: no frame processed for {status.frame_age_s:.0f} s"
        return None

    def _start(self, slot: _Slot, restart: Restart | None) -> None:
        options = self._actor_class.options(
            num_cpus=slot.settings.detector.threads, max_restarts=0, max_task_retries=0
        )
        notices = self._watchdog.notice_checks
        slot.actor = options.remote(slot.table.source, slot.settings, restart, notices)
        slot.call, slot.answered, slot.status = None, False, None
        slot.started_at, slot.restart_at = self._clock(), None
        if restart is not None:
            self._say(f"{slot.table.table}: started again (restart {restart.attempt})")

    def _restart(self, slot: _Slot, why: str) -> None:
        """Kill the table's monitor; start it again after the back-off."""
        self._kill(slot)
        if slot.status is not None:
            slot.frames_before += slot.status.frames
            slot.status = None
        now = self._clock()
        if now - slot.started_at >= self._watchdog.healthy_s:
            slot.in_row = 0
        slot.in_row += 1
        slot.restarts += 1
        first, most = self._watchdog.backoff_first_s, self._watchdog.backoff_max_s
        wait_s = min(first * 2 ** min(slot.in_row - 1, 30), most)
        slot.restart_at, slot.why = now + wait_s, why
        self._say(f"{slot.table.table}: {why}; restart {slot.restarts} in {wait_s:g} s")

    def _kill(self, slot: _Slot) -> None:
        if slot.actor is not None:
            self._ray.kill(slot.actor, no_restart=True)
        slot.actor, slot.call = None, None

    def stop(self, timeout_s: float = STOP_WAIT_S) -> None:
        """Stop every monitor cleanly (each closes its pipeline, bus and journal), waiting up
        to ``timeout_s``; then kill every actor."""
        live = [slot for slot in self._slots if slot.actor is not None]
        calls = {slot.actor.stop.remote(timeout_s): slot for slot in live}
        if not calls:
            return
        ready, late = self._ray.wait(list(calls), num_returns=len(calls), timeout=timeout_s + 5)
        for ref in ready:
            try:
                calls[ref].status = self._ray.get(ref)
            except self._ray.exceptions.RayError as exc:
                self._say(f"{calls[ref].table.table}: not stopped cleanly: {str(exc)[:200]}")
        for ref in late:
            self._say(f"{calls[ref].table.table}: not stopped within {timeout_s:g} s; killed")
        self.kill()

    def kill(self) -> None:
        """Kill every monitor at once (no clean end); nothing is restarted after."""
        for slot in self._slots:
            self._kill(slot)
            slot.restart_at = None

    def views(self) -> list[TableView]:
        """Every table as the status line shows it."""
        return [self._view(slot) for slot in self._slots]

    def _view(self, slot: _Slot) -> TableView:
        status = slot.status
        if slot.done:
            state = str(MonitorState.ENDED)
        elif slot.restart_at is not None:
            state = WAITING
        else:
            state = str(status.state) if status is not None else str(MonitorState.STARTING)
        return TableView(
            table=slot.table.table,
            state=state,
            frames=self._frames(slot),
            fps=status.fps if status is not None else 0.0,
            alerts=status.alerts if status is not None else 0,
            restarts=slot.restarts,
            pid=status.pid if status is not None else None,
        )

    @staticmethod
    def _frames(slot: _Slot) -> int:
        return slot.frames_before + (slot.status.frames if slot.status is not None else 0)
