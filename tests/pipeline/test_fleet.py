"""`paigow fleet`: the fleet file (every one-line error, without Ray), the supervisor's rules on
a scripted stand-in for Ray (back-off, stalls, silence, an ended source), and on one local Ray
instance for the module: two tables from a looped clip behind one room proxy, one killed with
SIGKILL and restarted (one console on the proxy hears each table's alerts once and in order,
the restart notice, the same journal numbering going on), and the command
itself stopped by SIGINT with its closing alerts journaled.

The looped clip is black: the camera is lost at once (a camera_lost alert) and the detector is
never run, so the monitors cost little on a small machine. Every wait is bounded by WAIT_S.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import fields, replace
from pathlib import Path
from types import SimpleNamespace

import av
import numpy as np
import pytest
import yaml

from pipeline.alerts import Alert
from pipeline.bus import AlertSubscriber, Notice, ProxyConfig, RoomProxy, SubscriberConfig
from pipeline.cli import main
from pipeline.cluster.fleet import Supervisor
from pipeline.cluster.fleet_config import FleetError, WatchdogConfig, load_fleet
from pipeline.cluster.table_actor import (
    RESTARTED_NOTICE,
    MonitorState,
    MonitorStatus,
    Restart,
    TableMonitor,
)
from pipeline.journal import Journal

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "datasets" / "samples" / "fleet.example.yaml"
DEFAULT_LAYOUT = ROOT / "pipeline" / "data" / "default_layout.yaml"
WAIT_S = 30.0
FPS = 25


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def black_clip(path: Path, seconds: float) -> Path:
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
        black = np.zeros((120, 160, 3), np.uint8)
        for _ in range(int(seconds * FPS)):
            container.mux(stream.encode(av.VideoFrame.from_ndarray(black, format="bgr24")))
        container.mux(stream.encode())
    return path


def table_entry(name: str, clip: str = "clip.mp4", **keys) -> dict:
    publish, replay = free_ports(2)
    entry = {
        "table": name,
        "source": clip,
        "layout": str(DEFAULT_LAYOUT),
        "journal": f"journals/{name}.db",
        "publish": f"tcp://127.0.0.1:{publish}",
        "replay": f"tcp://127.0.0.1:{replay}",
        "config": "cheap.yaml",
        "loop": True,
        "realtime": True,
    }
    return {**entry, **keys}


def write_fleet(folder: Path, tables: list[dict], **top) -> Path:
    """A fleet file in ``folder``, with the black clip and a cheap settings file beside it."""
    if not (folder / "clip.mp4").exists():
        black_clip(folder / "clip.mp4", 1.0)
    (folder / "cheap.yaml").write_text("detector: {threads: 1}\nmonitor: {log_interval_s: 60}\n")
    path = folder / "fleet.yaml"
    path.write_text(yaml.safe_dump({**top, "tables": tables}, sort_keys=False))
    return path


# --- the fleet file, without Ray --------------------------------------------------------------


def test_the_example_fleet_file_is_valid_and_its_paths_are_from_its_folder():
    fleet = load_fleet(EXAMPLE)
    assert fleet.ray == "auto" and fleet.watchdog == WatchdogConfig()
    assert [t.table for t in fleet.tables] == ["T1", "T2"]
    first = fleet.tables[0]
    assert first.source == str(EXAMPLE.parent / "demo_round" / "clip.mp4")
    assert first.layout == DEFAULT_LAYOUT and first.journal == ROOT / "runs" / "fleet" / "T1.db"
    assert first.metrics_url == "http://127.0.0.1:9101/metrics"
    assert fleet.settings["T1"].metrics.endpoint == "127.0.0.1:9101"  # the monitor serves it
    t2 = fleet.settings["T2"]  # its settings file, the fleet's keys over it
    assert (t2.table, t2.layout, t2.journal.path) == ("T2", DEFAULT_LAYOUT, fleet.tables[1].journal)
    assert (t2.bus.pub_endpoint, t2.bus.replay_endpoint) == (
        "tcp://127.0.0.1:5611",
        "tcp://127.0.0.1:5612",
    )
    assert (t2.detector.threads, t2.rules.house_way) == (4, "nz")  # from config.example.yaml
    assert t2.source.loop and t2.source.realtime and t2.source.read_timeout_s == 3.0


def test_the_usage_doc_lists_every_watchdog_key_with_its_default():
    text = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    section = text.split("| `watchdog:` key |", 1)[1].split("\n\n", 1)[0]
    rows = dict(re.findall(r"^\| `(\w+)` \| `([^`]*)` \|", section, re.MULTILINE))
    defaults = {f.name: str(f.default) for f in fields(WatchdogConfig)}
    assert rows == defaults


def test_loop_and_realtime_left_out_keep_the_tables_settings(tmp_path):
    (tmp_path / "looped.yaml").write_text("source: {loop: true}\n")
    path = write_fleet(
        tmp_path, [table_entry("T1", config="looped.yaml", loop=None, realtime=None)]
    )
    source = load_fleet(path).settings["T1"].source
    assert (source.loop, source.realtime) == (True, False)


def test_the_endpoints_alone_are_read_without_the_tables_files(tmp_path):
    entry = table_entry("T1", source="gone.mp4", layout="gone.yaml", config="gone.yaml")
    path = write_fleet(tmp_path, [entry])
    with pytest.raises(FleetError):
        load_fleet(path)
    fleet = load_fleet(path, files=False)  # as the proxy reads it
    assert [(t.table, t.publish, t.replay) for t in fleet.tables] == [
        ("T1", entry["publish"], entry["replay"])
    ]
    assert fleet.settings == {}


def bad_fleets(tmp_path: Path) -> dict[str, tuple[list[dict], dict, str]]:
    """name -> (tables, top-level keys, what the error line says)."""
    t1, t2 = table_entry("T1"), table_entry("T2")
    return {
        "unknown-key": ([{**t1, "publsh": "x"}], {}, "unknown key 'tables[0] (T1).publsh' "
                        "(did you mean 'publish'?)"),
        "unknown-top": ([t1], {"tabels": []}, "unknown key 'tabels' (did you mean 'tables'?)"),
        "watchdog-key": ([t1], {"watchdog": {"stall": 3}}, "unknown key 'watchdog.stall' "
                         "(did you mean 'stall_s'?)"),
        "watchdog-zero": ([t1], {"watchdog": {"stall_s": 0}}, "watchdog.stall_s"),
        "no-layout": ([{k: v for k, v in t1.items() if k != "layout"}], {},
                      "tables[0] (T1).layout: Field required"),
        "no-tables": ([], {}, "tables: the fleet lists no table"),
        "same-table": ([t1, {**t2, "table": "T1"}], {}, "table T1 is listed 2 times"),
        "same-port": ([t1, {**t2, "replay": t1["publish"].replace("127.0.0.1", "0.0.0.0")}], {},
                      f"replay: port {t1['publish'].rsplit(':', 1)[1]} is T1's publish"),
        "same-journal": ([t1, {**t2, "journal": "journals/../journals/T1.db"}], {},
                         "journal: " + str(tmp_path / "journals" / "T1.db") + " is T1's already"),
        "same-metrics": ([{**t1, "metrics": "127.0.0.1:9101"}, {**t2, "metrics": "0.0.0.0:9101"}],
                         {}, "metrics: port 9101 is T1's metrics"),
        "any-port": ([{**t1, "publish": "tcp://127.0.0.1:*"}], {}, "a fixed port"),
        "bad-metrics": ([{**t1, "metrics": "9101"}], {}, "metrics: '9101' is not HOST:PORT"),
        "missing-layout": ([{**t1, "layout": "nowhere.yaml"}], {}, "layout: "),
        "bad-layout": ([{**t1, "layout": "layout.yaml"}], {}, "layout.yaml: missing key"),
        "missing-source": ([{**t1, "source": "gone.mp4"}], {}, "source: "),
        "loop-a-stream": ([{**t1, "source": "rtsp://cam/1"}], {}, "only a file or a folder"),
        "loop-in-config": ([{**t1, "source": "rtsp://cam/1", "loop": None, "config": "loop.yaml"}],
                           {}, "loop: only a file or a folder"),
        "bad-name": ([{**t1, "table": "T 1"}], {}, "use letters, digits"),
        "bad-config": ([{**t1, "config": "odd.yaml"}], {}, "unknown key 'tracker.max_tile'"),
        "missing-config": ([{**t1, "config": "none.yaml"}], {}, "config: "),
    }  # fmt: skip


BAD = list(bad_fleets(Path("/x")))


@pytest.mark.parametrize("name", BAD)
def test_a_bad_fleet_file_is_one_line_naming_the_key(tmp_path, name):
    tables, top, expected = bad_fleets(tmp_path)[name]
    (tmp_path / "odd.yaml").write_text("tracker: {max_tile: 3}\n")
    (tmp_path / "layout.yaml").write_text("version: 1\nzoom: 2\n")
    (tmp_path / "loop.yaml").write_text("source: {loop: true}\n")
    path = write_fleet(tmp_path, tables, **top)
    with pytest.raises(FleetError) as caught:
        load_fleet(path)
    line = str(caught.value)
    assert "\n" not in line and line.startswith(f"{path}: ")
    assert expected in line


def test_the_command_says_a_bad_fleet_file_in_one_line_with_status_2(tmp_path, capsys):
    path = write_fleet(tmp_path, [{**table_entry("T1"), "replay": "tcp://127.0.0.1:*"}])
    assert main(["fleet", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("paigow fleet: error: ")
    assert main(["fleet", str(tmp_path / "none.yaml")]) == 2
    assert "No such file" in capsys.readouterr().err


def test_without_ray_the_command_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails
    path = write_fleet(tmp_path, [table_entry("T1")])
    assert main(["fleet", str(path)]) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Ray is not installed" in err
    assert out.startswith("T1 | source ")  # the fleet was listed first


# --- the supervisor's rules, on a scripted stand-in for Ray -----------------------------------


class ActorDied(Exception):
    pass


class Ref:
    """A call's result: ``value`` None while it has not come."""

    def __init__(self, value):
        self.value = value


