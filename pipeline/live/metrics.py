"""A monitor's Prometheus metrics and health, served over HTTP; the only prometheus_client import.

:class:`MonitorMetrics` keeps a registry of its own (never the process-wide default: several
monitors may share a process, a test or a fleet), every series labelled with the table. Most
values are read from the :class:`~pipeline.live.monitor.Monitor` when scraped (its counters,
its loop state, the times of its last loop turn and last frame) and from the alert store (the
alerts waiting in the spill); only the two timing histograms are filled as frames pass, by the
pipeline wrapper :meth:`MonitorMetrics.timed`. Every metric, its type and labels:
``docs/usage.md`` (Metrics and health).

:class:`MetricsServer` answers, from a daemon thread (one more per request):

- ``/metrics``: the Prometheus text format;
- ``/healthz``: 200 ``ok`` while the processing loop has turned within ``stall_s`` (or, before
  it starts, while starting has taken no longer), else 503 with a one-line reason;
- ``/readyz``: 200 ``ok`` once the source is open, the models are loaded and a frame has gone
  through, and while the camera sees; else 503 with the reason (starting, camera lost, ...).

Scrapes read plain attributes the monitor writes (no lock of the monitor's is taken), so serving
never slows or stops the monitor; ``close()`` ends the server. Wiring, as ``paigow monitor``
does it (the server first: a bad address fails before anything slow)::

    metrics = MonitorMetrics("T7", MetricsConfig(endpoint="127.0.0.1:9464"))
    with MetricsServer(metrics) as server:            # server.url: http://127.0.0.1:9464
        monitor = Monitor(source, metrics.timed(pipeline), publisher)
        metrics.attach(monitor, publisher.store)
        monitor.run(stop)
"""

from __future__ import annotations

import functools
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily

from pipeline.live.monitor import MonitorStats

if TYPE_CHECKING:
    from pipeline.live.monitor import FramePipeline, Monitor

DEFAULT_HOST = "127.0.0.1"
SECONDS_BUCKETS = (0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12)
"""Histogram buckets of the timings, doubling: a gated frame takes milliseconds, a full one with
many faces read tens to hundreds; past 1 s per frame a 25 fps camera is far behind."""


@dataclass(frozen=True)
class MetricsConfig:
    """Where a monitor serves its metrics and health, and when it calls itself stuck."""

    endpoint: str | None = None  # HOST:PORT (or PORT alone, on 127.0.0.1) of /metrics,
    # /healthz and /readyz; port 0: any free one; None: not served
    stall_s: float = 30.0  # /healthz is 503 once the loop has not turned for this long; lower:
    # a stuck pipeline is restarted sooner, but a slow start or a journal wait may pass for one


