"""``index.html`` of a batch review: every recording in one table (its status, duration, rounds,
irregularities by kind, a link to its ``report.html``), self-contained as the report is (no
script, no external style sheet). Rewritten whole after each recording finishes, by renaming a
finished file over the old one, so the page on disk always tells the truth so far."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from pipeline.review.report import REPORT_FILE
from pipeline.review.report.markup import _e
from pipeline.review.report.page import CSS

if TYPE_CHECKING:
    from pipeline.review.job import Summary

INDEX_FILE = "index.html"
DONE = "done"
DONE_EARLIER = "done earlier"  # reviewed by an earlier run into the same folder
FAILED = "failed"
WAITING = "not reviewed yet"  # waiting for a worker, or being reviewed now
STATUS_CLASS = {DONE: "done", DONE_EARLIER: "done", FAILED: "failed", WAITING: "waiting"}


@dataclass(frozen=True)
class IndexEntry:
    """One recording's row: its folder ``name``, its status and, when done, its summary; when
    failed, why."""

    name: str
    video: str
    status: str
    summary: Summary | None = None
    reason: str = ""


def _irregularities(summary: Summary) -> str:
    if not summary.irregularities:
        return "none"
    return "<br>".join(f"{_e(kind)}: {n}" for kind, n in summary.irregularities.items())


def _row(entry: IndexEntry) -> str:
    cls = STATUS_CLASS[entry.status]
    name = _e(entry.name)
    status = f'<span class="status {cls}">{_e(entry.status)}</span>'
    s = entry.summary
    if s is None:
        why = f"<br>{_e(entry.reason)}" if entry.reason else ""
        cells = f"<td>{status}{why}</td>" + '<td class="num">-</td>' * 3 + "<td>-</td><td>-</td>"
    else:
        link = f'<a href="{_e(quote(entry.name))}/{REPORT_FILE}">report</a>'
        notes = [*s.unreadable, *s.warnings]
        note = "".join(f"<br><small>{_e(n)}</small>" for n in notes)
        cells = (
            f"<td>{status}{note}</td><td class='num'>{s.duration_s:.1f}</td>"
            f"<td class='num'>{s.rounds}</td><td class='num'>{sum(s.irregularities.values())}</td>"
            f"<td>{_irregularities(s)}</td><td>{link}</td>"
        )
    return (
        f'<tr class="recording" data-name="{name}" data-status="{_e(cls)}">'
        f"<td><b>{name}</b><br><small>{_e(entry.video)}</small></td>{cells}</tr>"
    )


def _totals(entries: list[IndexEntry]) -> str:
    counts = Counter(STATUS_CLASS[e.status] for e in entries)
    video_s = sum(e.summary.duration_s for e in entries if e.summary is not None)
    kinds: Counter[str] = Counter()
    for e in entries:
        if e.summary is not None:
            kinds.update(e.summary.irregularities)
    by_kind = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) or "none"
    rows = [
        ("recordings", f"{len(entries)}: {counts['done']} done, {counts['failed']} failed, "
         f"{counts['waiting']} not reviewed yet"),
        ("video reviewed", f"{video_s:.1f} s"),
        ("irregularities", by_kind),
    ]  # fmt: skip
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f'<table class="summary">{body}</table>'


def render_index(title: str, entries: list[IndexEntry]) -> str:
    """The index page (HTML text) of a batch whose folder is called ``title``."""
    head = ("recording", "status", "duration s", "rounds", "irregularities", "by kind", "")
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    rows = "".join(_row(e) for e in entries)
    body = (
        f"<header><h1>Pai Gow batch review: {_e(title)}</h1>{_totals(entries)}</header>"
        f'<table class="index"><thead><tr>{th}</tr></thead><tbody>{rows}</tbody></table>'
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Pai Gow batch review: {_e(title)}</title><style>{CSS}{INDEX_CSS}</style>"
        f"</head><body>{body}</body></html>\n"
    )


def write_index(out: Path, entries: list[IndexEntry]) -> Path:
    """Write ``out/index.html`` whole (a finished file renamed over the old one)."""
    path = out / INDEX_FILE
    partial = out / f".{INDEX_FILE}.partial"
    partial.write_text(render_index(out.resolve().name, entries), encoding="utf-8")
    os.replace(partial, path)
    return path


INDEX_CSS = """
table.index{width:100%}td.num{text-align:right}
.status{border-radius:3px;padding:0 .4em;white-space:nowrap}
.status.done{background:#e3f4e6;color:#1e6b30}.status.failed{background:#fdecea;color:#922}
.status.waiting{background:#eee;color:#555}
"""
