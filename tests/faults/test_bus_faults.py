"""The bus and journal under the probes of issue 18: hostile requests, rogue publishers, a
journal reset, a full disk, a locked journal, a replay flood, a crash, signals at bad moments.

Each test reproduces one probe against real sockets on loopback and checks what the issue asks:
the publisher keeps serving, no alert is lost or duplicated, consoles get each alert once in
order. ``docs/reliability.md`` lists probe -> result.
"""

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import zmq

from pipeline.alerts import Alert, AlertState, from_wire, make_alert, to_wire
from pipeline.bus import (
    AlertPublisher,
    AlertStore,
    AlertSubscriber,
    JournalChanged,
    Notice,
    PublisherConfig,
    SubscriberConfig,
)
from pipeline.bus import keys as bus_keys
from pipeline.bus import store as store_module
from pipeline.bus.store import StoreConfig
from pipeline.journal import Journal, JournalError

ROOT = Path(__file__).resolve().parents[2]
ANY_PORT = "tcp://127.0.0.1:*"
WAIT_S = 10.0  # upper bound on any wait; the tests pass in far less
DEFAULT_LAYOUT = ROOT / "pipeline" / "data" / "default_layout.yaml"
QUICK = StoreConfig(retry_first_s=0.05, retry_max_s=0.2)  # retries that never outwait a test


def alert(round=1, box=None, state=AlertState.OPEN, evidence=None):
    return make_alert(
        "dice_not_flat", state=state, table="T1", round=round, box=box, video_time_s=round / 10,
        frame=round, message=f"die not flat in round {round}", evidence=evidence or {"die": 1},
    )  # fmt: skip


def publisher(store, ctx, pub=ANY_PORT, replay=ANY_PORT, said=None, **config):
    config = PublisherConfig(pub, replay, **{"heartbeat_s": 0.1, **config})
    say = said.append if said is not None else lambda line: None
    return AlertPublisher(store, "T1", config, context=ctx, say=say)


def subscriber(pub, ctx, **config):
    config = {"table": "T1", "silence_s": 5.0, "replay_timeout_s": 2.0, **config}
    return AlertSubscriber(
        SubscriberConfig(pub.pub_endpoint, pub.replay_endpoint, **config), None, ctx
    )


def take(items, done, timeout_s=WAIT_S):
    """Items up to the first for which ``done(taken_alerts, item)`` holds, or ``timeout_s``."""
    alerts, others, deadline = [], [], time.monotonic() + timeout_s
    for item in items:
        (alerts if isinstance(item, Alert) else others).append(item)
        if done(alerts, item) or time.monotonic() > deadline:
            break
    return alerts, others


def n_alerts(n):
    return lambda alerts, item: len(alerts) >= n


def request(ctx, endpoint, payload, timeout_s=WAIT_S):
    with ctx.socket(zmq.REQ) as req:
        req.linger = 0
        req.connect(endpoint)
        req.send(payload)
        assert req.poll(int(timeout_s * 1000)), "the replay endpoint answered"
        return json.loads(req.recv())


# --- 1. One request stops the bus ----------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        b'{"table": "T1", "from_seq": 9223372036854775808, "limit": 10}',
        b'{"table": "T1", "from_seq": 1, "limit": 99999999999999999999999}',
        b"[" * 4000,
        b'{"table": "T1", "from_seq": ' + b"[" * 2000 + b"}",
        b'{"table": "T1", "from_seq": 1e400}',
        b"\xff\xfe not utf-8",
    ],
    ids=["from_seq-2^63", "huge-limit", "4000-brackets", "nested-value", "1e400", "binary"],
)
def test_a_hostile_replay_request_gets_an_error_and_the_bus_goes_on(tmp_path, ctx, payload):
    said = []
    with Journal(tmp_path / "a.db") as journal, publisher(journal, ctx, said=said) as pub:
        pub.emit_all(alert(r) for r in (1, 2))
        assert list(request(ctx, pub.replay_endpoint, payload)) == ["error"]
        assert pub.emit(alert(3)).seq == 3  # the monitor's next alert is journaled and sent
        reply = request(ctx, pub.replay_endpoint, b'{"table": "T1", "from_seq": 2}')
        assert [a["seq"] for a in reply["alerts"]] == [2, 3]
        with subscriber(pub, ctx) as sub:
            alerts, _ = take(iter(sub), n_alerts(3))
        assert [a.seq for a in alerts] == [1, 2, 3] and pub.restarts == 0 and not said