def parse_endpoint(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6), or ``PORT`` alone on 127.0.0.1 -> (host, port);
    ValueError (one line) for anything else.

    >>> parse_endpoint("127.0.0.1:9464"), parse_endpoint("9464"), parse_endpoint("[::1]:0")
    (('127.0.0.1', 9464), ('127.0.0.1', 9464), ('::1', 0))
    """
    host, colon, port = text.strip().rpartition(":")
    host = host.removeprefix("[").removesuffix("]") if colon else DEFAULT_HOST
    if not host or not (port.isascii() and port.isdigit()) or int(port) > 65535:
        raise ValueError(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:9464, or 9464)")
    return host, int(port)


def metrics_url(endpoint: str) -> str:
    """The base URL a monitor with this ``metrics.endpoint`` serves (port 0 is known only once
    bound: :attr:`MetricsServer.url`).

    >>> metrics_url("9464"), metrics_url("[::1]:9464")
    ('http://127.0.0.1:9464', 'http://[::1]:9464')
    """
    return _url(*parse_endpoint(endpoint))


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class Pending(Protocol):
    """The alert store as the metrics see it (:class:`pipeline.bus.store.AlertStore`)."""

    @property
    def pending(self) -> int: ...


class MonitorMetrics:
    """The metrics and health of one table's monitor, in a registry of its own (``registry``).

    Made before the monitor (so health can be served while the models load); :meth:`attach`
    the monitor once it exists. ``clock`` is the monotonic clock the monitor's times use.
    """

    def __init__(
        self,
        table: str,
        config: MetricsConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.table, self.config = table, config or MetricsConfig()
        self._clock = clock
        self._started_at = clock()
        self._monitor: Monitor | None = None
        self._store: Pending | None = None
        self.registry = CollectorRegistry(auto_describe=False)
        self._pipeline_s = Histogram(
            "paigow_pipeline_seconds",
            "Wall seconds of the pipeline on one processed frame (every stage)",
            ["table"],
            registry=self.registry,
            buckets=SECONDS_BUCKETS,
        ).labels(table)
        self._detect_s = Histogram(
            "paigow_detector_seconds",
            "Wall seconds of the models (detector and face reader) on one frame they ran on",
            ["table"],
            registry=self.registry,
            buckets=SECONDS_BUCKETS,
        ).labels(table)
        self._latency_s = Histogram(
            "paigow_alert_latency_seconds",
            "Wall seconds from the arrival of the frame that raised an alert to the alert's "
            "publication (queue wait, pipeline, snapshot, journal, bus)",
            ["table"],
            registry=self.registry,
            buckets=SECONDS_BUCKETS,
        ).labels(table)
        self.registry.register(self)  # collect(): what is read at scrape time
        # the process's CPU seconds and memory (process_*: in a fleet, each monitor's own)
        ProcessCollector(registry=self.registry)

    def attach(self, monitor: Monitor, store: Pending | None = None) -> None:
        """Serve ``monitor``'s figures (and the spill of ``store``) from now on."""
        self._monitor, self._store = monitor, store
        monitor.on_latency = self._latency_s.observe

    def timed(self, pipeline: FramePipeline) -> FramePipeline:
        """``pipeline`` with each ``process`` call timed into the histograms."""
        return _Timed(pipeline, self._pipeline_s, self._detect_s)

    def health(self) -> tuple[bool, str]:
        """(alive, ``ok`` or why not): the loop turned within ``stall_s``."""
        monitor = self._monitor
        if monitor is not None and monitor.loop_state == "stopped":
            return False, "stopped"
        if monitor is None or monitor.last_tick_at is None:
            waited_s = self._clock() - self._started_at
            what = "starting (opening the source, loading the models)"
        else:
            waited_s = self._clock() - monitor.last_tick_at
            what = "the processing loop has not turned"
        if waited_s <= self.config.stall_s:
            return True, "ok"
        return False, f"stuck: {what} for {waited_s:.1f} s (limit {self.config.stall_s:g} s)"

    def readiness(self) -> tuple[bool, str]:
        """(ready, ``ok`` or why not): running, frames through, the camera seeing."""
        alive, why = self.health()
        monitor = self._monitor
        if not alive:
            return False, why
        if monitor is None or monitor.loop_state == "not started":
            return False, "starting: opening the source, loading the models"
        if monitor.stats.blind:
            return False, "camera lost: no usable picture (the table is blind)"
        if monitor.stats.frames == 0:
            return False, "waiting for the first frame"
        return True, "ok"

    def exposition(self) -> bytes:
        """The registry in the Prometheus text format."""
        return generate_latest(self.registry)

    def collect(self) -> Iterator[Any]:
        """The series read at scrape time (the registry calls this)."""
        monitor = self._monitor
        stats = monitor.stats if monitor is not None else MonitorStats()
        yield from self._counters(stats)
        alive, ready = self.health()[0], self.readiness()[0]
        yield self._gauge("paigow_monitor_up", "1 while /healthz answers 200", alive)
        yield self._gauge("paigow_monitor_ready", "1 while /readyz answers 200", ready)
        running = monitor is not None and monitor.loop_state == "running"
        seeing = running and stats.frames > 0 and not stats.blind
        yield self._gauge("paigow_camera_up", "1 while the camera gives usable pictures", seeing)
        if monitor is not None and monitor.last_frame_at is not None:
            age_s = self._clock() - monitor.last_frame_at
            yield self._gauge(
                "paigow_last_frame_age_seconds", "Seconds since the source gave a frame", age_s
            )
        if self._store is not None:
            waiting = "Alerts kept in the spill, not yet in the journal"
            yield self._gauge("paigow_journal_lag_alerts", waiting, self._store.pending)
        info = InfoMetricFamily("paigow_monitor", "Version and kind of source", labels=["table"])
        live = "unknown" if monitor is None else "live" if monitor.source.live else "file"
        info.add_metric([self.table], {"version": _version(), "source": live})
        yield info

    def _counters(self, stats: MonitorStats) -> Iterator[CounterMetricFamily]:
        counts = (
            ("paigow_frames_read", "Frames read from the source", stats.frames_in),
            ("paigow_frames_processed", "Frames through the pipeline", stats.frames),
            ("paigow_frames_dropped", "Frames dropped by the queue (overload)", stats.dropped),
            ("paigow_frames_unusable", "Frames the pipeline refused (an odd size)", stats.unusable),
            ("paigow_gaps", "Stretches without a picture (camera lost, unreadable)", stats.gaps),
        )
        for name, help_text, value in counts:
            family = CounterMetricFamily(name, help_text, labels=["table"])
            family.add_metric([self.table], value)
            yield family
        alerts = CounterMetricFamily(
            "paigow_alerts", "Alerts emitted, by kind and state", labels=["table", "kind", "state"]
        )
        for (kind, state), value in sorted(stats.alerts_by.copy().items()):
            alerts.add_metric([self.table, kind, state], value)
        yield alerts

    def _gauge(self, name: str, help_text: str, value: float) -> GaugeMetricFamily:
        family = GaugeMetricFamily(name, help_text, labels=["table"])
        family.add_metric([self.table], float(value))
        return family


