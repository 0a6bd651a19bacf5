"""The alert journal: every alert is committed to SQLite, and numbered, before it is published.

One file holds the alerts of any number of tables. Sequence numbers are per table, start at 1,
have no holes and continue across restarts: each is ``max(seq) + 1`` for its table, taken inside
the writing transaction. The file is in WAL mode with ``synchronous=FULL``, so a committed alert
survives a power cut; each row keeps the alert's wire JSON (schema 1), sequence number included.

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
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from pipeline.alerts import Alert, from_wire, to_wire

JOURNAL_VERSION = 1
"""``PRAGMA user_version`` of the layout below; a file with another version is refused."""

BUSY_TIMEOUT_S = 5.0
"""How long a write waits for another process holding the file's write lock. Higher: rides out
longer contention; lower: a stuck writer is reported sooner."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS alerts (
    table_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    wall_time TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (table_id, seq)
) WITHOUT ROWID
"""


class Journal:
    """A journal file, opened (and created if absent) at ``path``.

    Safe to share between threads (one connection behind a lock): the publisher appends from
    its caller's thread while its replay thread reads. Raises ValueError with one line when the
    file cannot be opened as a journal. Use as a context manager, or call :meth:`close`.
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
            self._set_up()
        except (sqlite3.Error, ValueError) as exc:
            self._db.close()
            raise ValueError(f"{self.path}: cannot open the journal: {exc}") from None

    def _set_up(self) -> None:
        (mode,) = self._db.execute("PRAGMA journal_mode=WAL").fetchone()
        if mode != "wal":
            raise ValueError(f"WAL mode refused (journal_mode is {mode!r})")
        self._db.execute("PRAGMA synchronous=FULL")
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version not in (0, JOURNAL_VERSION):
            raise ValueError(f"journal version {version}, expected {JOURNAL_VERSION}")
        self._db.execute(_SCHEMA)
        self._db.execute(f"PRAGMA user_version={JOURNAL_VERSION}")

    def append(self, alert: Alert) -> Alert:
        """Commit one alert; return it with its sequence number."""
        return self.append_all([alert])[0]

    def append_all(self, alerts: Iterable[Alert]) -> list[Alert]:
        """Commit alerts in one transaction (one fsync), numbered in the given order per table.

        ValueError for an alert that already has a sequence number; nothing is written then.
        """
        alerts = list(alerts)
        if any(a.seq is not None for a in alerts):
            raise ValueError("an alert that already has a sequence number cannot be journaled")
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                stored = [self._insert(alert) for alert in alerts]
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return stored

    def _insert(self, alert: Alert) -> Alert:
        stored = alert.with_seq(self._last_seq(alert.table) + 1)
        self._db.execute(
            "INSERT INTO alerts (table_id, seq, kind, wall_time, payload) VALUES (?, ?, ?, ?, ?)",
            (stored.table, stored.seq, stored.kind, stored.wall_time, to_wire(stored).decode()),
        )
        return stored

    def read(self, table: str, from_seq: int, limit: int) -> list[Alert]:
        """Up to ``limit`` alerts of ``table`` with ``seq >= from_seq``, in sequence order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT payload FROM alerts WHERE table_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
                (table, from_seq, limit),
            ).fetchall()
        return [from_wire(payload.encode()) for (payload,) in rows]

    def last_seq(self, table: str) -> int:
        """The highest sequence number of ``table``; 0 when it has no alert yet."""
        with self._lock:
            return self._last_seq(table)

    def _last_seq(self, table: str) -> int:
        (seq,) = self._db.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM alerts WHERE table_id = ?", (table,)
        ).fetchone()
        return int(seq)

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
