"""`paigow monitor`: the bounded frame queue, the monitor loop (fake sources, a stub pipeline, the
real rules with a stub detector, the real pipeline on a few frames), the status line, the CLI's
one-line errors, and a clean stop on SIGTERM with every printed alert in the journal.

Every wait is bounded by WAIT_S; a monitor run in a test is stopped by a timer at the latest.
"""

import io
import itertools
import json
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import av
import numpy as np
import pytest
import yaml

from pipeline.alerts import describe_alert, make_alert
from pipeline.bus import AlertPublisher, PublisherConfig
from pipeline.bus.endpoints import PUB_ENDPOINT, REPLAY_ENDPOINT
from pipeline.cli import build_parser, main
from pipeline.cli import monitor as monitor_cli
from pipeline.cli.common import settings_of
from pipeline.journal import Journal
from pipeline.layout import load_default_layout, spec_from_scenario
from pipeline.live.monitor import ConsoleReport, FrameQueue, Monitor, MonitorConfig, MonitorStats
from pipeline.live.sources import Gap, open_source
from pipeline.round.events import Phase, RoundEnded, VisionDegraded, VisionRestored
from vision.types import Detections, Frame

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_LAYOUT = ROOT / "pipeline" / "data" / "default_layout.yaml"
DEMO = ROOT / "datasets" / "samples" / "demo_round"
ANY_PORT = "tcp://127.0.0.1:*"
WAIT_S = 20.0
FPS = 25


def frame(index: int, size: int = 8) -> Frame:
    image = np.full((size, size, 3), index % 256, np.uint8)
    return Frame("T1", index, index / FPS, image)


# --- the queue on its own -------------------------------------------------------------------


def test_a_full_queue_drops_the_oldest_frames_under_a_slow_consumer_and_counts_them():
    queue = FrameQueue(4)
    items = [Gap(i, i / FPS, None, "lost") if i % 25 == 10 else frame(i) for i in range(120)]
    got: list = []
    longest = 0

    def consume():
        nonlocal longest
        while not queue.finished:
            longest = max(longest, len(queue._items))
            item = queue.get(WAIT_S)
            if item is not None:
                got.append(item)
                time.sleep(0.004)  # the slow consumer

    consumer = threading.Thread(target=consume)
    consumer.start()
    for item in items:
        queue.put(item)
        time.sleep(0.0005)
    queue.close()
    consumer.join(WAIT_S)
    assert not consumer.is_alive()
    frames_got = [i for i in got if isinstance(i, Frame)]
    assert queue.dropped > 0 and len(frames_got) + queue.dropped == 115
    assert [g for g in got if isinstance(g, Gap)] == [i for i in items if isinstance(i, Gap)]
    assert [i.index for i in got] == sorted(i.index for i in got)  # order kept
    assert got[-1].index == 119  # the newest survives
    assert longest <= 4


def test_a_lossless_queue_makes_the_producer_wait_and_loses_nothing():
    queue = FrameQueue(2, lossless=True)
    producer = threading.Thread(target=lambda: [queue.put(frame(i)) for i in range(30)])
    producer.start()
    got = []
    while len(got) < 30:
        item = queue.get(WAIT_S)
        assert item is not None
        got.append(item.index)
        time.sleep(0.002)
    producer.join(WAIT_S)
    assert got == list(range(30)) and queue.dropped == 0


def test_closing_a_queue_frees_a_waiting_producer_and_drains():
    queue = FrameQueue(1, lossless=True)
    queue.put(frame(0))
    producer = threading.Thread(target=queue.put, args=(frame(1),))
    producer.start()
    time.sleep(0.05)
    queue.close()
    producer.join(WAIT_S)
    assert not producer.is_alive()
    assert queue.get(0.01).index == 0 and queue.get(0.01) is None and queue.finished


# --- the monitor loop with fakes -------------------------------------------------------------


class FakeSource:
    """Items in order, ``delay_s`` apart; ``endless``: then nothing until closed."""

    def __init__(self, items, live=True, delay_s=0.0, endless=False):
        self.items, self.live, self.delay_s, self.endless = items, live, delay_s, endless
        self.fps, self.size_wh = float(FPS), (8, 8)
        self.closed = threading.Event()

    def __iter__(self):
        for item in self.items:
            if self.closed.wait(self.delay_s):
                return
            yield item
        if self.endless:
            self.closed.wait(WAIT_S)

    def close(self):
        self.closed.set()


@dataclass
class Result:
    alerts: list
    blind: bool = False
    state: object = None
    events: list = field(default_factory=list)


