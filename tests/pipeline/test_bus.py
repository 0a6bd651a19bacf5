"""The alert bus over real ZeroMQ sockets on loopback (random free ports, bounded waits)."""

import json
import re
import threading
import time
from dataclasses import replace

import pytest
import zmq

from pipeline.alerts import Alert, from_wire, make_alert, to_wire
from pipeline.bus import (
    AlertPublisher,
    AlertSubscriber,
    Heartbeat,
    PublisherBack,
    PublisherConfig,
    PublisherSilent,
    SubscriberConfig,
)
from pipeline.bus.keys import ClientCurve, client_curve, new_keys, server_curve
from pipeline.bus.wire import (
    ReplayReply,
    encode_reply,
    parse_heartbeat,
    parse_notice,
    parse_reply,
    parse_request,
)
from pipeline.journal import Journal

ANY_PORT = "tcp://127.0.0.1:*"
WAIT_S = 10.0  # upper bound on any wait; the tests pass in far less
WIRE_FIELDS = [
    "schema", "seq", "table", "kind", "rule", "rule_1998", "severity", "action", "state",
    "round", "box", "video_time_s", "wall_time", "frame", "evidence", "message", "journal",
]  # fmt: skip


def alert(round=1, table="T1"):
    return make_alert(
        "dice_not_flat", table=table, round=round, box=None, video_time_s=round / 10,
        frame=round, message=f"die not flat in round {round}", evidence={"die": 1},
    )  # fmt: skip


@pytest.fixture
def journal(tmp_path):
    with Journal(tmp_path / "alerts.db") as j:
        yield j


def publisher(journal, ctx, pub=ANY_PORT, replay=ANY_PORT, **config):
    config = PublisherConfig(pub, replay, **{"heartbeat_s": 0.1, **config})
    return AlertPublisher(journal, "T1", config, context=ctx)


def subscriber(pub, ctx, curve=None, **config):
    config = {"table": "T1", "silence_s": 2.0, "replay_timeout_s": 2.0, **config}
    cfg = SubscriberConfig(pub.pub_endpoint, pub.replay_endpoint, **config)
    return AlertSubscriber(cfg, curve=curve, context=ctx)


def take_alerts(items, n, timeout_s=WAIT_S):
    """The next ``n`` alerts from an item iterator, and the notices seen meanwhile."""
    alerts, notices, deadline = [], [], time.monotonic() + timeout_s
    for item in items:
        (alerts if isinstance(item, Alert) else notices).append(item)
        if len(alerts) == n or time.monotonic() > deadline:
            break
    return alerts, notices


def take_until(items, done, timeout_s=WAIT_S):
    """Items up to the first for which ``done(item)`` holds (or until ``timeout_s``)."""
    taken, deadline = [], time.monotonic() + timeout_s
    for item in items:
        taken.append(item)
        if done(item) or time.monotonic() > deadline:
            break
    return taken


def request(ctx, endpoint, frames, timeout_s=2.0):
    """One REQ round trip; the decoded reply, or None if none came in ``timeout_s``."""
    with ctx.socket(zmq.REQ) as req:
        req.linger = 0
        req.connect(endpoint)
        req.send_multipart(frames)
        if not req.poll(int(timeout_s * 1000)):
            return None
        return json.loads(req.recv())


def test_alert_and_heartbeat_on_the_wire(journal, ctx):
    with publisher(journal, ctx) as pub, ctx.socket(zmq.SUB) as sub:
        sub.linger = 0
        sub.rcvtimeo = int(WAIT_S * 1000)
        sub.subscribe(b"")
        sub.connect(pub.pub_endpoint)
        topic, payload = sub.recv_multipart()  # a heartbeat: the subscription is live
        assert topic == b"hb.T1"
        beat = json.loads(payload)
        assert beat.keys() == {"schema", "table", "last_seq", "wall_time", "journal"}
        assert (beat["schema"], beat["table"], beat["last_seq"]) == (1, "T1", 0)
        stored = pub.emit(alert())
        frames = sub.recv_multipart()
        while frames[0].startswith(b"hb."):
            frames = sub.recv_multipart()
    topic, payload = frames
    wire = json.loads(payload)
    assert topic == b"alert.T1.dice_not_flat" and list(wire) == WIRE_FIELDS
    assert wire["schema"] == 1 and wire["seq"] == 1 and from_wire(payload) == stored
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", wire["wall_time"])
    assert journal.read("T1", 1, 10) == [stored]


