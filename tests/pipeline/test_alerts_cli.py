"""`paigow alerts` and `paigow keys new`, against a real publisher on loopback."""

import json
import queue
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pipeline.alerts import describe_alert, from_wire, make_alert
from pipeline.bus import AlertPublisher, PublisherConfig
from pipeline.bus.endpoints import PUB_ENDPOINT, REPLAY_ENDPOINT
from pipeline.bus.keys import server_curve
from pipeline.cli import build_parser, main
from pipeline.journal import Journal

ROOT = Path(__file__).resolve().parents[2]
ANY_PORT = "tcp://127.0.0.1:*"
WAIT_S = 10.0  # upper bound on any wait; the tests pass in far less


def alert(round):
    return make_alert(
        "single_tile_exposed", table="T1", round=round, box=3, video_time_s=round * 1.5,
        frame=round * 30, message="one tile of box 3 face up",
    )  # fmt: skip


@pytest.fixture
def pub(tmp_path, ctx):
    config = PublisherConfig(ANY_PORT, ANY_PORT, heartbeat_s=0.1)
    with (
        Journal(tmp_path / "alerts.db") as journal,
        AlertPublisher(journal, "T1", config, context=ctx) as publisher,
    ):
        yield publisher


def endpoints(pub):
    return ["--connect", pub.pub_endpoint, "--replay", pub.replay_endpoint]


class Console:
    """``paigow alerts ARGS`` in a subprocess, its stdout read line by line with a timeout."""

    def __init__(self, *args):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pipeline.cli", "alerts", *args],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self._lines = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self._lines.put(line.rstrip("\n"))

    def lines(self, n):
        return [self._lines.get(timeout=WAIT_S) for _ in range(n)]

    def seqs(self, n):
        return [from_wire(line.encode()).seq for line in self.lines(n)]

    def finish(self):
        """Exit status and stderr, killing the console if it has not ended in WAIT_S."""
        try:
            _, err = self.proc.communicate(timeout=WAIT_S)
        finally:
            self.proc.kill()
        self._reader.join(timeout=WAIT_S)
        return self.proc.returncode, err


def test_console_prints_each_alert_once_in_order(pub, capsys):
    sent = pub.emit_all(alert(r) for r in (1, 2, 3))
    code = main(["alerts", *endpoints(pub), "--max-alerts", "3", "--exit-after-s", str(WAIT_S)])
    out, err = capsys.readouterr()
    assert code == 0 and out.splitlines() == [describe_alert(a) for a in sent]
    assert "following every table" in err


def test_console_json_from_seq(pub, capsys):
    pub.emit_all(alert(r) for r in (1, 2, 3))
    args = ["--table", "T1", "--from-seq", "2", "--json", "--max-alerts", "2"]
    assert main(["alerts", *endpoints(pub), *args, "--exit-after-s", str(WAIT_S)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [2, 3]


def test_console_killed_and_restarted_with_from_seq_misses_nothing(pub):
    pub.emit_all(alert(r) for r in (1, 2, 3))
    first = Console(*endpoints(pub), "--table", "T1", "--json")
    try:
        assert first.seqs(3) == [1, 2, 3]
        pub.emit(alert(4))
        assert first.seqs(1) == [4]
    finally:
        first.proc.kill()
        first.finish()
    pub.emit_all(alert(r) for r in (5, 6))  # while no console runs
    second = Console(*endpoints(pub), "--table", "T1", "--json", "--from-seq", "5")
    try:
        assert second.seqs(2) == [5, 6]
        pub.emit(alert(7))
        assert second.seqs(1) == [7]
    finally:
        second.proc.send_signal(signal.SIGINT)  # Ctrl-C
        code, err = second.finish()
    assert code == 130 and "paigow alerts: interrupted" in err


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_console_says_loudly_when_the_publisher_is_silent(capsys):
    nobody = f"tcp://127.0.0.1:{free_port()}"
    args = ["--connect", nobody, "--replay", nobody, "--silence-s", "0.2", "--exit-after-s", "0.5"]
    assert main(["alerts", *args]) == 0
    assert f"WARNING: PUBLISHER SILENT for 0.2 s ({nobody})" in capsys.readouterr().err


def test_keys_new_then_a_curve_console(tmp_path, ctx, capsys):
    keys = tmp_path / "keys"
    assert main(["keys", "new", "--dir", str(keys)]) == 0
    assert main(["keys", "new", "--dir", str(keys), "--name", "console"]) == 0
    assert (keys / "allowed" / "console.key").is_file()
    assert main(["keys", "new", "--dir", str(keys), "--name", "console"]) == 2
    assert "exists already" in capsys.readouterr().err
    config = PublisherConfig(ANY_PORT, ANY_PORT, heartbeat_s=0.1)
    with (
        Journal(tmp_path / "alerts.db") as journal,
        AlertPublisher(journal, "T1", config, curve=server_curve(keys), context=ctx) as pub,
    ):
        sent = pub.emit_all(alert(r) for r in (1, 2))
        args = ["--keys", str(keys), "--max-alerts", "2", "--exit-after-s", str(WAIT_S)]
        assert main(["alerts", *endpoints(pub), *args]) == 0
    assert capsys.readouterr().out.splitlines() == [describe_alert(a) for a in sent]


def test_console_defaults_are_the_bus_defaults():
    args = build_parser().parse_args(["alerts"])
    assert (args.connect, args.replay) == (PUB_ENDPOINT, REPLAY_ENDPOINT)


def test_the_parser_loads_no_transport():
    """The commands take their bus defaults from pipeline.bus.endpoints: ``paigow --help`` and
    the game commands must not pay for zmq (nor the journal's sqlite3) to build the parser."""
    code = (
        "import sys; from pipeline.cli import build_parser; build_parser(); "
        "print(sorted({'zmq', 'sqlite3'} & sys.modules.keys()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from-seq", "0"], "must be > 0"),
        (["--silence-s", "soon"], "not a number"),
        (["--table", "T.1"], "table name"),
        (["--connect", "nonsense"], "cannot connect to nonsense"),
        (["--keys", "no/such/dir"], "paigow keys new"),
    ],
)
def test_bad_console_input_is_one_line(args, message, capsys):
    try:
        code = main(["alerts", *args, "--exit-after-s", "0.1"])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