class ScriptedRay:
    """Enough of Ray for the supervisor: each started actor answers its status calls with
    ``script(table, run)`` (a MonitorStatus, an exception to raise, or None: no answer)."""

    exceptions = SimpleNamespace(RayActorError=ActorDied, RayError=Exception)

    def __init__(self, script):
        self.script = script
        self.runs: dict[str, int] = {}
        self.killed: list[str] = []

    def remote(self, cls):
        return SimpleNamespace(options=lambda **options: SimpleNamespace(remote=self._start))

    def _start(self, source, settings, restart, notices):
        table = settings.table
        run = self.runs[table] = self.runs.get(table, 0) + 1
        answer = lambda: Ref(self.script(table, run))  # noqa: E731
        stop = lambda timeout_s: Ref(None)  # noqa: E731
        self.started = SimpleNamespace(
            table=table,
            restart=restart,
            status=SimpleNamespace(remote=answer),
            stop=SimpleNamespace(remote=stop),
        )
        return self.started

    def wait(self, refs, num_returns, timeout):
        ready = [ref for ref in refs if ref.value is not None]
        return ready, [ref for ref in refs if ref.value is None]

    def get(self, ref):
        if isinstance(ref.value, Exception):
            raise ref.value
        return ref.value

    def kill(self, actor, no_restart):
        self.killed.append(actor.table)

    def cluster_resources(self):
        return {"CPU": 8}