def test_heartbeats_carry_the_monitors_status_to_a_subscriber_that_asks(journal, ctx):
    with publisher(journal, ctx) as pub:
        pub.status = lambda: {"fps": 12.5, "camera": "lost", "degraded": True, "x": [1]}
        with subscriber(pub, ctx, heartbeats=True) as sub:
            beats = take_until(iter(sub), lambda item: isinstance(item, Heartbeat))
        with subscriber(pub, ctx) as sub:  # not asked: none, as before
            items = list(sub.items(timeout_s=0.5))
        pub.status = lambda: 1 / 0  # a failing status: the heartbeat goes without it
        with subscriber(pub, ctx, heartbeats=True) as sub:
            bare = take_until(iter(sub), lambda item: isinstance(item, Heartbeat))
    assert beats[-1].table == "T1" and beats[-1].journal == journal.id
    assert beats[-1].status == {"fps": 12.5, "camera": "lost", "degraded": True}  # flat only
    assert not any(isinstance(item, Heartbeat) for item in items)
    assert bare[-1].status == {}


@pytest.mark.parametrize(
    "status, kept",
    [
        ({"fps": float("nan"), "camera": "ok" * 50}, {"camera": ("ok" * 50)[:64]}),
        ({f"k{i}": i for i in range(40)}, {f"k{i}": i for i in range(16)}),
        ("not a mapping", {}),
        ({"": 1, "y" * 33: 2, "ok": None}, {"ok": None}),
    ],
)
def test_a_heartbeats_status_keeps_only_short_flat_values(status, kept):
    payload = json.dumps({"schema": 1, "table": "T1", "last_seq": 0, "wall_time": "t",
                          "status": status}).encode()  # fmt: skip
    assert parse_heartbeat(payload).status == kept


def test_late_subscriber_receives_every_alert_from_replay(journal, ctx):
    with publisher(journal, ctx, max_replay_limit=10) as pub:
        sent = [pub.emit(alert(r)) for r in range(1, 26)]
        with subscriber(pub, ctx) as sub:
            alerts, _ = take_alerts(iter(sub), 25)
            assert alerts == sent
            assert sub.delivered_replayed == 25 and sub.delivered_live == 0
            pub.emit(alert(26))  # and then live
            assert [a.seq for a in take_alerts(iter(sub), 1)[0]] == [26]


def test_subscriber_restarted_from_seq_misses_nothing(journal, ctx):
    with publisher(journal, ctx) as pub:
        pub.emit_all(alert(r) for r in (1, 2, 3))
        with subscriber(pub, ctx) as sub:
            assert [a.seq for a in take_alerts(iter(sub), 3)[0]] == [1, 2, 3]
        pub.emit_all(alert(r) for r in (4, 5))  # nobody listening
        with subscriber(pub, ctx, from_seq=4) as sub:
            pub.emit(alert(6))
            alerts, _ = take_alerts(iter(sub), 3)
    assert [a.seq for a in alerts] == [4, 5, 6]


