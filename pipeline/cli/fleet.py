"""``paigow fleet FLEET.yaml``: a monitor per table, each a Ray actor, supervised.

The fleet file (:mod:`pipeline.cluster.fleet_config`) lists the tables: id, source, layout,
journal, publish and replay endpoints, optionally metrics and a settings file. The command
prints one line per table (where its alerts are published and journaled), starts a Ray instance
(``ray: auto``: local, sized to the machine) or joins one (``--ray ADDRESS``, or ``ray:`` in the
file), runs every table's monitor as an actor and keeps them running
(:mod:`pipeline.cluster.fleet`: a failed, hung or stalled monitor is restarted with back-off,
said on stderr and as a ``monitor_restarted`` notice on its table's bus). Every ``--status-s``
a status line on stderr gives each table's frames, frames per second, restarts and state.

Stopping: SIGTERM or SIGINT (Ctrl-C) stops every monitor cleanly (each one's closing alerts
journaled), then Ray; the exit status is 0 for SIGTERM, 130 for SIGINT, as for ``paigow
monitor``; a second signal stops at once (130). A fleet whose sources are all files or folders
(not looped) exits 0 once every one has ended.

A bad fleet file (an unknown key, a table or port or journal listed twice, a missing layout or
source) and Ray missing or unreachable are one line on stderr, status 2.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cli.common import StopOnSignals, positive

if TYPE_CHECKING:
    from pipeline.cluster.fleet import Supervisor, TableView
    from pipeline.cluster.fleet_config import Fleet, FleetTable


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fleet",
        help="run a monitor per table on Ray, supervised (restarted when one fails)",
        description="Run one monitor per table of FLEET.yaml as a Ray actor, restarting any that "
        "fails or stalls.",
        epilog="SIGTERM stops every monitor cleanly with status 0, SIGINT (Ctrl-C) with 130.",
    )
    p.add_argument("fleet", type=Path, metavar="FLEET.yaml", help="the fleet file")
    p.add_argument(
        "--ray",
        metavar="auto|ADDRESS",
        help="'auto' starts a local Ray instance, HOST:PORT joins a cluster (the file's ray:)",
    )
    p.add_argument(
        "--status-s",
        type=positive(float),
        default=10.0,
        metavar="S",
        help="a status line on stderr every S seconds (10)",
    )
    p.set_defaults(func=cmd_fleet)


def _note(text: str) -> None:
    print(f"paigow fleet: {text}", file=sys.stderr, flush=True)


def cmd_fleet(args: argparse.Namespace) -> int:
    from pipeline.cluster.fleet import Supervisor, local_cpus
    from pipeline.cluster.fleet_config import load_fleet
    from pipeline.cluster.runtime import ray_address, ray_instance

    fleet = load_fleet(args.fleet)
    address = args.ray or fleet.ray
    where = "a local Ray instance" if ray_address(address) is None else f"Ray at {address}"
    for table in fleet.tables:
        print(table_line(table), flush=True)
    # Ray's init puts in a SIGTERM handler of its own: ours go in after it
    with (
        ray_instance(address, local_cpus(fleet)) as ray,
        StopOnSignals(threading.Event()) as signals,
    ):
        supervisor = Supervisor(ray, fleet)
        _note(f"{len(fleet.tables)} tables on {where}")
        line = StatusLine(supervisor, args.status_s)
        supervisor.run(signals.stop, line.maybe)
    why = "every source ended" if signals.signal is None else signal.Signals(signals.signal).name
    _note(f"stopped ({why}): {summary(supervisor.views(), fleet)}")
    return signals.exit_status


def table_line(table: FleetTable) -> str:
    """What the fleet lists for a table: where its frames come from and its alerts go."""
    looped = " (looped)" if table.loop else ""
    parts = [
        table.table,
        f"source {table.source}{looped}",
        f"publish {table.publish}",
        f"replay {table.replay}",
        f"journal {table.journal}",
    ]
    if table.metrics_url:
        parts.append(f"metrics {table.metrics_url}")
    return " | ".join(parts)


class StatusLine:
    """Each table's frames, fps, restarts and state, on stderr every ``every_s``."""

    def __init__(self, supervisor: Supervisor, every_s: float) -> None:
        self._supervisor, self._every_s = supervisor, every_s
        self._shown_at = time.monotonic()

    def maybe(self) -> None:
        if time.monotonic() - self._shown_at >= self._every_s:
            self._shown_at = time.monotonic()
            _note(" | ".join(_table_status(view) for view in self._supervisor.views()))


def _table_status(view: TableView) -> str:
    return (
        f"{view.table} {view.state} {view.frames} frames {view.fps:.1f} fps "
        f"{view.restarts} restarts"
    )


def summary(views: list[TableView], fleet: Fleet) -> str:
    journals = {table.table: table.journal for table in fleet.tables}
    return "; ".join(
        f"{view.table} {view.frames} frames, {view.restarts} restarts, {view.alerts} alerts "
        f"(last run) in {journals[view.table]}"
        for view in views
    )
