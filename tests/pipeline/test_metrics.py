"""`paigow monitor`'s metrics and health (pipeline.live.metrics): the Prometheus text parses and
equals the monitor's counters after a run, /healthz turns 503 when the loop stalls, /readyz
follows starting, frames and a lost camera, two monitors in one process keep apart, and the
command line serves them (a bad or busy address: one line, status 2).

The fakes (sources, pipelines, sinks) are test_monitor's. Every wait is bounded by WAIT_S.
"""

import importlib.util
import queue
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import prometheus_client
import pytest
from prometheus_client.parser import text_string_to_metric_families

from pipeline.cli import main
from pipeline.live.metrics import MetricsConfig, MetricsServer, MonitorMetrics, parse_endpoint
from pipeline.live.monitor import Monitor, MonitorConfig
from pipeline.live.sources import Gap


def _monitor_tests():
    """test_monitor.py, for its fakes (registered: its dataclasses look their module up)."""
    path = Path(__file__).with_name("test_monitor.py")
    spec = importlib.util.spec_from_file_location("monitor_tests", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


fakes = _monitor_tests()
frame, FakeSource, StubPipeline, ListSink = (
    fakes.frame, fakes.FakeSource, fakes.StubPipeline, fakes.ListSink
)  # fmt: skip
WAIT_S = fakes.WAIT_S
ANY = "127.0.0.1:0"


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=WAIT_S) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def scrape(url: str) -> dict[tuple[str, frozenset], float]:
    """/metrics parsed: (sample name, its labels) -> value."""
    status, text = get(f"{url}/metrics")
    assert status == 200
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples[(name, frozenset({"table": "T1", **labels}.items()))]


