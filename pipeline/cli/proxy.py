"""``paigow proxy --table T=PUB,REPLAY ...``: one publish and one replay address for the room.

Each ``--table`` names a table and its monitor's PUB and replay endpoints (the monitor's
``--publish`` and ``--replay``); the proxy connects to them and serves every table's alerts,
heartbeats and notices on ``--publish`` and their replays on ``--replay``
(:mod:`pipeline.bus.proxy`). Consoles connect there as to one publisher:
``paigow alerts --connect PUB --replay REP``. A table whose monitor restarts is reconnected by
itself; consoles fill the gap from its journal, through the proxy.

The table map, the endpoints and the limits are settings too (the ``proxy`` section of
``--config FILE``; docs/config.md); an option given overrides the file, and a ``--table`` adds
a table to those of the file or replaces one of the same name. ``--fleet FLEET.yaml`` takes
every table of a fleet file (``paigow fleet``) at its ``publish`` and ``replay`` endpoints
(``--table`` may add or replace one). ``--keys DIR``: CURVE, the
consoles' keys as for a monitor, and the proxy's own pair (``--key-name``, default ``proxy``)
on every table's allow-list.

SIGTERM stops it with status 0, SIGINT (Ctrl-C) with 130. Bad input (a ``--table`` that is not
``T=PUB,REPLAY``, an endpoint that cannot be bound, no table at all) is one line, status 2.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from pipeline.bus.endpoints import PROXY_PUB_ENDPOINT, PROXY_REPLAY_ENDPOINT
from pipeline.cli.common import (
    StopOnSignals,
    UsageError,
    add_settings_options,
    positive,
    settings_of,
)

FLAGS = {
    "publish": "proxy.pub_endpoint",
    "replay": "proxy.replay_endpoint",
    "keys": "proxy.keys",
    "key_name": "proxy.key_name",
    "timeout_s": "proxy.request_timeout_s",
}
"""Each option -> the setting it overrides when given (``--table``: ``proxy.tables``)."""
EXAMPLE = "T1=tcp://10.0.0.11:5556,tcp://10.0.0.11:5557"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "proxy",
        help="one publish and one replay address for every table's alerts",
        description="Serve every table's alerts on one publish endpoint and their replays on "
        "one replay endpoint; consoles connect there (paigow alerts --connect --replay).",
        epilog=f"Example: paigow proxy --table {EXAMPLE} --table T2=... "
        "SIGTERM stops cleanly with status 0, SIGINT (Ctrl-C) with status 130.",
    )
    p.add_argument(
        "--table",
        action="append",
        type=table_endpoints,
        default=[],
        metavar="T=PUB,REPLAY",
        help="a table and its monitor's publish and replay endpoints (repeatable)",
    )
    p.add_argument(
        "--fleet",
        type=Path,
        metavar="FLEET",
        help="a fleet file (paigow fleet): every table of it, at its publish and replay",
    )
    p.add_argument(
        "--publish",
        metavar="PUB",
        help=f"XPUB endpoint consoles subscribe to ({PROXY_PUB_ENDPOINT})",
    )
    p.add_argument(
        "--replay", metavar="REP", help=f"replay endpoint consoles ask ({PROXY_REPLAY_ENDPOINT})"
    )
    p.add_argument("--keys", type=Path, metavar="DIR", help="CURVE keys directory (paigow keys)")
    p.add_argument("--key-name", metavar="NAME", help="the proxy's own key in DIR (proxy)")
    p.add_argument(
        "--timeout-s",
        type=positive(float),
        metavar="S",
        help="a table that has not answered a replay request by then: an error reply (1.5)",
    )
    add_settings_options(p)
    p.set_defaults(func=cmd_proxy)


def table_endpoints(text: str) -> tuple[str, dict[str, str]]:
    """``T=PUB,REPLAY`` -> ``(T, {"publish": PUB, "replay": REPLAY})``; the names and endpoints
    are checked with the settings."""
    table, equals, ends = text.partition("=")
    parts = ends.split(",")
    if not equals or not table or len(parts) != 2 or not all(parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not T=PUB,REPLAY (e.g. {EXAMPLE})")
    return table, {"publish": parts[0], "replay": parts[1]}


def _fleet_tables(path: Path | None) -> dict[str, dict[str, str]]:
    """The tables of a fleet file and their endpoints (its layouts and sources not looked at:
    they may live on other machines)."""
    if path is None:
        return {}
    from pipeline.cluster.fleet_config import load_fleet

    fleet = load_fleet(path, files=False)
    return {t.table: {"publish": t.publish, "replay": t.replay} for t in fleet.tables}


def _note(text: str) -> None:
    print(f"paigow proxy: {text}", file=sys.stderr, flush=True)


def cmd_proxy(args: argparse.Namespace) -> int:
    from pipeline.bus.proxy import ProxyCurve, run_proxy

    given = {**_fleet_tables(args.fleet), **dict(args.table)}
    extra: dict[str, Any] = {"proxy": {"tables": given}} if given else {}
    proxy = settings_of(args, FLAGS, extra=extra).proxy
    tables = proxy.table_map()
    if not tables:
        raise UsageError(
            f"no table: give --table T=PUB,REPLAY (e.g. {EXAMPLE}), --fleet FILE or proxy.tables"
        )
    curve = ProxyCurve.from_dir(proxy.keys, proxy.key_name) if proxy.keys else None
    config = proxy.build()
    with StopOnSignals(threading.Event()) as signals:
        counts = run_proxy(
            config.pub_endpoint,
            config.replay_endpoint,
            tables,
            curve,
            stop=signals.stop,
            config=config,
            ready=_announce,
        )
    why = signal.Signals(signals.signal).name if signals.signal else "stopped"
    _note(
        f"stopped ({why}): {counts.relayed} replays relayed, {counts.refused} refused, "
        f"{counts.timed_out} timed out, {counts.dropped} replies dropped"
    )
    return signals.exit_status


def _announce(proxy) -> None:
    tables = ", ".join(f"{table} ({pub}, {rep})" for table, (pub, rep) in proxy.tables.items())
    _note(f"alerts on {proxy.pub_endpoint}, replay {proxy.replay_endpoint}; tables {tables}")
