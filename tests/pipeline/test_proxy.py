"""`paigow proxy`: two real tables (publishers with journals) behind one proxy, consoles through
it, over loopback on free ports. Each alert once and in order per table, late joiners and
restarted tables filled from replay, bad requests and bad tables answered, never hung."""

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import zmq

from pipeline.alerts import Alert, make_alert
from pipeline.bus import (
    AlertPublisher,
    AlertSubscriber,
    JournalChanged,
    PublisherConfig,
    SubscriberConfig,
)
from pipeline.bus.keys import client_curve, new_keys, server_curve
from pipeline.bus.probe import flood_replay
from pipeline.bus.proxy import ProxyConfig, ProxyCurve, RoomProxy, run_proxy
from pipeline.bus.subscriber import PublisherBack, PublisherSilent
from pipeline.cli import main
from pipeline.journal import Journal
from pipeline.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]
ANY_PORT = "tcp://127.0.0.1:*"
WAIT_S = 10.0  # upper bound on any wait; the tests pass in far less
TABLES = ("T1", "T2")


def alert(table, round):
    return make_alert(
        "dice_not_flat", table=table, round=round, box=None, video_time_s=round / 10,
        frame=round, message=f"die not flat in round {round}", evidence={"die": 1},
    )  # fmt: skip


def publisher(journal, table, ctx, pub=ANY_PORT, replay=ANY_PORT, curve=None):
    config = PublisherConfig(pub, replay, heartbeat_s=0.1)
    return AlertPublisher(journal, table, config, curve=curve, context=ctx, say=lambda line: None)


def front(**config):
    return ProxyConfig(ANY_PORT, ANY_PORT, **{"request_timeout_s": 1.0, **config})


@pytest.fixture
def room(tmp_path, ctx):
    """Two tables, each a publisher on its own journal, behind one proxy."""
    journals = {t: Journal(tmp_path / f"{t}.db") for t in TABLES}
    pubs = {t: publisher(journals[t], t, ctx) for t in TABLES}
    tables = {t: (p.pub_endpoint, p.replay_endpoint) for t, p in pubs.items()}
    proxy = RoomProxy(tables, front(), context=ctx, say=lambda line: None).start()
    yield SimpleNamespace(proxy=proxy, pubs=pubs, journals=journals)
    proxy.close()
    for table in TABLES:  # the ones a test restarted included
        pubs[table].close()
        journals[table].close()


def console(proxy, ctx, curve=None, **config):
    config = {"silence_s": 5.0, "replay_timeout_s": 2.0, **config}
    endpoints = SubscriberConfig(proxy.pub_endpoint, proxy.replay_endpoint, **config)
    return AlertSubscriber(endpoints, curve, ctx)


def take(sub, done, timeout_s=WAIT_S):
    """The alerts, and the other items, a subscriber gives until ``done(alerts)`` holds (or
    ``timeout_s`` has passed)."""
    alerts, others = [], []
    for item in sub.items(timeout_s):
        (alerts if isinstance(item, Alert) else others).append(item)
        if done(alerts):
            break
    return alerts, others


def per_table(alerts):
    """Table -> the (seq, round) of its alerts, in the order they came."""
    seen = {}
    for a in alerts:
        seen.setdefault(a.table, []).append((a.seq, a.round))
    return seen


def journaled(journal, table):
    return [(a.seq, a.round) for a in journal.read(table, 1, 1000)]


def request(ctx, endpoint, frames, timeout_s=WAIT_S):
    """One REQ round trip; the decoded reply, or None if none came in ``timeout_s``."""
    with ctx.socket(zmq.REQ) as req:
        req.linger = 0
        req.connect(endpoint)
        req.send_multipart(frames)
        if not req.poll(int(timeout_s * 1000)):
            return None
        return json.loads(req.recv())


def ask(table, from_seq=1):
    return [json.dumps({"table": table, "from_seq": from_seq}).encode()]


# --- alerts through the proxy ------------------------------------------------------------


def test_one_console_sees_both_tables_alerts_once_and_in_order_per_table(room, ctx):
    t1, t2 = room.pubs["T1"], room.pubs["T2"]
    with console(room.proxy, ctx) as sub:
        for r in range(1, 4):
            t1.emit(alert("T1", r))
            t2.emit(alert("T2", r))
        alerts, _ = take(sub, lambda got: len(got) >= 6)
        for r in range(4, 9):  # the console follows both by now: these come live
            t1.emit(alert("T1", r))
            if r % 2:
                t2.emit(alert("T2", r))
        more, _ = take(sub, lambda got: len(got) >= 7)
        alerts += more
        assert not [a for a in sub.items(timeout_s=0.5) if isinstance(a, Alert)]  # none twice
    for table in TABLES:
        assert per_table(alerts)[table] == journaled(room.journals[table], table)
    assert len(alerts) == 13 and sub.delivered_live > 0


