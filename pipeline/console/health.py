"""Table health from what the bus says: pure, the clock passed in.

:class:`HealthBoard` takes every item the subscriber yields (:meth:`HealthBoard.observe`) and
says, per table (:meth:`HealthBoard.snapshot`): when it was last heard, its last heartbeat's
frame rate and round phase (the heartbeat's ``status``), whether its camera is lost (a
``camera_lost`` alert open, or the heartbeat's status), its vision degraded, its journal
unwritable, and whether it is silent. A table not heard for ``silence_s`` (or the whole bus) is
``alarm`` (red); lost camera and unwritable journal too; degraded vision is ``warn``.

>>> from pipeline.bus.wire import Notice
>>> board = HealthBoard(silence_s=3.0)
>>> board.observe(Notice("T1", "vision_degraded", "glare", "2026-12-02T08:00:00.000Z"), 10.0)
>>> [(t["table"], t["level"], t["reasons"]) for t in board.snapshot(11.0)]
[('T1', 'warn', ['vision degraded'])]
>>> [(t["table"], t["level"]) for t in board.snapshot(14.0)]
[('T1', 'alarm')]
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pipeline.alerts import Alert, AlertState
from pipeline.bus.subscriber import JournalChanged, PublisherBack, PublisherSilent
from pipeline.bus.wire import Heartbeat, Notice

CAMERA_LOST_KIND = "camera_lost"
NOTICE_FLAGS = {
    "journal_unwritable": ("journal_unwritable", True),
    "journal_recovered": ("journal_unwritable", False),
    "vision_degraded": ("vision_degraded", True),
    "vision_restored": ("vision_degraded", False),
}
"""A notice name -> the flag it sets or clears."""


@dataclass(slots=True)
class TableHealth:
    """What the console knows of one table's monitor (mutable: the board's own record)."""

    table: str
    heard_at_s: float
    """When (the board's clock) the table was last heard: any alert, heartbeat or notice."""
    last_heartbeat: str | None = None
    """The last heartbeat's wall time (UTC, the monitor's clock)."""
    last_seq: int | None = None
    fps: float | None = None
    phase: str | None = None
    """The round's phase, as the monitor's last heartbeat said."""
    camera_lost: bool = False
    vision_degraded: bool = False
    journal_unwritable: bool = False
    silent: bool = False
    """The subscriber reported this table (or the bus) silent and it was not heard since."""
    notes: list[str] = field(default_factory=list)
    """The last few notices (name: message), newest last."""


NOTES_KEPT = 5


class HealthBoard:
    """Per table health; feed it every bus item, read :meth:`snapshot`."""

    def __init__(self, silence_s: float) -> None:
        self.silence_s = silence_s
        self._tables: dict[str, TableHealth] = {}
        self.bus_silent = False
        """The subscriber reported the whole bus silent and nothing was heard since."""

    def observe(self, item: object, now_s: float) -> None:
        """Take one subscriber item (anything else is ignored)."""
        match item:
            case Alert(table=table):
                health = self._heard(table, now_s)
                if item.kind == CAMERA_LOST_KIND:
                    health.camera_lost = item.state is not AlertState.CLOSE
            case Heartbeat(table=table):
                self._on_heartbeat(self._heard(table, now_s), item)
            case Notice(table=table, notice=name, message=message):
                health = self._heard(table, now_s)
                if name in NOTICE_FLAGS:
                    flag, value = NOTICE_FLAGS[name]
                    setattr(health, flag, value)
                self._note(health, f"{name}: {message}")
            case PublisherSilent(table=None):
                self.bus_silent = True
                for health in self._tables.values():
                    health.silent = True
            case PublisherSilent(table=str(table)) if table in self._tables:
                self._tables[table].silent = True
            case PublisherBack(table=None):
                self.bus_silent = False
                for health in self._tables.values():
                    health.silent = False
            case JournalChanged(table=table, why=why):
                self._note(self._heard(table, now_s), f"numbers alerts afresh: {why}")

    def _heard(self, table: str, now_s: float) -> TableHealth:
        health = self._tables.setdefault(table, TableHealth(table, now_s))
        health.heard_at_s, health.silent = now_s, False
        self.bus_silent = False
        return health

    def _on_heartbeat(self, health: TableHealth, heartbeat: Heartbeat) -> None:
        health.last_heartbeat, health.last_seq = heartbeat.wall_time, heartbeat.last_seq
        status = heartbeat.status
        if isinstance(status.get("phase"), str):
            health.phase = status["phase"]
        fps = status.get("fps")
        if isinstance(fps, int | float) and not isinstance(fps, bool):
            health.fps = float(fps)
        if status.get("camera") in ("ok", "lost"):
            health.camera_lost = status["camera"] == "lost"
        if isinstance(status.get("degraded"), bool):
            health.vision_degraded = status["degraded"]

    @staticmethod
    def _note(health: TableHealth, text: str) -> None:
        health.notes = [*health.notes[-(NOTES_KEPT - 1) :], text]

    def snapshot(self, now_s: float) -> list[dict[str, Any]]:
        """Per table, sorted by name: the record's fields, ``heard_age_s``, ``level`` (``ok``,
        ``warn``, ``alarm``) and the ``reasons`` for it."""
        out = []
        for table in sorted(self._tables):
            health = self._tables[table]
            age_s = max(now_s - health.heard_at_s, 0.0)
            reasons = []
            if health.silent or age_s >= self.silence_s:
                reasons.append(f"silent {age_s:.0f} s")
            if health.camera_lost:
                reasons.append("camera lost")
            if health.journal_unwritable:
                reasons.append("journal unwritable")
            alarm = bool(reasons)
            if health.vision_degraded:
                reasons.append("vision degraded")
            level = "alarm" if alarm else "warn" if reasons else "ok"
            record = asdict(health)
            del record["heard_at_s"]
            out.append({**record, "heard_age_s": round(age_s, 1), "level": level,
                        "reasons": reasons})  # fmt: skip
        return out
