"""The review report: one self-contained HTML page an investigator opens from disk.

:func:`render_report` turns a review's facts (:class:`RunInfo`), its table events and its
journaled alerts into HTML: the rounds on a timeline (phases, blind and unreadable stretches,
alerts), each round's dice, delivery order and hands, and each irregularity with its snapshot,
rule, action and every alert message it produced (one row per message, ``data-seq`` on it).
No script, no external style sheet, font or image: the snapshots are embedded as data URIs,
so the page can be mailed on its own.

The modules: :mod:`~pipeline.review.report.facts` (the run, the rounds and the blind stretches
gathered from the events), :mod:`~pipeline.review.report.timeline` (the SVG timeline),
:mod:`~pipeline.review.report.rounds` (each round's tables),
:mod:`~pipeline.review.report.irregularities` (each irregularity with its messages and
snapshot), :mod:`~pipeline.review.report.markup` (what they all write with) and
:mod:`~pipeline.review.report.page` (the page, written). The package re-exports the public
names.
"""

from pipeline.review.report.facts import RoundView, RunInfo, Unreadable, blind_intervals, rounds_of
from pipeline.review.report.page import REPORT_FILE, render_report, write_report
from pipeline.review.report.rounds import boxes_in_order
from pipeline.review.report.timeline import timeline_svg

__all__ = [
    "REPORT_FILE",
    "RoundView",
    "RunInfo",
    "Unreadable",
    "blind_intervals",
    "boxes_in_order",
    "render_report",
    "rounds_of",
    "timeline_svg",
    "write_report",
]