def test_a_late_console_gets_the_earlier_alerts_from_replay_through_the_proxy(room, ctx):
    room.pubs["T1"].emit_all(alert("T1", r) for r in range(1, 26))
    room.pubs["T2"].emit_all(alert("T2", r) for r in range(1, 4))
    with console(room.proxy, ctx, replay_batch=10) as sub:
        alerts, _ = take(sub, lambda got: len(got) >= 28)
        assert sub.delivered_replayed == 28
    assert per_table(alerts) == {t: journaled(room.journals[t], t) for t in TABLES}
    assert room.proxy.counts.relayed >= 4  # T1 in batches of 10, T2 once


def test_a_table_that_falls_silent_behind_the_proxy_is_named_and_its_return_said(room, ctx):
    def first(sub, kind):
        return next((i for i in sub.items(WAIT_S) if isinstance(i, kind)), None)

    silence_s = 2.0  # 20 heartbeats: a loaded machine does not miss that many
    with console(room.proxy, ctx, silence_s=silence_s) as sub:
        heard = list(sub.items(silence_s + 0.5))  # both tables heard (heartbeats every 0.1 s)
        assert not [i for i in heard if isinstance(i, PublisherSilent)]
        room.pubs["T2"].close()  # its monitor stops; T1 goes on
        silent = first(sub, PublisherSilent)
        assert silent is not None and silent.table == "T2" and silent.silent_s >= silence_s
        restarted = publisher(room.journals["T2"], "T2", ctx, *room.proxy.tables["T2"])
        room.pubs["T2"] = restarted
        back = first(sub, PublisherBack)
        assert back is not None and back.table == "T2"


def test_a_table_restarted_behind_the_proxy_loses_nothing_and_repeats_nothing(room, ctx, tmp_path):
    first = room.pubs["T1"]
    endpoints = first.pub_endpoint, first.replay_endpoint
    with console(room.proxy, ctx) as sub:
        first.emit_all(alert("T1", r) for r in (1, 2, 3))
        alerts, _ = take(sub, lambda got: len(got) >= 3)
        first.close()  # the monitor dies...
        room.journals["T1"].close()
        with Journal(tmp_path / "T1.db") as journal:  # ...having journaled more on its way out
            journal.append_all([alert("T1", r) for r in (4, 5)])
        room.pubs["T2"].emit_all(alert("T2", r) for r in (1, 2))  # the other table goes on
        replayed = sub.delivered_replayed
        room.journals["T1"] = Journal(tmp_path / "T1.db")  # the monitor restarts
        room.pubs["T1"] = second = publisher(room.journals["T1"], "T1", ctx, *endpoints)
        second.emit_all(alert("T1", r) for r in (6, 7))  # before the proxy has reconnected
        wanted = len(journaled(room.journals["T1"], "T1")) + 2  # with the closes at restart
        more, others = take(sub, lambda got: len(alerts) + len(got) >= wanted)
        alerts += more
        assert sub.delivered_replayed - replayed >= 2  # 4 and 5 could only come from replay
        assert not [a for a in sub.items(timeout_s=0.5) if isinstance(a, Alert)]  # none twice
    assert per_table(alerts)["T1"] == journaled(room.journals["T1"], "T1")
    assert [r for _, r in per_table(alerts)["T1"][:5]] == [1, 2, 3, 4, 5]
    assert per_table(alerts)["T2"] == [(1, 1), (2, 2)]
    assert not any(isinstance(item, JournalChanged) for item in others)


# --- the replay router -------------------------------------------------------------------


