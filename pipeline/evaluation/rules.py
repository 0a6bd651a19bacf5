"""Alert recall, precision and latency of the rules checker on scenario clips, in oracle mode.

Each clip runs in oracle mode (:func:`run_clip`): ground-truth tracks (:mod:`pipeline.round.oracle`)
through :func:`forget_ambiguous_faces`, the round reconstructor, camera events from the frames
the truth marks blind (:class:`pipeline.live.health.CameraWatch`), and the rules checker. Blind
frames have no picture, so they are not given to the reconstructor; the checker gets their
camera events with the last table state.

Scored (:func:`score_clip`, :func:`summarise`), per injected irregularity: *found* when an
alert of its kind opened in its clip no earlier than ``early_s`` before the irregularity
began; its latency is the alert's video time minus that start. Per kind: recall, alerts
opened, precision (opened alerts that found an injected irregularity), box agreement,
latency. An alert of a kind that an injected one implies (:data:`IMPLIED`) is expected, not
scored. Clean rounds: alerts opened per round. Alerts of kinds not injected in their clip are
listed as unexpected. The end-to-end evaluation scores the live pipeline's alerts the same way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from pipeline.alerts import Alert, AlertState
from pipeline.live.health import CameraWatch
from pipeline.round.events import TableEvent, TableState
from pipeline.round.oracle import SCENARIO_FILE, TRUTH_FILE, OracleFrame, oracle_frames, read_truth
from pipeline.round.phases import RoundReconstructor
from pipeline.rules import RULES, UNOBSERVABLE, RulesChecker, RulesConfig

EARLY_S = 1.0  # an alert may open this long before the injected window starts (event dating)
WASH_ZONE = "work_area"
WALL_TIME = "1970-01-01T00:00:00.000Z"  # fixed wall time: runs are reproducible
IMPLIED = {"laja_exposure_excess": ("exposed_during_stacking", "tile_tracking_risk")}
"""More than two tiles exposed before delivery (10.2) are first one tile exposed (10.1), and
tiles whose faces are known going into the woodpile (10.5)."""


def _ambiguous(now: dict[int, tuple], before: dict[int, tuple]) -> set[int]:
    """Ids in both frames whose position now lies nearer another id's previous position than
    their own (a tracker of identical backs could have swapped them)."""
    common = [i for i in now if i in before]
    if not common or len(before) < 2:
        return set()
    ids = list(before)
    previous = np.array([before[i] for i in ids], dtype=np.float64)  # (M, 2)
    current = np.array([now[i] for i in common], dtype=np.float64)  # (N, 2)
    dist = np.linalg.norm(current[:, None, :] - previous[None, :, :], axis=2)  # (N, M)
    own = np.array([ids.index(i) for i in common])
    rows = np.arange(len(common))
    own_dist = dist[rows, own].copy()
    dist[rows, own] = np.inf
    return {common[k] for k in np.flatnonzero(dist.min(axis=1) < own_dist)}


def forget_ambiguous_faces(
    frames: Iterable[OracleFrame], zone: str = WASH_ZONE
) -> Iterator[OracleFrame]:
    """Oracle frames with the face memory of a tracker that follows face-down tiles by position.

    The oracle keeps every tile's true id, so it would know every face through any wash, and
    the wash-quality figure (``WashEnded.known_faces``) would call every wash weak. A tracker
    that sees only identical backs can keep a face-down tile's face only while the tile lies
    nearest its own previous position: when a face-down tile in the wash zone comes to lie
    nearer another's previous position, the two could have swapped, and its face is forgotten
    until it is seen face up again. Ids are kept, so hands, groups and merges are unchanged.
    """
    forgotten: set[int] = set()
    previous: dict[int, tuple] = {}
    for frame in frames:
        if not frame.blind:
            down = {
                t.track_id: t.centre_xy
                for t in frame.tracks
                if t.kind == "tile" and t.face_up is False and t.zone == zone
            }
            forgotten |= _ambiguous(down, previous)
            forgotten -= {t.track_id for t in frame.tracks if t.face_up}
            previous = down
        tracks = tuple(
            replace(t, face=None) if t.track_id in forgotten else t for t in frame.tracks
        )
        yield replace(frame, tracks=tracks)


@dataclass
class ClipRun:
    """One clip's alerts in oracle mode."""

    name: str
    scenario: dict
    alerts: list[Alert]
    events: int
    seconds: float


def run_clip(clip_dir: Path, config: RulesConfig | None = None, table: str = "T1") -> ClipRun:
    """Oracle mode on one scenario folder: every alert the checker sends, in order."""
    start = time.perf_counter()
    scenario = json.loads((clip_dir / SCENARIO_FILE).read_text(encoding="utf-8"))
    reconstructor, watch = RoundReconstructor(), CameraWatch()
    checker = RulesChecker(table, config)
    alerts: list[Alert] = []
    events = 0
    state: TableState | None = None
    truth = read_truth(clip_dir / TRUTH_FILE)
    frames = forget_ambiguous_faces(oracle_frames(truth, 0.0, scenario.get("chip_values")))
    for frame in frames:
        camera: list[TableEvent] = list(watch.update(frame.index, frame.time_s, frame.blind))
        if frame.blind and state is not None:  # no picture: nothing to reconstruct from
            blind = replace(state, frame=frame.index, time_s=frame.time_s)
            events += len(camera)
            alerts += checker.feed(blind, camera, WALL_TIME)
            continue
        state, new = reconstructor.update(list(frame.tracks), frame)
        events += len(camera) + len(new)
        alerts += checker.feed(state, camera + new, WALL_TIME)
    tail = reconstructor.finish()
    if state is not None:
        alerts += checker.feed(state, tail, WALL_TIME) + checker.finish(WALL_TIME)
    return ClipRun(clip_dir.name, scenario, alerts, events + len(tail), time.perf_counter() - start)


