"""The console's store (pipeline/journal/console.py) and the pure table health board."""

import sqlite3

import pytest

from pipeline.alerts import AlertState, make_alert
from pipeline.bus.subscriber import PublisherBack, PublisherSilent
from pipeline.bus.wire import Heartbeat, Notice
from pipeline.console.health import HealthBoard
from pipeline.journal.console import ConsoleStore, WallQuery

JOURNAL = "ab12"


def alert(seq, kind="hands_mixed", round=1, box=2, state=AlertState.OPEN, table="T1", **extra):
    made = make_alert(
        kind, state=state, table=table, round=round, box=box, video_time_s=seq / 10,
        frame=seq, message=f"{kind} #{seq}", **extra,
    )  # fmt: skip
    return made.with_seq(seq, extra.pop("journal", JOURNAL))


@pytest.fixture
def store(tmp_path):
    with ConsoleStore(tmp_path / "console.sqlite") as store:
        yield store


def test_an_alert_heard_again_is_stored_once(store):
    first = store.add([alert(1), alert(2, state=AlertState.UPDATE)])
    again = store.add([alert(1), alert(2, state=AlertState.UPDATE)])
    assert (first, again, store.alert_count()) == ([1], [], 2)
    (irregularity,) = store.wall(WallQuery())
    assert (irregularity.messages, irregularity.state) == (2, "update")


def test_alerts_group_by_table_journal_kind_round_and_box(store):
    store.add([
        alert(1), alert(2, box=3), alert(3, round=2), alert(4, kind="dice_not_flat", box=None),
        alert(1, table="T2"), alert(5).with_seq(5, "cd"),
    ])  # fmt: skip
    wall = store.wall(WallQuery())
    assert len(wall) == 6
    assert [i.box for i in wall if i.kind == "dice_not_flat"] == [None]
    assert wall[0].journal == "cd"  # newest first: the last one stored


def test_an_irregularity_stays_until_closed_and_acknowledged(store):
    (irregularity,) = store.add([alert(1)])
    store.acknowledge(irregularity, "alice", "seen")
    assert [i.active for i in store.wall(WallQuery())] == [True]  # acknowledged, still open
    store.add([alert(2, state=AlertState.CLOSE)])
    assert store.wall(WallQuery()) == []
    (history,) = store.wall(WallQuery(history=True))
    assert (history.state, history.acks, history.active) == ("close", 1, False)
    (closed_first,) = store.add([alert(3, round=2), alert(4, round=2, state=AlertState.CLOSE)])
    assert [i.id for i in store.wall(WallQuery())] == [closed_first]  # closed, not acknowledged
    store.acknowledge(closed_first, "bob", "")
    assert store.wall(WallQuery()) == []


def test_the_wall_filters_and_pages_newest_first(store):
    store.add([alert(seq, round=seq, kind="hands_mixed" if seq % 2 else "dice_not_flat")
               for seq in range(1, 8)])  # fmt: skip
    first = store.wall(WallQuery(limit=3))
    second = store.wall(WallQuery(limit=3, before=first[-1].last_id))
    assert [i.round for i in first + second] == [7, 6, 5, 4, 3, 2]
    assert {i.kind for i in store.wall(WallQuery(kind="dice_not_flat"))} == {"dice_not_flat"}
    assert store.wall(WallQuery(table="T9")) == []
    assert len(store.wall(WallQuery(state="unacked"))) == 7
    with pytest.raises(ValueError, match="state 'nope'"):
        store.wall(WallQuery(state="nope"))


def test_the_timeline_is_the_rounds_alerts_in_video_time_order(store):
    store.add([alert(3, kind="dice_not_flat", box=None), alert(1), alert(2, round=2)])
    timeline = store.timeline("T1", JOURNAL, 1)
    assert [s.alert.seq for s in timeline] == [1, 3]


