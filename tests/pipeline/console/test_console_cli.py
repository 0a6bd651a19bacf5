"""``paigow console`` and ``paigow console operator add``: bad input is one line and exit 2; the
command serves until SIGTERM and then stops cleanly."""

import io
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from pipeline.cli import main
from pipeline.console.auth import load_operators, verify_password

ROOT = Path(__file__).resolve().parents[3]
WAIT_S = 20.0


def test_operator_add_writes_a_scrypt_hash(tmp_path, monkeypatch, capsys):
    path = tmp_path / "operators.yaml"
    monkeypatch.setattr(sys, "stdin", io.StringIO("correct horse\n"))
    assert main(["console", "operator", "add", "alice", "--operators", str(path),
                 "--password-stdin"]) == 0  # fmt: skip
    stored = load_operators(path)["alice"]
    assert verify_password("correct horse", stored)
    assert "correct horse" not in path.read_text()
    assert path.stat().st_mode & 0o077 == 0  # readable by its owner only


@pytest.mark.parametrize(
    "args, says",
    [
        (["--http", "nope"], "expected HOST:PORT"),
        (["--http", "127.0.0.1:99999"], "expected HOST:PORT"),
        (["--http", "0.0.0.0:8080", "--no-login"], "--no-login serves only on loopback"),
        (["--http", "0.0.0.0:8080"], "give --operators FILE"),
        ([], "needs --operators FILE"),
        (["--operators", "absent.yaml"], "no such operators file"),
        (["--no-login", "--evidence", "no/such/run"], "--evidence no/such/run: no such folder"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, args, says):
    monkeypatch.chdir(tmp_path)
    assert main(["console", "--http", "127.0.0.1:0", *args]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def free_port():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        return listener.getsockname()[1]


def test_the_command_serves_the_wall_until_sigterm(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "console", "--http", f"127.0.0.1:{port}",
         "--no-login", "--db", str(tmp_path / "console.sqlite")],
        cwd=ROOT, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline, page = time.monotonic() + WAIT_S, None
        while page is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", timeout=2.0)
            except httpx.TransportError:
                time.sleep(0.2)
        assert page is not None and page.status_code == 200 and "wall.js" in page.text
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=WAIT_S)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert f"console on http://127.0.0.1:{port}" in err


def test_the_parser_loads_no_web_stack():
    """``paigow --help`` must not pay for starlette and uvicorn (nor need the console extra)."""
    code = (
        "import sys; from pipeline.cli import build_parser; build_parser(); "
        "print(sorted({'starlette', 'uvicorn', 'sse_starlette'} & sys.modules.keys()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_without_the_web_stack_the_console_says_which_extra_to_install(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "pipeline.console.server", raising=False)
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if not installed
    assert main(["console", "--http", "127.0.0.1:0", "--no-login"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'paigow-monitor[console]'" in err and err.count("\n") == 1