def test_the_bus_thread_is_restarted_and_says_so_if_its_loop_fails(tmp_path, ctx, monkeypatch):
    said = []
    with Journal(tmp_path / "a.db") as journal, publisher(journal, ctx, said=said) as pub:
        beat, failures = pub._beat, []

        def failing_beat():
            if not failures:
                failures.append(1)
                raise OSError("injected")
            beat()

        with subscriber(pub, ctx) as sub:
            items = iter(sub)
            pub.emit(alert(1))
            alerts, _ = take(items, n_alerts(1))  # the subscriber is connected
            monkeypatch.setattr(pub, "_beat", failing_beat)
            _, seen = take(items, lambda a, item: isinstance(item, Notice))
            pub.emit(alert(2))
            alerts += take(items, n_alerts(1))[0]
        assert [a.seq for a in alerts] == [1, 2] and pub.restarts == 1
        assert [n.notice for n in seen if isinstance(n, Notice)] == ["bus_restarted"]
        assert len(said) == 1 and "OSError('injected')" in said[0] and "restarted" in said[0]


# --- 2. A journal reset silently loses alerts ----------------------------------------------


def test_a_console_follows_a_publisher_restarted_on_a_new_journal_from_its_first_alert(
    tmp_path, ctx
):
    with Journal(tmp_path / "old.db") as old, publisher(old, ctx) as first:
        endpoints = first.pub_endpoint, first.replay_endpoint
        first.emit_all(alert(r) for r in (1, 2, 3, 4, 5))
        sub = subscriber(first, ctx)
        items = iter(sub)
        alerts, _ = take(items, n_alerts(5))
        assert [a.seq for a in alerts] == [1, 2, 3, 4, 5]
    with (
        sub,
        Journal(tmp_path / "new.db") as new,
        publisher(new, ctx, *endpoints) as second,
    ):
        second.emit_all(alert(r) for r in (6, 7))
        alerts, others = take(items, n_alerts(2))
    assert [(a.seq, a.round, a.journal) for a in alerts] == [(1, 6, new.id), (2, 7, new.id)]
    changes = [n for n in others if isinstance(n, JournalChanged)]
    assert len(changes) == 1 and (changes[0].old, changes[0].new) == (old.id, new.id)


def test_the_console_says_loudly_that_the_journal_was_replaced(tmp_path, ctx):
    with Journal(tmp_path / "old.db") as old, publisher(old, ctx) as first:
        endpoints = first.pub_endpoint, first.replay_endpoint
        first.emit(alert(1))
        console = Console("--connect", endpoints[0], "--replay", endpoints[1], "--json")
        assert console.seqs(1) == [1]
    with Journal(tmp_path / "new.db") as new, publisher(new, ctx, *endpoints) as second:
        second.emit(alert(2))
        assert console.seqs(2) == [1, 1]  # #1 of the old journal, then #1 of the new one
        code, err = console.interrupt()
    assert (
        code == 130 and f"NUMBERS ALERTS AFRESH (the journal's id changed; journal {old.id}" in err
    )


# --- 3. A full disk, a locked journal --------------------------------------------------------


def fill_up(journal):
    """Make SQLite report "database or disk is full" at the journal's next new page."""
    (pages,) = journal._db.execute("PRAGMA page_count").fetchone()
    journal._db.execute(f"PRAGMA max_page_count = {pages}")


def big(round):
    return alert(round, evidence={"tracks": list(range(300))})


def test_a_full_journal_spills_publishes_a_notice_and_folds_back_in_order(tmp_path, ctx):
    said = []
    with Journal(tmp_path / "a.db") as journal:
        store = AlertStore(journal, config=QUICK)
        with publisher(store, ctx, said=said) as pub, subscriber(pub, ctx) as sub:
            items = iter(sub)
            pub.emit(big(1))
            alerts, _ = take(items, n_alerts(1))  # the subscriber is connected
            fill_up(journal)
            sent = [pub.emit(big(r)) for r in range(2, 40)]  # the monitor goes on
            assert [a.seq for a in sent] == list(range(2, 40)) and store.pending > 0
            more, others = take(items, n_alerts(38))
            assert [a.seq for a in alerts + more] == list(range(1, 40))
            notices = [n for n in others if isinstance(n, Notice)]
            assert notices and notices[0].notice == "journal_unwritable"
            assert "database or disk is full" in notices[0].message
            assert len(store.spill.load()) == store.pending  # on disk, fsynced
            journal._db.execute("PRAGMA max_page_count = 1073741823")  # space again
            _, others = take(
                items, lambda a, item: getattr(item, "notice", "") == "journal_recovered"
            )
            pub.emit(big(40))
        assert [a.seq for a in journal.read("T1", 1, 100)] == list(range(1, 41))
        assert [a.round for a in journal.read("T1", 1, 100)] == list(range(1, 41))
        assert store.pending == 0 and not store.spill.path.exists()
    assert "database or disk is full" in said[0] and "rollback" not in " ".join(said)