def camera_alert(index: int, time_s: float, state: str = "open"):
    return make_alert(
        "camera_lost", state=state, table="T1", round=0, box=None, video_time_s=time_s,
        frame=index, message="camera lost",
    )  # fmt: skip


@dataclass
class StubPipeline:
    """The TablePipeline interface: an open camera_lost alert per gap, closed by the next
    frame; ``process_s`` of work per frame; one closing alert from finish()."""

    process_s: float = 0.0
    frames: list = field(default_factory=list)
    gaps: list = field(default_factory=list)
    finished: bool = False
    lost: bool = False

    def process(self, frame, wall_time=None):
        time.sleep(self.process_s)
        self.frames.append(frame.index)
        restored, self.lost = self.lost, False
        return Result([camera_alert(frame.index, frame.time_s, "close")] if restored else [])

    def no_frame(self, index, time_s, reason, wall_time=None):
        self.gaps.append((index, time_s, reason))
        self.lost = True
        return Result([camera_alert(index, time_s)], blind=True)

    def finish(self, wall_time=None):
        self.finished = True
        return [], [camera_alert(999, 40.0, "close")]


class ListSink:
    def __init__(self):
        self.alerts, self.notices = [], []

    def emit(self, alert):
        self.alerts.append(alert.with_seq(len(self.alerts) + 1))
        return self.alerts[-1]

    def notice(self, name, message):
        self.notices.append((name, message))


def run_monitor(monitor: Monitor, stop: threading.Event | None = None) -> MonitorStats:
    stop = stop or threading.Event()
    guard = threading.Timer(WAIT_S, stop.set)
    guard.start()
    try:
        return monitor.run(stop)
    finally:
        guard.cancel()


@pytest.fixture
def bus(tmp_path):
    with (
        Journal(tmp_path / "alerts.db") as journal,
        AlertPublisher(journal, "T1", PublisherConfig(ANY_PORT, ANY_PORT)) as publisher,
    ):
        yield journal, publisher


def test_a_stride_processes_only_the_frames_at_its_multiples():
    pipeline = StubPipeline()
    source = FakeSource([frame(i) for i in range(10)], live=False)
    stats = run_monitor(Monitor(source, pipeline, ListSink(), MonitorConfig(stride=3)))
    assert pipeline.frames == [0, 3, 6, 9] and stats.frames == stats.frames_in == 4


def stopping_stream():
    """A live stream that stops mid-way: frames, the gap repeated while reconnecting, its end,
    frames again."""
    down = Gap(10, 0.4, None, "rtsp://cam lost: no data for 5 s")
    return [
        *map(frame, range(10)), down, down, down, Gap(10, 0.4, 1.0, down.reason),
        *map(frame, range(25, 35)),
    ]  # fmt: skip


def test_a_stream_that_stops_midway_gives_camera_lost_through_the_journal_and_goes_on(bus):
    journal, publisher = bus
    pipeline, out = StubPipeline(), io.StringIO()
    source = FakeSource(stopping_stream(), live=False)  # lossless here: drops are tested apart
    report = ConsoleReport(MonitorConfig(), out=out, err=io.StringIO())
    stats = run_monitor(Monitor(source, pipeline, publisher, report=report))
    assert pipeline.gaps == [(10, 0.4, "rtsp://cam lost: no data for 5 s")]  # once, not 4 times
    assert pipeline.frames == [*range(10), *range(25, 35)]  # it kept going
    assert pipeline.finished and source.closed.is_set()
    stored = journal.read("T1", 1, 100)
    assert [(a.kind, str(a.state), a.frame) for a in stored] == [
        ("camera_lost", "open", 10), ("camera_lost", "close", 25), ("camera_lost", "close", 999)
    ]  # fmt: skip
    assert out.getvalue().splitlines() == [describe_alert(a) for a in stored]
    assert (stats.frames, stats.gaps, stats.alerts, stats.dropped) == (20, 1, 3, 0)


def test_an_overloaded_monitor_drops_frames_never_alerts():
    items = [Gap(i, i / FPS, None, f"lost {i}") if i % 40 == 20 else frame(i) for i in range(200)]
    pipeline, sink = StubPipeline(process_s=0.01), ListSink()
    source = FakeSource(items, live=True, delay_s=0.001)
    stats = run_monitor(Monitor(source, pipeline, sink, MonitorConfig(queue_size=3)))
    assert stats.dropped > 0 and stats.frames + stats.dropped == 195
    assert [g[0] for g in pipeline.gaps] == [20, 60, 100, 140, 180]  # every gap reached it
    opened = [a.frame for a in sink.alerts if str(a.state) == "open"]
    assert opened == [20, 60, 100, 140, 180]  # and every alert it raised was emitted
    assert len(sink.alerts) == stats.alerts == 5 + 5 + 1


