"""The figures of the end-to-end evaluation (:mod:`pipeline.evaluation.e2e`): what the live
pipeline gave on a clip (:class:`Observed`) scored against the scenario's truth, the summary of
all clips, the golden check and the printed report.

Alerts are scored by :mod:`pipeline.evaluation.rules`' code (here with median latencies too;
false alerts per clean round and in all); tile IDF1, MOTA, HOTA outside the wash by
:mod:`pipeline.evaluation.tracking`'s; AP50 and AP50-95 per class by :mod:`vision.metrics` on
the AP frames, against objects at least 30% visible.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import numpy as np

from pipeline.alerts import Alert, AlertState
from pipeline.evaluation.perception import MIN_VISIBILITY
from pipeline.evaluation.rules import ClipRun, Score, score_clip, summarise
from pipeline.evaluation.tracking import evaluate as tracking_scores
from pipeline.evaluation.truth import class_id_of, reported_tiles, truth_tiles
from pipeline.round.events import HandExposed, NoMoreBets, TableEvent, WagerChanged
from pipeline.runner import FrameResult
from vision.geometry import UNION_EPS, iou_matrix
from vision.metrics import DetectionEvaluator
from vision.types import Detections, Track

MEMBERSHIP_IOU = 0.3  # a hand's track lies on the truth tile it overlaps this much
ROW = "{:26s} {:>4} {:>5} {:>6} {:>6} {:>5} {:>7} {:>7}"  # the per-kind table


@dataclass
class Observed:
    """What the pipeline gave on one clip: ``tracks`` by frame index, ``detections`` on the AP
    frames (None where it judged the camera lost)."""

    alerts: list[Alert] = field(default_factory=list)
    events: list[TableEvent] = field(default_factory=list)
    tracks: dict[int, list[Track]] = field(default_factory=dict)
    detections: dict[int, Detections | None] = field(default_factory=dict)
    results: list[FrameResult] = field(default_factory=list)  # kept only to record them
    video_s: float = 0.0  # video read, skipped frames included
    wall_s: float = 0.0  # decode + pipeline


def add_detections(evaluator: DetectionEvaluator, objects: list[dict], det: Detections | None):
    """One frame's boxes against its truth objects at least 30% visible (as the stills are
    labelled); a frame judged blind counts as one without detections."""
    kept = [o for o in objects if o["visibility"] >= MIN_VISIBILITY]
    kept = [o for o in kept if o["xyxy"][0] < o["xyxy"][2] and o["xyxy"][1] < o["xyxy"][3]]
    true_xyxy = np.array([o["xyxy"] for o in kept], np.float64).reshape(-1, 4)
    true_class = np.array([class_id_of(o) for o in kept], np.int64)
    det = Detections() if det is None else det
    evaluator.add(det.xyxy, det.class_id, det.confidence, true_xyxy, true_class)


def hand_membership(plan: dict, seen: Observed, truth: dict[int, dict]) -> dict:
    """What the game needs of identity: for each hand played (the occupied boxes' and the
    bank's; hands dealt to empty boxes are collected unseen), which of its tiles the monitor
    exposes as that box's hand. Each track of a :class:`HandExposed` is matched, on that
    frame, to the truth tile it lies on (IoU >= 0.3); a tile counts once, when it is in the
    hand of the box the truth dealt it to. Share of the tiles of the hands played."""
    played = {*plan["occupied"], plan["chung_box"]}
    owner = {t: g["box"] for g in plan["groups"] if g["box"] in played for t in g["tile_ids"]}
    right: set[int] = set()
    for event in seen.events:
        if not isinstance(event, HandExposed) or event.frame not in truth:
            continue
        tracks = {t.track_id: t for t in seen.tracks.get(event.frame, [])}
        tiles = [o for o in truth[event.frame]["objects"] if o["class"] == "tile"]
        for track_id in (*event.high_ids, *event.low_ids):
            if track_id not in tracks or not tiles:
                continue
            box = np.array(tracks[track_id].xyxy, np.float64)[None]
            tiles_xyxy = np.array([o["xyxy"] for o in tiles], np.float64)
            overlap = iou_matrix(box, tiles_xyxy, eps=UNION_EPS)[0]
            best = int(overlap.argmax())
            if overlap[best] >= MEMBERSHIP_IOU and owner.get(tiles[best]["id"]) == event.box:
                right.add(tiles[best]["id"])
    share = round(len(right) / len(owner), 4) if owner else None
    return {"hand_membership": share, "hand_tiles_right": len(right), "hand_tiles": len(owner)}


def stakes_at_bets_close(plan: dict, events: list[TableEvent]) -> dict:
    """The chip stacks the monitor holds each box to have staked as "no more bets" is inferred
    (the last WagerChanged of each box before the first NoMoreBets) against the plan's wagers,
    one stack each, the chung's box taking none: boxes whose count is right, of the boxes
    either holds a stake in. Nothing right when "no more bets" is never inferred."""
    true = {int(box): 1 for box in plan.get("wagers", {}) if int(box) != plan["chung_box"]}
    seen: dict[int, int] = {}
    closed = False
    for event in events:
        if isinstance(event, NoMoreBets):
            closed = True
            break
        if isinstance(event, WagerChanged):
            seen[event.box] = event.after
    boxes = set(true) | {b for b, n in seen.items() if n}
    right = sum(closed and true.get(b, 0) == seen.get(b, 0) for b in boxes)
    return {"stakes_right": right, "stakes_boxes": len(boxes)}


def tracking_figures(frames, seen: Observed, evaluators: list[DetectionEvaluator]):
    """Tile tracking outside the wash (``evaluate_tracking``; None when no scored frame was
    processed); the AP frames' boxes go to each of ``evaluators`` on the way."""
    segments: list[list] = [[] for _ in frames.segments]
    for truth in frames.truth:
        index = truth["frame"]
        if index in seen.detections and not truth["blind"]:
            for evaluator in evaluators:
                add_detections(evaluator, truth["objects"], seen.detections[index])
        k = frames.segment_of(index)
        if k is not None and index in seen.tracks:
            truth_pair = truth_tiles(truth["objects"], MIN_VISIBILITY)
            segments[k].append((*truth_pair, *reported_tiles(seen.tracks[index], index)))
    segments = [s for s in segments if s]
    return tracking_scores(segments) if segments else None


def rounded_ap(summary: dict) -> dict:
    """AP figures to 4 places; NaN (a class with no truth) as None, which JSON can hold."""
    return {
        c: {k: None if v != v else round(v, 4) for k, v in d.items()} for c, d in summary.items()
    }


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def alert_summary(runs: list[ClipRun]) -> dict:
    """``evaluate_rules.summarise`` of the runs, with median latencies per kind and overall."""
    score = Score()
    for run in runs:
        score_clip(run, score)
    alerts = summarise(score, runs)
    del alerts["oracle_rules_seconds"]  # these runs are not oracle mode
    for kind, figures in alerts["per_kind"].items():
        figures["latency_median_s"] = _median(score.kinds[kind].latencies_s)
    per_clean = alerts.pop("alerts_per_clean_round")
    clean = [r for r in runs if not r.scenario["injections"]]
    low = sum(a.state is AlertState.OPEN and a.confidence == "low" for r in clean for a in r.alerts)
    return {
        "recall": alerts.pop("recall"),
        "latency_median_s": _median([x for k in score.kinds.values() for x in k.latencies_s]),
        "false_alerts_per_clean_round": per_clean if score.clean_rounds else None,
        # of the clean rounds' alerts, those raised while the table's vision was degraded
        "clean_alerts_low_confidence": low,
        # opened alerts that found no injected irregularity (nor were implied by one)
        "false_alerts": sum(k.alerts - k.correct - k.implied for k in score.kinds.values()),
        **alerts,
    }


def summary_of(runs: list[ClipRun], clips: list[dict], detection: DetectionEvaluator) -> dict:
    """The figures of all clips: alerts, the round, tracking, detection and speed."""
    n, frames, wall_s = len(clips), sum(c["frames"] for c in clips), sum(c["wall_s"] for c in clips)
    tracked = [c["tracking"] for c in clips if c["tracking"]]
    mean = {k: [t[k] for t in tracked if t[k] is not None] for k in ("idf1", "mota", "hota")}
    return {
        **alert_summary(runs),
        "dice_correct": round(sum(c["dice_ok"] for c in clips) / n, 3),
        "first_box_correct": round(sum(c["first_box_ok"] for c in clips) / n, 3),
        "delivery_order_correct": round(sum(c["delivery_ok"] for c in clips) / n, 3),
        "delivery_boxes_correct": round(sum(c["delivery_boxes_ok"] for c in clips) / n, 3),
        "hand_membership": _membership(clips),
        "hand_membership_clean": _membership([c for c in clips if not c["injections"]]),
        "stakes_correct": _share(clips, "stakes_right", "stakes_boxes"),
        "tracking_mean": {k: round(float(np.mean(v)), 4) if v else None for k, v in mean.items()},
        "detection": rounded_ap(detection.summary()),
        "detection_note": "the pipeline's boxes (gated: some carried forward from earlier "
        "frames) at the detector's operating confidence, 1 frame in map_every, truth >= 30% "
        "visible",
        "frames": frames,
        "wall_s": round(wall_s, 1),
        "fps": round(frames / wall_s, 2),
        "realtime": round(sum(c["video_s"] for c in clips) / wall_s, 3),
    }


def _membership(clips: list[dict]) -> float | None:
    """Dealt tiles exposed in their own box's hand, as a share of all dealt tiles."""
    return _share(clips, "hand_tiles_right", "hand_tiles")


def _share(clips: list[dict], part: str, whole: str) -> float | None:
    """The clips' ``part`` over their ``whole``, to 4 places (None when the whole is 0)."""
    total = sum(c[whole] for c in clips)
    return round(sum(c[part] for c in clips) / total, 4) if total else None


def _at(summary: dict, path: str):
    """The figure at a dotted path (``per_kind.dice_not_flat.recall``); None when absent."""
    value = summary
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def shortfalls(summary: dict, golden: dict) -> list[str]:
    """Figures below their floor (``min``) or above their ceiling (``max``), give or take
    ``tolerance``; a figure that is missing or None falls short."""
    tolerance, out = golden.get("tolerance", 0.0), []
    for bound, sign, word in (("min", 1, "below its floor"), ("max", -1, "above its ceiling")):
        for path, limit in golden.get(bound, {}).items():
            value = _at(summary, path)
            if not isinstance(value, int | float) or sign * (value - limit) < -tolerance:
                out.append(f"{path} = {value}, {word} {limit}")
    return out


def _clip_line(c: dict) -> str:
    alerts = ", ".join(f"{a['kind']}@{a['video_time_s']:.2f}s" for a in c["alerts"])
    ok = {True: "ok", False: "WRONG"}
    return (
        f"{c['clip']}: {alerts or 'no alert'} | dice {ok[c['dice_ok']]}, first box "
        f"{ok[c['first_box_ok']]}, delivery {ok[c['delivery_ok']]}"
        f"{'' if c['delivery_ok'] or not c['delivery_boxes_ok'] else ' (order ok)'}, hands "
        f"{c['hand_tiles_right']}/{c['hand_tiles']}, stakes {c['stakes_right']}/"
        f"{c['stakes_boxes']} | IDF1 "
        f"{(c['tracking'] or {}).get('idf1')} | mAP50 {c['detection']['all']['ap50']} | "
        f"{c['fps']} frames/s"
    )


def print_report(summary: dict, clips: list[dict]) -> None:
    """A line per clip, a row per alert kind, and the summary line."""
    for c in clips:
        print(_clip_line(c))
    print(ROW.format("kind", "inj", "found", "recall", "alerts", "prec", "lat med", "lat max"))
    for kind, k in summary["per_kind"].items():
        cells = [k[f] for f in ("injected", "found", "recall", "alerts", "precision")]
        cells += [k["latency_median_s"], k["latency_max_s"]]
        print(ROW.format(kind, *("-" if v is None else v for v in cells)))
    s, d = summary, summary["detection"]
    print(
        f"{s['rounds']} rounds: recall {s['recall']}, latency median {s['latency_median_s']} s, "
        f"false alerts {s['false_alerts']} ({s['false_alerts_per_clean_round']} per clean "
        f"round; {s['clean_alerts_low_confidence']} low-confidence alerts in clean rounds), "
        f"dice {s['dice_correct']}, first box {s['first_box_correct']}, delivery "
        f"{s['delivery_order_correct']} (the boxes' order alone {s['delivery_boxes_correct']}), "
        f"hand membership {s['hand_membership']} (clean "
        f"{s['hand_membership_clean']}), stakes at no more bets {s['stakes_correct']}, IDF1 "
        f"{s['tracking_mean']['idf1']}, mAP50 "
        f"{d['all']['ap50']} (tiles down/up {d['tile_down']['ap50']}/{d['tile_up']['ap50']}), "
        f"{s['fps']} frames/s, {s['realtime']}x real time"
    )
