"""What every part of the report writes with: escaped text, HTML tables, the severity colours
as CSS, and the anchor and first message of each irregularity."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

from pipeline.alerts import Alert
from vision.draw import BGR
from vision.draw import SEVERITY_COLOURS as SEVERITY_BGR

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


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _ids(ids: Sequence[object]) -> str:
    return " ".join(str(i) for i in ids) or "-"


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
