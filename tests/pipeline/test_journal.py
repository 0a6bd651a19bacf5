"""The journal: WAL + FULL, numbering per table that survives a restart, reads in order."""

import sqlite3
import threading
from contextlib import closing
from dataclasses import replace

import pytest

from pipeline.alerts import make_alert
from pipeline.journal import Journal


def alert(table="T1", round=1, kind="dice_not_flat"):
    return make_alert(
        kind, table=table, round=round, box=None, video_time_s=1.5, frame=40, message="m"
    )


def test_file_is_wal_with_full_sync(tmp_path):
    with Journal(tmp_path / "j.db") as journal:
        db = journal._db
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA synchronous").fetchone() == (2,)  # 2 = FULL
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] > 0


def test_sequence_is_per_table_and_continues_after_a_restart(tmp_path):
    path = tmp_path / "j.db"
    with Journal(path) as journal:
        seqs = [journal.append(alert(t)).seq for t in ("T1", "T1", "T2", "T1")]
    assert seqs == [1, 2, 1, 3]
    with Journal(path) as journal:
        assert journal.last_seq("T1") == 3 and journal.last_seq("T9") == 0
        assert journal.append(alert("T1")).seq == 4
        assert journal.append(alert("T2")).seq == 2


def test_read_returns_what_was_written_in_order(tmp_path):
    with Journal(tmp_path / "j.db") as journal:
        written = journal.append_all(alert(round=r) for r in range(1, 8))
        journal.append(alert("T2"))
        assert journal.read("T1", 3, 2) == written[2:4]
        assert journal.read("T1", 1, 100) == written
        assert journal.read("T1", 8, 10) == [] and journal.read("T3", 1, 10) == []


def test_an_alert_keeps_its_confidence_through_the_journal(tmp_path):
    with Journal(tmp_path / "j.db") as journal:
        written = journal.append_all([replace(alert(), confidence="low"), alert()])
    with Journal(tmp_path / "j.db") as journal:
        read = journal.read("T1", 1, 10)
    assert read == written and [a.confidence for a in read] == ["low", None]


def test_a_journaled_alert_cannot_be_appended_again(tmp_path):
    with Journal(tmp_path / "j.db") as journal:
        stored = journal.append(alert())
        with pytest.raises(ValueError, match="already has a sequence number"):
            journal.append_all([alert(), stored])
        assert journal.last_seq("T1") == 1


def test_writers_in_two_threads_never_share_a_number(tmp_path):
    with Journal(tmp_path / "j.db") as journal:
        results = []

        def write():
            results.extend(a.seq for a in journal.append_all(alert() for _ in range(50)))

        threads = [threading.Thread(target=write) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=20)
        assert sorted(results) == list(range(1, 101))


@pytest.mark.parametrize("make_bad", ["missing_dir", "directory", "not_sqlite", "other_version"])
def test_unusable_path_is_one_line_value_error(tmp_path, make_bad):
    path = tmp_path / "j.db"
    if make_bad == "missing_dir":
        path = tmp_path / "nowhere" / "j.db"
    elif make_bad == "directory":
        path.mkdir()
    elif make_bad == "not_sqlite":
        path.write_bytes(b"this is not a database file, not at all" * 50)
    else:
        with closing(sqlite3.connect(path)) as db:
            db.execute("PRAGMA user_version=7")
    with pytest.raises(ValueError, match="cannot open the journal") as info:
        Journal(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)