@dataclass
class KindScore:
    injected: int = 0
    found: int = 0
    alerts: int = 0
    correct: int = 0
    implied: int = 0
    box_checked: int = 0
    box_correct: int = 0
    latencies_s: list[float] = field(default_factory=list)

    def summary(self) -> dict:
        lat = self.latencies_s
        return {
            "injected": self.injected,
            "found": self.found,
            "recall": round(self.found / self.injected, 3) if self.injected else None,
            "alerts": self.alerts,
            "correct": self.correct,
            "implied": self.implied,
            "precision": round(self.correct / (self.alerts - self.implied), 3)
            if self.alerts > self.implied
            else None,
            "box_correct": f"{self.box_correct}/{self.box_checked}",
            "latency_mean_s": round(sum(lat) / len(lat), 3) if lat else None,
            "latency_max_s": round(max(lat), 3) if lat else None,
        }


@dataclass
class Score:
    kinds: dict[str, KindScore] = field(default_factory=dict)
    clean_rounds: int = 0
    clean_alerts: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    lifecycle: dict[str, int] = field(default_factory=lambda: {s.value: 0 for s in AlertState})
    unclosed: list[str] = field(default_factory=list)

    def kind(self, name: str) -> KindScore:
        return self.kinds.setdefault(name, KindScore())


def _line(run: ClipRun, alert: Alert) -> str:
    box = "" if alert.box is None else f" box {alert.box}"
    return f"{run.name}: {alert.kind}{box} at {alert.video_time_s:.1f}s"


def _check_lifecycle(run: ClipRun, score: Score) -> None:
    """Count states; every opened alert must close exactly once."""
    open_keys: dict[tuple, Alert] = {}
    for alert in run.alerts:
        score.lifecycle[alert.state.value] += 1
        if alert.state is AlertState.OPEN:
            open_keys[alert.key] = alert
        elif alert.state is AlertState.CLOSE:
            open_keys.pop(alert.key, None)
    score.unclosed += [_line(run, a) for a in open_keys.values()]


def score_clip(run: ClipRun, score: Score, early_s: float = EARLY_S) -> None:
    """Match the clip's opened alerts with its injected irregularities (greedy, earliest)."""
    _check_lifecycle(run, score)
    opened = [a for a in run.alerts if a.state is AlertState.OPEN]
    injected = run.scenario["irregularities"]
    if not run.scenario["injections"]:
        score.clean_rounds += 1
        score.clean_alerts += [_line(run, a) for a in opened]
    used: set[int] = set()
    for irr in injected:
        kind = score.kind(irr["kind"])
        kind.injected += 1
        options = [
            i
            for i, a in enumerate(opened)
            if a.kind == irr["kind"]
            and i not in used
            and a.video_time_s >= irr["start_s"] - early_s
        ]
        if not options:
            continue
        best = min(options, key=lambda i: opened[i].video_time_s)
        used.add(best)
        kind.found += 1
        kind.latencies_s.append(round(opened[best].video_time_s - irr["start_s"], 3))
        if irr["box"] is not None:
            kind.box_checked += 1
            kind.box_correct += opened[best].box == irr["box"]
    implied = {k for irr in injected for k in IMPLIED.get(irr["kind"], ())}
    for i, alert in enumerate(opened):
        kind = score.kind(alert.kind)
        kind.alerts += 1
        if i in used:
            kind.correct += 1
        elif alert.kind in implied:
            kind.implied += 1
        elif run.scenario["injections"]:
            score.unexpected.append(_line(run, alert))


def summarise(score: Score, runs: list[ClipRun]) -> dict:
    kinds = {k: score.kinds[k].summary() for k in sorted(score.kinds)}
    found = sum(k.found for k in score.kinds.values())
    injected = sum(k.injected for k in score.kinds.values())
    latencies = [x for k in score.kinds.values() for x in k.latencies_s]
    return {
        "rounds": len(runs),
        "clean_rounds": score.clean_rounds,
        "recall": round(found / injected, 3) if injected else None,
        "alerts_per_clean_round": round(len(score.clean_alerts) / max(1, score.clean_rounds), 3),
        "clean_alerts": score.clean_alerts,
        "unexpected_alerts": score.unexpected,
        "unclosed_alerts": score.unclosed,
        "latency_max_s": round(max(latencies), 3) if latencies else None,
        "lifecycle": score.lifecycle,
        "per_kind": kinds,
        "rules": sorted(RULES),
        "unobservable": dict(UNOBSERVABLE),
        "oracle_rules_seconds": round(sum(r.seconds for r in runs), 1),
    }


def evaluate(
    clip_dirs: list[Path], config: RulesConfig | None = None, early_s: float = EARLY_S
) -> tuple[dict, list[ClipRun]]:
    """Oracle mode and the rules on each clip, scored: the summary and the runs."""
    runs = [run_clip(d, config) for d in clip_dirs]
    score = Score()
    for run in runs:
        score_clip(run, score, early_s)
    return summarise(score, runs), runs
