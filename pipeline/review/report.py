"""The review report: one self-contained HTML page an investigator opens from disk.

:func:`render_report` turns a review's facts (:class:`RunInfo`), its table events and its
journaled alerts into HTML: the rounds on a timeline (phases, blind and unreadable stretches,
alerts), each round's dice, delivery order and hands, and each irregularity with its snapshot,
rule, action and every alert message it produced (one row per message, ``data-seq`` on it).
No script, no external style sheet, font or image: the snapshots are embedded as data URIs,
so the page can be mailed on its own.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from paigow.dice import delivery_order
from pipeline.alerts import Alert, AlertState
from pipeline.round.events import (
    BoxSettled,
    CameraLost,
    CameraRestored,
    DeliveryDone,
    DiceRead,
    GroupDelivered,
    HandExposed,
    HandSet,
    Phase,
    PhaseChanged,
    RoundEnded,
    TableEvent,
    TileExposed,
    describe,
)
from vision.draw import BGR
from vision.draw import SEVERITY_COLOURS as SEVERITY_BGR

REPORT_FILE = "report.html"
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
LIGHT_LUMA = 128  # Rec. 601 luma (0-255) above which a colour takes dark text, not white


def _hex(bgr: BGR) -> str:
    """The CSS ``#rrggbb`` of an OpenCV BGR colour.

    >>> _hex((40, 40, 220))
    '#dc2828'
    """
    b, g, r = bgr
    return f"#{r:02x}{g:02x}{b:02x}"


def _ink(bgr: BGR) -> str:
    """A text colour readable on ``bgr``: dark on light colours (the yellows), white on dark.

    >>> _ink((40, 40, 220)), _ink((0, 215, 255))
    ('#fff', '#222')
    """
    b, g, r = bgr
    return "#222" if 0.299 * r + 0.587 * g + 0.114 * b > LIGHT_LUMA else "#fff"


# the annotated video's severity palette, as CSS colours, and the text colour each takes
SEVERITY_COLOURS = {severity: _hex(bgr) for severity, bgr in SEVERITY_BGR.items()}
SEVERITY_INK = {severity: _ink(bgr) for severity, bgr in SEVERITY_BGR.items()}


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A stretch of the video that could not be decoded."""

    start_s: float
    end_s: float
    reason: str


@dataclass(frozen=True)
class RunInfo:
    """Facts of one review run."""

    video: str
    table: str
    layout: str  # where the layout came from
    fps: float
    duration_s: float
    size_wh: tuple[int, int]
    frames_processed: int
    stride: int
    wall_s: float
    read_until_s: float  # video time of the last frame read
    unreadable: tuple[Unreadable, ...] = ()


@dataclass
class RoundView:
    """What the report shows of one round, gathered from its events."""

    index: int
    start_s: float
    end_s: float = 0.0
    phases: list[tuple[Phase, float]] = field(default_factory=list)
    dice: list[DiceRead] = field(default_factory=list)
    groups: list[GroupDelivered] = field(default_factory=list)
    delivery: DeliveryDone | None = None
    hands: dict[int, HandSet] = field(default_factory=dict)
    exposed: dict[int, HandExposed] = field(default_factory=dict)
    tiles: list[TileExposed] = field(default_factory=list)
    settled: dict[int, BoxSettled] = field(default_factory=dict)
    ended: RoundEnded | None = None


def rounds_of(events: Iterable[TableEvent], end_s: float) -> list[RoundView]:
    """Events (in the order revealed) grouped by round; a round lasts until the next begins."""
    rounds: list[RoundView] = [RoundView(0, 0.0)]
    for event in events:
        current = rounds[-1]
        match event:
            case PhaseChanged(round_index=n, after=phase, time_s=t):
                if n != current.index:
                    current = RoundView(n, t)
                    rounds.append(current)
                current.phases.append((phase, t))
            case DiceRead():
                current.dice.append(event)
            case GroupDelivered():
                current.groups.append(event)
            case DeliveryDone():
                current.delivery = event
            case HandSet(box=box):
                current.hands[box] = event
            case HandExposed(box=box):
                current.exposed[box] = event
            case TileExposed():
                current.tiles.append(event)
            case BoxSettled(box=box):
                current.settled[box] = event
            case RoundEnded():
                current.ended = event
    if len(rounds) > 1 and not rounds[0].phases and not rounds[0].dice:
        rounds.pop(0)  # nothing happened before the first round began
    for this, after in zip(rounds, [*rounds[1:], None], strict=True):
        this.end_s = after.start_s if after else end_s
    return rounds