def status(state=MonitorState.RUNNING, **fields) -> MonitorStatus:
    values = dict(
        table="T1", host="here", pid=1, state=state, frames=10, fps=25.0, alerts=0, blind=False,
        last_frame_wall=None, frame_age_s=0.0, loop_age_s=0.0, age_s=1.0,
    )  # fmt: skip
    return MonitorStatus(**{**values, **fields})


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def scripted(tmp_path, script, **watchdog):
    fleet = load_fleet(write_fleet(tmp_path, [table_entry("T1")]))
    fleet = replace(fleet, watchdog=replace(fleet.watchdog, **watchdog))
    said: list[str] = []
    clock, ray = Clock(), ScriptedRay(script)
    return Supervisor(ray, fleet, said.append, clock), ray, clock, said


def test_restarts_back_off_doubling_to_the_cap_and_afresh_after_a_healthy_run(tmp_path):
    def script(table, run):  # runs 1-4 fail at once, run 5 lasts, then fails
        if run == 5 and clock.now < 100:
            return status()
        return status(MonitorState.FAILED, error="OSError: disk gone")

    supervisor, ray, clock, said = scripted(
        tmp_path, script, backoff_first_s=1.0, backoff_max_s=5.0, healthy_s=50.0
    )
    supervisor.start()
    waits = []
    for _ in range(4):
        supervisor.check()
        waits.append(supervisor._slots[0].restart_at - clock.now)
        clock.now = supervisor._slots[0].restart_at
    assert waits == [1.0, 2.0, 4.0, 5.0]
    assert said[0] == "T1: its run failed (OSError: disk gone); restart 1 in 1 s"
    assert said[1] == "T1: started again (restart 1)"
    supervisor.check()
    assert ray.runs["T1"] == 5 and supervisor.views()[0].state == "running"
    clock.now += 100  # the fifth run ran well for 100 s, then fails
    supervisor.check()
    assert supervisor._slots[0].restart_at - clock.now == 1.0  # the back-off starts afresh
    assert "restart 5 in 1 s" in said[-1]


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (status(frame_age_s=12.0), "stalled: no frame processed for 12 s"),
        (status(loop_age_s=11.0, blind=True), "stalled: its loop has not turned for 11 s"),
        (status(MonitorState.STARTING, age_s=61.0), "still starting after 61 s"),
        (ActorDied("gone"), "its process 7 died"),
    ],
    ids=["no-frames", "loop-stuck", "slow-start", "died"],
)
def test_a_stalled_or_dead_monitor_is_restarted_and_says_why(tmp_path, answer, why):
    script = lambda table, run: answer if run == 1 and clock.now > 0 else status(pid=7)  # noqa: E731
    supervisor, ray, clock, said = scripted(tmp_path, script, stall_s=10.0, start_s=60.0)
    supervisor.start()
    supervisor.check()  # the first answer: all is well
    assert not said and ray.killed == []
    clock.now = 1.0
    supervisor.check()
    assert said == [f"T1: {why}; restart 1 in 1 s"] and ray.killed == ["T1"]
    clock.now = 2.0
    supervisor.check()  # started again, told why
    assert ray.runs["T1"] == 2 and ray.started.restart == Restart(1, why)
    assert supervisor.views()[0].restarts == 1 and said[-1] == "T1: started again (restart 1)"