def test_an_unpaced_file_loses_no_frame_to_a_slow_pipeline():
    pipeline = StubPipeline(process_s=0.002)
    source = FakeSource([frame(i) for i in range(60)], live=False)
    stats = run_monitor(Monitor(source, pipeline, ListSink(), MonitorConfig(queue_size=2)))
    assert pipeline.frames == list(range(60)) and stats.dropped == 0


@dataclass
class StoppingPipeline(StubPipeline):
    """Sets ``stop`` once it has processed ``after`` frames (no timer a loaded machine can
    beat)."""

    stop: threading.Event = field(default_factory=threading.Event)
    after: int = 1

    def process(self, frame, wall_time=None):
        result = super().process(frame, wall_time)
        if len(self.frames) >= self.after:
            self.stop.set()
        return result


def test_stop_ends_a_live_run_and_still_emits_the_finishing_alerts():
    pipeline, sink = StoppingPipeline(after=5), ListSink()
    stop = pipeline.stop
    source = FakeSource([frame(i) for i in range(5)], endless=True)
    started = time.monotonic()
    stats = run_monitor(Monitor(source, pipeline, sink), stop)
    assert time.monotonic() - started < 5.0
    assert stats.frames == 5 and pipeline.finished and source.closed.is_set()
    assert [a.frame for a in sink.alerts] == [999]


def test_a_read_that_fails_as_the_source_is_closed_on_stop_is_no_failure():
    """Ctrl-C on `paigow monitor`: the source closed from the main thread while the reader
    thread was between two reads, whose next read raised "generator already executing"; that
    ended the run as an error (status 2) instead of a clean stop."""

    class ClosedUnderTheRead(FakeSource):
        def __iter__(self):
            yield from self.items
            self.closed.wait(WAIT_S)
            raise ValueError("generator already executing")

    pipeline = StoppingPipeline(after=3)
    source = ClosedUnderTheRead([frame(i) for i in range(3)])
    stats = run_monitor(Monitor(source, pipeline, ListSink()), pipeline.stop)
    assert stats.frames == 3 and pipeline.finished


def test_a_pipeline_error_still_closes_the_source():
    class Broken(StubPipeline):
        def process(self, frame, wall_time=None):
            raise RuntimeError("detector exploded")

    source = FakeSource([frame(0)], endless=True)
    with pytest.raises(RuntimeError, match="detector exploded"):
        run_monitor(Monitor(source, Broken(), ListSink()))
    assert source.closed.is_set()


def test_a_frame_the_pipeline_cannot_use_is_skipped_and_the_monitor_goes_on(capsys):
    class Picky(StubPipeline):
        def process(self, frame, wall_time=None):
            if frame.index in (2, 3):
                raise ValueError("a 5000x2 image is too small for the detector")
            return super().process(frame, wall_time)

    pipeline = Picky()
    source = FakeSource([frame(i) for i in range(6)], live=False)
    stats = run_monitor(Monitor(source, pipeline, ListSink()))
    assert pipeline.frames == [0, 1, 4, 5] and pipeline.finished
    assert (stats.frames, stats.unusable) == (4, 2) and "| 2 unusable" in stats.line()
    err = capsys.readouterr().err
    assert err.count("skipped: a 5000x2 image is too small") == 1  # once per reason


def test_the_tables_vision_degraded_and_restored_are_sent_as_notices():
    class Seeing(StubPipeline):
        def process(self, frame, wall_time=None):
            result = super().process(frame, wall_time)
            if frame.index == 2:
                result.events.append(VisionDegraded(1, 0.04, "5 dice in the dice area"))
            if frame.index == 4:
                result.events.append(VisionRestored(3, 0.12, 0.08))
            return result

    sink, said = ListSink(), []
    monitor = Monitor(FakeSource([frame(i) for i in range(6)], live=False), Seeing(), sink)
    sink.notice = lambda name, message: said.append((name, message, monitor.status()))
    run_monitor(monitor)
    assert [name for name, _, _ in said] == ["vision_degraded", "vision_restored"]
    assert "5 dice in the dice area; alerts say confidence low" in said[0][1]
    assert [status["degraded"] for _, _, status in said] == [True, False]  # for heartbeats
    assert said[0][2]["camera"] == "ok" and said[0][2]["state"] == "running"


