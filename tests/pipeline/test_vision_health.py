"""Vision health on hand-made sights: impossible ones that last degrade the table, glitches do
not, sane ones that last restore it; alerts opened while degraded say confidence low."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.alerts import AlertState
from pipeline.layout import load_default_layout
from pipeline.live.vision_health import VisionHealth, VisionHealthConfig, impossible_sights
from pipeline.round.events import (
    Phase,
    RoundEnded,
    TableEvent,
    TableState,
    VisionDegraded,
    VisionRestored,
    WagerChanged,
    describe,
)
from pipeline.rules import RulesChecker
from pipeline.runner import FrameResult, TablePipeline
from vision.types import DIE, TILE_DOWN, TILE_UP, Detections, Frame, Track

FPS = 25
WALL = "2026-01-01T00:00:00.000Z"
CONFIG = VisionHealthConfig(enter_s=1.0, leave_s=2.0)


def tile(tid: int, frame: int, zone: str = "work_area") -> Track:
    return Track(tid, (0.0, 0.0, 10.0, 20.0), TILE_DOWN, False, None, None, zone, 10, frame)


def die(tid: int, frame: int, zone: str = "dice_area") -> Track:
    return Track(tid, (0.0, 0.0, 5.0, 5.0), DIE, None, None, 3, zone, 10, frame)


def table(frame: int, tiles: int = 32, dice: int = 3, off_table: int = 0) -> list[Track]:
    """One frame's sights: ``tiles`` tiles in the work area (``off_table`` of them off the
    table), ``dice`` dice in the dice area, all seen now."""
    out = [tile(i, frame, "off_table" if i < off_table else "work_area") for i in range(tiles)]
    return out + [die(100 + i, frame) for i in range(dice)]


def run(health: VisionHealth, sights, start: int = 0) -> list[TableEvent]:
    """Feed one frame per entry of ``sights`` (each a function of the frame index)."""
    events: list[TableEvent] = []
    for frame, sight in enumerate(sights, start):
        events += health.update(sight(frame), frame, frame / FPS)
    return events


def seconds(s: float, **sight) -> list:
    return [lambda f: table(f, **sight)] * round(s * FPS)


def test_a_sane_table_stays_healthy():
    health = VisionHealth(CONFIG)
    assert run(health, seconds(3.0)) == [] and health.degraded is None


def test_impossible_sights_degrade_after_enter_s_dated_to_their_start():
    health = VisionHealth(CONFIG)
    events = run(health, seconds(1.0) + seconds(0.96, dice=5))
    assert events == []  # 0.96 s of it: not yet
    events = run(health, seconds(0.2, dice=5), start=len(seconds(1.96)))
    assert events == [VisionDegraded(25, 1.0, "5 dice in the dice area (at most 3)")]
    assert health.degraded == events[0]
    assert describe(events[0]) == "vision degraded (5 dice in the dice area (at most 3))"


def test_glitches_never_degrade_the_table():
    health = VisionHealth(CONFIG)
    flicker = [lambda f: table(f, dice=5 if f % 3 else 3)] * (4 * FPS)  # 2 bad frames in 3
    assert run(health, seconds(0.04, tiles=33) + seconds(1.0) + flicker) == []


def test_sane_sights_restore_after_leave_s_dated_to_their_start():
    health = VisionHealth(CONFIG)
    sights = seconds(1.2, tiles=34) + seconds(1.0) + seconds(0.2, tiles=34) + seconds(2.04)
    events = run(health, sights)
    assert [type(e) for e in events] == [VisionDegraded, VisionRestored]
    assert events[0].frame == 0 and events[0].reason == "34 tiles seen (at most 32)"
    assert events[1] == VisionRestored(60, 2.4, 2.4)  # the 1 s of sane sights did not count
    assert health.degraded is None
    assert describe(events[1]) == "vision restored after 2.4 s degraded"


@pytest.mark.parametrize(
    ("sight", "reason"),
    [
        (lambda f: table(f, tiles=33), "33 tiles seen (at most 32)"),
        (lambda f: table(f, dice=4), "4 dice in the dice area (at most 3)"),
        (lambda f: table(f, off_table=2), "2 tiles seen off the table"),
        (
            lambda f: table(f, tiles=33, dice=4),
            "33 tiles seen (at most 32); 4 dice in the dice area (at most 3)",
        ),
    ],
    ids=["33-tiles", "4-dice", "tiles-off-table", "both"],
)
def test_each_impossible_sight_is_named(sight, reason):
    events = run(VisionHealth(CONFIG), [sight] * FPS * 2)
    assert [e.reason for e in events] == [reason]


def test_a_face_read_on_more_tiles_than_the_set_holds_is_impossible():
    """Tile backs whose colour reads as pips: 4-4 (the set holds two) on five tiles at once."""
    frame = 7
    sights = table(frame, tiles=27) + [
        Track(200 + k, (0.0, 0.0, 10.0, 20.0), TILE_UP, True, "4-4", None, "box_2", 10, frame)
        for k in range(5)
    ]
    reasons = impossible_sights(sights, frame, VisionHealthConfig())
    assert reasons == ["5 tiles read 4-4 face up (the set holds 2)"]
    assert impossible_sights(sights[:-3], frame, VisionHealthConfig()) == []  # two: possible


def test_what_is_possible_or_unseen_is_no_reason():
    cfg = VisionHealthConfig()
    frame = 7
    assert impossible_sights(table(frame, tiles=32, dice=3), frame, cfg) == []
    coasting = [*table(frame), tile(50, frame - 1), die(150, frame - 1)]  # not seen now
    assert impossible_sights(coasting, frame, cfg) == []
    elsewhere = table(frame, dice=0) + [die(100 + i, frame, "work_area") for i in range(5)]
    assert impossible_sights(elsewhere, frame, cfg) == []  # dice counted in the dice area
    unoutlined = table(frame, off_table=3)  # no `table` area: off_table is bare felt
    assert impossible_sights(unoutlined, frame, cfg, table_outlined=False) == []


def test_a_33rd_tile_the_tracker_dropped_is_seen_in_the_detections():
    detections = Detections.from_arrays(
        np.zeros((33, 4), np.float32), np.full(33, TILE_DOWN), np.ones(33, np.float32)
    )
    health = VisionHealth(CONFIG)
    events = []
    for f in range(2 * FPS):
        events += health.update(table(f), f, f / FPS, detections)
    assert [e.reason for e in events] == ["33 tiles seen (at most 32)"]


def test_reset_forgets():
    health = VisionHealth(CONFIG)
    run(health, seconds(2.0, dice=5))
    health.reset()
    assert health.degraded is None
    assert run(health, seconds(0.5, dice=5)) == []


# --- the rules checker: alerts opened while degraded ----------------------------------------


def feed(checker: RulesChecker, frame: int, *events: TableEvent):
    state = TableState(frame, frame / FPS, 0, Phase.WAGERS, 1)
    return checker.feed(state, list(events), WALL)


def late_wager(frame: int, box: int) -> WagerChanged:
    return WagerChanged(frame, frame / FPS, box, 1, 2, True, Phase.WAGERS)


def test_an_alert_opened_while_degraded_says_confidence_low_to_its_close_and_later_ones_not():
    checker = RulesChecker("T1")
    assert feed(checker, 0, VisionDegraded(0, 0.0, "5 dice in the dice area (at most 3)")) == []
    (opened,) = feed(checker, 1, late_wager(1, 5))
    feed(checker, 2, VisionRestored(2, 0.08, 0.08))  # recovered while the alert is open
    (later,) = feed(checker, 3, late_wager(3, 6))
    closed = checker.finish(WALL)
    assert (opened.state, opened.confidence) == (AlertState.OPEN, "low")
    assert (later.state, later.confidence) == (AlertState.OPEN, None)
    assert sorted((a.box, a.state, a.confidence) for a in closed) == [
        (5, AlertState.CLOSE, "low"),
        (6, AlertState.CLOSE, None),
    ]


# --- the pipeline wires it in ----------------------------------------------------------------


def test_the_pipeline_feeds_vision_events_to_the_rules_and_returns_them():
    layout = load_default_layout()
    pipeline = TablePipeline(
        "T1", layout, detector=lambda frame: Detections(),
        reader=lambda image, detections: detections,
    )  # fmt: skip
    assert pipeline.vision_health.table_outlined  # the default layout outlines the table
    picture = np.zeros((0, 0, 3), np.uint8)
    events = []
    for f in range(2 * FPS):
        frame = Frame("T1", f, f / FPS, picture)
        seen = FrameResult(frame, Detections(), table(f, dice=5), None, [], [])
        events += pipeline.rejudge(seen, WALL).events
    assert [e for e in events if isinstance(e, VisionDegraded)] == [
        VisionDegraded(0, 0.0, "5 dice in the dice area (at most 3)")
    ]


def test_a_fault_in_the_round_gives_the_round_up_and_the_table_is_watched_on():
    pipeline = TablePipeline(
        "T1", load_default_layout(), detector=lambda frame: Detections(),
        reader=lambda image, detections: detections,
    )  # fmt: skip
    update = pipeline.round.update

    def faulty(tracks, frame, *places):
        if frame.index == 3:
            return {}[frame.index]  # a bug of ours, met on one frame
        return update(tracks, frame, *places)

    pipeline.round.update = faulty
    picture = np.zeros((0, 0, 3), np.uint8)
    results = []
    for f in range(6):
        seen = FrameResult(Frame("T1", f, f / FPS, picture), Detections(), table(f), None, [], [])
        results.append(pipeline.rejudge(seen, WALL))
    (ended,) = [e for r in results for e in r.events if isinstance(e, RoundEnded)]
    assert (ended.frame, ended.complete) == (3, False)
    assert ended.fault.startswith("round reconstruction failed (KeyError: 3 at ")
    assert [r.state.frame for r in results] == [0, 1, 2, 3, 4, 5]  # every frame judged
