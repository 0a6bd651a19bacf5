"""Alerts: what the rules checker raises and the journal, bus and consoles carry.

An :class:`Alert` is frozen. The rules checker makes it without a sequence number; the journal
gives it one (``with_seq``) when it commits it, and only then is it published. On the wire it is
one UTF-8 JSON object (:func:`to_wire` / :func:`from_wire`), schema 1::

    {"schema": 1, "seq": 7, "table": "T1", "kind": "dice_not_flat", "rule": "7.2",
     "rule_1998": null, "severity": "low", "action": "re-shake", "state": "open",
     "round": 3, "box": null, "video_time_s": 12.4, "wall_time": "2026-11-29T18:00:00.000Z",
     "frame": 310, "evidence": {...}, "message": "...", "journal": "3f2a..."}

``journal`` (optional, added by the journal that numbered the alert) is that journal's id: a
console that sees it change knows the numbering started again (a new or reset journal).
``confidence`` (optional, added within schema 1) is ``"low"`` on every message of an alert
opened while the table's vision was degraded (:mod:`pipeline.live.vision_health`); absent, the
alert stands on sights judged possible. Any other value is a malformed alert.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from paigow.catalogue import irregularity

SCHEMA = 1
LOW_CONFIDENCE = "low"
CONFIDENCES = (LOW_CONFIDENCE,)
"""The values of an alert's optional ``confidence``; absent means full confidence."""


class AlertState(StrEnum):
    """Lifecycle of one irregularity: opened once, updated while it lasts, closed once."""

    OPEN = "open"
    UPDATE = "update"
    CLOSE = "close"


def utc_now() -> str:
    """Wall time as ISO 8601 UTC with milliseconds, e.g. ``2026-11-29T18:00:00.000Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Alert:
    """One alert message. ``rule``/``rule_1998``/``severity``/``action`` come from the
    catalogue (:func:`make_alert` fills them); ``evidence`` holds JSON-able values only (track
    ids, tile faces, snapshot path...); ``seq`` is None until the journal commits the alert."""

    kind: str
    rule: str
    rule_1998: str | None
    severity: str
    action: str
    state: AlertState
    table: str
    round: int
    box: int | None
    video_time_s: float
    wall_time: str
    frame: int
    message: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    seq: int | None = None
    journal: str | None = None
    """The id of the journal that gave ``seq``; None before journaling."""
    confidence: str | None = None
    """``low`` when the alert was opened while the table's vision was degraded; else None."""

    def __post_init__(self) -> None:
        if not isinstance(self.evidence, MappingProxyType):
            object.__setattr__(self, "evidence", MappingProxyType(dict(self.evidence)))

    def with_seq(self, seq: int, journal: str | None = None) -> Alert:
        return replace(self, seq=seq, journal=journal)

    @property
    def key(self) -> tuple[str, str, int, int | None]:
        """What makes two alerts the same irregularity: table, kind, round, box."""
        return (self.table, self.kind, self.round, self.box)


def make_alert(
    kind: str,
    *,
    state: AlertState = AlertState.OPEN,
    table: str,
    round: int,
    box: int | None,
    video_time_s: float,
    frame: int,
    message: str,
    evidence: Mapping[str, Any] | None = None,
    wall_time: str | None = None,
    confidence: str | None = None,
) -> Alert:
    """An alert for a catalogue ``kind`` (KeyError for an unknown kind), citing its rules."""
    entry = irregularity(kind)
    return Alert(
        kind=kind,
        rule=entry.rule,
        rule_1998=entry.rule_1998,
        severity=str(entry.severity),
        action=entry.action,
        state=AlertState(state),
        table=table,
        round=round,
        box=box,
        video_time_s=round_time(video_time_s),
        wall_time=wall_time or utc_now(),
        frame=frame,
        message=message,
        evidence=evidence or {},
        confidence=confidence,
    )


def round_time(t: float) -> float:
    return float(f"{t:.3f}")