def test_a_blind_monitor_without_frames_is_not_stalled(tmp_path):
    answer = status(frame_age_s=600.0, blind=True)  # its camera reported lost: it waits
    supervisor, _, _, said = scripted(tmp_path, lambda table, run: answer, stall_s=10.0)
    supervisor.start()
    supervisor.check()
    assert not said and supervisor.views()[0].state == "running"


def test_a_silent_monitor_is_restarted_after_the_heartbeat_deadline(tmp_path):
    answers = iter([status(), None])  # one answer, then none
    supervisor, _, clock, said = scripted(
        tmp_path, lambda table, run: next(answers, status()), heartbeat_s=5.0
    )
    supervisor.start()
    supervisor.check()
    clock.now = 1.0
    supervisor.check()  # asked; no answer yet
    clock.now = 5.5
    supervisor.check()
    assert not said  # 4.5 s since asked
    clock.now = 6.5
    supervisor.check()
    assert said == ["T1: no answer to its status call in 5 s; restart 1 in 1 s"]


def test_a_monitor_whose_source_ended_is_done_and_the_run_returns(tmp_path):
    ended = status(MonitorState.ENDED, frames=25)
    supervisor, ray, _, said = scripted(tmp_path, lambda table, run: ended, check_s=0.01)
    done = threading.Thread(target=supervisor.run, args=(threading.Event(),))
    done.start()
    done.join(WAIT_S)
    assert not done.is_alive() and supervisor.done
    assert said == ["T1: its source ended (25 frames)"] and ray.runs == {"T1": 1}
    assert supervisor.views()[0].state == "ended"


