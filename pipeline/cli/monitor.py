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

Bad input (a missing file, a file that is not a video, a stream that does not answer within
``--open-timeout-s``, a bad layout) is one line on stderr, status 2.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from contextlib import ExitStack
from pathlib import Path
from types import FrameType

from pipeline.bus.endpoints import PUB_ENDPOINT, REPLAY_ENDPOINT
from pipeline.cli.common import EXIT_INTERRUPTED, check_size, positive

DEFAULT_JOURNAL = Path("alerts.db")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "monitor",
        help="watch one table camera live; journal and publish its alerts",
        description="Watch one table camera: every alert journaled, published and printed.",
        epilog="SIGTERM stops cleanly with status 0, SIGINT (Ctrl-C) with status 130.",
    )
    p.add_argument("source", metavar="SOURCE", help="video file, stream URL, camera index, folder")
    p.add_argument("--layout", type=Path, required=True, metavar="L", help="table layout YAML")
    p.add_argument("--table", required=True, metavar="T", help="table id named in the alerts")
    _add_output_options(p)
    _add_input_options(p)
    p.set_defaults(func=cmd_monitor)


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--publish",
        default=PUB_ENDPOINT,
        metavar="PUB",
        help=f"PUB endpoint to bind ({PUB_ENDPOINT})",
    )
    p.add_argument(
        "--replay",
        default=REPLAY_ENDPOINT,
        metavar="REP",
        help=f"replay endpoint ({REPLAY_ENDPOINT})",
    )
    p.add_argument(
        "--journal",
        type=Path,
        default=DEFAULT_JOURNAL,
        help=f"SQLite alert journal ({DEFAULT_JOURNAL})",
    )
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
    p.add_argument("--realtime", action="store_true", help="pace a file at its frame rate")
    p.add_argument("--threads", type=positive(int), default=2, help="inference threads (2)")
    p.add_argument("--fps", type=positive(float), help="frame rate of an image folder (25)")
    p.add_argument(
        "--queue-size",
        type=positive(int),
        default=8,
        metavar="N",
        help="frames waiting for the pipeline; a live source drops the oldest beyond (8)",
    )
    p.add_argument(
        "--open-timeout-s",
        type=positive(float),
        default=10.0,
        metavar="S",
        help="a stream or camera not open by then is unreachable (10)",
    )
    p.add_argument(
        "--read-timeout-s",
        type=positive(float),
        default=5.0,
        metavar="S",
        help="a live source silent this long is lost: camera_lost, then reconnect (5)",
    )


def _note(text: str) -> None:
    print(f"paigow monitor: {text}", file=sys.stderr, flush=True)


class StopOnSignals:
    """While entered (in the main thread), SIGINT and SIGTERM set ``stop`` and are remembered
    in ``signal``; a second one raises KeyboardInterrupt. Elsewhere it does nothing."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.signal: int | None = None
        self._previous: dict[int, object] = {}

    def _caught(self, signum: int, frame: FrameType | None) -> None:
        if self.signal is not None:
            raise KeyboardInterrupt
        self.signal = signum
        self.stop.set()

    def __enter__(self) -> StopOnSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                self._previous[signum] = signal.signal(signum, self._caught)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]


def cmd_monitor(args: argparse.Namespace) -> int:
    with StopOnSignals(threading.Event()) as signals:  # from the start: loading may take long
        stats = _monitor(args, signals.stop)
    why = "source ended" if signals.signal is None else signal.Signals(signals.signal).name
    _note(
        f"stopped ({why}): {stats.frames} frames, {stats.dropped} dropped, {stats.gaps} gaps, "
        f"{stats.alerts} alerts journaled in {args.journal}"
    )
    return EXIT_INTERRUPTED if signals.signal == signal.SIGINT else 0


def _monitor(args: argparse.Namespace, stop: threading.Event):
    from pipeline.bus import AlertStore
    from pipeline.evidence import SnapshotConfig, Snapshots
    from pipeline.layout import load_layout
    from pipeline.live.monitor import ConsoleReport, Monitor, MonitorConfig
    from pipeline.live.sources import SourceConfig, open_source

    layout = load_layout(args.layout)
    source_config = SourceConfig(
        realtime=args.realtime,
        open_timeout_s=args.open_timeout_s,
        read_timeout_s=args.read_timeout_s,
        fps=args.fps,
        camera_id=args.table,
    )
    config = MonitorConfig(queue_size=args.queue_size)
    with ExitStack() as stack:
        source = stack.enter_context(open_source(args.source, source_config))
        check_size(layout, source.size_wh, prefix="paigow monitor: ")
        store = stack.enter_context(AlertStore(args.journal, args.spill))
        publisher = stack.enter_context(_publisher(args, store))
        state = f"id {store.id}" if store.journal else f"not open yet: {store.failure}"
        _note(
            f"table {args.table}: {args.source} ({_shape(source)}) -> journal {args.journal} "
            f"({state}), alerts on {publisher.pub_endpoint}, replay {publisher.replay_endpoint}"
        )
        pipeline = _pipeline(args, layout)
        snapshots = Snapshots(args.snapshots or args.journal.parent, layout, SnapshotConfig())
        monitor = Monitor(source, pipeline, publisher, config, ConsoleReport(config), snapshots)
        return monitor.run(stop)


def _publisher(args: argparse.Namespace, store):
    from pipeline.bus import AlertPublisher, PublisherConfig
    from pipeline.bus.keys import server_curve

    curve = server_curve(args.keys) if args.keys else None
    return AlertPublisher(store, args.table, PublisherConfig(args.publish, args.replay), curve)


def _pipeline(args: argparse.Namespace, layout):
    from pipeline.runner import PipelineConfig, TablePipeline

    return TablePipeline(args.table, layout, PipelineConfig(threads=args.threads))


def _shape(source) -> str:
    size = "x".join(map(str, source.size_wh)) if source.size_wh else "size unknown"
    return f"{size} at {source.fps:g} fps, {'live' if source.live else 'every frame'}"