def test_acknowledgements_of_a_shift_and_the_secret_survive_a_reopen(tmp_path):
    path = tmp_path / "console.sqlite"
    with ConsoleStore(path) as store:
        (irregularity,) = store.add([alert(1)])
        ack = store.acknowledge(irregularity, "alice", "called the pit")
        secret = store.secret()
        with pytest.raises(KeyError):
            store.acknowledge(999, "alice", "")
    with ConsoleStore(path) as store:
        assert store.secret() == secret
        rows = store.acks_between("2000-01-01T00:00:00.000Z", "9999-01-01T00:00:00.000Z")
        assert [(a.operator, a.note, i.kind) for a, i in rows] == [
            ("alice", "called the pit", "hands_mixed")
        ]
        assert store.acks_between("2000-01-01T00:00:00.000Z", ack.at) == []  # "to" excluded


def test_a_file_that_is_no_store_is_refused_in_one_line(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version=7")
    with pytest.raises(ValueError, match="store version 7"):
        ConsoleStore(path)
    with pytest.raises(ValueError, match="cannot open"):
        ConsoleStore(tmp_path / "no" / "such" / "folder.sqlite")


def test_health_from_heartbeats_notices_camera_alerts_and_silence():
    board = HealthBoard(silence_s=3.0)
    status = {"fps": 24.5, "camera": "ok", "degraded": False, "phase": "dealing"}
    board.observe(Heartbeat("T1", 4, "2026-12-02T08:00:00.000Z", JOURNAL, status), 0.0)
    board.observe(Heartbeat("T2", 0, "2026-12-02T08:00:00.000Z", JOURNAL, {}), 0.0)
    board.observe(alert(5, kind="camera_lost", box=None, table="T2"), 0.5)
    board.observe(Notice("T1", "journal_unwritable", "disk full", "t"), 1.0)
    t1, t2 = board.snapshot(1.0)
    assert (t1["fps"], t1["phase"], t1["level"], t1["reasons"]) == (
        24.5, "dealing", "alarm", ["journal unwritable"])  # fmt: skip
    assert (t2["camera_lost"], t2["level"]) == (True, "alarm")
    board.observe(Notice("T1", "journal_recovered", "ok again", "t"), 1.5)
    board.observe(alert(6, kind="camera_lost", box=None, table="T2", state=AlertState.CLOSE), 1.5)
    assert [t["level"] for t in board.snapshot(2.0)] == ["ok", "ok"]
    assert [t["level"] for t in board.snapshot(5.0)] == ["alarm", "alarm"]  # silent past 3 s
    board.observe(PublisherSilent(1.0, "T1"), 2.0)
    assert board.snapshot(2.0)[0]["silent"] and not board.bus_silent
    board.observe(PublisherSilent(3.0), 3.0)
    assert board.bus_silent and all(t["silent"] for t in board.snapshot(3.0))
    board.observe(PublisherBack(3.5), 3.5)
    assert not board.bus_silent


def test_a_page_that_falls_behind_is_told_to_reload_and_close_ends_every_stream():
    import asyncio
    import threading

    from pipeline.console.hub import CLOSED, QUEUE_EVENTS, Hub

    async def run():
        hub = Hub()
        stream = hub.open()
        for n in range(QUEUE_EVENTS + 10):  # a burst the page did not read
            hub.publish({"type": "wall", "ids": [n]})
        await asyncio.sleep(0)  # the loop runs the handed-over offers
        first = await stream.next()
        hub.publish({"type": "wall", "ids": ["after"]})
        await asyncio.sleep(0)
        second = await stream.next()
        hub.close()
        await asyncio.sleep(0)
        return first, second, await stream.next()

    results = []  # in a thread of its own: Playwright's loop may be running in this one
    worker = threading.Thread(target=lambda: results.append(asyncio.run(run())))
    worker.start()
    worker.join(10.0)
    first, second, last = results[0]
    assert first == {"type": "reload"}
    assert second == {"type": "wall", "ids": ["after"]}
    assert last is CLOSED
