"""The browser console's own SQLite store: alerts heard, irregularities, acknowledgements.

``paigow console`` follows the bus from each table's #1 on every start, so :meth:`ConsoleStore.add`
is idempotent: an alert is unique on (table, journal id, sequence number) and one heard again is
dropped. The alerts of one irregularity (same table, journal, kind, round and box) are grouped:
its state is that of its last message (open, update, close), and it stays *active* (on the wall)
until it is closed and acknowledged. Acknowledgements (operator, note, UTC time) and the
session secret (so that a login survives a restart) are kept here too.

Ordering: every alert gets a rowid in arrival order; an irregularity is sorted by the rowid of
its last message (``last_id``), newest first, and the wall pages by that key. Indexes on
``(active, last_id)`` and ``last_id`` keep the first page of a wall of 10,000 alerts a few
rows' read. WAL mode, ``synchronous=NORMAL``: the console's copy can be rebuilt from the bus
(the journals are the record), acknowledgements ride on WAL's ordering.

>>> import tempfile
>>> from pipeline.alerts import make_alert
>>> opened = make_alert("dice_not_flat", table="T1", round=1, box=None, video_time_s=2.0,
...                     frame=50, message="a die is not lying flat").with_seq(1, "ab")
>>> with tempfile.TemporaryDirectory() as folder, ConsoleStore(Path(folder) / "c.db") as store:
...     first, again = store.add([opened]), store.add([opened])
...     [first, again, [i.state for i in store.wall(WallQuery())]]
[[1], [], ['open']]
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from pipeline.alerts import Alert, from_wire, to_wire, utc_now

STORE_VERSION = 1
"""``PRAGMA user_version`` of the layout below; a file with another version is refused."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS irregularities (
    id INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    journal TEXT NOT NULL,
    kind TEXT NOT NULL,
    round INTEGER NOT NULL,
    box INTEGER NOT NULL,
    severity TEXT NOT NULL,
    state TEXT NOT NULL,
    low_confidence INTEGER NOT NULL,
    first_id INTEGER NOT NULL,
    last_id INTEGER NOT NULL,
    opened_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    messages INTEGER NOT NULL,
    message TEXT NOT NULL,
    acks INTEGER NOT NULL DEFAULT 0,
    active INTEGER NOT NULL,
    UNIQUE (table_id, journal, kind, round, box)
);
CREATE INDEX IF NOT EXISTS irregularities_active ON irregularities (active, last_id);
CREATE INDEX IF NOT EXISTS irregularities_last ON irregularities (last_id);
CREATE TABLE IF NOT EXISTS alerts (
    id INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    journal TEXT NOT NULL,
    seq INTEGER NOT NULL,
    irregularity INTEGER NOT NULL REFERENCES irregularities (id),
    round INTEGER NOT NULL,
    video_time_s REAL NOT NULL,
    payload TEXT NOT NULL,
    UNIQUE (table_id, journal, seq)
);
CREATE INDEX IF NOT EXISTS alerts_irregularity ON alerts (irregularity, id);
CREATE INDEX IF NOT EXISTS alerts_round ON alerts (table_id, journal, round, video_time_s);
CREATE TABLE IF NOT EXISTS acks (
    id INTEGER PRIMARY KEY,
    irregularity INTEGER NOT NULL REFERENCES irregularities (id),
    operator TEXT NOT NULL,
    note TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS acks_irregularity ON acks (irregularity, id);
CREATE INDEX IF NOT EXISTS acks_at ON acks (at);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""
_NO_BOX = -1
"""``box`` of an irregularity that concerns no box (SQLite's UNIQUE treats NULLs as distinct)."""
_IRREGULARITY_COLUMNS = (
    "id, table_id, journal, kind, round, box, severity, state, low_confidence, first_id,"
    " last_id, opened_at, updated_at, messages, message, acks, active"
)
WALL_STATES = ("open", "closed", "unacked")
"""The wall's state filter: not closed yet, closed, not acknowledged yet."""


@dataclass(frozen=True, slots=True)
class Irregularity:
    """One irregularity as the wall shows it: the alerts of one (table, journal, kind, round,
    box), the state of the last one, how many messages and acknowledgements it has."""

    id: int
    table: str
    journal: str
    kind: str
    round: int
    box: int | None
    severity: str
    state: str
    low_confidence: bool
    first_id: int
    last_id: int
    opened_at: str
    updated_at: str
    messages: int
    message: str
    """The last message's text."""
    acks: int
    active: bool


@dataclass(frozen=True, slots=True)
class StoredAlert:
    """An alert as the console stored it: its row id (arrival order) and irregularity."""

    id: int
    irregularity: int
    alert: Alert


@dataclass(frozen=True, slots=True)
class Ack:
    id: int
    irregularity: int
    operator: str
    note: str
    at: str


@dataclass(frozen=True, slots=True)
class WallQuery:
    """What the wall asks for: active irregularities (or all, ``history``), filtered, newest
    first, ``limit`` of them with ``last_id`` below ``before`` (the next page)."""

    table: str | None = None
    kind: str | None = None
    severity: str | None = None
    state: str | None = None
    """One of :data:`WALL_STATES`, or None for any."""
    history: bool = False
    before: int | None = None
    limit: int = 50


class ConsoleStore:
    """The console's SQLite file at ``path`` (created if absent). Thread-safe: one connection
    behind a lock. ValueError with one line when the file cannot be opened as this store."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._set_up()
        except (sqlite3.Error, ValueError) as exc:
            raise ValueError(f"{self.path}: cannot open the console's store: {exc}") from None

    def _set_up(self) -> None:
        (mode,) = self._db.execute("PRAGMA journal_mode=WAL").fetchone()
        if mode != "wal":
            raise ValueError(f"WAL mode refused (journal_mode is {mode!r})")
        self._db.execute("PRAGMA synchronous=NORMAL")
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version not in (0, STORE_VERSION):
            raise ValueError(f"store version {version}, expected {STORE_VERSION}")
        self._db.executescript(_SCHEMA)
        self._db.execute(f"PRAGMA user_version={STORE_VERSION}")

    def add(self, alerts: Iterable[Alert]) -> list[int]:
        """Store numbered alerts in one transaction; return the ids of the irregularities that
        changed (in order, without repeats). An alert stored already is skipped."""
        changed: dict[int, None] = {}
        with self._lock, self._transaction():
            for alert in alerts:
                irregularity = self._add_one(alert)
                if irregularity is not None:
                    changed[irregularity] = None
        return list(changed)

    def _add_one(self, alert: Alert) -> int | None:
        if alert.seq is None:
            raise ValueError("only numbered alerts can be stored")
        journal = alert.journal or ""
        box = _NO_BOX if alert.box is None else alert.box
        key = (alert.table, journal, alert.kind, alert.round, box)
        found = self._db.execute(
            "SELECT id FROM irregularities WHERE table_id = ? AND journal = ? AND kind = ?"
            " AND round = ? AND box = ?",
            key,
        ).fetchone()
        if found is None:
            found = self._db.execute(
                "INSERT INTO irregularities (table_id, journal, kind, round, box, severity,"
                " state, low_confidence, first_id, last_id, opened_at, updated_at, messages,"
                " message, active) VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ?, ?, 0, '', 1)"
                " RETURNING id",
                (*key, alert.severity, str(alert.state), alert.wall_time, alert.wall_time),
            ).fetchone()
        (irregularity,) = found
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO alerts (table_id, journal, seq, irregularity, round,"
            " video_time_s, payload) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (alert.table, journal, alert.seq, irregularity, alert.round, alert.video_time_s,
             to_wire(alert).decode()),
        )  # fmt: skip
        if cursor.rowcount == 0:
            return None
        self._db.execute(
            "UPDATE irregularities SET state = ?, last_id = ?, updated_at = ?,"
            " first_id = CASE first_id WHEN 0 THEN ? ELSE first_id END,"
            " messages = messages + 1, message = ?, low_confidence = low_confidence OR ?,"
            " active = NOT (? = 'close' AND acks > 0) WHERE id = ?",
            (str(alert.state), cursor.lastrowid, alert.wall_time, cursor.lastrowid, alert.message,
             alert.confidence is not None, str(alert.state), irregularity),
        )  # fmt: skip
        return irregularity

    def wall(self, query: WallQuery) -> list[Irregularity]:
        """The irregularities the wall shows for ``query``, newest first."""
        where, params = ["1"] if query.history else ["active = 1"], []
        for column, value in (
            ("table_id", query.table),
            ("kind", query.kind),
            ("severity", query.severity),
        ):
            if value:
                where.append(f"{column} = ?")
                params.append(value)
        if query.state:
            where.append(_state_clause(query.state))
        if query.before is not None:
            where.append("last_id < ?")
            params.append(query.before)
        sql = (
            f"SELECT {_IRREGULARITY_COLUMNS} FROM irregularities WHERE {' AND '.join(where)}"
            " ORDER BY last_id DESC LIMIT ?"
        )
        return [_irregularity(row) for row in self._select(sql, (*params, query.limit))]

    def irregularity(self, irregularity_id: int) -> Irregularity | None:
        sql = f"SELECT {_IRREGULARITY_COLUMNS} FROM irregularities WHERE id = ?"
        rows = self._select(sql, (irregularity_id,))
        return _irregularity(rows[0]) if rows else None

    def irregularities(self, ids: Iterable[int]) -> list[Irregularity]:
        """Those of ``ids`` that exist, newest first."""
        ids = list(ids)
        marks = ",".join("?" * len(ids))
        sql = f"SELECT {_IRREGULARITY_COLUMNS} FROM irregularities WHERE id IN ({marks})"
        rows = self._select(sql + " ORDER BY last_id DESC", tuple(ids)) if ids else []
        return [_irregularity(row) for row in rows]

    def messages(self, irregularity_id: int) -> list[StoredAlert]:
        """The alerts of one irregularity, in arrival order."""
        sql = "SELECT id, irregularity, payload FROM alerts WHERE irregularity = ? ORDER BY id"
        return [_stored(row) for row in self._select(sql, (irregularity_id,))]

    def alert(self, alert_id: int) -> StoredAlert | None:
        rows = self._select(
            "SELECT id, irregularity, payload FROM alerts WHERE id = ?", (alert_id,)
        )
        return _stored(rows[0]) if rows else None

    def timeline(self, table: str, journal: str, round: int) -> list[StoredAlert]:
        """Every alert of one round of one table (and journal), in video time order."""
        sql = (
            "SELECT id, irregularity, payload FROM alerts WHERE table_id = ? AND journal = ?"
            " AND round = ? ORDER BY video_time_s, id"
        )
        return [_stored(row) for row in self._select(sql, (table, journal, round))]

    def acknowledge(self, irregularity_id: int, operator: str, note: str) -> Ack:
        """Record an acknowledgement, stamped now (UTC); KeyError for an unknown irregularity.
        A closed irregularity leaves the wall once acknowledged."""
        at = utc_now()
        with self._lock, self._transaction():
            cursor = self._db.execute(
                "UPDATE irregularities SET acks = acks + 1, active = (state != 'close')"
                " WHERE id = ?",
                (irregularity_id,),
            )
            if cursor.rowcount == 0:
                raise KeyError(irregularity_id)
            (ack_id,) = self._db.execute(
                "INSERT INTO acks (irregularity, operator, note, at) VALUES (?, ?, ?, ?)"
                " RETURNING id",
                (irregularity_id, operator, note, at),
            ).fetchone()
        return Ack(ack_id, irregularity_id, operator, note, at)

    def acks(self, irregularity_id: int) -> list[Ack]:
        sql = "SELECT id, irregularity, operator, note, at FROM acks WHERE irregularity = ?"
        return [Ack(*row) for row in self._select(sql + " ORDER BY id", (irregularity_id,))]

    def acks_between(self, from_utc: str, to_utc: str) -> list[tuple[Ack, Irregularity]]:
        """The acknowledgements made from ``from_utc`` (included) to ``to_utc`` (excluded), ISO
        8601 UTC as :func:`pipeline.alerts.utc_now` writes them, each with its irregularity."""
        columns = ", ".join(f"i.{c.strip()}" for c in _IRREGULARITY_COLUMNS.split(","))
        sql = (
            f"SELECT a.id, a.irregularity, a.operator, a.note, a.at, {columns} FROM acks a"
            " JOIN irregularities i ON i.id = a.irregularity WHERE a.at >= ? AND a.at < ?"
            " ORDER BY a.at, a.id"
        )
        rows = self._select(sql, (from_utc, to_utc))
        return [(Ack(*row[:5]), _irregularity(row[5:])) for row in rows]

    def choices(self) -> dict[str, list[str]]:
        """The tables, kinds and severities seen, for the wall's filters."""
        found = {}
        for name, column in (("tables", "table_id"), ("kinds", "kind"), ("severities", "severity")):
            sql = f"SELECT DISTINCT {column} FROM irregularities ORDER BY 1"
            found[name] = [value for (value,) in self._select(sql, ())]
        return found

    def alert_count(self) -> int:
        ((count,),) = self._select("SELECT COUNT(*) FROM alerts", ())
        return int(count)

    def secret(self) -> str:
        """The session secret, made on first use and kept (a login survives a restart)."""
        with self._lock, self._transaction():
            self._db.execute(
                "INSERT OR IGNORE INTO meta VALUES ('session_secret', ?)", (secrets.token_hex(32),)
            )
            (value,) = self._db.execute(
                "SELECT value FROM meta WHERE key = 'session_secret'"
            ).fetchone()
        return str(value)

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _select(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> ConsoleStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on an exception (taken under the store's lock)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        if exc_type is None:
            self._db.execute("COMMIT")
        elif self._db.in_transaction:
            self._db.execute("ROLLBACK")


def _state_clause(state: str) -> str:
    clauses = {"open": "state != 'close'", "closed": "state = 'close'", "unacked": "acks = 0"}
    if state not in clauses:
        raise ValueError(f"state {state!r}: use one of {', '.join(WALL_STATES)}")
    return clauses[state]


def _irregularity(row: tuple[Any, ...]) -> Irregularity:
    values = list(row)
    values[5] = None if values[5] == _NO_BOX else values[5]
    values[8], values[16] = bool(values[8]), bool(values[16])
    return Irregularity(*values)


def _stored(row: tuple[Any, ...]) -> StoredAlert:
    alert_id, irregularity, payload = row
    return StoredAlert(alert_id, irregularity, from_wire(payload.encode()))
