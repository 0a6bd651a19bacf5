"""Identity scores of tile tracks against rendered truth: IDF1 and MOTA (py-motmetrics), HOTA
(TrackEval's reference implementation, when installed), and where identities are lost.

Input: per segment, the scored frames as :data:`Pair` rows (truth ids and boxes, reported
track ids and boxes; :mod:`pipeline.evaluation.truth`). A hypothesis matches a truth box at
IoU >= ``MATCH_IOU``. Segments are separate sequences, summed.
"""

from __future__ import annotations

from itertools import permutations

import motmetrics
import numpy as np
from scipy.optimize import linear_sum_assignment

from pipeline.evaluation.truth import Frames
from vision.geometry import iou_matrix

MATCH_IOU = 0.5  # MOT convention: a hypothesis matches a truth box at IoU >= 0.5

# One scored frame: truth ids, truth boxes (N, 4), hypothesis ids, hypothesis boxes (M, 4).
Pair = tuple[list[int], np.ndarray, list[int], np.ndarray]
Segments = list[list[Pair]]


def mot_scores(segments: Segments) -> dict[str, float]:
    """IDF1, MOTA and counts with py-motmetrics; segments are separate sequences, summed."""
    accumulators = []
    for pairs in segments:
        acc = motmetrics.MOTAccumulator(auto_id=True)
        for gt_ids, gt_xyxy, hyp_ids, hyp_xyxy in pairs:
            dist = 1.0 - iou_matrix(gt_xyxy, hyp_xyxy)
            acc.update(gt_ids, hyp_ids, np.where(dist <= 1.0 - MATCH_IOU, dist, np.nan))
        accumulators.append(acc)
    names = ["idf1", "mota", "num_switches", "num_false_positives", "num_misses", "num_objects"]
    table = motmetrics.metrics.create().compute_many(
        accumulators,
        metrics=names,
        names=[f"s{i}" for i in range(len(segments))],
        generate_overall=True,
    )
    row = table.loc["OVERALL"]
    return {k: round(float(row[k]), 4) for k in names}


def hota_score(segments: Segments) -> float | None:
    """HOTA (TrackEval, averaged over IoU thresholds); None when TrackEval is not installed."""
    try:
        from trackeval.metrics import HOTA  # optional: evaluation extra only
    except ImportError:
        return None
    metric = HOTA()
    per_segment = {
        f"s{i}": metric.eval_sequence(_trackeval_data(p)) for i, p in enumerate(segments)
    }
    return round(float(np.mean(metric.combine_sequences(per_segment)["HOTA"])), 4)


def _trackeval_data(pairs: list[Pair]) -> dict:
    gt_map, hyp_map = _dense_ids(p[0] for p in pairs), _dense_ids(p[2] for p in pairs)
    return {
        "num_timesteps": len(pairs),
        "num_gt_ids": len(gt_map),
        "num_tracker_ids": len(hyp_map),
        "num_gt_dets": sum(len(p[0]) for p in pairs),
        "num_tracker_dets": sum(len(p[2]) for p in pairs),
        "gt_ids": [np.array([gt_map[i] for i in p[0]], int) for p in pairs],
        "tracker_ids": [np.array([hyp_map[i] for i in p[2]], int) for p in pairs],
        "similarity_scores": [iou_matrix(p[1], p[3]) for p in pairs],
    }


def _dense_ids(id_lists) -> dict[int, int]:
    ids = sorted({i for ids in id_lists for i in ids})
    return {v: k for k, v in enumerate(ids)}


def evaluate(segments: Segments) -> dict:
    """All scores of one run."""
    frames = sum(len(s) for s in segments)
    return {**mot_scores(segments), "hota": hota_score(segments), "frames": frames}


def stacks_of(scenario: dict, frames: Frames) -> dict[int, tuple[int, int]]:
    """Truth tile id -> (its delivery group, the frame from which its group is stacked): the
    first frame after the wash on which two of the group's tiles lie on one another (IoU >=
    0.5). From then on a camera above sees only the top tile; the order inside the stack, and
    which of the four a spread tile is, is not visible."""
    groups = [tuple(g["tile_ids"]) for g in scenario["plan"]["groups"]]
    after = frames.segments[-1] if frames.segments else frozenset()
    out: dict[int, tuple[int, int]] = {}
    for k, ids in enumerate(groups):
        for t in frames.truth:
            if t["frame"] not in after:
                continue
            boxes = np.array(
                [o["xyxy"] for o in t["objects"] if o["class"] == "tile" and o["id"] in ids]
            ).reshape(-1, 4)
            overlap = iou_matrix(boxes, boxes) - np.eye(len(boxes))
            if len(boxes) > 1 and overlap.max() >= MATCH_IOU:
                out |= {i: (k, t["frame"]) for i in ids}
                break
    return out