def bind_again(journal, ctx, old):
    """A publisher on ``old``'s endpoints; the port is freed asynchronously, so retry a bit."""
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            return publisher(journal, ctx, old.pub_endpoint, old.replay_endpoint)
        except ValueError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_restarted_publisher_continues_the_sequence_and_silence_is_reported(tmp_path, ctx):
    path = tmp_path / "alerts.db"
    with Journal(path) as journal, publisher(journal, ctx) as first:
        first.emit_all(alert(r) for r in (1, 2))
        sub = subscriber(first, ctx, silence_s=0.3)
        items = iter(sub)
        assert [a.seq for a in take_alerts(items, 2)[0]] == [1, 2]
    with sub:
        taken = take_until(items, lambda item: isinstance(item, PublisherSilent))
        assert isinstance(taken[-1], PublisherSilent) and taken[-1].silent_s >= 0.3
        assert not any(isinstance(item, Alert) for item in taken)
        with Journal(path) as journal, bind_again(journal, ctx, first) as second:
            assert second.emit(alert(3)).seq == 5  # 3 and 4 closed what the first left open
            alerts, notices = take_alerts(items, 3)
            assert [(a.seq, a.round, str(a.state)) for a in alerts] == [
                (3, 1, "close"), (4, 2, "close"), (5, 3, "open")
            ]  # fmt: skip
            assert [a.evidence["reason"] for a in alerts[:2]] == ["restart", "restart"]
            assert any(isinstance(n, PublisherBack) for n in notices)


def test_burst_of_10000_to_a_slow_subscriber_arrives_once_in_order(journal, ctx):
    """The subscriber reads nothing while the burst goes out. 20 MB of alerts (2 kB of evidence
    each) overflow any loopback TCP buffers and both queues, so PUB drops most of them."""

    def big(r):
        return replace(alert(r), evidence={"tracks": list(range(400))})

    with (
        publisher(journal, ctx, sndhwm=100) as pub,
        subscriber(pub, ctx, rcvhwm=100) as sub,
    ):
        pub.emit(big(1))
        items = iter(sub)
        assert [a.seq for a in take_alerts(items, 1)[0]] == [1]
        for start in range(2, 10_001, 500):
            pub.emit_all(big(r) for r in range(start, min(start + 500, 10_001)))
        alerts, _ = take_alerts(items, 9_999, timeout_s=60)
    assert [a.seq for a in alerts] == list(range(2, 10_001))
    assert [a.round for a in alerts] == list(range(2, 10_001))
    assert sub.delivered_live > 0 and sub.delivered_replayed > 0  # the queues overflowed


def test_subscriber_follows_every_table_when_none_is_named(journal, ctx):
    config = PublisherConfig(ANY_PORT, ANY_PORT, heartbeat_s=0.1)
    with AlertPublisher(journal, "T1", config, context=ctx) as pub:
        journal.append(alert(1, table="T2"))  # another table in the same journal
        pub.emit(alert(1))
        with subscriber(pub, ctx, table=None) as sub:
            alerts, _ = take_alerts(iter(sub), 1)
    assert [(a.table, a.seq) for a in alerts] == [("T1", 1)]  # T2 is quiet: no heartbeat


@pytest.fixture
def keys(tmp_path):
    new_keys(tmp_path / "keys")
    new_keys(tmp_path / "keys", "console")
    new_keys(tmp_path / "elsewhere")  # another publisher's keys...
    new_keys(tmp_path / "elsewhere", "mallory")  # ...and a valid keypair not on our allow-list
    return tmp_path / "keys", tmp_path / "elsewhere"


def test_curve_lets_in_only_allowed_subscribers(journal, ctx, keys):
    keys_dir, elsewhere = keys
    allowed = client_curve(keys_dir, "console")
    mallory = client_curve(elsewhere, "mallory")
    mallory = ClientCurve(mallory.public_key, mallory.secret_key, allowed.server_key)
    curve = server_curve(keys_dir)
    config = PublisherConfig(ANY_PORT, ANY_PORT, heartbeat_s=0.1)
    with AlertPublisher(journal, "T1", config, curve=curve, context=ctx) as pub:
        pub.emit_all(alert(r) for r in (1, 2))
        with (
            subscriber(pub, ctx, allowed) as good,
            subscriber(pub, ctx, mallory, silence_s=0.2) as bad,
            subscriber(pub, ctx, None, silence_s=0.2) as plain,
        ):
            assert [a.seq for a in take_alerts(iter(good), 2)[0]] == [1, 2]
            pub.emit(alert(3))
            assert [a.seq for a in take_alerts(iter(good), 1)[0]] == [3]
            for intruder in (bad, plain):
                items = list(intruder.items(timeout_s=0.5))
                assert items and all(isinstance(i, PublisherSilent) for i in items)


