"""The bus's messages, schema 1, in one place. Plain UTF-8 JSON, never pickle.

PUB socket, multipart ``[topic, payload]``:

- ``alert.<table>.<kind>``: one alert (:func:`pipeline.alerts.to_wire`);
- ``hb.<table>``: a heartbeat ``{"schema": 1, "table": T, "last_seq": N, "wall_time": ...}``.

Replay endpoint (ROUTER; a client sends one frame, REQ style): the request
``{"table": T, "from_seq": N, "limit": M}`` (``limit`` optional) is answered with
``{"alerts": [...], "last_seq": L}``, ``L`` being the table's last journaled number, or with
``{"error": "..."}``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pipeline.alerts import SCHEMA, Alert, from_dict, to_dict, utc_now

ALERT_PREFIX = b"alert."
HEARTBEAT_PREFIX = b"hb."
_TABLE = re.compile(r"[A-Za-z0-9_-]+")
_REQUEST_FIELDS = {"table", "from_seq", "limit"}


def check_table(table: str) -> str:
    """``table`` if it is a usable table name (it goes into topics), else ValueError."""
    if not isinstance(table, str) or not _TABLE.fullmatch(table):
        raise ValueError(f"table name {table!r}: use letters, digits, '_' and '-'")
    return table


def json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _json_object(payload: bytes, what: str) -> dict[str, Any]:
    try:
        obj = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"{what} is not UTF-8 JSON") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{what} is not a JSON object")
    return obj


def _count(obj: dict[str, Any], name: str, minimum: int) -> int:
    value = obj.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name!r} must be an integer >= {minimum}, not {value!r}")
    return value


def alert_topic(alert: Alert) -> bytes:
    return ALERT_PREFIX + f"{alert.table}.{alert.kind}".encode()


def topic_prefixes(table: str | None) -> tuple[bytes, bytes]:
    """SUB filters for one table's alerts and heartbeats, or every table's (None).

    ``hb.T1`` also matches ``hb.T10``: a subscriber checks the table in the payload.
    """
    if table is None:
        return ALERT_PREFIX, HEARTBEAT_PREFIX
    return ALERT_PREFIX + f"{table}.".encode(), HEARTBEAT_PREFIX + table.encode()


@dataclass(frozen=True, slots=True)
class Heartbeat:
    table: str
    last_seq: int
    wall_time: str


def heartbeat_frames(table: str, last_seq: int) -> list[bytes]:
    """The multipart heartbeat of ``table``, stamped now."""
    body = {"schema": SCHEMA, "table": table, "last_seq": last_seq, "wall_time": utc_now()}
    return [HEARTBEAT_PREFIX + table.encode(), json_bytes(body)]


def parse_heartbeat(payload: bytes) -> Heartbeat:
    obj = _json_object(payload, "heartbeat")
    if obj.get("schema") != SCHEMA:
        raise ValueError(f"heartbeat schema {obj.get('schema')!r}, expected {SCHEMA}")
    return Heartbeat(
        check_table(obj.get("table")), _count(obj, "last_seq", 0), str(obj.get("wall_time"))
    )


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


def encode_reply(reply: ReplayReply) -> bytes:
    return json_bytes({"alerts": [to_dict(a) for a in reply.alerts], "last_seq": reply.last_seq})


def encode_error(message: str) -> bytes:
    return json_bytes({"error": message})


def parse_reply(payload: bytes) -> ReplayReply:
    """Parse a replay reply; ValueError for an error reply or a malformed one."""
    obj = _json_object(payload, "replay reply")
    if "error" in obj:
        raise ValueError(f"replay endpoint answered: {obj['error']}")
    alerts = obj.get("alerts")
    if not isinstance(alerts, list):
        raise ValueError("replay reply lacks its 'alerts' list")
    return ReplayReply([from_dict(a) for a in alerts], _count(obj, "last_seq", 0))