@functools.cache
def _version() -> str:
    try:
        return metadata.version("paigow-monitor")
    except metadata.PackageNotFoundError:  # run from a checkout, not installed
        return "unknown"


class _Timed:
    """A pipeline whose ``process`` is timed (the whole call, and the models' part where the
    result says, ``detect_s``); ``no_frame`` and ``finish`` pass through."""

    def __init__(self, pipeline: FramePipeline, whole: Any, models: Any) -> None:
        self._pipeline, self._whole, self._models = pipeline, whole, models

    def process(self, frame: Any, wall_time: str | None = None) -> Any:
        started = time.perf_counter()
        result = self._pipeline.process(frame, wall_time)  # a refused frame is not timed
        self._whole.observe(time.perf_counter() - started)
        detect_s = getattr(result, "detect_s", None)
        if detect_s is not None:
            self._models.observe(detect_s)
        return result

    def no_frame(self, index: int, time_s: float, reason: str, wall_time: str | None = None):
        return self._pipeline.no_frame(index, time_s, reason, wall_time)

    def finish(self, wall_time: str | None = None) -> tuple[list, list]:
        return self._pipeline.finish(wall_time)


class MetricsServer:
    """Serves ``metrics`` on its ``config.endpoint`` (or ``endpoint``) from a daemon thread;
    ``url`` is the base URL, a port 0 resolved. ValueError (one line) for an address that cannot
    be used: malformed, unknown host, port in use. A context manager; or call close()."""

    def __init__(self, metrics: MonitorMetrics, endpoint: str | None = None) -> None:
        endpoint = endpoint or metrics.config.endpoint
        if endpoint is None:
            raise ValueError("no metrics endpoint: give --metrics HOST:PORT")
        host, port = parse_endpoint(endpoint)
        try:
            family, *_, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
            self._server = _Server(address, family, metrics)
        except OSError as exc:
            why = exc.strerror or str(exc)
            raise ValueError(f"cannot serve metrics on {endpoint}: {why}") from None
        self.url = _url(host, self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},  # how soon close() is seen
            name=f"metrics-{metrics.table}",
            daemon=True,
        )
        self._thread.start()

    def close(self) -> None:
        """Stop serving and free the port (a request in flight may still be answered)."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()

    def __enter__(self) -> MetricsServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a slow client never holds the process, nor close()

    def __init__(self, address: tuple, family: int, metrics: MonitorMetrics) -> None:
        self.address_family = family  # read when the socket is made, in __init__
        self.metrics = metrics
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer's own also looks the host's name up (getfqdn): a DNS wait for nothing
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a client gone mid-answer is no fault
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    timeout = 5.0  # seconds a client may take to send its request before it is dropped
    server: _Server

    def do_GET(self) -> None:
        metrics = self.server.metrics
        match self.path.partition("?")[0]:
            case "/metrics":
                try:
                    body = metrics.exposition()
                except Exception as exc:  # a fault here is one answer, never the monitor's
                    self._answer(500, f"metrics not collected: {exc!r:.300}\n".encode())
                else:
                    self._answer(200, body, CONTENT_TYPE_LATEST)
            case "/healthz":
                self._judged(*metrics.health())
            case "/readyz":
                self._judged(*metrics.readiness())
            case _:
                self._answer(404, b"not found: /metrics, /healthz or /readyz\n")

    def _judged(self, good: bool, why: str) -> None:
        self._answer(200 if good else 503, f"{why}\n".encode())

    def _answer(self, status: int, body: bytes, kind: str = "text/plain; charset=utf-8") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # no line per scrape on the monitor's stderr, where its status line is