def stack_order_free(
    segments: Segments, frame_numbers: list[list[int]], stacks: dict[int, tuple[int, int]]
) -> Segments:
    """The scored frames with each stack's truth ids permuted, from the frame it is stacked
    on, in the order that best continues the tracks (one permutation per stack for the rest of
    the round): identity judged up to the order inside a woodpile stack. Every result is a
    truth consistent with what a camera above can see, so IDF1 on it is still an IDF1."""
    out: Segments = []
    for pairs, numbers in zip(segments, frame_numbers, strict=True):
        pre: dict[tuple[int, int], int] = {}
        post: dict[tuple[int, int], int] = {}
        for (gt_ids, gt_xyxy, hyp_ids, hyp_xyxy), n in zip(pairs, numbers, strict=True):
            iou = iou_matrix(gt_xyxy, hyp_xyxy)
            if iou.size == 0:
                continue
            for r, c in zip(*linear_sum_assignment(-iou), strict=True):
                if iou[r, c] >= MATCH_IOU:
                    g, h = gt_ids[r], hyp_ids[c]
                    side = post if g in stacks and n >= stacks[g][1] else pre
                    side[g, h] = side.get((g, h), 0) + 1
        relabel: dict[int, int] = {}
        for ids in {
            tuple(sorted(i for i in stacks if stacks[i][0] == k)) for k, _ in stacks.values()
        }:
            relabel |= _best_order(ids, pre, post)
        out.append(
            [
                (
                    [relabel.get(g, g) if g in stacks and n >= stacks[g][1] else g for g in gt],
                    gx,
                    hyp,
                    hx,
                )
                for (gt, gx, hyp, hx), n in zip(pairs, numbers, strict=True)
            ]
        )
    return out


def _best_order(ids: tuple[int, ...], pre: dict, post: dict) -> dict[int, int]:
    """The relabelling {tile seen after stacking -> truth id} of one stack that lets the most
    frames of each truth id, before and after, fall to one track."""
    hyps = {h for (g, h) in list(pre) + list(post) if g in ids}

    def credit(order: tuple[int, ...]) -> int:
        return sum(
            max((pre.get((label, h), 0) + post.get((seen, h), 0) for h in hyps), default=0)
            for seen, label in zip(ids, order, strict=True)
        )

    best = max(permutations(ids), key=credit)
    return dict(zip(ids, best, strict=True))


# Scenario events that start a phase of the round, for where identities are lost.
PHASE_EVENTS = (
    "wash_ended",  # the heap after the wash, until the woodpile is built
    "woodpile_built",
    "dice_read",
    "group_delivered",
    "delivery_done",  # the stacks spread in the boxes, until the hands are set
    "hand_set",
    "hand_exposed",
    "settled",
)


def phase_of_frame(scenario: dict):
    """``frame -> phase``: the last of :data:`PHASE_EVENTS` at or before the frame
    (``start`` before the first)."""
    events = scenario["events"]
    starts = sorted((e["frame"], e["type"]) for e in events if e["type"] in PHASE_EVENTS)

    def phase(frame: int) -> str:
        return next((t for f, t in reversed(starts) if f <= frame), "start")

    return phase


def woodpile_building(scenario: dict):
    """``frame -> bool``: the frame lies after the wash and up to the woodpile being built
    (``wash_ended`` .. ``woodpile_built``), when the dealer sweeps four face-down tiles at a
    time under one hand into a stack; a round without both events has no such frame."""
    end = [e["frame"] for e in scenario["events"] if e["type"] == "wash_ended"]
    built = [e["frame"] for e in scenario["events"] if e["type"] == "woodpile_built"]
    if not (end and built):
        return lambda frame: False
    return lambda frame: end[0] < frame <= built[0]


def without_frames(
    segments: Segments, frame_numbers: list[list[int]], drop
) -> tuple[Segments, list[list[int]]]:
    """The scored frames less those ``drop(frame)`` is true of (each segment keeps its own)."""
    kept = [
        [(pair, n) for pair, n in zip(pairs, numbers, strict=True) if not drop(n)]
        for pairs, numbers in zip(segments, frame_numbers, strict=True)
    ]
    return [[p for p, _ in k] for k in kept], [[n for _, n in k] for k in kept]


def identity_loss(segments: Segments, frame_numbers: list[list[int]], phase_of) -> dict:
    """Scored tile-frames by phase, and how many of them went to no track or to another
    track than the one the tile is mapped to (per segment, the one-to-one mapping of truth ids
    to tracks that keeps the most frames, as IDF1's): ``{phase: {"frames", "lost"}}``."""
    out: dict[str, dict[str, int]] = {}
    for pairs, numbers in zip(segments, frame_numbers, strict=True):
        seen: list[tuple[int, int, int | None]] = []  # (frame, truth id, track id or None)
        for (gt_ids, gt_xyxy, hyp_ids, hyp_xyxy), n in zip(pairs, numbers, strict=True):
            iou = iou_matrix(gt_xyxy, hyp_xyxy)
            got: dict[int, int] = {}
            if iou.size:
                for r, c in zip(*linear_sum_assignment(-iou), strict=True):
                    if iou[r, c] >= MATCH_IOU:
                        got[gt_ids[r]] = hyp_ids[c]
            seen += [(n, g, got.get(g)) for g in gt_ids]
        gts = sorted({g for _, g, _ in seen})
        hyps = sorted({h for _, _, h in seen if h is not None})
        together = np.zeros((len(gts), len(hyps)))
        for _, g, h in seen:
            if h is not None:
                together[gts.index(g), hyps.index(h)] += 1
        rows, cols = linear_sum_assignment(-together) if together.size else ([], [])
        mapped = {gts[r]: hyps[c] for r, c in zip(rows, cols, strict=True) if together[r, c]}
        for n, g, h in seen:
            counts = out.setdefault(phase_of(n), {"frames": 0, "lost": 0})
            counts["frames"] += 1
            counts["lost"] += h is None or mapped.get(g) != h
    return out