def answer_becomes(url: str, status: int, body: str | None = None) -> str:
    """Ask ``url`` until it answers ``status`` (with ``body``, if given); the body."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        got, text = get(url)
        if got == status and body in (None, text):
            return text
        time.sleep(0.02)
    raise AssertionError(f"{url} did not answer {status} {body!r} within {WAIT_S} s")


class Spilling:
    """An alert store with alerts waiting in its spill."""

    pending = 3


@pytest.fixture
def served():
    """A metrics registry of table T1 served on a free port."""
    metrics = MonitorMetrics("T1", MetricsConfig(ANY, stall_s=2.0))
    with MetricsServer(metrics) as server:
        yield metrics, server.url


def run_in_thread(monitor: Monitor, stop: threading.Event) -> threading.Thread:
    """``monitor`` running until ``stop`` (set after WAIT_S at the latest)."""
    thread = threading.Thread(target=fakes.run_monitor, args=(monitor, stop))
    thread.start()
    return thread


# --- the text, equal to the monitor's counters -----------------------------------------------


def test_the_metrics_text_parses_and_counts_what_the_monitor_counted(served):
    metrics, url = served

    class Picky(StubPipeline):
        def process(self, frame, wall_time=None):
            if frame.index == 3:
                raise ValueError("a picture too small for the detector")
            return super().process(frame, wall_time)

    source = FakeSource(fakes.stopping_stream(), live=False)
    monitor = Monitor(source, metrics.timed(Picky()), ListSink())
    metrics.attach(monitor, Spilling())
    stats = fakes.run_monitor(monitor)
    samples = scrape(url)
    assert (stats.frames_in, stats.frames, stats.unusable, stats.gaps) == (20, 19, 1, 1)
    assert value(samples, "paigow_frames_read_total") == stats.frames_in
    assert value(samples, "paigow_frames_processed_total") == stats.frames
    assert value(samples, "paigow_frames_unusable_total") == stats.unusable
    assert value(samples, "paigow_frames_dropped_total") == stats.dropped == 0
    assert value(samples, "paigow_gaps_total") == stats.gaps
    assert value(samples, "paigow_pipeline_seconds_count") == stats.frames  # the refused one not
    assert value(samples, "paigow_alerts_total", kind="camera_lost", state="open") == 1
    assert value(samples, "paigow_alerts_total", kind="camera_lost", state="close") == 2
    alerts = [v for (name, _), v in samples.items() if name == "paigow_alerts_total"]
    assert sum(alerts) == stats.alerts == 3
    # one of them was raised by a frame (the close after the gap): its latency is measured
    assert value(samples, "paigow_alert_latency_seconds_count") == 1
    assert value(samples, "paigow_journal_lag_alerts") == Spilling.pending
    (info,) = [dict(labels) for name, labels in samples if name == "paigow_monitor_info"]
    assert (info["table"], info["source"]) == ("T1", "file") and info["version"]
    assert 0 <= value(samples, "paigow_last_frame_age_seconds") < WAIT_S


def test_an_alerts_latency_runs_from_its_frames_arrival_to_its_publication(served):
    metrics, url = served
    pipeline = StubPipeline(process_s=0.05)  # the frame raising the alert takes 50 ms
    monitor = Monitor(FakeSource(fakes.stopping_stream(), live=False), pipeline, ListSink())
    metrics.attach(monitor)
    fakes.run_monitor(monitor)
    samples = scrape(url)
    assert value(samples, "paigow_alert_latency_seconds_count") == 1
    assert value(samples, "paigow_alert_latency_seconds_sum") >= pipeline.process_s


def test_frames_read_are_processed_or_dropped_under_overload(served):
    metrics, url = served
    source = FakeSource([frame(i) for i in range(150)], live=True, delay_s=0.001)
    monitor = Monitor(source, metrics.timed(StubPipeline(process_s=0.01)), ListSink(),
                      MonitorConfig(queue_size=3))  # fmt: skip
    metrics.attach(monitor)
    stats = fakes.run_monitor(monitor)
    samples = scrape(url)
    read, processed, dropped = (
        value(samples, f"paigow_frames_{what}_total") for what in ("read", "processed", "dropped")
    )
    assert dropped > 0 and (read, processed, dropped) == (150, stats.frames, stats.dropped)
    assert read == processed + dropped


def test_the_detector_time_is_measured_on_the_real_pipeline(served):
    from pipeline.layout import layout_from_scenario
    from pipeline.live.sources import open_source
    from pipeline.runner import TablePipeline

    metrics, url = served
    pipeline = TablePipeline("T1", layout_from_scenario(fakes.DEMO / "scenario.json"))
    source = fakes.FirstFrames(open_source(str(fakes.DEMO / "clip.mp4"), camera_id="T1"), 3)
    monitor = Monitor(source, metrics.timed(pipeline), ListSink())
    metrics.attach(monitor)
    fakes.run_monitor(monitor)
    samples = scrape(url)
    assert value(samples, "paigow_detector_seconds_count") == 3
    models_s = value(samples, "paigow_detector_seconds_sum")
    assert 0 < models_s <= value(samples, "paigow_pipeline_seconds_sum")


# --- health and readiness ------------------------------------------------------------------


def test_healthz_is_200_while_the_loop_turns_and_503_while_the_pipeline_hangs(served):
    metrics, url = served
    entered, release, stop = threading.Event(), threading.Event(), threading.Event()

    class Hanging(StubPipeline):
        def process(self, frame, wall_time=None):
            if frame.index == 2:
                entered.set()
                release.wait(WAIT_S)
            return super().process(frame, wall_time)

    source = FakeSource([frame(i) for i in range(4)], endless=True)
    monitor = Monitor(source, Hanging(), ListSink(), MonitorConfig(status_interval_s=0.05))
    metrics.attach(monitor)
    assert get(f"{url}/healthz") == (200, "ok\n")  # starting, within stall_s
    thread = run_in_thread(monitor, stop)
    try:
        assert entered.wait(WAIT_S)
        why = answer_becomes(f"{url}/healthz", 503)
        assert why.startswith("stuck: the processing loop has not turned for ")
        assert why.count("\n") == 1 and "(limit 2 s)" in why
        assert value(scrape(url), "paigow_monitor_up") == 0
        release.set()
        answer_becomes(f"{url}/healthz", 200, "ok\n")
        assert value(scrape(url), "paigow_monitor_up") == 1
    finally:
        release.set()
        stop.set()
        thread.join(WAIT_S)
    assert get(f"{url}/healthz") == (503, "stopped\n")


class FedSource:
    """A live source the test feeds, item by item."""

    live, fps, size_wh = True, 25.0, (8, 8)

    def __init__(self):
        self.items: queue.Queue = queue.Queue()

    def __iter__(self):
        while (item := self.items.get(timeout=WAIT_S)) is not None:
            yield item

    def close(self):
        self.items.put(None)


def test_readyz_waits_for_the_models_and_a_frame_and_fails_while_the_camera_is_lost(served):
    metrics, url = served

    ready = f"{url}/readyz"
    assert get(ready) == (503, "starting: opening the source, loading the models\n")
    source, stop = FedSource(), threading.Event()
    monitor = Monitor(source, StubPipeline(), ListSink(), MonitorConfig(status_interval_s=0.05))
    metrics.attach(monitor)
    thread = run_in_thread(monitor, stop)
    try:
        answer_becomes(ready, 503, "waiting for the first frame\n")
        source.items.put(frame(0))
        answer_becomes(ready, 200, "ok\n")
        assert value(scrape(url), "paigow_camera_up") == 1
        source.items.put(Gap(1, 0.04, None, "rtsp://cam lost"))
        assert answer_becomes(ready, 503).startswith("camera lost")
        assert value(scrape(url), "paigow_camera_up") == 0
        assert value(scrape(url), "paigow_monitor_ready") == 0
        source.items.put(frame(2))
        answer_becomes(ready, 200, "ok\n")
        assert value(scrape(url), "paigow_monitor_ready") == 1
    finally:
        stop.set()
        thread.join(WAIT_S)
    assert get(ready) == (503, "stopped\n")


# --- several monitors in one process --------------------------------------------------------


def test_two_monitors_in_one_process_keep_their_metrics_apart():
    counts = {"T1": 5, "T2": 9}
    with (
        MetricsServer(one := MonitorMetrics("T1", MetricsConfig(ANY))) as first,
        MetricsServer(two := MonitorMetrics("T2", MetricsConfig(ANY))) as second,
    ):
        assert first.url != second.url
        for metrics, table in ((one, "T1"), (two, "T2")):
            source = FakeSource([frame(i) for i in range(counts[table])], live=False)
            monitor = Monitor(source, metrics.timed(StubPipeline()), ListSink())
            metrics.attach(monitor)
            fakes.run_monitor(monitor)
        for url, table in ((first.url, "T1"), (second.url, "T2")):
            samples = scrape(url)
            tables = {dict(labels).get("table") for name, labels in samples if "paigow" in name}
            assert tables == {table}
            assert samples[("process_cpu_seconds_total", frozenset())] > 0  # this process's
            key = ("paigow_frames_processed_total", frozenset({("table", table)}))
            assert samples[key] == counts[table]
    default = prometheus_client.generate_latest(prometheus_client.REGISTRY).decode()
    assert "paigow_" not in default  # never the process-wide registry


def test_a_closed_server_frees_its_port():
    metrics = MonitorMetrics("T1", MetricsConfig(ANY))
    server = MetricsServer(metrics)
    port = parse_endpoint(server.url.removeprefix("http://"))[1]
    server.close()
    with MetricsServer(metrics, f"127.0.0.1:{port}") as again:  # the same port, at once
        assert get(f"{again.url}/healthz")[0] == 200


# --- the command line ------------------------------------------------------------------------


def monitor_argv(tmp_path: Path, source: str, *more: str) -> list[str]:
    return [
        "monitor", source, "--layout", str(fakes.DEFAULT_LAYOUT), "--table", "T1",
        "--journal", str(tmp_path / "alerts.db"), "--publish", fakes.ANY_PORT,
        "--replay", fakes.ANY_PORT, "--threads", "1", *more,
    ]  # fmt: skip


@pytest.fixture
def busy_port():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("busy", "cannot serve metrics on 127.0.0.1:{port}: Address already in use"),
        ("nowhere", "metrics.endpoint: 'nowhere' is not HOST:PORT"),
        ("127.0.0.1:70000", "'127.0.0.1:70000' is not HOST:PORT"),
        ("192.0.2.1:9464", "cannot serve metrics on 192.0.2.1:9464: "),  # no such interface
    ],
)
def test_a_metrics_address_in_use_or_bad_is_one_line_and_status_2(
    tmp_path, capsys, busy_port, address, expected
):
    address = f"127.0.0.1:{busy_port}" if address == "busy" else address
    missing = str(tmp_path / "missing.mp4")  # the address is refused before the source opens
    assert main(monitor_argv(tmp_path, missing, "--metrics", address)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("paigow monitor: error: ")
    assert expected.format(port=busy_port) in err, err


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_monitor_command_serves_from_the_start_and_closes_at_the_end(tmp_path, capsys):
    clip = fakes.write_clip(tmp_path / "dark.mp4", 0.4)
    url = f"http://127.0.0.1:{free_port()}"
    seen: dict[str, set] = {"readyz": set(), "metrics": set()}
    done = threading.Event()

    def poll():
        while not done.is_set():
            try:
                seen["readyz"].add(get(f"{url}/readyz"))
                text = get(f"{url}/metrics")[1]
                seen["metrics"].add(len(list(text_string_to_metric_families(text))))
            except (urllib.error.URLError, ConnectionError):
                pass  # not serving yet, or no longer
            time.sleep(0.02)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        assert main(monitor_argv(tmp_path, str(clip), "--metrics", url[len("http://") :])) == 0
    finally:
        done.set()
        poller.join(WAIT_S)
    assert f"metrics on {url}/metrics" in capsys.readouterr().err
    assert (503, "starting: opening the source, loading the models\n") in seen["readyz"]
    assert seen["metrics"] and min(seen["metrics"]) > 10  # every family, parsed
    with pytest.raises(urllib.error.URLError):
        get(f"{url}/healthz")  # closed with the monitor
