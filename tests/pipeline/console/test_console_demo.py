"""``paigow demo --console``: the console follows the demo's bus while the round plays, holds
every irregularity the demo raised, stays up after the round and stops on SIGINT."""

import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from pipeline.cli import main

ROOT = Path(__file__).resolve().parents[3]
DEMO_WAIT_S = 300.0  # the whole demo round on a loaded 2-core machine, with room to spare
URL = re.compile(r"open (http://127\.0\.0\.1:\d+) in a browser")


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        return listener.getsockname()[1]


def test_the_console_needs_the_demos_bus(capsys):
    assert main(["demo", "--console", "--no-publish"]) == 2
    err = capsys.readouterr().err
    assert "--console follows the demo's bus: drop --no-publish" in err
    assert err.count("\n") == 1


@pytest.mark.slow
def test_the_demo_fills_the_console_and_it_stays_up_until_sigint(tmp_path):
    out = tmp_path / "demo"
    pub, replay = (f"tcp://127.0.0.1:{free_port()}" for _ in range(2))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "demo", "--console", "127.0.0.1:0", "--out",
         str(out), "--pub", pub, "--replay", replay, "--no-video", "--quiet"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        url = None
        while url is None and proc.poll() is None:
            found = URL.search(proc.stderr.readline())
            url = found and found.group(1)
        assert url, "the demo named no console address"
        playing, deadline = None, time.monotonic() + DEMO_WAIT_S
        while playing is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)  # as the round plays, the table's heartbeats say how it goes
            tables = httpx.get(f"{url}/api/health", timeout=5.0).json()["tables"]
            playing = next((t for t in tables if t["fps"] is not None), None)
        assert playing is not None and playing["phase"] is not None
        deadline, line = time.monotonic() + DEMO_WAIT_S, ""
        while "the round is over" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "the demo ended before its round did"
        assert "the round is over" in line and proc.poll() is None  # still serving
        wall = httpx.get(f"{url}/api/wall", params={"history": 1}, timeout=5.0).json()
        deadline, phase = time.monotonic() + 10.0, None
        while phase != "demo round over" and time.monotonic() < deadline:
            time.sleep(0.2)  # the journal published again: the table is heard, its round over
            health = httpx.get(f"{url}/api/health", timeout=5.0).json()
            phase = health["tables"][0]["phase"] if health["tables"] else None
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    raised = [json.loads(row) for row in (out / "alerts.jsonl").read_text().splitlines()]
    opened = {(a["kind"], a["box"]) for a in raised if a["state"] == "open"}
    assert opened, "the demo raised nothing to show"
    assert {(i["kind"], i["box"]) for i in wall["items"]} == opened
    assert [(t["table"], t["level"]) for t in health["tables"]] == [("T1", "ok")]
    assert not health["bus_silent"]
    assert (out / "console.sqlite").is_file()