def test_unknown_and_silent_tables_get_error_replies_and_the_proxy_goes_on(tmp_path, ctx):
    with (
        Journal(tmp_path / "T1.db") as journal,
        publisher(journal, "T1", ctx) as t1,
        ctx.socket(zmq.ROUTER) as silent,  # takes requests, never answers
    ):
        t1.emit(alert("T1", 1))
        silent_port = silent.bind_to_random_port("tcp://127.0.0.1")
        tables = {
            "T1": (t1.pub_endpoint, t1.replay_endpoint),
            "T8": ("tcp://127.0.0.1:1", "tcp://127.0.0.1:1"),  # nobody there
            "T9": ("tcp://127.0.0.1:1", f"tcp://127.0.0.1:{silent_port}"),
        }
        started, stop = [], threading.Event()
        config = ProxyConfig(request_timeout_s=0.5)
        runner = threading.Thread(
            target=run_proxy, args=(ANY_PORT, ANY_PORT, tables),
            kwargs={"stop": stop, "config": config, "ready": started.append},
        )  # fmt: skip
        runner.start()
        try:
            deadline = time.monotonic() + WAIT_S
            while not started and time.monotonic() < deadline:
                time.sleep(0.01)
            endpoint = started[0].replay_endpoint
            unknown = request(ctx, endpoint, ask("T7"))
            assert re.fullmatch(
                r"unknown table 'T7'; this proxy serves T1, T8, T9", unknown["error"]
            )
            waited = time.monotonic()
            assert "not connected in 0.5 s" in request(ctx, endpoint, ask("T8"))["error"]
            assert "no reply from" in request(ctx, endpoint, ask("T9"))["error"]
            assert time.monotonic() - waited >= 1.0
            assert [a["seq"] for a in request(ctx, endpoint, ask("T1"))["alerts"]] == [1]
        finally:
            stop.set()
            runner.join(WAIT_S)
    counts = started[0].counts
    assert not runner.is_alive() and (counts.refused, counts.timed_out, counts.relayed) == (1, 2, 1)


@pytest.mark.parametrize(
    "frames",
    [
        [b'{"table": "T1", "from_seq": 9223372036854775808, "limit": 10}'],
        [b"[" * 4000],
        [b'{"table": "T1", "from_seq": 1e400}'],
        [b"\xff\xfe not utf-8"],
        [b'{"table": "T1", "from_seq": 1, "evil": 1}'],
        [b'{"table": "T1", "from_seq": 1, "pad": "' + b" " * 5000 + b'"}'],
        [b'{"table": "T1", "from_seq": 1}', b"a second frame"],
    ],
    ids=["from_seq-2^63", "4000-brackets", "1e400", "binary", "unknown-field", "5kB", "2-frames"],
)
def test_a_malformed_request_gets_an_error_reply_and_the_proxy_goes_on(room, ctx, frames):
    room.pubs["T1"].emit(alert("T1", 1))
    endpoint = room.proxy.replay_endpoint
    assert list(request(ctx, endpoint, frames)) == ["error"]
    assert [a["seq"] for a in request(ctx, endpoint, ask("T1"))["alerts"]] == [1]
    assert room.proxy.counts.restarts == 0


def test_a_request_past_the_size_limit_is_dropped_unread_and_the_proxy_goes_on(room, ctx):
    room.pubs["T2"].emit(alert("T2", 1))
    endpoint = room.proxy.replay_endpoint
    assert request(ctx, endpoint, [b"x" * 70000], timeout_s=0.5) is None  # connection closed
    assert [a["seq"] for a in request(ctx, endpoint, ask("T2"))["alerts"]] == [1]


def test_peers_that_never_read_their_replies_do_not_stop_the_proxy(room, ctx):
    room.pubs["T1"].emit_all(alert("T1", r) for r in range(1, 201))
    stop = threading.Event()
    flood = [ask("T1")[0], b"[" * 4000, ask("T7")[0]]
    endpoint = room.proxy.replay_endpoint
    counts = []
    flooder = threading.Thread(target=lambda: counts.append(flood_replay(endpoint, flood, stop)))
    flooder.start()
    try:
        time.sleep(1.0)  # the flood runs meanwhile
        reply = request(ctx, endpoint, [b'{"table": "T1", "from_seq": 200}'])
    finally:
        stop.set()
        flooder.join(WAIT_S)
    assert [a["seq"] for a in reply["alerts"]] == [200]
    proxy = room.proxy.counts  # the flood was served: errors and replies, none of them read
    assert counts[0].sent > 10 and proxy.refused > 0 and proxy.relayed > 0
    assert proxy.restarts == 0


def test_many_consoles_asking_at_once_each_get_their_own_reply(room, ctx):
    room.pubs["T1"].emit_all(alert("T1", r) for r in range(1, 21))
    room.pubs["T2"].emit_all(alert("T2", r) for r in range(1, 21))
    asks = [(table, seq) for table in TABLES for seq in range(1, 21, 2)]
    sockets = [ctx.socket(zmq.REQ) for _ in asks]
    try:
        for req, (table, seq) in zip(sockets, asks, strict=True):
            req.linger = 0
            req.connect(room.proxy.replay_endpoint)
            req.send(json.dumps({"table": table, "from_seq": seq, "limit": 3}).encode())
        replies = []
        for req in sockets:
            assert req.poll(int(WAIT_S * 1000))
            replies.append(json.loads(req.recv()))
    finally:
        for req in sockets:
            req.close()
    got = [[(a["table"], a["seq"]) for a in reply["alerts"]] for reply in replies]
    assert got == [[(table, s) for s in range(seq, min(seq + 3, 21))] for table, seq in asks]
    assert [p.dropped_replies for p in room.pubs.values()] == [0, 0]