def blind_intervals(events: Iterable[TableEvent], end_s: float) -> list[tuple[float, float, str]]:
    """``(start_s, end_s, reason)`` of each stretch the camera was lost (CameraLost to
    CameraRestored, or to the end)."""
    out, lost = [], None
    for event in events:
        match event:
            case CameraLost() if lost is None:
                lost = event
            case CameraRestored(time_s=t) if lost is not None:
                out.append((lost.time_s, t, lost.reason))
                lost = None
    if lost is not None:
        out.append((lost.time_s, end_s, lost.reason))
    return out


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _ids(ids: Sequence[object]) -> str:
    return " ".join(str(i) for i in ids) or "-"


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


def _anchor(alert: Alert) -> str:
    return f"{alert.kind}-r{alert.round}-b{alert.box}"


def _first_messages(alerts: list[Alert]) -> list[Alert]:
    seen: dict[tuple, Alert] = {}
    for alert in alerts:
        seen.setdefault(alert.key, alert)
    return list(seen.values())


def _table(head: Sequence[str], rows: Iterable[Sequence[object]], cls: str = "") -> str:
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def _dice_html(rnd: RoundView) -> str:
    if not rnd.dice:
        return "<p>No dice read.</p>"
    rows = [
        (
            f"{d.time_s:.2f}",
            " ".join("?" if v is None else str(v) for v in d.values),
            d.total if d.total is not None else "-",
            d.first_box or "-",
            {True: "yes", False: "NO", None: "unread"}[d.flat],
        )
        for d in rnd.dice
    ]
    return _table(("time s", "dice", "total", "first box", "flat"), rows)


def _delivery_html(rnd: RoundView) -> str:
    if not rnd.groups:
        return "<p>No delivery seen.</p>"
    # a stack set down shows its top tile only: the counts are those taken when it was done
    final = (
        dict(zip(rnd.delivery.boxes, rnd.delivery.tile_counts, strict=True)) if rnd.delivery else {}
    )
    rows = [
        (
            g.order_index + 1,
            g.box,
            final.get(g.box, g.tile_count),
            _ids(g.track_ids),
            f"{g.time_s:.2f}",
            "seen" if g.order_seen else "assumed",
        )
        for g in rnd.groups
    ]
    text = _table(("#", "box", "tiles", "track ids", "time s", "order"), rows)
    done = rnd.delivery
    if done is None:
        return text + "<p>Delivery not completed.</p>"
    served = boxes_in_order(done.boxes)
    order = " &rarr; ".join(str(b) for b in served)
    text += f'<p class="order">Boxes served in order: <b>{order}</b>'
    if done.first_box is not None:
        expected = delivery_order(done.first_box)
        ok = served == expected[: len(served)]
        mark = "matches" if ok else "DIFFERS FROM"
        text += f" ({mark} the dice's order {' '.join(map(str, expected))})"
    if len(served) < len(done.boxes):
        text += f"; {len(done.boxes)} groups in all, some boxes got more than one"
    return text + "</p>"


def boxes_in_order(boxes: Sequence[int]) -> list[int]:
    """The boxes of a delivery in the order each was first served (a box whose tiles came in
    several groups counts once).

    >>> boxes_in_order((4, 5, 6, 7, 8, 1, 2, 3, 3))
    [4, 5, 6, 7, 8, 1, 2, 3]
    """
    return list(dict.fromkeys(boxes))


def _faces(faces: Sequence[str | None]) -> str:
    return " ".join(f or "?" for f in faces)


def _hands_html(rnd: RoundView) -> str:
    boxes = sorted({*rnd.hands, *rnd.exposed, *rnd.settled, *(g.box for g in rnd.groups)})
    if not boxes:
        return "<p>No hands seen.</p>"
    delivered: dict[int, tuple[int, ...]] = {}
    for g in rnd.groups:
        delivered[g.box] = delivered.get(g.box, ()) + g.track_ids
    rows = []
    for box in boxes:
        hand, shown, settled = rnd.hands.get(box), rnd.exposed.get(box), rnd.settled.get(box)
        who = "bank" if shown is not None and shown.bank else ""
        rows.append(
            (
                f"{box} {who}".strip(),
                _ids(delivered.get(box, ())),
                f"{_ids(hand.high)} / {_ids(hand.low)}" if hand else "-",
                f"{_faces(shown.high_faces)} / {_faces(shown.low_faces)}" if shown else "-",
                settled.outcome if settled else "-",
            )
        )
    head = ("box", "delivered (track ids)", "set high / low", "shown high / low", "outcome")
    return _table(head, rows)