def test_a_round_given_up_on_a_fault_of_ours_is_one_line_on_stderr_and_the_monitor_goes_on(
    capsys,
):
    class Faulty(StubPipeline):
        def process(self, frame, wall_time=None):
            result = super().process(frame, wall_time)
            if frame.index == 2:
                fault = "round reconstruction failed (KeyError: 7 at hands.py:88)"
                result.events.append(RoundEnded(2, 0.08, 4, Phase.SETTING, False, fault))
            return result

    pipeline = Faulty()
    stats = run_monitor(Monitor(FakeSource([frame(i) for i in range(5)], live=False), pipeline,
                                ListSink()))  # fmt: skip
    assert pipeline.frames == [0, 1, 2, 3, 4] and stats.frames == 5
    assert (
        capsys.readouterr().err.count(
            "round 4 given up at 0.1 s of video: round reconstruction failed (KeyError: 7 at "
            "hands.py:88); watching on"
        )
        == 1
    )


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_status_line_refreshes_in_place_on_a_terminal_and_logs_plain_lines_elsewhere():
    stats = MonitorStats(frames=12, dropped=3, alerts=2, fps=24.5, phase="delivery", blind=True)
    config = MonitorConfig(status_interval_s=10.0, log_interval_s=10.0)
    tty, out = Terminal(), io.StringIO()
    report = ConsoleReport(config, out=out, err=tty)
    report.status(stats)
    report.status(stats)  # within the interval: not shown again
    report.alert(camera_alert(1, 0.1).with_seq(1))
    line = stats.line()
    assert tty.getvalue() == f"\r{line}\x1b[K\n"  # the alert line does not land on the status
    assert "24.5 fps" in line and "3 dropped" in line and "2 alerts" in line
    assert "phase delivery" in line and "BLIND" in line
    assert out.getvalue().startswith("#1 T1 round 0")
    log = io.StringIO()
    plain = ConsoleReport(config, out=io.StringIO(), err=log)
    plain.status(stats)
    plain.status(stats)
    plain.close(stats)
    assert log.getvalue() == f"{line}\n{line}\n"


# --- with the real rules (stub detector) and the real pipeline ------------------------------


@pytest.fixture
def no_picture_shim(monkeypatch):
    """FrameHealth.no_picture is being added in another change; stand in for it if absent."""
    from pipeline.live.health import FrameHealth

    if not hasattr(FrameHealth, "no_picture"):

        def no_picture(self, index, time_s, reason):
            self._previous = None
            return self._watch.update(index, time_s, reason)

        monkeypatch.setattr(FrameHealth, "no_picture", no_picture, raising=False)


def noise(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (48, 64, 3), np.uint8)


def test_the_real_rules_raise_camera_lost_for_a_gap_and_close_it_when_frames_return(
    bus, no_picture_shim
):
    from pipeline.runner import TablePipeline

    journal, publisher = bus
    pipeline = TablePipeline(
        "T1", load_default_layout(), detector=lambda frame: Detections(),
        reader=lambda image, detections: detections,
    )  # fmt: skip
    textured = [  # noise, so that the frame-health check sees a live picture
        Frame(f.camera_id, f.index, f.time_s, noise(f.index))
        for f in stopping_stream() if isinstance(f, Frame)
    ]  # fmt: skip
    items = [*textured[:10], *stopping_stream()[10:14], *textured[10:]]
    run_monitor(Monitor(FakeSource(items, live=False), pipeline, publisher))
    stored = journal.read("T1", 1, 100)
    assert [(a.kind, str(a.state)) for a in stored][:2] == [
        ("camera_lost", "open"), ("camera_lost", "close")
    ]  # fmt: skip
    assert stored[0].evidence["started_frame"] == 10 and "no data for 5 s" in stored[0].message


def demo_layout_file(folder: Path) -> Path:
    scenario = json.loads((DEMO / "scenario.json").read_text())
    block = dict(scenario["layout"])
    if "resolution_wh" in scenario:
        block.setdefault("resolution_wh", scenario["resolution_wh"])
    path = folder / "demo_layout.yaml"
    path.write_text(yaml.safe_dump(spec_from_scenario(block, "demo")))
    return path


class FirstFrames:
    """The first ``n`` items of a source (the real pipeline is slow on two shared cores)."""

    def __init__(self, source, n):
        self._source, self._n = source, n
        self.fps, self.size_wh, self.live = source.fps, source.size_wh, source.live

    def __iter__(self):
        return itertools.islice(iter(self._source), self._n)

    def close(self):
        self._source.close()


def test_the_real_pipeline_on_a_few_frames_of_the_demo_clip(tmp_path):
    from pipeline.layout import layout_from_scenario
    from pipeline.runner import TablePipeline

    pipeline = TablePipeline("T1", layout_from_scenario(DEMO / "scenario.json"))
    source = FirstFrames(open_source(str(DEMO / "clip.mp4"), camera_id="T1"), 3)
    err = io.StringIO()
    monitor = Monitor(source, pipeline, ListSink(), report=ConsoleReport(MonitorConfig(), err=err))
    stats = run_monitor(monitor)
    assert (stats.frames, stats.dropped, stats.gaps, stats.blind) == (3, 0, 0, False)
    assert stats.phase == "idle" and "3 frames" in err.getvalue()