def test_a_journal_locked_by_another_writer_spills_and_recovers(tmp_path, ctx):
    path = tmp_path / "a.db"
    with (
        Journal(path, busy_timeout_s=0.2) as journal,
        publisher(AlertStore(journal, config=QUICK), ctx) as pub,
    ):
        pub.emit(alert(1))
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # holds the write lock
        assert [pub.emit(alert(r)).seq for r in (2, 3)] == [2, 3]
        assert pub.store.failure and "database is locked" in pub.store.failure
        other.execute("ROLLBACK")
        other.close()
        deadline = time.monotonic() + WAIT_S
        while pub.store.pending and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pub.emit(alert(4)).seq == 4
        assert [a.seq for a in journal.read("T1", 1, 10)] == [1, 2, 3, 4]


def test_a_monitor_starts_on_a_journal_another_writer_holds(tmp_path, ctx):
    path = tmp_path / "a.db"
    with Journal(path) as journal:
        journal.append(alert(1))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with Journal(path, busy_timeout_s=0.2) as journal, publisher(journal, ctx) as pub:
            assert pub.emit(alert(2)).seq == 3  # 2 closed #1, left open (spilled too)
            assert pub.store.pending == 2
    finally:
        other.execute("ROLLBACK")
        other.close()
    with Journal(path) as journal:
        assert AlertStore(journal).pending == 0  # the spill is folded in at reopening
        stored = journal.read("T1", 1, 10)
    assert [(a.seq, str(a.state)) for a in stored] == [(1, "open"), (2, "close"), (3, "open")]


def crash_with_a_spill(path):
    """Alert 1 journaled, 2 and 3 spilled on a full journal; then the process dies."""
    with Journal(path) as journal:
        store = AlertStore(journal)
        store.append_all([big(1)])
        fill_up(journal)
        store.append_all([big(2), big(3)])


def test_a_spill_left_by_a_crash_is_folded_in_when_the_store_opens(tmp_path):
    crash_with_a_spill(tmp_path / "a.db")
    with Journal(tmp_path / "a.db") as journal:
        store = AlertStore(journal)
        assert store.pending == 0
        assert [(a.seq, a.round) for a in journal.read("T1", 1, 10)] == [(1, 1), (2, 2), (3, 3)]
        assert store.append_all([alert(4)])[0].seq == 4


def test_a_store_reopened_while_the_journal_is_still_full_numbers_after_its_spill(tmp_path):
    crash_with_a_spill(tmp_path / "a.db")
    with Journal(tmp_path / "a.db") as journal:
        fill_up(journal)  # still full when the monitor comes back
        store = AlertStore(journal)
        assert store.pending == 2 and store.last_seq("T1") == 3
        assert store.append_all([big(4)])[0].seq == 4
        journal._db.execute("PRAGMA max_page_count = 1073741823")
        assert store.flush(force=True) == 3
        assert [(a.seq, a.round) for a in journal.read("T1", 1, 10)] == [
            (r, r) for r in range(1, 5)
        ]


class JournalThatOpensLate:
    """Opens the store's journal, failing as on a full disk until ``ready``."""

    def __init__(self):
        self.ready = False

    def __call__(self, path, busy_timeout_s):
        if not self.ready:
            raise JournalError(f"{path}: cannot open the journal: disk I/O error")
        return Journal(path, busy_timeout_s)