def _round_html(rnd: RoundView) -> str:
    phases = ", ".join(f"{p} {t:.1f}s" for p, t in rnd.phases) or "-"
    exposures = ""
    if rnd.tiles:
        rows = [
            (f"{t.time_s:.2f}", t.track_id, t.face or "?", t.zone or "-", t.phase, t.box or "-")
            for t in rnd.tiles
        ]
        exposures = "<details><summary>Tiles turned face up ({})</summary>{}</details>".format(
            len(rnd.tiles), _table(("time s", "track", "face", "zone", "phase", "box"), rows)
        )
    return (
        f'<section class="round" id="round-{rnd.index}"><h3>Round {rnd.index} '
        f"<small>{rnd.start_s:.1f}-{rnd.end_s:.1f} s{_incomplete(rnd)}</small></h3>"
        f'<p class="phases">Phases: {_e(phases)}</p>'
        f"<h4>Dice</h4>{_dice_html(rnd)}<h4>Delivery</h4>{_delivery_html(rnd)}"
        f"<h4>Hands</h4>{_hands_html(rnd)}{exposures}</section>"
    )


def _incomplete(rnd: RoundView) -> str:
    if rnd.ended is None or rnd.ended.complete:
        return ""
    return f", incomplete: ended at {_e(rnd.ended.phase)}"


def _snapshot_html(alert: Alert, out_dir: Path) -> str:
    rel = alert.evidence.get("snapshot")
    path = out_dir / rel if isinstance(rel, str) else None
    if path is None or not path.is_file():
        return '<p class="nosnap">No snapshot.</p>'
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    frame = alert.evidence.get("snapshot_frame", alert.evidence.get("started_frame"))
    return (
        f'<figure><a href="{_e(rel)}"><img alt="snapshot of {_e(alert.kind)}" '
        f'src="data:image/jpeg;base64,{data}"></a>'
        f"<figcaption>{_e(rel)} (frame {_e(frame)})</figcaption></figure>"
    )


def _irregularity_html(messages: list[Alert], out_dir: Path) -> str:
    first, last = messages[0], messages[-1]
    colour = SEVERITY_COLOURS.get(first.severity, "#888")
    ink = SEVERITY_INK.get(first.severity, "#fff")
    box = f", box {first.box}" if first.box is not None else ""
    rules = first.rule + (f" (1998: {first.rule_1998})" if first.rule_1998 else "")
    started = last.evidence.get("started_s", first.video_time_s)
    rows = "".join(
        f'<tr class="alert" data-seq="{_e(a.seq)}"><td>#{_e(a.seq)}</td><td>{_e(a.state)}</td>'
        f"<td>{a.video_time_s:.2f}</td><td>{_e(a.message)}</td></tr>"
        for a in messages
    )
    evidence = json.dumps(dict(last.evidence), indent=1, ensure_ascii=False)
    return (
        f'<article class="irregularity" id="irr-{_e(_anchor(first))}" '
        f'style="border-left-color:{colour}">'
        f'<h3><span class="sev" style="background:{colour};color:{ink}">'
        f"{_e(first.severity)}</span> "
        f"{_e(first.kind)} <small>round {first.round}{box}</small></h3>"
        f'<div class="irr-body"><div class="irr-text">'
        f"<p><b>Rule</b> {_e(rules)}<br><b>Action</b> {_e(first.action)}<br>"
        f"<b>Began</b> {_e(started)} s &middot; <b>Raised</b> {first.video_time_s:.2f} s</p>"
        f'<table class="messages"><thead><tr><th>seq</th><th>state</th><th>time s</th>'
        f"<th>message</th></tr></thead><tbody>{rows}</tbody></table>"
        f"<details><summary>Evidence</summary><pre>{_e(evidence)}</pre></details></div>"
        f"{_snapshot_html(last, out_dir)}</div></article>"
    )


def _alerts_html(alerts: list[Alert], out_dir: Path) -> str:
    if not alerts:
        return "<p>No alerts.</p>"
    groups: dict[tuple, list[Alert]] = {}
    for alert in alerts:
        groups.setdefault(alert.key, []).append(alert)
    return "".join(_irregularity_html(msgs, out_dir) for msgs in groups.values())


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
