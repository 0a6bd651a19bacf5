"""The report's timeline: an inline SVG of the round phases, the blind and unreadable
stretches and the alerts on a time axis (:func:`timeline_svg`), and its legend."""

from __future__ import annotations

from itertools import pairwise

from pipeline.alerts import Alert
from pipeline.review.report.facts import RoundView, RunInfo, blind_intervals
from pipeline.review.report.markup import SEVERITY_COLOURS, _anchor, _e, _first_messages
from pipeline.round.events import Phase, TableEvent

TIMELINE_WIDTH = 1000  # SVG user units across the whole video
LABEL_WIDTH = 52  # SVG user units left of the time axis, for the row names
TICK_TARGET = 10  # about this many time ticks on the timeline axis
TICK_STEPS_S = (0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800)  # tick spacings to pick from
PHASE_COLOURS = {
    Phase.IDLE: "#d9d9d9",
    Phase.WASH: "#9ecae1",
    Phase.WOODPILE: "#6baed6",
    Phase.WAGERS: "#fdd0a2",
    Phase.DICE: "#fdae6b",
    Phase.DELIVERY: "#74c476",
    Phase.SETTING: "#a1d99b",
    Phase.EXPOSURE: "#bcbddc",
    Phase.SETTLEMENT: "#9e9ac8",
}
ROWS = {"rounds": 2, "camera": 24, "alerts": 42}  # timeline rows: name -> top y


def _x(time_s: float, duration_s: float) -> float:
    return round(LABEL_WIDTH + TIMELINE_WIDTH * time_s / max(duration_s, 1e-9), 2)


def _rect(x0: float, x1: float, y: int, h: int, fill: str, title: str) -> str:
    width = max(x1 - x0, 1.0)
    return (
        f'<rect x="{x0}" y="{y}" width="{width:.2f}" height="{h}" fill="{fill}">'
        f"<title>{_e(title)}</title></rect>"
    )


def _ticks(duration_s: float, y: int) -> list[str]:
    raw = max(duration_s / TICK_TARGET, 1e-3)
    step = min(TICK_STEPS_S, key=lambda s: abs(s - raw))
    out, t = [], 0.0
    while t <= duration_s + 1e-9:
        x = _x(t, duration_s)
        out.append(f'<line x1="{x}" y1="{y - 4}" x2="{x}" y2="{y}" stroke="#555"/>')
        out.append(f'<text x="{x}" y="{y + 11}" text-anchor="middle">{t:g}s</text>')
        t += step
    return out


def timeline_svg(
    run: RunInfo, rounds: list[RoundView], events: list[TableEvent], alerts: list[Alert]
) -> str:
    """An inline SVG: a row of round phases, a row of blind/unreadable stretches, a row of
    alert markers (one per irregularity, at its first message), and a time axis."""
    d = max(run.duration_s, 1e-3)
    top = ROWS  # row name -> top y
    parts = [f'<text x="0" y="{y + 12}">{name}</text>' for name, y in top.items()]
    for rnd in rounds:
        spans = [*rnd.phases, (None, rnd.end_s)]
        for (phase, t0), (_, t1) in pairwise(spans):
            title = f"round {rnd.index}: {phase} {t0:.2f}-{t1:.2f} s"
            parts.append(
                _rect(_x(t0, d), _x(t1, d), top["rounds"], 18, PHASE_COLOURS[phase], title)
            )
        if rnd.phases:
            x, y = _x(rnd.phases[0][1], d) + 3, top["rounds"] + 12
            parts.append(f'<text x="{x}" y="{y}">round {rnd.index}</text>')
    for t0, t1, reason in blind_intervals(events, run.duration_s):
        parts.append(
            _rect(_x(t0, d), _x(t1, d), top["camera"], 14, "#555", f"camera lost ({reason})")
        )
    for gap in run.unreadable:
        title = f"unreadable {gap.start_s:.2f}-{gap.end_s:.2f} s: {gap.reason}"
        parts.append(
            _rect(_x(gap.start_s, d), _x(gap.end_s, d), top["camera"], 14, "#c0392b", title)
        )
    for alert in _first_messages(alerts):
        x = _x(alert.video_time_s, d)
        colour = SEVERITY_COLOURS.get(alert.severity, "#888")
        box = f" box {alert.box}" if alert.box is not None else ""
        parts.append(
            f'<a href="#irr-{_anchor(alert)}"><path d="M{x} {top["alerts"]} l6 14 h-12 z" '
            f'fill="{colour}">'
            f"<title>{_e(f'{alert.video_time_s:g} s {alert.kind}{box}')}</title></path></a>"
        )
    parts += _ticks(d, top["alerts"] + 28)
    return (
        f'<svg class="timeline" viewBox="0 0 {LABEL_WIDTH + TIMELINE_WIDTH + 16} 86">'
        f"{''.join(parts)}</svg>"
    )


def _legend() -> str:
    items = "".join(
        f'<span><i style="background:{c}"></i>{_e(p)}</span>' for p, c in PHASE_COLOURS.items()
    )
    return (
        f'<div class="legend">{items}<span><i style="background:#555"></i>camera lost</span>'
        '<span><i style="background:#c0392b"></i>unreadable</span></div>'
    )
