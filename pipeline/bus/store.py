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
from pipeline.journal import Journal, JournalError


def default_spill_path(journal_path: Path) -> Path:
    """The spill file beside the journal: ``alerts.db`` -> ``alerts.db.spill.jsonl``."""
    return journal_path.with_name(journal_path.name + ".spill.jsonl")


class Spill:
    """An append-only file of numbered alerts, one wire JSON line each, fsynced per append."""

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
        """The alerts in the file, in order; torn or foreign lines skipped; [] if absent."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        alerts = []
        for line in data.splitlines():
            try:
                alert = from_wire(line)
            except ValueError:
                continue
            if alert.seq is not None:
                alerts.append(alert)
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
    """The journal with its spill. ``append_all`` numbers and keeps every alert, raising only
    for a caller's mistake (an alert already numbered); thread-safe."""

    def __init__(
        self,
        journal: Journal,
        spill_path: str | Path | None = None,
        config: StoreConfig = StoreConfig(),
    ) -> None:
        self.journal = journal
        self.spill = Spill(spill_path or default_spill_path(journal.path))
        self._config = config
        self._lock = threading.RLock()
        self._pending: list[Alert] = self.spill.load()  # what a previous run could not journal
        self._last_seq: dict[str, int] = {}
        self._delay_s = config.retry_first_s
        self._retry_at = 0.0
        self.failure: str | None = None
        """The journal's last refusal while alerts wait in the spill; None when all is journaled."""
        self.spill_failure: str | None = None
        """Why the spill file could not be written either; None when it could (or is unused)."""
        self.folded = 0
        """Alerts written back from the spill into the journal, in all."""
        if self._pending:
            self.flush(force=True)

    @property
    def id(self) -> str:
        return self.journal.id

    @property
    def pending(self) -> int:
        """Alerts kept in the spill (or memory), not yet in the journal."""
        with self._lock:
            return len(self._pending)

    def append_all(self, alerts: Iterable[Alert]) -> list[Alert]:
        """Number and keep ``alerts`` (journal if it takes them, else spill); return them."""
        alerts = list(alerts)
        with self._lock:
            if not self._pending:
                try:
                    stored = self.journal.append_all(alerts)
                except JournalError as exc:
                    self._refused(exc)
                else:
                    self._last_seq.update((a.table, a.seq or 0) for a in stored)
                    return stored
            numbered = []
            for alert in alerts:
                seq = self.last_seq(alert.table) + 1
                self._last_seq[alert.table] = seq
                numbered.append(alert.with_seq(seq, self.journal.id))
            self._pending.extend(numbered)
            self._write_spill(numbered)
            return numbered

    def _write_spill(self, alerts: list[Alert]) -> None:
        try:
            self.spill.append(alerts)
        except OSError as exc:
            self.spill_failure = f"{self.spill.path}: {exc.strerror or exc}"
        else:
            self.spill_failure = None

    def _refused(self, exc: JournalError) -> None:
        self.failure = str(exc)
        self._retry_at = time.monotonic() + self._delay_s
        self._delay_s = min(self._delay_s * 2, self._config.retry_max_s)

    def flush(self, force: bool = False) -> int:
        """Write the spill back into the journal if its retry is due (or ``force``); return
        how many alerts were written back (0 if none waited or the journal refused again)."""
        with self._lock:
            if not self._pending or (not force and time.monotonic() < self._retry_at):
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

    def last_seq(self, table: str) -> int:
        """The table's highest number, journal and spill together."""
        with self._lock:
            if table not in self._last_seq:
                spilled = max((a.seq or 0 for a in self._pending if a.table == table), default=0)
                try:
                    journaled = self.journal.last_seq(table)
                except JournalError:
                    return spilled
                self._last_seq[table] = max(journaled, spilled)
            return self._last_seq[table]

    def read(self, table: str, from_seq: int, limit: int) -> list[Alert]:
        """Up to ``limit`` alerts of ``table`` from ``from_seq`` on, journal and spill merged."""
        with self._lock:
            waiting = [a for a in self._pending if a.table == table and (a.seq or 0) >= from_seq]
        stored = self.journal.read(table, from_seq, limit)
        merged = {a.seq: a for a in stored} | {a.seq: a for a in waiting}
        return [merged[seq] for seq in sorted(merged)][:limit]

    def left_open(self, table: str) -> list[Alert]:
        """The irregularities of ``table`` opened and never closed (journal and spill)."""
        last = {a.key: a for a in self.journal.left_open(table)}
        with self._lock:
            for alert in self._pending:
                if alert.table == table:
                    last[alert.key] = alert
        return [a for a in last.values() if a.state is not AlertState.CLOSE]
