"""One table's monitor, composed from its settings: what ``paigow monitor`` runs, and what each
actor of ``paigow fleet`` runs in a thread of its own.

:func:`run_monitor` opens SOURCE (``settings.source``), the alert store (``settings.journal``:
the journal and its spill), the publisher (``settings.bus``), the table's pipeline (the layout
and every stage's settings), the evidence snapshots and, when ``metrics.endpoint`` is set, the
Prometheus and health endpoints (:mod:`pipeline.live.metrics`; bound first, so a bad address
fails before anything slow), runs
:class:`~pipeline.live.monitor.Monitor` until the source ends or ``stop`` is set, and closes them
in reverse order: the pipeline's closing alerts are journaled and published before the
publisher and the journal close. ``started`` is called once everything is open, before the
first frame, with the monitor and its publisher: the fleet reads the monitor's counters from
there and publishes its ``monitor_restarted`` notice through the table's own publisher.

A line on stderr says what was opened (and warns when the layout was drawn for frames of
another size). Bad input (a missing source, a bad layout, an endpoint that cannot be bound) is
a ValueError with one line, raised before any frame is read.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from contextlib import ExitStack
from typing import TYPE_CHECKING

from pipeline.live.monitor import ConsoleReport, Monitor, MonitorStats

if TYPE_CHECKING:
    from pipeline.bus import AlertPublisher, AlertStore
    from pipeline.layout import Layout
    from pipeline.live.metrics import MonitorMetrics
    from pipeline.live.sources import Source
    from pipeline.settings import Settings

Started = Callable[[Monitor, "AlertPublisher"], None]
"""Told the monitor and its publisher once everything is open, before the first frame."""


def _note(text: str) -> None:
    print(f"paigow monitor: {text}", file=sys.stderr, flush=True)


def run_monitor(
    source_text: str,
    settings: Settings,
    stop: threading.Event,
    report: ConsoleReport | None = None,
    started: Started | None = None,
) -> MonitorStats:
    """Watch ``source_text`` as ``settings.table`` until the source ends or ``stop`` is set;
    the run's counters. ``settings`` must name a table and a layout (ValueError otherwise).
    ``report``: where alerts and the status line go (a :class:`ConsoleReport` on stdout and
    stderr by default)."""
    from pipeline.bus import AlertStore
    from pipeline.evidence import Snapshots
    from pipeline.layout import load_layout
    from pipeline.live.metrics import MonitorMetrics
    from pipeline.live.sources import open_source
    from pipeline.runner import TablePipeline

    if settings.table is None or settings.layout is None:
        raise ValueError("a monitor needs a table and a layout")
    layout = load_layout(settings.layout)
    table, journal = settings.table, settings.journal
    config = settings.monitor.build()
    metrics = MonitorMetrics(table, settings.metrics.build())
    with ExitStack() as stack:
        served = _serve(metrics, stack)  # first: a bad address fails before anything slow
        source = stack.enter_context(
            open_source(
                source_text, settings.source.build(camera_id=table, keep_every=config.stride)
            )
        )
        for warning in (size_warning(layout, source.size_wh), layout.tile_note):
            if warning:
                _note(warning)
        store = stack.enter_context(AlertStore(journal.path, journal.spill, journal.build()))
        publisher = stack.enter_context(_publisher(settings, store))
        _note(
            f"table {table}: {source_text} ({_shape(source)}) -> {_outputs(store, publisher)}"
            + served
        )
        pipeline = TablePipeline(table, layout, settings.pipeline_config(layout.chung_box))
        folder = journal.snapshots or journal.path.parent
        snapshots = Snapshots(folder, layout, settings.snapshots.build())
        report = report or ConsoleReport(config)
        monitor = Monitor(source, metrics.timed(pipeline), publisher, config, report, snapshots)
        metrics.attach(monitor, store)
        publisher.status = monitor.status  # the heartbeats carry the table's health
        if started is not None:
            started(monitor, publisher)
        return monitor.run(stop)


def _serve(metrics: MonitorMetrics, stack: ExitStack) -> str:
    """Serve ``metrics`` if an endpoint is set, until the stack closes; what the start line
    says of it ("" when off)."""
    from pipeline.live.metrics import MetricsServer

    if metrics.config.endpoint is None:
        return ""
    server = stack.enter_context(MetricsServer(metrics))
    return f", metrics on {server.url}/metrics"


def size_warning(layout: Layout, size_wh: tuple[int, int] | None) -> str | None:
    """A warning when the layout was drawn for frames of another size than the source's."""
    if not (layout.image_size_wh and size_wh) or tuple(layout.image_size_wh) == tuple(size_wh):
        return None
    w, h = layout.image_size_wh
    return (
        f"warning: the layout is for {w}x{h} frames, the video is {size_wh[0]}x{size_wh[1]}: "
        "zones may be off"
    )


def _publisher(settings: Settings, store: AlertStore) -> AlertPublisher:
    from pipeline.bus import AlertPublisher
    from pipeline.bus.keys import server_curve

    keys = settings.bus.keys
    curve = server_curve(keys) if keys else None
    return AlertPublisher(store, settings.table, settings.bus.build(), curve)


def _outputs(store: AlertStore, publisher: AlertPublisher) -> str:
    state = f"id {store.id}" if store.journal else f"not open yet: {store.failure}"
    return (
        f"journal {store.path} ({state}), alerts on {publisher.pub_endpoint}, "
        f"replay {publisher.replay_endpoint}"
    )


def _shape(source: Source) -> str:
    size = "x".join(map(str, source.size_wh)) if source.size_wh else "size unknown"
    return f"{size} at {source.fps:g} fps, {'live' if source.live else 'every frame'}"
