"""The report page: the summary, the parts in order and the style sheet
(:func:`render_report`), written to ``report.html`` (:func:`write_report`)."""

from __future__ import annotations

from pathlib import Path

from pipeline.alerts import Alert, AlertState
from pipeline.review.report.facts import RoundView, RunInfo, rounds_of
from pipeline.review.report.irregularities import _alerts_html
from pipeline.review.report.markup import _e, _table
from pipeline.review.report.rounds import _round_html
from pipeline.review.report.timeline import _legend, timeline_svg
from pipeline.round.events import TableEvent, describe

REPORT_FILE = "report.html"


def _summary_html(run: RunInfo, rounds: list[RoundView], alerts: list[Alert]) -> str:
    opened = sum(1 for a in alerts if a.state == AlertState.OPEN)
    speed = run.read_until_s / run.wall_s if run.wall_s > 0 else 0.0
    rows = [
        (
            "video",
            f"{run.video} ({run.size_wh[0]}x{run.size_wh[1]}, {run.fps:g} fps, "
            f"{run.duration_s:.2f} s)",
        ),
        ("table / layout", f"{run.table} / {run.layout}"),
        ("frames processed", f"{run.frames_processed} (1 in {run.stride})"),
        ("review time", f"{run.wall_s:.1f} s ({speed:.2f}x real time)"),
        ("rounds", len(rounds)),
        ("alerts", f"{len(alerts)} messages, {opened} irregularities opened"),
    ]
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    warn = "".join(
        f'<p class="unreadable">Unreadable: {g.start_s:.2f}-{g.end_s:.2f} s ({_e(g.reason)}); '
        "the table was not seen there.</p>"
        for g in run.unreadable
    )
    return f'<table class="summary">{body}</table>{warn}'


def _events_html(events: list[TableEvent]) -> str:
    rows = [(f"{e.time_s:.2f}", e.frame, type(e).__name__, describe(e)) for e in events]
    table = _table(("time s", "frame", "type", "event"), rows, "events")
    return f"<details><summary>All {len(events)} events</summary>{table}</details>"


def render_report(
    run: RunInfo, events: list[TableEvent], alerts: list[Alert], out_dir: Path
) -> str:
    """The report page (HTML text); snapshots are read from ``out_dir`` and embedded."""
    rounds = rounds_of(events, run.duration_s)
    name = Path(run.video).name
    body = (
        f"<header><h1>Pai Gow review: {_e(name)}</h1>{_summary_html(run, rounds, alerts)}"
        f"</header><h2>Timeline</h2>{timeline_svg(run, rounds, events, alerts)}{_legend()}"
        f"<h2>Alerts</h2>{_alerts_html(alerts, out_dir)}"
        f"<h2>Rounds</h2>{''.join(_round_html(r) for r in rounds)}"
        f"<h2>Events</h2>{_events_html(events)}"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Pai Gow review: {_e(name)}</title><style>{CSS}</style></head>"
        f"<body>{body}</body></html>\n"
    )


def write_report(
    out_dir: Path, run: RunInfo, events: list[TableEvent], alerts: list[Alert]
) -> Path:
    """Write ``out_dir/report.html``; returns its path."""
    path = out_dir / REPORT_FILE
    path.write_text(render_report(run, events, alerts, out_dir), encoding="utf-8")
    return path


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em auto;
max-width:1100px;padding:0 1em;color:#222;background:#fafafa}
h1{font-size:1.5em;margin:.2em 0 .6em}h2{border-bottom:2px solid #ddd;margin-top:1.6em}
h3 small,h3 + small{color:#777;font-weight:normal}
table{border-collapse:collapse;margin:.4em 0;font-size:.9em;background:#fff}
td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
thead th{background:#f0f0f0;white-space:nowrap}table.summary th{background:#f6f6f6;width:11em}
.unreadable{background:#fdecea;border:1px solid #c0392b;padding:.5em;color:#922}
svg.timeline{width:100%;height:auto;background:#fff;border:1px solid #ddd;font-size:10px}
.legend{font-size:.8em;margin:.3em 0}.legend span{margin-right:1em;white-space:nowrap}
.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:middle}
.irregularity{background:#fff;border:1px solid #ddd;border-left:6px solid;padding:.5em 1em;
margin:1em 0}
.sev{color:#fff;border-radius:3px;padding:0 .4em;font-size:.8em;text-transform:uppercase}
.irr-body{display:flex;gap:1em;align-items:flex-start}.irr-text{flex:1 1 45%;min-width:0}
figure{margin:.2em 0;flex:0 0 52%}figure img{width:100%;border:1px solid #ccc}
figcaption{font-size:.8em;color:#666}
.round{background:#fff;border:1px solid #ddd;padding:.3em 1em;margin:1em 0}
pre{white-space:pre-wrap;font-size:.8em}.order b{font-size:1.1em}
"""