# --- the command line ------------------------------------------------------------------------


def test_the_cli_bus_defaults_match_the_publisher():
    args = build_parser().parse_args(["monitor", "0", "--layout", "L", "--table", "T1"])
    bus = settings_of(args, monitor_cli.FLAGS).bus
    assert (bus.pub_endpoint, bus.replay_endpoint) == (PUB_ENDPOINT, REPLAY_ENDPOINT)


def write_clip(path: Path, seconds: float, size_wh=(160, 120)) -> Path:
    """A clip of black frames: the frame-health check calls the camera lost at once."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = *size_wh, "yuv420p"
        black = np.zeros((size_wh[1], size_wh[0], 3), np.uint8)
        for _ in range(int(seconds * FPS)):
            container.mux(stream.encode(av.VideoFrame.from_ndarray(black, format="bgr24")))
        container.mux(stream.encode())
    return path


def bad_layout(folder: Path, change) -> Path:
    spec = yaml.safe_load(DEFAULT_LAYOUT.read_text())
    change(spec)
    path = folder / "bad_layout.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def two_point_box(spec):
    spec["boxes"][3] = spec["boxes"][3][:2]


@pytest.mark.parametrize(
    ("source", "layout", "expected"),
    [
        ("{tmp}/missing.mp4", None, "no such file or folder"),
        ("{tmp}/notes.mp4", None, "not a video"),
        ("{tmp}/empty", None, "no images"),
        ("rtsp://127.0.0.1:9/none", None, "cannot open the stream"),
        ("http://127.0.0.1:9/x.mp4", None, "cannot open the stream"),
        ("{tmp}/clip.mp4", lambda spec: spec.update(zoom=2), "zoom"),
        ("{tmp}/clip.mp4", two_point_box, "box"),
    ],
    ids=["missing", "not-a-video", "empty-folder", "rtsp", "http", "layout-key", "layout-box"],
)
def test_bad_input_is_one_line_and_status_2(tmp_path, capsys, source, layout, expected):
    (tmp_path / "notes.mp4").write_text("not a video\n")
    (tmp_path / "empty").mkdir()
    write_clip(tmp_path / "clip.mp4", 0.2)
    layout_path = bad_layout(tmp_path, layout) if layout else DEFAULT_LAYOUT
    argv = [
        "monitor", source.format(tmp=tmp_path), "--layout", str(layout_path), "--table", "T1",
        "--journal", str(tmp_path / "alerts.db"), "--open-timeout-s", "1.5",
        "--publish", ANY_PORT, "--replay", ANY_PORT,
    ]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("paigow monitor: error: ")
    assert expected in err


def test_sigterm_stops_the_monitor_cleanly_with_every_printed_alert_journaled(tmp_path):
    clip = write_clip(tmp_path / "dark.mp4", 20.0)
    journal_path = tmp_path / "alerts.db"
    command = [
        sys.executable, "-m", "pipeline.cli", "monitor", str(clip), "--layout", str(DEFAULT_LAYOUT),
        "--table", "T1", "--journal", str(journal_path), "--realtime", "--threads", "1",
        "--publish", ANY_PORT, "--replay", ANY_PORT,
    ]  # fmt: skip
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        lines = []

        def read():
            for line in proc.stdout:
                lines.append(line)

        reader = threading.Thread(target=read)
        reader.start()
        deadline = time.monotonic() + WAIT_S
        while not lines and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert lines, "the first alert (camera lost: a black picture) was printed"
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(WAIT_S)
        reader.join(WAIT_S)
    finally:
        proc.kill()
        proc.wait(WAIT_S)
    err = proc.stderr.read().decode()
    assert status == 0, err
    assert "stopped (SIGTERM)" in err
    printed = [line.decode().rstrip("\n") for line in lines]
    with Journal(journal_path) as journal:
        stored = journal.read("T1", 1, 1000)
    assert printed == [describe_alert(a) for a in stored]
    assert [(a.kind, str(a.state)) for a in stored] == [
        ("camera_lost", "open"), ("camera_lost", "close")
    ]  # fmt: skip
    snapshots = {a.evidence.get("snapshot") for a in stored}
    assert None not in snapshots  # live alerts name their evidence frame, and it exists:
    assert all((tmp_path / path).is_file() for path in snapshots)
