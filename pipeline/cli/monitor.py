"""``paigow monitor SOURCE --layout L --table T``: watch one table camera, publish its alerts.

SOURCE is a video file, a stream URL (``rtsp://``, ``http://`` ...), a camera index (``0``) or
a folder of images (:mod:`pipeline.live.sources`). Every alert is journaled (``--journal``), then
published on ``--publish`` (PUB) with replays on ``--replay``, and printed on stdout, one line
each; a one-line status (fps, dropped frames, alerts, phase, blind or not) is refreshed on
stderr. Each alert's evidence frame is saved where its ``evidence.snapshot`` says, under
``--snapshots`` (the journal's folder by default). A file source ends the monitor at its end
(``--realtime`` paces it like a camera).

Stopping: SIGTERM or SIGINT (Ctrl-C) stops reading, finishes the pipeline (its closing alerts
are emitted), then closes the publisher and the journal. The exit status is 0 for SIGTERM and
for the end of a file, 130 for SIGINT (as for every ``paigow`` command), also when the signal
comes while the models load; a second signal while stopping aborts at once (130).

The journal never stops the monitor: while it refuses writes (a full disk, a lock held by
another process), alerts go to the spill file (``--spill``, beside the journal by default;
put it on another disk) and are written back when it recovers (:mod:`pipeline.bus.store`).

Every option is also a setting (:mod:`pipeline.settings`): ``--config FILE`` sets them, and
every other setting of the pipeline, in one file; an option given overrides it.

Bad input (a missing file, a file that is not a video, a stream that does not answer within
``--open-timeout-s``, a bad layout or settings file) is one line on stderr, status 2.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.bus.endpoints import PUB_ENDPOINT, REPLAY_ENDPOINT
from pipeline.cli.common import (
    EXIT_INTERRUPTED,
    StopOnSignals,
    UsageError,
    add_settings_options,
    check_size,
    positive,
    settings_of,
)

if TYPE_CHECKING:
    from pipeline.settings import Settings

FLAGS = {
    "table": "table",
    "layout": "layout",
    "publish": "bus.pub_endpoint",
    "replay": "bus.replay_endpoint",
    "keys": "bus.keys",
    "journal": "journal.path",
    "spill": "journal.spill",
    "snapshots": "journal.snapshots",
    "realtime": "source.realtime",
    "fps": "source.fps",
    "open_timeout_s": "source.open_timeout_s",
    "read_timeout_s": "source.read_timeout_s",
    "queue_size": "monitor.queue_size",
    "threads": "detector.threads",
}
"""Each option -> the setting it overrides when given."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "monitor",
        help="watch one table camera live; journal and publish its alerts",
        description="Watch one table camera: every alert journaled, published and printed.",
        epilog="SIGTERM stops cleanly with status 0, SIGINT (Ctrl-C) with status 130.",
    )
    p.add_argument("source", metavar="SOURCE", help="video file, stream URL, camera index, folder")
    p.add_argument(
        "--layout", type=Path, metavar="L", help="table layout YAML (required here or in --config)"
    )
    p.add_argument(
        "--table", metavar="T", help="table id named in the alerts (required here or in --config)"
    )
    add_settings_options(p)
    _add_output_options(p)
    _add_input_options(p)
    p.set_defaults(func=cmd_monitor)


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--publish",
        metavar="PUB",
        help=f"PUB endpoint to bind ({PUB_ENDPOINT})",
    )
    p.add_argument(
        "--replay",
        metavar="REP",
        help=f"replay endpoint ({REPLAY_ENDPOINT})",
    )
    p.add_argument("--journal", type=Path, help="SQLite alert journal (alerts.db)")
    p.add_argument(
        "--spill",
        type=Path,
        metavar="FILE",
        help="where alerts wait while the journal cannot be written (JOURNAL.spill.jsonl)",
    )
    p.add_argument(
        "--snapshots",
        type=Path,
        metavar="DIR",
        help="folder the alerts' evidence.snapshot paths are under (the journal's folder)",
    )
    p.add_argument("--keys", type=Path, metavar="DIR", help="CURVE keys directory (paigow keys)")


