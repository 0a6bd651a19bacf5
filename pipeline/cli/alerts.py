"""``paigow alerts``: the alert console; ``paigow keys new``: CURVE keys for the bus.

``paigow alerts --connect PUB --replay REP [--table T] [--from-seq N] [--json]`` prints each
alert once, in sequence order, one line each (stdout), filling gaps from the replay endpoint;
notices (a silent publisher, replay trouble, the publisher's system notices such as an
unwritable journal or a table's vision degraded and restored, a replaced journal) go to
stderr. An alert opened while its table's vision was degraded ends ``(confidence low)``.
After a restart, ``--from-seq`` one past the last number seen misses nothing; a publisher that
comes back on a new journal is followed from its #1, loudly.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipeline.alerts import Alert, describe_alert, to_wire
from pipeline.bus.endpoints import PUB_ENDPOINT, REPLAY_ENDPOINT
from pipeline.cli.common import positive

CONSOLE_KEY = "console"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("alerts", help="follow the alert bus: every alert once, in order")
    p.add_argument("--connect", default=PUB_ENDPOINT, metavar="PUB", help="publisher endpoint")
    p.add_argument("--replay", default=REPLAY_ENDPOINT, metavar="REP", help="replay endpoint")
    p.add_argument("--table", help="follow one table (default: every table heard of)")
    p.add_argument(
        "--from-seq",
        type=positive(int),
        default=1,
        metavar="N",
        help="first sequence number wanted, per table (default 1: the whole journal)",
    )
    p.add_argument("--json", action="store_true", help="one schema-1 JSON object per line")
    p.add_argument("--keys", type=Path, metavar="DIR", help="CURVE keys directory")
    p.add_argument(
        "--key-name", default=CONSOLE_KEY, metavar="NAME", help="this console's key in DIR"
    )
    p.add_argument(
        "--silence-s",
        type=positive(float),
        default=3.0,
        metavar="S",
        help="warn when nothing is heard from the publisher for S seconds",
    )
    p.add_argument("--max-alerts", type=positive(int), metavar="N", help="exit after N alerts")
    p.add_argument("--exit-after-s", type=positive(float), metavar="S", help="exit after S s")
    p.set_defaults(func=cmd_alerts)

    keys = sub.add_parser("keys", help="CURVE keys for the alert bus")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    new = keys_sub.add_parser(
        "new", help="a keypair: the publisher's (default) or an allowed subscriber's (--name)"
    )
    new.add_argument("--dir", type=Path, required=True, help="keys directory (made if absent)")
    new.add_argument("--name", default="server", help="'server', or a subscriber's name")
    new.set_defaults(func=cmd_keys_new)


def _warn(text: str) -> None:
    print(f"paigow alerts: {text}", file=sys.stderr, flush=True)


def cmd_alerts(args: argparse.Namespace) -> int:
    from pipeline.bus import (
        AlertSubscriber,
        BusWarning,
        JournalChanged,
        Notice,
        PublisherBack,
        PublisherSilent,
        SubscriberConfig,
    )
    from pipeline.bus.keys import client_curve

    config = SubscriberConfig(
        pub_endpoint=args.connect,
        replay_endpoint=args.replay,
        table=args.table,
        from_seq=args.from_seq,
        silence_s=args.silence_s,
    )
    curve = client_curve(args.keys, args.key_name) if args.keys else None
    shown = 0
    with AlertSubscriber(config, curve) as subscriber:
        what = f"table {args.table}" if args.table else "every table"
        _warn(f"following {what} on {args.connect} (replay {args.replay}) from #{args.from_seq}")
        for item in subscriber.items(timeout_s=args.exit_after_s):
            match item:
                case Alert():
                    print(to_wire(item).decode() if args.json else describe_alert(item), flush=True)
                    shown += 1
                    if shown == args.max_alerts:
                        break
                case PublisherSilent(silent_s=silent_s, table=str(table)):
                    _warn(f"WARNING: TABLE {table} SILENT for {silent_s:.1f} s (others heard)")
                case PublisherSilent(silent_s=silent_s):
                    _warn(f"WARNING: PUBLISHER SILENT for {silent_s:.1f} s ({args.connect})")
                case PublisherBack(silent_s=silent_s, table=str(table)):
                    _warn(f"table {table} back after {silent_s:.1f} s of silence")
                case PublisherBack(silent_s=silent_s):
                    _warn(f"publisher back after {silent_s:.1f} s of silence")
                case BusWarning(message=message):
                    _warn(f"warning: {message}")
                case Notice(table=table, notice=name, message=message):
                    _warn(f"NOTICE {table} {name}: {message}")
                case JournalChanged(table=table, old=old, new=new, why=why):
                    _warn(
                        f"WARNING: {table} NUMBERS ALERTS AFRESH ({why}; journal {old} -> {new}):"
                        " following it again from #1"
                    )
    return 0


def cmd_keys_new(args: argparse.Namespace) -> int:
    from pipeline.bus.keys import ALLOWED_DIR, SERVER_NAME, new_keys

    public = new_keys(args.dir, args.name)
    if args.name == SERVER_NAME:
        print(f"{public}: the publisher's public key (subscribers need a copy)")
    else:
        allowed = args.dir / ALLOWED_DIR / public.name
        print(f"{public}: subscriber {args.name!r}, on the allow-list as {allowed}")
    return 0