def test_curve_replay_does_not_answer_unknown_keys(journal, ctx, keys):
    keys_dir, elsewhere = keys
    mallory = client_curve(elsewhere, "mallory")
    config = PublisherConfig(ANY_PORT, ANY_PORT)
    with AlertPublisher(journal, "T1", config, curve=server_curve(keys_dir), context=ctx) as pub:
        pub.emit(alert())
        with ctx.socket(zmq.REQ) as req:
            req.linger = 0
            req.curve_secretkey, req.curve_publickey = mallory.secret_key, mallory.public_key
            req.curve_serverkey = server_curve(keys_dir).public_key
            req.connect(pub.replay_endpoint)
            req.send(b'{"table": "T1", "from_seq": 1}')
            assert not req.poll(500)


@pytest.mark.parametrize(
    ("frames", "error"),
    [
        ([b"\xff\xfe not utf-8"], "not UTF-8 JSON"),
        ([b"{not json"], "not UTF-8 JSON"),
        ([b"[1, 2]"], "not a JSON object"),
        ([b'{"table": "T1"}'], "'from_seq' must be an integer"),
        ([b'{"table": "T1", "from_seq": true}'], "'from_seq' must be an integer"),
        ([b'{"table": "T.1", "from_seq": 1}'], "table name"),
        ([b'{"table": "T1", "from_seq": 1, "limit": 0}'], "'limit' must be an integer from 1"),
        ([b'{"table": "T1", "from_seq": 1, "pickle": 1}'], "unknown request field"),
        ([b'{"table": "T1", "from_seq": 1}', b"more"], "one frame of JSON, not 2"),
        ([b'{"table": "T1", "from_seq": 1, "x": "' + b"a" * 10_000 + b'"}'], "the limit is 4096"),
    ],
)
def test_bad_replay_requests_get_an_error_and_service_goes_on(journal, ctx, frames, error):
    with publisher(journal, ctx, max_replay_limit=2) as pub:
        pub.emit_all(alert(r) for r in (1, 2, 3))
        reply = request(ctx, pub.replay_endpoint, frames)
        assert list(reply) == ["error"] and error in reply["error"]
        good = request(ctx, pub.replay_endpoint, [b'{"table": "T1", "from_seq": 2, "limit": 9}'])
    assert [a["seq"] for a in good["alerts"]] == [2, 3] and good["last_seq"] == 3  # capped at 2


def test_a_message_over_the_hard_limit_drops_only_its_sender(journal, ctx):
    with publisher(journal, ctx, drop_request_bytes=8192) as pub:
        pub.emit(alert())
        assert request(ctx, pub.replay_endpoint, [b"x" * 20_000], timeout_s=0.5) is None
        reply = request(ctx, pub.replay_endpoint, [b'{"table": "T1", "from_seq": 1}'])
    assert [a["seq"] for a in reply["alerts"]] == [1] and reply["last_seq"] == 1


def test_replay_of_an_unknown_table_is_empty(journal, ctx):
    with publisher(journal, ctx) as pub:
        reply = request(ctx, pub.replay_endpoint, [b'{"table": "T7", "from_seq": 1}'])
    assert reply == {"alerts": [], "last_seq": 0, "journal": journal.id}