def test_a_journal_that_cannot_open_at_start_holds_alerts_then_numbers_them_in_order(
    tmp_path, ctx, monkeypatch
):
    path = tmp_path / "a.db"
    with Journal(path) as journal, publisher(journal, ctx) as first:
        first.emit_all([alert(1), alert(2, state=AlertState.CLOSE)])
        endpoints = first.pub_endpoint, first.replay_endpoint
        sub = subscriber(first, ctx)
        items = iter(sub)
        alerts, _ = take(items, n_alerts(2))
    late = JournalThatOpensLate()
    monkeypatch.setattr(store_module, "open_journal", late)
    with sub, AlertStore(path, config=QUICK) as store, publisher(store, ctx, *endpoints) as second:
        assert store.journal is None and "disk I/O error" in store.failure
        held = [second.emit(alert(r)) for r in (3, 4)]  # the monitor goes on
        assert [a.seq for a in held] == [None, None] and store.pending == 2
        assert len(store.spill.load()) == 2
        quiet, others = take(items, n_alerts(1), timeout_s=1.0)
        assert quiet == [] and not any(isinstance(n, JournalChanged) for n in others)
        late.ready = True
        alerts, others = take(items, n_alerts(3))
        assert not any(isinstance(n, JournalChanged) for n in others)
    assert [(a.seq, a.round, str(a.state)) for a in alerts] == [
        (3, 3, "open"), (4, 4, "open"), (5, 1, "close")
    ]  # held first, numbered when the journal opened; then what the last run left open  # fmt: skip
    with Journal(path) as journal:
        assert [a.seq for a in journal.read("T1", 1, 10)] == [1, 2, 3, 4, 5]


@contextmanager
def small_disk(folder: Path, size_kib: int):
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(folder)],
                          capture_output=True)  # fmt: skip
    if done.returncode != 0:
        pytest.skip("no tmpfs can be mounted here (needs root)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


@pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="mounts a tmpfs")
def test_a_really_full_disk(tmp_path, ctx):
    """The journal on a 1 MiB tmpfs filled by another file; the spill on another disk."""
    with small_disk(tmp_path / "small", 1024) as disk, Journal(disk / "a.db") as journal:
        store = AlertStore(journal, tmp_path / "spill.jsonl", QUICK)
        with publisher(store, ctx) as pub:
            pub.emit(big(1))
            filler = disk / "filler"
            with open(filler, "wb") as f, pytest.raises(OSError):
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            rounds = range(2, 200)
            assert [pub.emit(big(r)).seq for r in rounds] == list(rounds)
            assert store.failure and "full" in store.failure and store.pending
            filler.unlink()
            deadline = time.monotonic() + WAIT_S
            while store.pending and time.monotonic() < deadline:
                time.sleep(0.05)
        assert [a.seq for a in journal.read("T1", 1, 1000)] == list(range(1, 200))


# --- 4. Replay memory has no bound ----------------------------------------------------------


def rss_mib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_peers_that_never_read_their_replies_cannot_grow_the_publisher(tmp_path, ctx):
    """Two peers send 300 requests each for 250 kB replies and read none: before the bound
    every reply stayed queued (75 kB of memory per request here, 1.2 MB with 1000 alerts)."""
    with Journal(tmp_path / "a.db") as journal, publisher(journal, ctx) as pub:
        pub.emit_all(alert(r, evidence={"tracks": list(range(250))}) for r in range(1, 1001))
        before = rss_mib()
        peers = [ctx.socket(zmq.DEALER) for _ in range(2)]
        for peer in peers:
            peer.rcvhwm, peer.rcvbuf, peer.linger = 1, 4096, 0
            peer.connect(pub.replay_endpoint)
        sent = 0
        for _ in range(300):
            for peer in peers:
                try:
                    flood = b'{"table": "T1", "from_seq": 1, "limit": 200}'
                    peer.send_multipart([b"", flood], zmq.NOBLOCK)
                    sent += 1
                except zmq.Again:
                    pass  # the peer's own queue is full: the publisher takes no more
        deadline = time.monotonic() + 60
        while pub.dropped_replies < sent - 40 and time.monotonic() < deadline:
            time.sleep(0.1)  # until (nearly) every request was answered or dropped
        grown = rss_mib() - before
        for peer in peers:
            peer.close()
        assert pub.dropped_replies >= sent - 40, (pub.dropped_replies, sent)
        assert grown < 32, f"the publisher grew by {grown:.0f} MiB under the flood"
        honest = request(ctx, pub.replay_endpoint, b'{"table": "T1", "from_seq": 1000}')
        assert [a["seq"] for a in honest["alerts"]] == [1000]


# --- 5. Alerts left open by a crash -----------------------------------------------------------


def test_alerts_left_open_by_a_crash_are_closed_at_restart(tmp_path, ctx):
    path = tmp_path / "a.db"
    with Journal(path) as journal, publisher(journal, ctx) as pub:
        pub.emit_all([alert(1, box=2), alert(1, box=3), alert(1, box=2, state=AlertState.UPDATE)])
        pub.emit(alert(1, box=3, state=AlertState.CLOSE))
    with Journal(path) as journal, publisher(journal, ctx):  # the restart
        closes = journal.read("T1", 5, 10)
    assert [(a.seq, a.box, str(a.state)) for a in closes] == [(5, 2, "close")]
    assert closes[0].evidence["reason"] == "restart" and closes[0].evidence["left_open_seq"] == 3


