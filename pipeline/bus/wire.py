"""The bus's messages, schema 1, in one place. Plain UTF-8 JSON, never pickle.

PUB socket, multipart ``[topic, payload]``:

- ``alert.<table>.<kind>``: one alert (:func:`pipeline.alerts.to_wire`; its optional
  ``confidence`` is ``"low"`` for an alert opened while the table's vision was degraded);
- ``hb.<table>``: a heartbeat ``{"schema": 1, "table": T, "last_seq": N, "wall_time": ...,
  "journal": ID, "status": {...}}``; ``status`` (optional) is what the table's monitor says of
  itself, flat: ``fps`` (frames processed per second, lately), ``camera`` (``ok`` or ``lost``),
  ``degraded`` (its vision judged unreliable), ``phase`` (the round's); a console shows it as
  the table's health. Other keys are kept if they are short scalars;
- ``sys.<table>``: a system notice ``{"schema": 1, "table": T, "notice": NAME, "message": ...,
  "wall_time": ..., "journal": ID}`` (``journal_unwritable``, ``journal_recovered``,
  ``bus_restarted``; from the monitor, ``vision_degraded`` and ``vision_restored``; from a
  monitor that ``paigow fleet`` started again, ``monitor_restarted``). Notices
  are best effort: not journaled, not replayed; an unwritable journal is repeated while it
  lasts.

``journal`` (optional everywhere, added in schema 1 without a version change) is the id of the
journal that numbers the table's alerts; a new id means the numbering started again at 1.

Replay endpoint (ROUTER; a client sends one frame, REQ style): the request
``{"table": T, "from_seq": N, "limit": M}`` (``limit`` optional; both within SQLite's integer
range) is answered with ``{"alerts": [...], "last_seq": L, "journal": ID}``, ``L`` being the
table's last journaled number, or with ``{"error": "..."}``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.alerts import SCHEMA, Alert, from_dict, to_dict, utc_now

ALERT_PREFIX = b"alert."
HEARTBEAT_PREFIX = b"hb."
NOTICE_PREFIX = b"sys."
_TABLE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_JOURNAL = re.compile(r"[0-9a-f]{1,64}")
_REQUEST_FIELDS = {"table", "from_seq", "limit"}
MAX_SEQ = 2**63 - 1
"""The largest sequence number (SQLite's largest integer); larger numbers are malformed."""
MAX_STATUS_KEYS = 16
"""Most names a heartbeat's ``status`` keeps."""
MAX_DEPTH = 8
"""Deepest JSON nesting parsed from a peer; deeper payloads are refused unparsed (a request is
flat, a notice or heartbeat too)."""


def check_table(table: str) -> str:
    """``table`` if it is a usable table name (it goes into topics), else ValueError."""
    if not isinstance(table, str) or not _TABLE.fullmatch(table):
        raise ValueError(f"table name {table!r}: use letters, digits, '_' and '-'")
    return table


def json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def nesting_depth(payload: bytes) -> int:
    """The deepest bracket nesting of a JSON text, brackets inside strings ignored; a cheap
    scan made before parsing, so no peer can make the parser recurse.

    >>> nesting_depth(b'{"a": [1, "[[["]}'), nesting_depth(b"[" * 4000)
    (2, 4000)
    """
    depth = deepest = 0
    in_string = escaped = False
    for byte in payload:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def _json_object(payload: bytes, what: str, max_depth: int | None = MAX_DEPTH) -> dict[str, Any]:
    """Parse a JSON object; scan its nesting first unless ``max_depth`` is None (large trusted
    payloads: too deep a one is still a ValueError, from the parser's RecursionError)."""
    if max_depth is not None and nesting_depth(payload) > max_depth:
        raise ValueError(f"{what} is nested deeper than {max_depth}")
    try:
        obj = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ValueError(f"{what} is not UTF-8 JSON") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{what} is not a JSON object")
    return obj


def _count(obj: dict[str, Any], name: str, minimum: int) -> int:
    value = obj.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_SEQ:
        raise ValueError(f"{name!r} must be an integer from {minimum} to {MAX_SEQ}, not {value!r}")
    return value


def _journal_id(obj: dict[str, Any]) -> str | None:
    value = obj.get("journal")
    if value is None:
        return None
    if not isinstance(value, str) or not _JOURNAL.fullmatch(value):
        raise ValueError(f"journal id {value!r:.80} is not a short hex string")
    return value


def alert_topic(alert: Alert) -> bytes:
    return ALERT_PREFIX + f"{alert.table}.{alert.kind}".encode()


def topic_prefixes(table: str | None) -> tuple[bytes, ...]:
    """SUB filters for one table's alerts, heartbeats and notices, or every table's (None).

    ``hb.T1`` also matches ``hb.T10``: a subscriber checks the table in the payload.
    """
    if table is None:
        return ALERT_PREFIX, HEARTBEAT_PREFIX, NOTICE_PREFIX
    return (
        ALERT_PREFIX + f"{table}.".encode(),
        HEARTBEAT_PREFIX + table.encode(),
        NOTICE_PREFIX + table.encode(),
    )


def _schema_1(obj: dict[str, Any], what: str) -> None:
    if obj.get("schema") != SCHEMA:
        raise ValueError(f"{what} schema {obj.get('schema')!r:.40}, expected {SCHEMA}")


@dataclass(frozen=True, slots=True)
class Heartbeat:
    table: str
    last_seq: int
    wall_time: str
    journal: str | None = None
    status: Mapping[str, Any] = field(default_factory=dict)
    """The monitor's word on itself (``fps``, ``camera``, ``degraded``, ``phase``); may be empty."""


def heartbeat_frames(
    table: str,
    last_seq: int,
    journal: str | None = None,
    status: Mapping[str, Any] | None = None,
) -> list[bytes]:
    """The multipart heartbeat of ``table``, stamped now."""
    body: dict[str, Any] = {
        "schema": SCHEMA,
        "table": table,
        "last_seq": last_seq,
        "wall_time": utc_now(),
    }
    if journal is not None:
        body["journal"] = journal
    if status:
        body["status"] = _status(status)
    return [HEARTBEAT_PREFIX + table.encode(), json_bytes(body)]


def _status(obj: Any) -> dict[str, Any]:
    """The flat part of a heartbeat's ``status`` a console can show: at most
    ``MAX_STATUS_KEYS`` names of at most 32 characters whose values are finite numbers,
    booleans, None or strings (cut to 64); anything else is left out, never an error."""
    if not isinstance(obj, Mapping):
        return {}
    out: dict[str, Any] = {}
    for name, value in list(obj.items())[:MAX_STATUS_KEYS]:
        if not isinstance(name, str) or not 0 < len(name) <= 32:
            continue
        if isinstance(value, str):
            out[name] = value[:64]
        elif (
            value is None
            or isinstance(value, bool | int)
            or (isinstance(value, float) and math.isfinite(value))
        ):
            out[name] = value
    return out


def parse_heartbeat(payload: bytes) -> Heartbeat:
    obj = _json_object(payload, "heartbeat")
    _schema_1(obj, "heartbeat")
    return Heartbeat(
        check_table(obj.get("table")),
        _count(obj, "last_seq", 0),
        str(obj.get("wall_time"))[:64],
        _journal_id(obj),
        _status(obj.get("status")),
    )


def check_notice_name(name: str) -> str:
    """``name`` if consoles take it as a notice name, else ValueError."""
    if not isinstance(name, str) or not _TABLE.fullmatch(name):
        raise ValueError(f"notice name {name!r:.80}: use letters, digits, '_' and '-'")
    return name


@dataclass(frozen=True, slots=True)
class Notice:
    """A system notice of one table's monitor: not an alert (no sequence number, not
    journaled), but something the room should know (its journal cannot be written...)."""

    table: str
    notice: str
    message: str
    wall_time: str
    journal: str | None = None


def notice_frames(notice: Notice) -> list[bytes]:
    body = {
        "schema": SCHEMA,
        "table": notice.table,
        "notice": notice.notice,
        "message": notice.message,
        "wall_time": notice.wall_time,
    }
    if notice.journal is not None:
        body["journal"] = notice.journal
    return [NOTICE_PREFIX + notice.table.encode(), json_bytes(body)]


def parse_notice(payload: bytes) -> Notice:
    obj = _json_object(payload, "notice")
    _schema_1(obj, "notice")
    name, message = obj.get("notice"), obj.get("message")
    if not isinstance(name, str) or not _TABLE.fullmatch(name) or not isinstance(message, str):
        raise ValueError("a notice needs a 'notice' name and a 'message' string")
    wall_time = str(obj.get("wall_time"))[:64]
    return Notice(check_table(obj.get("table")), name, message[:1000], wall_time, _journal_id(obj))


@dataclass(frozen=True, slots=True)
class ReplayRequest:
    """Alerts of ``table`` from ``from_seq`` on, at most ``limit`` of them."""

    table: str
    from_seq: int
    limit: int


def encode_request(request: ReplayRequest) -> bytes:
    return json_bytes(
        {"table": request.table, "from_seq": request.from_seq, "limit": request.limit}
    )


def parse_request(payload: bytes, max_limit: int) -> ReplayRequest:
    """Parse a replay request, ``limit`` capped at (and defaulting to) ``max_limit``.

    ValueError, with a line fit for the error reply, for anything malformed.
    """
    obj = _json_object(payload, "request")
    unknown = sorted(set(obj) - _REQUEST_FIELDS)
    if unknown:
        raise ValueError(f"unknown request field(s) {unknown}; use {sorted(_REQUEST_FIELDS)}")
    table = check_table(obj.get("table"))
    limit = _count(obj, "limit", 1) if "limit" in obj else max_limit
    return ReplayRequest(table, _count(obj, "from_seq", 0), min(limit, max_limit))


@dataclass(frozen=True, slots=True)
class ReplayReply:
    alerts: list[Alert]
    last_seq: int
    journal: str | None = None


def encode_reply(reply: ReplayReply) -> bytes:
    body: dict[str, Any] = {
        "alerts": [to_dict(a) for a in reply.alerts],
        "last_seq": reply.last_seq,
    }
    if reply.journal is not None:
        body["journal"] = reply.journal
    return json_bytes(body)


def encode_error(message: str) -> bytes:
    return json_bytes({"error": message})


def parse_reply(payload: bytes) -> ReplayReply:
    """Parse a replay reply; ValueError for an error reply or a malformed one."""
    obj = _json_object(payload, "replay reply", max_depth=None)
    if "error" in obj:
        raise ValueError(f"replay endpoint answered: {str(obj['error'])[:300]}")
    alerts = obj.get("alerts")
    if not isinstance(alerts, list):
        raise ValueError("replay reply lacks its 'alerts' list")
    return ReplayReply([from_dict(a) for a in alerts], _count(obj, "last_seq", 0), _journal_id(obj))
