"""The review report: self-contained HTML with rounds, delivery order, hands and every alert
message; opened in headless Chromium when one is installed."""

import json
import re
import shutil
import subprocess

import cv2
import numpy as np
import pytest

from pipeline.alerts import AlertState, make_alert, to_dict
from pipeline.review.report import RunInfo, Unreadable, blind_intervals, render_report, rounds_of
from pipeline.round.events import (
    BoxSettled,
    CameraLost,
    CameraRestored,
    DeliveryDone,
    DiceRead,
    GroupDelivered,
    HandExposed,
    HandSet,
    Outcome,
    Phase,
    PhaseChanged,
)

ORDER = (4, 5, 6, 7, 8, 1, 2, 3)
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
CHROMIUM_TIMEOUT_S = 60


def round_events():
    events = [
        PhaseChanged(25, 1.0, Phase.IDLE, Phase.WASH, 0),
        PhaseChanged(250, 10.0, Phase.WAGERS, Phase.DICE, 0),
        DiceRead(260, 10.4, (3, 3, 6), 12, 4, True),
    ]
    for k, box in enumerate(ORDER):
        ids = tuple(range(4 * k, 4 * k + 4))
        events.append(GroupDelivered(300 + 10 * k, 12.0 + 0.4 * k, box, k, 4, ids))
    events += [
        DeliveryDone(390, 15.6, ORDER, (4,) * 8, 4),
        HandSet(420, 16.8, 4, (0, 1), (2, 3), True),
        CameraLost(430, 17.2, "frozen"),
        CameraRestored(455, 18.2, 1.0),
        HandExposed(470, 18.8, 1, True, ("6-6", "1-2"), ("1-4", "4-6"), (20, 21), (22, 23)),
        BoxSettled(480, 19.2, 4, Outcome.WIN),
        PhaseChanged(500, 20.0, Phase.SETTLEMENT, Phase.WASH, 1),
    ]
    return events


def alerts_with_snapshot(out_dir):
    snapshot = "snapshots/T1/house_way_violation_round0_frame470.jpg"
    (out_dir / snapshot).parent.mkdir(parents=True)
    cv2.imwrite(str(out_dir / snapshot), np.full((54, 96, 3), 60, np.uint8))
    common = {"table": "T1", "round": 0, "wall_time": "2026-11-29T18:00:00.000Z"}
    evidence = {"started_frame": 470, "started_s": 18.8, "snapshot": snapshot, "track_ids": [20]}
    alerts = [
        make_alert("dice_not_flat", box=None, video_time_s=9.0, frame=225,
                   message="die 2 is not lying flat", **common),
        make_alert("house_way_violation", box=1, video_time_s=19.0, frame=475,
                   message="bank hand not set the house way", evidence=evidence, **common),
        make_alert("dice_not_flat", state=AlertState.CLOSE, box=None, video_time_s=10.4,
                   frame=260, message="closed: the dice were re-shaken", **common),
    ]  # fmt: skip
    return [a.with_seq(i + 1) for i, a in enumerate(alerts)]


RUN = RunInfo(
    video="/recordings/table1.mp4",
    table="T1",
    layout="the packaged default layout",
    fps=25.0,
    duration_s=24.0,
    size_wh=(1920, 1080),
    frames_processed=600,
    stride=1,
    wall_s=12.0,
    read_until_s=21.0,
    unreadable=(Unreadable(21.0, 24.0, "truncated file"),),
)


@pytest.fixture
def report(tmp_path):
    alerts = alerts_with_snapshot(tmp_path)
    html = render_report(RUN, round_events(), alerts, tmp_path)
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    with open(tmp_path / "alerts.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(to_dict(a)) + "\n" for a in alerts)
    return path


def test_rounds_are_split_at_each_new_round_and_gather_their_facts():
    rounds = rounds_of(round_events(), 24.0)
    assert [(r.index, r.start_s, r.end_s) for r in rounds] == [(0, 0.0, 20.0), (1, 20.0, 24.0)]
    first = rounds[0]
    assert first.delivery.boxes == ORDER and len(first.groups) == 8
    assert first.dice[0].first_box == 4 and first.hands[4].high == (0, 1)
    assert first.exposed[1].bank and first.settled[4].outcome == Outcome.WIN
    assert blind_intervals(round_events(), 24.0) == [(17.2, 18.2, "frozen")]


def test_report_is_self_contained(report):
    html = report.read_text(encoding="utf-8")
    assert "<script" not in html and "<link" not in html and "@import" not in html
    assert not re.search(r"https?://", html)
    assert all(src.startswith("data:image/") for src in re.findall(r'src="([^"]*)"', html))
    for href in re.findall(r'href="([^"]*)"', html):
        assert href.startswith(("#", "snapshots/")), href


def test_report_shows_rounds_delivery_hands_gaps_and_every_alert_message(report):
    html = report.read_text(encoding="utf-8")
    assert "Boxes served in order: <b>4 &rarr; 5 &rarr; 6" in html
    assert "matches the dice's order 4 5 6 7 8 1 2 3" in html
    assert "6-6 1-2 / 1-4 4-6" in html  # the bank's hand as shown
    assert "Unreadable: 21.00-24.00 s (truncated file)" in html
    assert "camera lost (frozen)" in html
    assert re.findall(r'data-seq="(\d+)"', html) == ["1", "3", "2"]  # grouped by irregularity
    assert html.count('class="irregularity"') == 2
    assert "data:image/jpeg;base64," in html and "bank hand not set the house way" in html
    assert "10.8" in html and "re-set" in html  # the rule and the action it calls for


def chromium() -> str | None:
    return next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)


def open_in_chromium(path) -> tuple[str, list[str]]:
    """The DOM Chromium renders for ``path`` and the console lines it logged."""
    browser = chromium()
    if browser is None:
        pytest.skip(f"no Chromium binary ({', '.join(CHROMIUM_NAMES)}) to render the report")
    done = subprocess.run(
        [browser, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr",
         "--v=0", "--dump-dom", path.resolve().as_uri()],
        capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console


def test_report_renders_in_chromium_without_console_errors(report):
    dom, console = open_in_chromium(report)
    assert console == []
    journaled = (report.parent / "alerts.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(re.findall(r'<tr class="alert" data-seq="\d+"', dom)) == len(journaled) == 3
    assert "Pai Gow review: table1.mp4" in dom
