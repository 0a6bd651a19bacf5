"""The alert journal: every alert is committed to SQLite, and numbered, before it is published.

One file holds the alerts of any number of tables. Sequence numbers are per table, start at 1,
have no holes and continue across restarts: each is ``max(seq) + 1`` for its table, taken inside
the writing transaction. The file is in WAL mode with ``synchronous=FULL``, so a committed alert
survives a power cut; each row keeps the alert's wire JSON (schema 1), sequence number and the
journal's id included. The id (a random hex string made with the file) tells consoles that a
journal was replaced: numbers from a new file start at 1 again.

A write that SQLite refuses (a full disk, another writer holding the lock past the busy timeout)
raises :class:`JournalError` with SQLite's own message; :class:`pipeline.bus.store.AlertStore`
spills such alerts to a :class:`Spill` file and folds them back with :meth:`Journal.insert`.

The package holds every SQLite file of the project: this journal, and the browser console's
own store (:mod:`pipeline.journal.console`).

>>> import tempfile
>>> from pipeline.alerts import make_alert
>>> alert = make_alert("dice_not_flat", table="T1", round=1, box=None, video_time_s=2.0,
...                    frame=50, message="a die is not lying flat")
>>> with tempfile.TemporaryDirectory() as folder, Journal(Path(folder) / "a.db") as journal:
...     [journal.append(alert).seq, journal.append(alert).seq, journal.last_seq("T1")]
[1, 2, 2]
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from pipeline.alerts import Alert, AlertState, from_wire, to_wire

T = TypeVar("T")

JOURNAL_VERSION = 1
"""``PRAGMA user_version`` of the layout below; a file with another version is refused."""

BUSY_TIMEOUT_S = 5.0
"""How long a write waits for another process holding the file's write lock. Higher: rides out
longer contention; lower: a stuck writer is reported (and the alert spilled) sooner."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS alerts (
    table_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    wall_time TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (table_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""
_SELECT_FROM = "SELECT payload FROM alerts WHERE table_id = ? AND seq >= ? ORDER BY seq LIMIT ?"


class JournalError(Exception):
    """SQLite refused a read or write (disk full, locked past the busy timeout, I/O error); the
    message is the file's path and SQLite's own words. Not a ValueError: it is no bad input,
    and trying again later may succeed."""


_PASSING = {sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
"""Primary result codes of faults that pass (a full disk, an I/O error, another writer)."""


def _passing(exc: sqlite3.Error) -> bool:
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in _PASSING


class Journal:
    """A journal file, opened (and created if absent) at ``path``; its id is ``id``.

    Safe to share between threads (one connection behind a lock): the publisher appends from
    its caller's thread while its replay thread reads. Raises ValueError with one line when the
    file cannot be a journal (a missing folder, another kind of file, another version), and
    JournalError when a fault that may pass (a full disk, an I/O error, a lock held past the
    busy timeout) stops opening it or a later read or write. Use as a context manager, or call
    :meth:`close`.
    """

    def __init__(self, path: str | Path, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(
                self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise ValueError(f"{self.path}: cannot open the journal: {exc}") from None
        try:
            self.id: str = self._set_up()
        except (sqlite3.Error, ValueError) as exc:
            self._db.close()
            if isinstance(exc, sqlite3.Error) and _passing(exc):
                raise JournalError(f"{self.path}: cannot open the journal: {exc}") from exc
            raise ValueError(f"{self.path}: cannot open the journal: {exc}") from None

    def _set_up(self) -> str:
        """WAL mode, the tables and the id; an existing journal is opened without a write, so
        that a full disk or another writer's lock does not keep the monitor from starting."""
        (mode,) = self._db.execute("PRAGMA journal_mode=WAL").fetchone()
        if mode != "wal":
            raise ValueError(f"WAL mode refused (journal_mode is {mode!r})")
        self._db.execute("PRAGMA synchronous=FULL")
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version not in (0, JOURNAL_VERSION):
            raise ValueError(f"journal version {version}, expected {JOURNAL_VERSION}")
        if not self._has_id():
            self._db.executescript(_SCHEMA)
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('id', ?)", (uuid.uuid4().hex,))
            self._db.execute(f"PRAGMA user_version={JOURNAL_VERSION}")
        (journal_id,) = self._db.execute("SELECT value FROM meta WHERE key = 'id'").fetchone()
        return str(journal_id)

    def _has_id(self) -> bool:
        tables = {name for (name,) in self._db.execute("SELECT name FROM sqlite_master")}
        if not {"alerts", "meta"} <= tables:
            return False
        return self._db.execute("SELECT 1 FROM meta WHERE key = 'id'").fetchone() is not None

    def append(self, alert: Alert) -> Alert:
        """Commit one alert; return it with its sequence number."""
        return self.append_all([alert])[0]

    def append_all(self, alerts: Iterable[Alert]) -> list[Alert]:
        """Commit alerts in one transaction (one fsync), numbered in the given order per table.

        ValueError for an alert that already has a sequence number; JournalError when SQLite
        refuses the write. Nothing is written then.
        """
        alerts = list(alerts)
        if any(a.seq is not None for a in alerts):
            raise ValueError("an alert that already has a sequence number cannot be journaled")

        def number_and_insert() -> list[Alert]:
            stored: list[Alert] = []
            for alert in alerts:
                numbered = alert.with_seq(self._last_seq(alert.table) + 1, self.id)
                self._insert(numbered, "INSERT")
                stored.append(numbered)
            return stored

        return self._write(number_and_insert)

    def insert(self, alerts: Iterable[Alert]) -> int:
        """Commit alerts numbered elsewhere (a spill folded back) in one transaction, stamped
        with this journal's id; one whose (table, seq) is here already is skipped. Returns how
        many were new; JournalError when SQLite refuses the write."""
        alerts = [replace(a, journal=self.id) for a in alerts]
        if any(a.seq is None for a in alerts):
            raise ValueError("only numbered alerts can be inserted")
        return self._write(lambda: sum(self._insert(a, "INSERT OR IGNORE") for a in alerts))

    def _write(self, body: Callable[[], T]) -> T:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    result = body()
                    self._db.execute("COMMIT")
                except BaseException:
                    if self._db.in_transaction:  # SQLite may have rolled back on its own
                        self._db.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise JournalError(f"{self.path}: {exc}") from exc
        return result

    def _insert(self, alert: Alert, verb: str) -> int:
        cursor = self._db.execute(
            f"{verb} INTO alerts (table_id, seq, kind, wall_time, payload) VALUES (?, ?, ?, ?, ?)",
            (alert.table, alert.seq, alert.kind, alert.wall_time, to_wire(alert).decode()),
        )
        return cursor.rowcount

    def read(self, table: str, from_seq: int, limit: int) -> list[Alert]:
        """Up to ``limit`` alerts of ``table`` with ``seq >= from_seq``, in sequence order."""
        rows = self._select(_SELECT_FROM, (table, from_seq, limit))
        return [from_wire(payload.encode()) for (payload,) in rows]

    def left_open(self, table: str, before_seq: int | None = None) -> list[Alert]:
        """The last alert of each irregularity of ``table`` (same kind, round and box) that was
        opened and never closed, in sequence order: what a crash left open. Only alerts
        numbered below ``before_seq`` count, if given (those of the runs before this one)."""
        last: dict[tuple[str, str, int, int | None], Alert] = {}
        sql = "SELECT payload FROM alerts WHERE table_id = ? AND seq < ? ORDER BY seq"
        for (payload,) in self._select(sql, (table, before_seq or 2**63 - 1)):
            alert = from_wire(payload.encode())
            last[alert.key] = alert
        still_open = [a for a in last.values() if a.state is not AlertState.CLOSE]
        return sorted(still_open, key=lambda a: a.seq or 0)

    def last_seq(self, table: str) -> int:
        """The highest sequence number of ``table``; 0 when it has no alert yet."""
        with self._lock:
            return self._last_seq(table)

    def _last_seq(self, table: str) -> int:
        try:
            (seq,) = self._db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM alerts WHERE table_id = ?", (table,)
            ).fetchone()
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: {exc}") from exc
        return int(seq)

    def _select(self, sql: str, params: tuple[object, ...]) -> list[tuple[str]]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise JournalError(f"{self.path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