# --- a table's monitor as the actor runs it, in this process -------------------------------------


def listen(table) -> AlertSubscriber:
    config = SubscriberConfig(table.publish, table.replay, table=table.table, silence_s=60.0)
    return AlertSubscriber(config)


def until(condition, what: str, step=lambda: None):
    """Call ``step`` until ``condition()`` is true; fail after WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        step()
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"no {what} within {WAIT_S} s")


def journaled(table) -> list[tuple[int, str, str, str | None]]:
    with Journal(table.journal) as journal:
        alerts = journal.read(table.table, 1, 100)
    return [(a.seq, a.kind, str(a.state), a.evidence.get("reason")) for a in alerts]


def test_a_restarted_table_monitor_says_why_on_its_bus_and_stops_cleanly(tmp_path):
    fleet = load_fleet(write_fleet(tmp_path, [table_entry("T1")]))
    table = fleet.tables[0]
    heard: list = []
    with listen(table) as subscriber:
        monitor = TableMonitor(table.source, fleet.settings["T1"], Restart(3, "it hung"), 2)
        try:
            status = until(
                lambda: (
                    (s := monitor.status()).state is MonitorState.RUNNING and s.frames > 5 and s
                ),
                "frames",
                lambda: heard.extend(subscriber.items(0.05)),
            )
            until(lambda: any(isinstance(i, Alert) for i in heard), "alert",
                  lambda: heard.extend(subscriber.items(0.05)))  # fmt: skip
        finally:
            final = monitor.stop(WAIT_S)
    notices = [i for i in heard if isinstance(i, Notice) and i.notice == RESTARTED_NOTICE]
    assert notices and "restart 3): it hung" in notices[0].message
    assert status.pid == os.getpid() and status.last_frame_wall is not None
    assert final.state is MonitorState.STOPPED and final.frames >= status.frames
    assert journaled(table) == [
        (1, "camera_lost", "open", "blank"),
        (2, "camera_lost", "close", "blank"),
    ]


def test_a_table_monitor_whose_file_ends_is_ended_and_one_that_fails_says_why(tmp_path):
    black_clip(tmp_path / "short.mp4", 0.4)
    entry = table_entry("T1", "short.mp4", loop=False, realtime=False)
    fleet = load_fleet(write_fleet(tmp_path, [entry]))
    ended = TableMonitor(fleet.tables[0].source, fleet.settings["T1"], None, 0)
    status = until(lambda: (s := ended.status()).state is MonitorState.ENDED and s, "end")
    assert status.frames == 10 and status.error is None
    (tmp_path / "short.mp4").unlink()  # gone since the fleet file was read
    failed = TableMonitor(fleet.tables[0].source, fleet.settings["T1"], None, 0)
    status = until(lambda: (s := failed.status()).state is MonitorState.FAILED and s, "failure")
    assert "no such file or folder" in status.error and "\n" not in status.error


# --- on one local Ray instance ---------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_local():
    pytest.importorskip("ray")
    from pipeline.cluster.runtime import ray_instance

    with ray_instance("auto", num_cpus=2) as ray:
        yield ray


def running(supervisor: Supervisor) -> list | None:
    """The tables' views once every one runs and has processed frames."""
    views = supervisor.views()
    return views if all(v.state == "running" and v.frames for v in views) else None


FAST = {"check_s": 0.5, "backoff_first_s": 0.5, "heartbeat_s": 10.0, "stall_s": 20.0}


def through_proxy(fleet) -> tuple[RoomProxy, AlertSubscriber]:
    """A room proxy of every table of ``fleet`` (free front ports) and a console on it."""
    tables = {t.table: (t.publish, t.replay) for t in fleet.tables}
    front = ProxyConfig("tcp://127.0.0.1:*", "tcp://127.0.0.1:*")
    proxy = RoomProxy(tables, front, say=lambda line: None).start()
    config = SubscriberConfig(proxy.pub_endpoint, proxy.replay_endpoint, silence_s=60.0)
    return proxy, AlertSubscriber(config)