def test_a_port_held_a_moment_by_the_last_run_is_waited_for(journal, ctx):
    """ZeroMQ releases a closed socket's port in its I/O thread: a publisher started again at
    once on the same endpoints (a restarted monitor; seen as a CI failure under load) waits for
    it rather than failing."""
    old = ctx.socket(zmq.PUB)
    old.bind(ANY_PORT)
    endpoint = old.last_endpoint.decode()
    threading.Timer(0.3, old.close, kwargs={"linger": 0}).start()
    with publisher(journal, ctx, pub=endpoint) as pub:
        assert pub.pub_endpoint == endpoint


def test_publisher_refuses_other_tables_bad_endpoints_and_use_after_close(journal, ctx):
    with publisher(journal, ctx) as pub:
        with pytest.raises(ValueError, match="table 'T2'"):
            pub.emit(alert(table="T2"))
        with pytest.raises(ValueError, match="cannot bind"):
            publisher(journal, ctx, pub=pub.pub_endpoint)  # port in use
    with pytest.raises(ValueError, match="cannot bind nonsense"):
        publisher(journal, ctx, replay="nonsense")
    with pytest.raises(RuntimeError, match="closed"):
        pub.emit(alert())
    assert journal.last_seq("T1") == 0


def test_the_optional_confidence_key_round_trips_and_an_unknown_value_is_refused():
    plain = alert().with_seq(1, "3f2a")
    low = replace(plain, confidence="low")
    assert "confidence" not in json.loads(to_wire(plain))
    assert json.loads(to_wire(low))["confidence"] == "low"
    assert from_wire(to_wire(plain)) == plain and from_wire(to_wire(low)) == low
    assert parse_reply(encode_reply(ReplayReply([low, plain], 1))).alerts == [low, plain]
    for bad in (b'"high"', b'""', b"1", b'["low"]'):
        payload = to_wire(low).replace(b'"confidence":"low"', b'"confidence":' + bad)
        with pytest.raises(ValueError, match="confidence"):
            from_wire(payload)


def test_the_monitor_can_send_a_notice(journal, ctx):
    with publisher(journal, ctx) as pub, ctx.socket(zmq.SUB) as sub:
        sub.linger, sub.rcvtimeo = 0, int(WAIT_S * 1000)
        sub.subscribe(b"")
        sub.connect(pub.pub_endpoint)
        assert sub.recv_multipart()[0] == b"hb.T1"  # the subscription is live
        pub.notice("vision_degraded", "since 3.0 s of video: 5 dice in the dice area")
        frames = sub.recv_multipart()
        while frames[0].startswith(b"hb."):
            frames = sub.recv_multipart()
        with pytest.raises(ValueError, match="notice name"):
            pub.notice("vision degraded", "a name consoles would refuse")
    with pytest.raises(RuntimeError, match="closed"):
        pub.notice("vision_restored", "after close")
    notice = parse_notice(frames[1])
    assert frames[0] == b"sys.T1" and (notice.table, notice.notice) == ("T1", "vision_degraded")
    assert notice.message.endswith("5 dice in the dice area") and notice.journal == journal.id


def test_parse_request_caps_and_defaults_the_limit():
    assert parse_request(b'{"table": "T1", "from_seq": 5}', 100).limit == 100
    assert parse_request(b'{"table": "T1", "from_seq": 5, "limit": 1000000000}', 100).limit == 100
    assert parse_request(b'{"table": "T1", "from_seq": 5, "limit": 7}', 100).limit == 7


def test_keys_are_never_overwritten_and_missing_keys_are_named(tmp_path):
    new_keys(tmp_path, "console")
    assert (tmp_path / "allowed" / "console.key").is_file()
    assert (tmp_path / "console.key_secret").stat().st_mode & 0o077 == 0
    with pytest.raises(ValueError, match="exists already"):
        new_keys(tmp_path, "console")
    with pytest.raises(ValueError, match="key name"):
        new_keys(tmp_path, "../evil")
    with pytest.raises(ValueError, match=r"server\.key.*paigow keys new"):
        client_curve(tmp_path, "console")
    with pytest.raises(ValueError, match=r"server\.key_secret"):
        server_curve(tmp_path)
