"""``paigow console``: the alert console in the browser; ``paigow console operator add``.

``paigow console [--connect PUB --replay REP] [--keys DIR --key-name NAME] [--http HOST:PORT]
[--db FILE] (--operators FILE | --no-login) [--evidence DIR ...] [--layouts DIR]`` follows the
bus as ``paigow alerts`` does and serves the wall, the detail, acknowledgements, the audit and
the tables' health (docs/console.md) until SIGINT or SIGTERM. A bind other than loopback needs
an operators file; ``--no-login`` serves only on loopback.

``paigow console operator add NAME --operators FILE [--password-stdin]`` adds an operator
(scrypt hash), asking for the password unless it comes on stdin.
"""

from __future__ import annotations

import argparse
import getpass
import importlib
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.bus.endpoints import PUB_ENDPOINT, REPLAY_ENDPOINT
from pipeline.cli.common import StopOnSignals, UsageError, positive
from pipeline.console.config import HTTP_DEFAULT, ConsoleConfig, parse_http

if TYPE_CHECKING:
    from pipeline.bus.publisher import PublisherConfig
    from pipeline.console.server import ConsoleHandle

DEMO_OVER = "demo round over"
"""The phase the demo's table says in its heartbeats once its round has been played."""
DEMO_DB = "console.sqlite"
"""The demo's console store, in the demo's folder (made afresh at each demo)."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("console", help="the alert console in the browser (wall, acks, health)")
    p.add_argument("--connect", default=PUB_ENDPOINT, metavar="PUB", help="publisher endpoint")
    p.add_argument("--replay", default=REPLAY_ENDPOINT, metavar="REP", help="replay endpoint")
    p.add_argument("--keys", type=Path, metavar="DIR", help="CURVE keys directory")
    p.add_argument("--key-name", default="console", metavar="NAME", help="this console's key")
    p.add_argument(
        "--http", default=HTTP_DEFAULT, metavar="HOST:PORT", help=f"serve here ({HTTP_DEFAULT})"
    )
    p.add_argument("--db", type=Path, default=Path("console.sqlite"), metavar="FILE",
                   help="the console's store (alerts heard, acknowledgements)")  # fmt: skip
    p.add_argument("--operators", type=Path, metavar="FILE", help="operators and their hashes")
    p.add_argument(
        "--no-login", action="store_true", help="no login (loopback only: a demo, one desk)"
    )
    p.add_argument("--evidence", type=Path, action="append", default=[], metavar="DIR",
                   help="a run's output folder whose snapshots it shows (repeatable)")  # fmt: skip
    p.add_argument("--layouts", type=Path, default=Path("layouts"), metavar="DIR",
                   help="the layout editor's folder (default ./layouts)")  # fmt: skip
    p.add_argument("--silence-s", type=positive(float), default=3.0, metavar="S",
                   help="a table not heard for S seconds turns red")  # fmt: skip
    p.set_defaults(func=cmd_console)
    actions = p.add_subparsers(dest="console_command", metavar="operator")
    operator = actions.add_parser("operator", help="manage the operators file")
    operator_actions = operator.add_subparsers(dest="operator_command", required=True)
    add = operator_actions.add_parser("add", help="add an operator (or set a new password)")
    add.add_argument("name", help="the operator's login name")
    add.add_argument("--operators", type=Path, required=True, metavar="FILE")
    add.add_argument(
        "--password-stdin", action="store_true", help="read the password from stdin's first line"
    )
    add.set_defaults(func=cmd_operator_add)


def config_of(args: argparse.Namespace) -> ConsoleConfig:
    host, port = parse_http(args.http)
    return ConsoleConfig(
        pub_endpoint=args.connect,
        replay_endpoint=args.replay,
        keys_dir=args.keys,
        key_name=args.key_name,
        host=host,
        port=port,
        db_path=args.db,
        operators_path=args.operators,
        no_login=args.no_login,
        evidence_dirs=tuple(args.evidence),
        layouts_dir=args.layouts,
        silence_s=args.silence_s,
    )


WEB_STACK = ("starlette", "uvicorn", "sse_starlette", "itsdangerous", "multipart")
"""The console extra's modules: without one of them, one line says what to install."""


def _server():
    """:mod:`pipeline.console.server`, or one line naming the extra to install."""
    try:
        server = importlib.import_module("pipeline.console.server")
    except ModuleNotFoundError as exc:
        if exc.name not in WEB_STACK:
            raise
        raise UsageError(
            f"the console needs the web stack ({exc.name} is missing): "
            "pip install 'paigow-monitor[console]'"
        ) from None
    return server


def cmd_console(args: argparse.Namespace) -> int:
    run_console = _server().run_console
    config = config_of(args)
    stop = threading.Event()
    with StopOnSignals(stop) as signals:
        run_console(config, stop, announce=_say)
    return signals.exit_status


def _say(text: str) -> None:
    print(f"paigow console: {text}", file=sys.stderr, flush=True)


def cmd_operator_add(args: argparse.Namespace) -> int:
    from pipeline.console.auth import add_operator

    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = getpass.getpass(f"password for {args.name}: ")
        if password != getpass.getpass("again: "):
            raise UsageError("the two passwords differ")
    add_operator(args.operators, args.name, password)
    print(f"{args.operators}: operator {args.name!r} added", file=sys.stderr)
    return 0


@dataclass
class DemoConsole:
    """The console serving ``paigow demo --console``; :meth:`wait` keeps it up after the round."""

    handle: ConsoleHandle
    publish: PublisherConfig

    def wait(self, journal_path: Path, table: str) -> int:
        """Serve until SIGINT or SIGTERM, the demo's journal published again meanwhile (so the
        table is heard, its round over, rather than silent); the command's exit status."""
        from pipeline.bus import AlertPublisher
        from pipeline.journal import Journal

        _say(f"the round is over; the console stays on {self.handle.url} until Ctrl-C")
        stop = threading.Event()
        with (
            StopOnSignals(stop) as signals,
            Journal(journal_path) as journal,
            _bound(lambda: AlertPublisher(journal, table, self.publish)) as publisher,
        ):
            publisher.status = lambda: {"phase": DEMO_OVER}
            while not stop.wait(0.5):
                if not self.handle.serving:
                    raise RuntimeError("the console's HTTP server stopped")
        return signals.exit_status


def _bound(open_publisher, tries: int = 20):
    """The publisher, once its endpoints are free again (the round's own publisher has just
    closed them); ValueError after ``tries`` tenths of a second."""
    for _ in range(tries - 1):
        try:
            return open_publisher()
        except ValueError:
            threading.Event().wait(0.1)
    return open_publisher()


@contextmanager
def demo_console(http: str, publish: PublisherConfig, out: Path) -> Iterator[DemoConsole]:
    """A console on loopback, without a login, following the demo's bus, showing the
    snapshots of its folder ``out``; its store is made afresh in ``out``."""
    serve_in_thread = _server().serve_in_thread
    host, port = parse_http(http)
    out.mkdir(parents=True, exist_ok=True)
    for side in ("", "-wal", "-shm"):
        (out / f"{DEMO_DB}{side}").unlink(missing_ok=True)
    config = ConsoleConfig(
        pub_endpoint=publish.pub_endpoint,
        replay_endpoint=publish.replay_endpoint,
        host=host,
        port=port,
        db_path=out / DEMO_DB,
        no_login=True,
        evidence_dirs=(out,),
        layouts_dir=out / "layouts",
    )
    with serve_in_thread(config) as handle:
        _say(f"open {handle.url} in a browser: the wall fills as the round plays")
        yield DemoConsole(handle, publish)