def test_a_monitor_killed_with_sigkill_is_restarted_and_the_room_loses_nothing(ray_local, tmp_path):
    fleet = load_fleet(write_fleet(tmp_path, [table_entry("T1"), table_entry("T2")], watchdog=FAST))
    t1, t2 = fleet.tables
    said: list[str] = []
    supervisor = Supervisor(ray_local, fleet, said.append)
    stop = threading.Event()
    runner = threading.Thread(target=supervisor.run, args=(stop,), name="supervisor")
    heard: list = []
    proxy, subscriber = through_proxy(fleet)  # one console for the room, as `paigow alerts`

    def seqs(table: str) -> list[int]:
        return [i.seq for i in heard if isinstance(i, Alert) and i.table == table]

    with proxy, subscriber:
        runner.start()
        try:
            hear = lambda: heard.extend(subscriber.items(0.1))  # noqa: E731
            until(lambda: seqs("T1") and seqs("T2"), "an alert from each table", hear)
            views = until(lambda: running(supervisor), "frames from both tables")
            os.kill(views[0].pid, signal.SIGKILL)
            until(lambda: seqs("T1") == [1, 2, 3], "T1 back", hear)
            until(lambda: any(isinstance(i, Notice) for i in heard), "restart notice", hear)
            after = until(lambda: running(supervisor), "T1 running again")
        finally:
            stop.set()
            runner.join(WAIT_S)
    assert not runner.is_alive()
    assert [(v.table, v.restarts) for v in after] == [("T1", 1), ("T2", 0)]
    assert after[0].pid not in (None, views[0].pid)
    assert said[0] == f"T1: its process {views[0].pid} died; restart 1 in 0.5 s"
    notice = next(i for i in heard if isinstance(i, Notice))
    assert (notice.table, notice.notice) == ("T1", RESTARTED_NOTICE)
    assert f"its process {views[0].pid} died" in notice.message
    assert not [i for i in heard if type(i).__name__ == "JournalChanged"]
    journals = {a.journal for a in heard if isinstance(a, Alert) and a.table == "T1"}
    assert len(journals) == 1  # the same journal before and after: numbering went on
    assert (seqs("T1"), seqs("T2")) == ([1, 2, 3], [1])  # each once, in order, through the proxy
    assert journaled(t1) == [
        (1, "camera_lost", "open", "blank"),
        (2, "camera_lost", "close", "restart"),  # what the killed run left open
        (3, "camera_lost", "open", "blank"),
        (4, "camera_lost", "close", "blank"),  # closed cleanly at the stop
    ]
    assert journaled(t2) == [
        (1, "camera_lost", "open", "blank"),
        (2, "camera_lost", "close", "blank"),
    ]


def test_the_command_joins_ray_lists_the_tables_and_stops_cleanly_on_sigint(ray_local, tmp_path):
    fleet_file = write_fleet(tmp_path, [table_entry("T1")], watchdog=FAST)
    address = ray_local.get_runtime_context().gcs_address
    command = [
        sys.executable, "-m", "pipeline.cli", "fleet", str(fleet_file), "--ray", address,
        "--status-s", "0.5",
    ]  # fmt: skip
    proc = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        until(lambda: any(" running " in line and " 0 frames" not in line for line in lines),
              "a running monitor")  # fmt: skip
        proc.send_signal(signal.SIGINT)
        status = proc.wait(WAIT_S)
    finally:
        proc.kill()
        proc.wait(WAIT_S)
    reader.join(WAIT_S)
    out = proc.stdout.read()
    assert status == 130, "".join(lines)
    table = load_fleet(fleet_file).tables[0]
    assert out.startswith(f"T1 | source {table.source} (looped) | publish {table.publish}")
    assert any("stopped (SIGINT): T1 " in line for line in lines)
    assert journaled(table) == [
        (1, "camera_lost", "open", "blank"),
        (2, "camera_lost", "close", "blank"),  # the closing alert journaled
    ]