# --- 6. Consoles and rogue publishers, signals ----------------------------------------------


class Console:
    """``paigow alerts ARGS`` in a subprocess, started with SIGINT ignored as a background job
    of a script is: Ctrl-C must still stop it."""

    def __init__(self, *args):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pipeline.cli", "alerts", *args], cwd=ROOT,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )  # fmt: skip
        self.lines = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def seqs(self, n):
        deadline = time.monotonic() + WAIT_S
        while len(self.lines) < n and time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(0.02)
        return [from_wire(line.encode()).seq for line in self.lines[:n]]

    def interrupt(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=WAIT_S)
        finally:
            self.proc.kill()
        return self.proc.returncode, err


def test_a_rogue_publisher_cannot_stop_the_console(ctx):
    with ctx.socket(zmq.PUB) as pub, ctx.socket(zmq.ROUTER) as replay:
        port = pub.bind_to_random_port("tcp://127.0.0.1")
        replay_port = replay.bind_to_random_port("tcp://127.0.0.1")
        console = Console("--connect", f"tcp://127.0.0.1:{port}",
                          "--replay", f"tcp://127.0.0.1:{replay_port}", "--json")  # fmt: skip
        rogue = [
            _wire(alert(1), 1).replace(b'"round":1', b'"round":1e400'),
            _wire(alert(1), 1).replace(b'"evidence":{"die":1}', b'"evidence":' + b"[" * 5000),
            _wire(alert(1), 1).replace(b'"seq":1', b'"seq":99999999999999999999999'),
            b"\xff" * 100,
        ]
        deadline = time.monotonic() + WAIT_S
        while not console.lines and time.monotonic() < deadline:
            for payload in rogue:
                pub.send_multipart([b"alert.T1.dice_not_flat", payload])
            pub.send_multipart([b"hb.T1", b'{"schema": 1, "table": "T1", "last_seq": 1e400}'])
            pub.send_multipart([b"alert.T1.dice_not_flat", _wire(alert(1), 1)])
            time.sleep(0.1)
        assert console.seqs(1) == [1]
        code, err = console.interrupt()
    assert code == 130, err
    assert "ignored a malformed message" in err and "Traceback" not in err


def _wire(a, seq):
    return to_wire(a.with_seq(seq))


def test_sigterm_while_the_models_load_stops_the_monitor_cleanly(tmp_path):
    import av
    import numpy as np

    clip = tmp_path / "clip.mp4"
    with av.open(str(clip), "w") as container:
        stream = container.add_stream("mpeg4", rate=25)
        stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
        for _ in range(50):
            frame = av.VideoFrame.from_ndarray(np.zeros((120, 160, 3), np.uint8), format="bgr24")
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    command = [
        sys.executable, "-m", "pipeline.cli", "monitor", str(clip), "--layout", str(DEFAULT_LAYOUT),
        "--table", "T1", "--journal", str(tmp_path / "a.db"), "--realtime",
        "--publish", ANY_PORT, "--replay", ANY_PORT,
    ]  # fmt: skip
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + WAIT_S * 3
        while not lines and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)  # the first line, "table T1: ...": the models load next
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(WAIT_S * 3)
        reader.join(WAIT_S)
    finally:
        proc.kill()
        proc.wait(WAIT_S)
    err = b"".join(lines).decode()
    assert status == 0, err
    assert "stopped (SIGTERM)" in err and "Traceback" not in err


def test_secret_key_files_are_never_readable_by_others(tmp_path, monkeypatch):
    create, modes = bus_keys.create_certificates, []

    def create_and_look(folder, name):
        made = create(folder, name)
        modes.append(os.stat(Path(folder) / f"{name}.key_secret").st_mode & 0o777)
        return made

    monkeypatch.setattr(bus_keys, "create_certificates", create_and_look)
    previous = os.umask(0o022)
    try:
        bus_keys.new_keys(tmp_path / "keys")
        bus_keys.new_keys(tmp_path / "keys", "console")
    finally:
        os.umask(previous)
    assert modes == [0o600, 0o600]
    assert (tmp_path / "keys" / "server.key").stat().st_mode & 0o777 == 0o644
