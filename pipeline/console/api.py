"""The console's JSON API (``/api/...``), which its page uses; all behind the login.

- ``GET /api/me``: the operator, whether there is a login, the filters' choices;
- ``GET /api/wall?table=&kind=&severity=&state=&history=1&before=N``: a page of irregularities,
  newest first (``next``: the ``before`` of the next page, or null);
- ``GET /api/irregularities/ID``: one irregularity: its messages, the round's timeline so far,
  its acknowledgements, its snapshot (a URL, or why not);
- ``POST /api/irregularities/ID/ack`` ``{"note": "..."}``: acknowledge as the session's operator;
- ``GET /api/snapshot/ALERT_ID``: the alert's snapshot JPEG, if under an ``--evidence`` folder;
- ``GET /api/health``: the tables' health; ``GET /api/events``: server-sent events (hub.py);
- ``GET /api/acks?from=ISO&to=ISO`` and ``/api/acks.csv?...``: the acknowledgements of a shift.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from pipeline.alerts import to_dict
from pipeline.console.config import ConsoleConfig
from pipeline.console.feed import Feed
from pipeline.console.hub import CLOSED, Hub
from pipeline.journal.console import (
    WALL_STATES,
    Ack,
    ConsoleStore,
    Irregularity,
    StoredAlert,
    WallQuery,
)
from vision.draw import SEVERITY_COLOURS

NOTE_CHARS = 1000
"""Longest acknowledgement note kept."""
PING_S = 15.0
"""A comment line on an idle event stream this often, so proxies keep it open."""
PALETTE = {name: "#{2:02x}{1:02x}{0:02x}".format(*bgr) for name, bgr in SEVERITY_COLOURS.items()}
"""The one severity palette (vision/draw.py's, BGR there) as CSS colours, for the page."""
SNAPSHOT_KEY = "snapshot"
"""The evidence key naming an alert's snapshot, relative to its run's output folder."""


class Api:
    """The handlers, holding what they read: the store, the feed (health), the hub."""

    def __init__(self, config: ConsoleConfig, store: ConsoleStore, feed: Feed, hub: Hub) -> None:
        self.config = config
        self.store = store
        self.feed = feed
        self.hub = hub

    def routes(self) -> list[Route]:
        return [
            Route("/api/me", self.me),
            Route("/api/wall", self.wall),
            Route("/api/irregularities/{id:int}", self.detail),
            Route("/api/irregularities/{id:int}/ack", self.ack, methods=["POST"]),
            Route("/api/snapshot/{id:int}", self.snapshot),
            Route("/api/health", self.health),
            Route("/api/events", self.events),
            Route("/api/acks", self.acks),
            Route("/api/acks.csv", self.acks_csv),
        ]

    def operator(self, request: Request) -> str:
        if self.config.no_login:
            return self.config.operator_when_no_login
        return str(request.session.get("operator", ""))

    def me(self, request: Request) -> Response:
        return JSONResponse(
            {
                "operator": self.operator(request),
                "login": not self.config.no_login,
                "choices": {**self.store.choices(), "states": list(WALL_STATES)},
                "palette": PALETTE,
                "alerts": self.store.alert_count(),
            }
        )

    def wall(self, request: Request) -> Response:
        params = request.query_params
        try:
            before = int(params["before"]) if params.get("before") else None
            state = params.get("state") or None
            if state is not None and state not in WALL_STATES:
                raise ValueError(f"state {state!r}: use one of {', '.join(WALL_STATES)}")
        except ValueError as exc:
            return _bad(str(exc))
        query = WallQuery(
            table=params.get("table") or None,
            kind=params.get("kind") or None,
            severity=params.get("severity") or None,
            state=state,
            history=params.get("history") == "1",
            before=before,
            limit=self.config.page_size,
        )
        items = self.store.wall(query)
        full = len(items) == query.limit
        return JSONResponse(
            {"items": [asdict(i) for i in items], "next": items[-1].last_id if full else None}
        )

    def detail(self, request: Request) -> Response:
        irregularity = self.store.irregularity(request.path_params["id"])
        if irregularity is None:
            return JSONResponse({"error": "no such irregularity"}, status_code=404)
        messages = self.store.messages(irregularity.id)
        timeline = self.store.timeline(irregularity.table, irregularity.journal, irregularity.round)
        return JSONResponse(
            {
                "irregularity": asdict(irregularity),
                "messages": [_alert_json(m) for m in messages],
                "timeline": [_alert_json(m) for m in timeline],
                "acks": [asdict(a) for a in self.store.acks(irregularity.id)],
                "snapshot": self._snapshot_of(messages),
            }
        )

    def _snapshot_of(self, messages: list[StoredAlert]) -> dict[str, Any] | None:
        """The first message's snapshot: its URL when it is on this machine, else its path."""
        for message in messages:
            path = message.alert.evidence.get(SNAPSHOT_KEY)
            if isinstance(path, str) and path:
                found = self._snapshot_file(path)
                url = f"/api/snapshot/{message.id}" if found else None
                return {"path": path, "url": url, "frame": message.alert.frame}
        return None

    def _snapshot_file(self, relative: str) -> Path | None:
        """The file under one of the ``--evidence`` folders, never outside them."""
        for folder in self.config.evidence_dirs:
            root = folder.resolve()
            candidate = (root / relative).resolve()
            if candidate.is_relative_to(root) and candidate.is_file():
                return candidate
        return None

    def snapshot(self, request: Request) -> Response:
        stored = self.store.alert(request.path_params["id"])
        path = stored.alert.evidence.get(SNAPSHOT_KEY) if stored else None
        found = self._snapshot_file(path) if isinstance(path, str) and path else None
        if found is None:
            return JSONResponse({"error": "snapshot not on this machine"}, status_code=404)
        return FileResponse(found, media_type="image/jpeg")

    async def ack(self, request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            # a form or text/plain post from another site cannot set this type without CORS
            return JSONResponse({"error": "send application/json"}, status_code=415)
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError):
            return _bad("expected a JSON body {'note': '...'}")
        note = body.get("note", "") if isinstance(body, dict) else None
        if not isinstance(note, str):
            return _bad("'note' must be a string")
        irregularity_id = request.path_params["id"]
        try:
            ack = self.store.acknowledge(irregularity_id, self.operator(request), note[:NOTE_CHARS])
        except KeyError:
            return JSONResponse({"error": "no such irregularity"}, status_code=404)
        self.hub.publish({"type": "wall", "ids": [irregularity_id], "count": 1, "ack": True})
        return JSONResponse(asdict(ack))

    def health(self, request: Request) -> Response:
        return JSONResponse(self.feed.health())

    async def events(self, request: Request) -> Response:
        stream = self.hub.open()

        async def send() -> AsyncIterator[dict[str, str]]:
            try:
                yield {"data": json.dumps({"type": "hello"})}
                while True:
                    event = await stream.next()
                    if event is CLOSED:
                        return
                    yield {"data": json.dumps(event)}
            finally:
                self.hub.drop(stream)

        return EventSourceResponse(send(), ping=PING_S)

    def acks(self, request: Request) -> Response:
        try:
            rows = self._shift(request)
        except ValueError as exc:
            return _bad(str(exc))
        return JSONResponse([{**asdict(a), "irregularity": asdict(i)} for a, i in rows])

    def acks_csv(self, request: Request) -> Response:
        try:
            rows = self._shift(request)
        except ValueError as exc:
            return _bad(str(exc))
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["at_utc", "operator", "note", "table", "kind", "severity", "round",
                         "box", "state", "opened_at", "irregularity"])  # fmt: skip
        for ack, i in rows:
            box = "" if i.box is None else i.box
            writer.writerow([ack.at, ack.operator, ack.note, i.table, i.kind, i.severity,
                             i.round, box, i.state, i.opened_at, i.id])  # fmt: skip
        name = f"acks-{request.query_params.get('from', '')[:10] or 'all'}.csv"
        return Response(
            out.getvalue(),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    def _shift(self, request: Request) -> list[tuple[Ack, Irregularity]]:
        params = request.query_params
        start = utc_iso(params.get("from") or "1970-01-01T00:00:00Z", "from")
        end = utc_iso(params.get("to") or "9999-12-31T23:59:59Z", "to")
        return self.store.acks_between(start, end)


def utc_iso(text: str, name: str) -> str:
    """An ISO 8601 time (no zone: UTC) as the store writes times, e.g.
    ``2026-12-02T08:00:00.000Z``; ValueError with one line.

    >>> utc_iso("2026-12-02T09:00+01:00", "from")
    '2026-12-02T08:00:00.000Z'
    """
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "+"))
    except ValueError:
        raise ValueError(f"{name}={text!r:.40} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _alert_json(stored: StoredAlert) -> dict[str, Any]:
    return {**to_dict(stored.alert), "id": stored.id, "irregularity": stored.irregularity}


def _bad(message: str) -> Response:
    return JSONResponse({"error": message}, status_code=400)
