"""The report's alerts: each irregularity with its rule, action, every alert message it
produced and its snapshot, embedded as a data URI."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from pipeline.alerts import Alert
from pipeline.review.report.markup import SEVERITY_COLOURS, SEVERITY_INK, _anchor, _e


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