def test_a_curve_room_lets_the_allowed_console_in_through_the_proxy(tmp_path, ctx):
    keys = tmp_path / "keys"
    for name in ("server", "console", "proxy"):
        new_keys(keys, name)
    table_ctx, proxy_ctx = zmq.Context(), zmq.Context()  # ZAP is per context
    try:
        with (
            Journal(tmp_path / "T1.db") as journal,
            publisher(journal, "T1", table_ctx, curve=server_curve(keys)) as t1,
        ):
            sent = t1.emit_all(alert("T1", r) for r in (1, 2))
            tables = {"T1": (t1.pub_endpoint, t1.replay_endpoint)}
            curve = ProxyCurve.from_dir(keys)
            with (
                RoomProxy(tables, front(), curve, proxy_ctx) as proxy,
                console(proxy, ctx, client_curve(keys, "console")) as sub,
            ):
                alerts, _ = take(sub, lambda got: len(got) >= 2)
        assert alerts == sent
    finally:
        table_ctx.destroy(linger=0)
        proxy_ctx.destroy(linger=0)


# --- settings and the command line -------------------------------------------------------


def test_the_table_map_is_a_validated_setting(tmp_path):
    path = tmp_path / "room.yaml"
    path.write_text(
        "proxy:\n  request_timeout_s: 0.8\n  tables:\n"
        "    T1: {publish: tcp://10.0.0.11:5556, replay: tcp://10.0.0.11:5557}\n"
    )
    proxy = load_settings(path).proxy
    assert proxy.table_map() == {"T1": ("tcp://10.0.0.11:5556", "tcp://10.0.0.11:5557")}
    assert proxy.build() == ProxyConfig(request_timeout_s=0.8)
    path.write_text("proxy:\n  tables:\n    T1: {publish: tcp://10.0.0.11:5556}\n")
    with pytest.raises(ValueError, match=r"proxy\.tables\.T1\.replay: Field required"):
        load_settings(path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--table", "T1"], "is not T=PUB,REPLAY"),
        (["--table", "T1=tcp://127.0.0.1:5556"], "is not T=PUB,REPLAY"),
        (["--table", "=tcp://a:1,tcp://a:2"], "is not T=PUB,REPLAY"),
        (["--table", "T.1=tcp://a:1,tcp://a:2"], "table name 'T.1'"),
        (["--table", "T1=nonsense,tcp://a:2"], "'nonsense' is no ZeroMQ endpoint"),
        ([], "no table: give --table"),
        (["--fleet", "no-such-fleet.yaml"], "no-such-fleet.yaml"),
        (["--table", "T1=tcp://a:1,tcp://a:2", "--publish", "nonsense"], "cannot bind nonsense"),
    ],
)
def test_bad_proxy_input_is_one_line_and_status_2(args, message, capsys):
    try:
        code = main(["proxy", *args])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_a_fleet_file_gives_the_proxy_every_table_at_its_endpoints():
    from pipeline.cli.proxy import _fleet_tables

    example = ROOT / "datasets" / "samples" / "fleet.example.yaml"
    assert _fleet_tables(example) == {
        "T1": {"publish": "tcp://127.0.0.1:5601", "replay": "tcp://127.0.0.1:5602"},
        "T2": {"publish": "tcp://127.0.0.1:5611", "replay": "tcp://127.0.0.1:5612"},
    }


def test_paigow_proxy_serves_a_console_and_stops_cleanly_on_sigterm(tmp_path, ctx):
    with Journal(tmp_path / "T1.db") as journal, publisher(journal, "T1", ctx) as t1:
        sent = t1.emit(alert("T1", 1))
        table = f"T1={t1.pub_endpoint},{t1.replay_endpoint}"
        command = [sys.executable, "-m", "pipeline.cli", "proxy", "--table", table,
                   "--publish", ANY_PORT, "--replay", ANY_PORT]  # fmt: skip
        proc = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
        try:
            line = proc.stderr.readline()  # "alerts on PUB, replay REP; tables ..."
            pub, rep = re.search(r"alerts on (\S+), replay (\S+);", line).groups()
            config = SubscriberConfig(pub, rep, silence_s=5.0)
            with AlertSubscriber(config, None, ctx) as sub:
                alerts, _ = take(sub, lambda got: len(got) >= 1)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=WAIT_S)
        finally:
            proc.kill()
            proc.wait(WAIT_S)
    assert alerts == [sent]
    assert proc.returncode == 0 and "stopped (SIGTERM): 1 replays relayed" in err, err