def _add_input_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--realtime", action="store_true", default=None, help="pace a file at its frame rate"
    )
    p.add_argument("--threads", type=positive(int), help="inference threads (2)")
    p.add_argument("--fps", type=positive(float), help="frame rate of an image folder (25)")
    p.add_argument(
        "--queue-size",
        type=positive(int),
        metavar="N",
        help="frames waiting for the pipeline; a live source drops the oldest beyond (8)",
    )
    p.add_argument(
        "--open-timeout-s",
        type=positive(float),
        metavar="S",
        help="a stream or camera not open by then is unreachable (10)",
    )
    p.add_argument(
        "--read-timeout-s",
        type=positive(float),
        metavar="S",
        help="a live source silent this long is lost: camera_lost, then reconnect (5)",
    )


def _note(text: str) -> None:
    print(f"paigow monitor: {text}", file=sys.stderr, flush=True)


def cmd_monitor(args: argparse.Namespace) -> int:
    settings = settings_of(args, FLAGS)
    for key, option in (("table", "--table T"), ("layout", "--layout L")):
        if getattr(settings, key) is None:
            raise UsageError(f"no {key}: give {option}, or {key}: in the --config file")
    with StopOnSignals(threading.Event()) as signals:  # from the start: loading may take long
        stats = _monitor(args.source, settings, signals.stop)
    why = "source ended" if signals.signal is None else signal.Signals(signals.signal).name
    _note(
        f"stopped ({why}): {stats.frames} frames, {stats.dropped} dropped, {stats.gaps} gaps, "
        f"{stats.alerts} alerts journaled in {settings.journal.path}"
    )
    return EXIT_INTERRUPTED if signals.signal == signal.SIGINT else 0


def _monitor(source_text: str, settings: Settings, stop: threading.Event):
    from pipeline.bus import AlertStore
    from pipeline.evidence import Snapshots
    from pipeline.layout import load_layout
    from pipeline.live.monitor import ConsoleReport, Monitor
    from pipeline.live.sources import open_source
    from pipeline.runner import TablePipeline

    layout = load_layout(settings.layout)
    table, journal = settings.table, settings.journal
    config = settings.monitor.build()
    with ExitStack() as stack:
        source = stack.enter_context(
            open_source(source_text, settings.source.build(camera_id=table))
        )
        check_size(layout, source.size_wh, prefix="paigow monitor: ")
        store = stack.enter_context(AlertStore(journal.path, journal.spill, journal.build()))
        publisher = stack.enter_context(_publisher(settings, store))
        state = f"id {store.id}" if store.journal else f"not open yet: {store.failure}"
        _note(
            f"table {table}: {source_text} ({_shape(source)}) -> journal {journal.path} "
            f"({state}), alerts on {publisher.pub_endpoint}, replay {publisher.replay_endpoint}"
        )
        pipeline = TablePipeline(table, layout, settings.pipeline_config(layout.chung_box))
        folder = journal.snapshots or journal.path.parent
        snapshots = Snapshots(folder, layout, settings.snapshots.build())
        monitor = Monitor(source, pipeline, publisher, config, ConsoleReport(config), snapshots)
        return monitor.run(stop)


def _publisher(settings: Settings, store):
    from pipeline.bus import AlertPublisher
    from pipeline.bus.keys import server_curve

    keys = settings.bus.keys
    curve = server_curve(keys) if keys else None
    return AlertPublisher(store, settings.table, settings.bus.build(), curve)


def _shape(source) -> str:
    size = "x".join(map(str, source.size_wh)) if source.size_wh else "size unknown"
    return f"{size} at {source.fps:g} fps, {'live' if source.live else 'every frame'}"