def to_dict(alert: Alert) -> dict[str, Any]:
    """The wire object (schema 1), ``seq`` included (None before journaling); ``journal`` and
    ``confidence`` only when set."""
    obj = {
        "schema": SCHEMA,
        "seq": alert.seq,
        "table": alert.table,
        "kind": alert.kind,
        "rule": alert.rule,
        "rule_1998": alert.rule_1998,
        "severity": alert.severity,
        "action": alert.action,
        "state": str(alert.state),
        "round": alert.round,
        "box": alert.box,
        "video_time_s": alert.video_time_s,
        "wall_time": alert.wall_time,
        "frame": alert.frame,
        "evidence": dict(alert.evidence),
        "message": alert.message,
    }
    if alert.journal is not None:
        obj["journal"] = alert.journal
    if alert.confidence is not None:
        obj["confidence"] = alert.confidence
    return obj


def to_wire(alert: Alert) -> bytes:
    """UTF-8 JSON, compact, keys in a fixed order."""
    return json.dumps(to_dict(alert), separators=(",", ":"), ensure_ascii=False).encode()


_FIELDS = [
    "seq",
    "table",
    "kind",
    "rule",
    "rule_1998",
    "severity",
    "action",
    "state",
    "round",
    "box",
    "video_time_s",
    "wall_time",
    "frame",
    "evidence",
    "message",
]


def from_dict(obj: Mapping[str, Any]) -> Alert:
    """Inverse of :func:`to_dict`; ValueError naming what is wrong with a malformed object
    (a wrong type, a number out of range such as ``1e400`` for ``round``)."""
    if not isinstance(obj, Mapping):
        raise ValueError("an alert must be a JSON object")
    if obj.get("schema") != SCHEMA:
        raise ValueError(f"unknown alert schema {obj.get('schema')!r} (expected {SCHEMA})")
    missing = [name for name in _FIELDS if name not in obj]
    if missing:
        raise ValueError(f"alert lacks {', '.join(missing)}")
    try:
        return Alert(
            kind=str(obj["kind"]),
            rule=str(obj["rule"]),
            rule_1998=None if obj["rule_1998"] is None else str(obj["rule_1998"]),
            severity=str(obj["severity"]),
            action=str(obj["action"]),
            state=AlertState(obj["state"]),
            table=str(obj["table"]),
            round=int(obj["round"]),
            box=None if obj["box"] is None else int(obj["box"]),
            video_time_s=float(obj["video_time_s"]),
            wall_time=str(obj["wall_time"]),
            frame=int(obj["frame"]),
            message=str(obj["message"]),
            evidence=dict(obj["evidence"]),
            seq=None if obj["seq"] is None else int(obj["seq"]),
            journal=None if obj.get("journal") is None else str(obj["journal"]),
            confidence=_confidence(obj.get("confidence")),
        )
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"malformed alert: {exc}") from None


def _confidence(value: Any) -> str | None:
    if value is None or value in CONFIDENCES:
        return value
    raise ValueError(f"confidence {value!r:.40} is not one of {', '.join(CONFIDENCES)}")


def from_wire(payload: bytes) -> Alert:
    """Parse one wire payload; ValueError for anything that is not a schema-1 alert."""
    try:
        obj = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"alert payload is not UTF-8 JSON: {exc!s:.200}") from None
    return from_dict(obj)


def describe_alert(alert: Alert) -> str:
    """One readable line for the console (``#-``: not numbered yet).

    >>> a = make_alert("dice_not_flat", table="T1", round=2, box=None, video_time_s=12.4,
    ...                frame=310, message="a die is not lying flat", wall_time="t").with_seq(7)
    >>> describe_alert(a)
    '#7 T1 round 2 12.4s LOW dice_not_flat (7.2) open: a die is not lying flat -> re-shake'

    An alert opened while the table's vision was degraded ends ``(confidence low)``.
    """
    box = f" box {alert.box}" if alert.box is not None else ""
    rules = alert.rule + (f"/{alert.rule_1998}" if alert.rule_1998 else "")
    seq = "-" if alert.seq is None else alert.seq
    return (
        f"#{seq} {alert.table} round {alert.round}{box} {alert.video_time_s:g}s "
        f"{alert.severity.upper()} {alert.kind} ({rules}) {alert.state}: {alert.message} "
        f"-> {alert.action}" + (f" (confidence {alert.confidence})" if alert.confidence else "")
    )
