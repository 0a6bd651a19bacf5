"""Where the publisher keeps alerts: the journal, and a spill file while the journal refuses.

:class:`AlertStore` numbers and keeps every alert it is given, whatever the disk does. While the
journal can be written, alerts go straight into it (numbered in its transaction). When SQLite
refuses a write (disk full, another writer holding the lock past the busy timeout, an I/O error),
the alert is numbered here, continuing the journal's numbers, appended to the :class:`Spill`
file (one wire JSON line each, fsynced) and kept in memory; every later alert follows it there,
so the order holds. :meth:`AlertStore.flush` (the publisher calls it from its thread, with
back-off) folds the spill into the journal in one transaction once SQLite accepts writes again,
then empties the file. A spill left by a crash is folded in when the store next opens.

Replays and ``last_seq`` see the journal and the spill together. If the spill file cannot be
written either (the same full disk), the alerts are still numbered, published and replayed from
memory, and ``spill_failure`` says so: they are lost only if the process dies before the journal
recovers. Keep the spill on another disk (``paigow monitor --spill``) to close that gap.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pipeline.alerts import Alert, AlertState, from_wire, to_wire
from pipeline.journal import BUSY_TIMEOUT_S, Journal, JournalError


def default_spill_path(journal_path: Path) -> Path:
    """The spill file beside the journal: ``alerts.db`` -> ``alerts.db.spill.jsonl``."""
    return journal_path.with_name(journal_path.name + ".spill.jsonl")


def open_journal(path: Path, busy_timeout_s: float) -> Journal:
    """How the store opens its journal (the one place; the fault tests make it fail)."""
    return Journal(path, busy_timeout_s)


class Spill:
    """An append-only file of alerts (numbered, or held while the journal never opened), one
    wire JSON line each, fsynced per append."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def append(self, alerts: list[Alert]) -> None:
        """Append and fsync; OSError when the file cannot be written. A line torn by a failed
        write is skipped on loading (each append starts on a fresh line)."""
        lines = b"".join(b"\n" + to_wire(alert) for alert in alerts) + b"\n"
        with open(self.path, "ab") as file:
            file.write(lines)
            file.flush()
            os.fsync(file.fileno())

    def load(self) -> list[Alert]:
        """The alerts in the file, in order (held ones without a number); torn or foreign
        lines skipped; [] if absent."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        alerts = []
        for line in data.splitlines():
            with contextlib.suppress(ValueError):
                alerts.append(from_wire(line))
        return alerts

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """Retrying a journal that refused a write."""

    retry_first_s: float = 0.5
    """First wait before writing the spill back; doubled after each refusal."""
    retry_max_s: float = 15.0
    """Longest wait between tries. Lower: the journal catches up sooner after a fault; higher:
    less work against a disk that stays full."""


class AlertStore:
    """The journal with its spill; thread-safe. ``append_all`` keeps every alert, raising only
    for a caller's mistake (an alert already numbered).

    ``journal`` is an open :class:`Journal` or the path of one. A path that cannot be opened
    for a fault that may pass (a full disk, an I/O error, a lock) is tried again with back-off;
    until then the numbering is unknown, so alerts are *held*: spilled without a number and
    numbered, in order, when the journal opens. Every alert numbered, now or later, is queued
    for publishing: take them with :meth:`take_unpublished`. Close the store when done (it
    closes a journal it opened itself).
    """

    def __init__(
        self,
        journal: Journal | str | Path,
        spill_path: str | Path | None = None,
        config: StoreConfig = StoreConfig(),
        busy_timeout_s: float = BUSY_TIMEOUT_S,
    ) -> None:
        self.path = journal.path if isinstance(journal, Journal) else Path(journal)
        self.journal: Journal | None = journal if isinstance(journal, Journal) else None
        self._owns_journal = self.journal is None
        self.spill = Spill(spill_path or default_spill_path(self.path))
        self._config, self._busy_timeout_s = config, busy_timeout_s
        self._lock = threading.RLock()
        loaded = self.spill.load()  # what a previous run could not journal
        self._pending = [a for a in loaded if a.seq is not None]  # numbered, not journaled
        self._held = [a for a in loaded if a.seq is None]  # numbers unknown yet
        self._unpublished: list[Alert] = []
        self._last_seq: dict[str, int] = {}
        self._own_from: dict[str, int] = {}  # per table, the first number given in this run
        self._delay_s, self._retry_at = config.retry_first_s, 0.0
        self.failure: str | None = None
        """The journal's last refusal while alerts wait in the spill; None when all is journaled."""
        self.spill_failure: str | None = None
        """Why the spill file could not be written either; None when it could (or is unused)."""
        self.folded = 0
        """Alerts written back from the spill into the journal, in all."""
        if self.journal is None:
            try:
                self.journal = open_journal(self.path, busy_timeout_s)
            except JournalError as exc:  # a ValueError (not a journal at all) is bad input
                self._refused(exc)
        if self.journal is not None:
            self._number_held()
            self.flush(force=True)

    @property
    def id(self) -> str | None:
        """The journal's id; None while it has never opened (and no spilled alert names it)."""
        if self.journal is not None:
            return self.journal.id
        return next((a.journal for a in self._pending if a.journal), None)

    @property
    def pending(self) -> int:
        """Alerts kept in the spill (or memory), not yet in the journal."""
        with self._lock:
            return len(self._pending) + len(self._held)

    def append_all(self, alerts: Iterable[Alert]) -> list[Alert]:
        """Keep ``alerts`` (journal if it takes them, else spill); return them, numbered unless
        held. Numbered ones are queued for publishing."""
        alerts = list(alerts)
        if any(a.seq is not None for a in alerts):
            raise ValueError("an alert that already has a sequence number cannot be journaled")
        with self._lock:
            self._open_if_due()
            if self.journal is None:
                self._held.extend(alerts)
                self._write_spill(alerts)
                return alerts
            if not self._pending:
                try:
                    stored = self.journal.append_all(alerts)
                except JournalError as exc:
                    self._refused(exc)
                else:
                    for alert in stored:
                        self._last_seq[alert.table] = alert.seq or 0
                        self._own_from.setdefault(alert.table, alert.seq or 0)
                    self._unpublished.extend(stored)
                    return stored
            numbered = self._number(alerts)
            self._write_spill(numbered)
            return numbered

    def _number(self, alerts: list[Alert]) -> list[Alert]:
        """Number alerts after the journal and the spill; they wait in the spill."""
        numbered = []
        for alert in alerts:
            seq = self.last_seq(alert.table) + 1
            self._last_seq[alert.table] = seq
            self._own_from.setdefault(alert.table, seq)
            numbered.append(alert.with_seq(seq, self.id))
        self._pending.extend(numbered)
        self._unpublished.extend(numbered)
        return numbered

    def _number_held(self) -> None:
        """The journal is open: number what was held, in order (it is in the spill already)."""
        held, self._held = self._held, []
        self._number(held)

    def _open_if_due(self, force: bool = False) -> None:
        if self.journal is not None or (not force and time.monotonic() < self._retry_at):
            return
        try:
            self.journal = open_journal(self.path, self._busy_timeout_s)
        except (JournalError, ValueError) as exc:
            self._refused(exc)
            return
        if not self._pending and not self._held:
            self.failure = None
        self._number_held()

    def _write_spill(self, alerts: list[Alert]) -> None:
        try:
            self.spill.append(alerts)
        except OSError as exc:
            self.spill_failure = f"{self.spill.path}: {exc.strerror or exc}"
        else:
            self.spill_failure = None

    def _refused(self, exc: Exception) -> None:
        self.failure = str(exc)
        self._retry_at = time.monotonic() + self._delay_s
        self._delay_s = min(self._delay_s * 2, self._config.retry_max_s)

    def flush(self, force: bool = False) -> int:
        """Open the journal and write the spill back into it if a retry is due (or ``force``);
        return how many alerts were written back (0 if none waited or it refused again)."""
        with self._lock:
            self._open_if_due(force)
            if self.journal is None or not self._pending:
                return 0
            if not force and time.monotonic() < self._retry_at:
                return 0
            pending = self._pending
            try:
                self.journal.insert(pending)
            except JournalError as exc:
                self._refused(exc)
                return 0
            self._pending = []
            self.folded += len(pending)
            self.failure = self.spill_failure = None
            self._delay_s = self._config.retry_first_s
            with contextlib.suppress(OSError):  # folded twice is harmless: numbers are unique
                self.spill.clear()
            return len(pending)

    def take_unpublished(self) -> list[Alert]:
        """The alerts numbered since the last call, in order: to publish now."""
        with self._lock:
            taken, self._unpublished = self._unpublished, []
            return taken

    def last_seq(self, table: str) -> int:
        """The table's highest number, journal and spill together (the spill's alone while the
        journal has never opened)."""
        with self._lock:
            if table not in self._last_seq:
                spilled = max((a.seq or 0 for a in self._pending if a.table == table), default=0)
                try:
                    journaled = self.journal.last_seq(table) if self.journal else None
                except JournalError:
                    journaled = None
                if journaled is None:
                    return spilled
                self._last_seq[table] = max(journaled, spilled)
            return self._last_seq[table]

    def read(self, table: str, from_seq: int, limit: int) -> list[Alert]:
        """Up to ``limit`` alerts of ``table`` from ``from_seq`` on, journal and spill merged."""
        with self._lock:
            waiting = [a for a in self._pending if a.table == table and (a.seq or 0) >= from_seq]
            journal = self.journal
        stored = journal.read(table, from_seq, limit) if journal else []
        merged = {a.seq: a for a in stored} | {a.seq: a for a in waiting}
        return [merged[seq] for seq in sorted(merged)][:limit]

    def left_open(self, table: str) -> list[Alert] | None:
        """The irregularities of ``table`` that runs before this one opened and never closed
        (journal and spill); None while the journal has never opened (not known yet)."""
        with self._lock:
            if self.journal is None:
                return None
            before = self._own_from.get(table)
            last = {a.key: a for a in self.journal.left_open(table, before)}
            for alert in self._pending:
                if alert.table == table and (before is None or (alert.seq or 0) < before):
                    last[alert.key] = alert
        return [a for a in last.values() if a.state is not AlertState.CLOSE]

    def close(self) -> None:
        """Close the journal if this store opened it."""
        if self._owns_journal and self.journal is not None:
            self.journal.close()

    def __enter__(self) -> AlertStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
