"""MOT metrics of the tile tracker on rendered scenario rounds (IDF1, MOTA, HOTA).

    python scripts/evaluate_tracking.py --seeds 0 1 2 --scale 0.5 --fps 25 --out track.json
    python scripts/evaluate_tracking.py --seeds 3 --detector     # real detector + face reader

Input to the tracker: ground-truth boxes with noise (jitter, dropouts, confidence from
visibility, misread faces, clutter) by default, or the ONNX detector and face reader on the
decoded clip with ``--detector`` (needs ``models/manifest.json``).

What is scored: tiles only. Ground truth: tiles at least ``min_visibility`` visible. Hypotheses:
tile tracks matched on that frame (coasting tracks are hidden, not reported). Frames of the wash
(``wash_started`` .. ``wash_ended``) and blind frames are left out. IDF1 and MOTA from
py-motmetrics (IoU >= 0.5 to match); HOTA from TrackEval's reference implementation.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from dataclasses import asdict, dataclass
from itertools import permutations
from pathlib import Path

import motmetrics
import numpy as np
from scipy.optimize import linear_sum_assignment

from pipeline.layout import layout_from_scenario
from vision.faces import FACE_CLASSES
from vision.geometry import iou_matrix
from vision.tracker import Tracker, TrackerConfig
from vision.types import CHIP, DIE, HAND, TILE_DOWN, TILE_UP, Detections, Track

CLASS_OF_TRUTH = {"chip": CHIP, "die": DIE, "hand": HAND}
MATCH_IOU = 0.5  # MOT convention: a hypothesis matches a truth box at IoU >= 0.5
FACE_INDEX = {name: i for i, name in enumerate(FACE_CLASSES)}


@dataclass(frozen=True)
class NoiseConfig:
    """How ground truth is degraded into detections."""

    min_visibility: float = 0.3  # less visible objects are neither detected nor scored
    jitter_frac: float = 0.04  # sigma of each box edge, as a fraction of the box side
    dropout_prob: float = 0.05  # a visible object is missed on a frame
    confidence_sigma: float = 0.1  # confidence = visibility + N(0, sigma), clipped
    face_error_prob: float = 0.02  # a face-up tile or die is read as a random other face
    clutter_per_frame: float = 0.2  # mean false tile detections per frame (Poisson)
    clutter_confidence: float = 0.4  # their confidence (below the tracker's high threshold)


@dataclass(frozen=True)
class Frames:
    """A clip's per-frame truth and the scored segments: runs of frame indices before and after
    the wash, scored as separate sequences (a good wash is meant to break identity).
    """

    truth: list[dict]
    segments: tuple[frozenset[int], ...]

    def segment_of(self, frame: int) -> int | None:
        return next((i for i, s in enumerate(self.segments) if frame in s), None)


def read_clip(folder: Path) -> tuple[dict, Frames]:
    """``scenario.json`` and truth of a rendered clip; wash and blind frames are not scored."""
    scenario = json.loads((folder / "scenario.json").read_text(encoding="utf-8"))
    with gzip.open(folder / "truth.jsonl.gz", "rt", encoding="utf-8") as f:
        truth = [json.loads(line) for line in f]
    start = [e["frame"] for e in scenario["events"] if e["type"] == "wash_started"]
    end = [e["frame"] for e in scenario["events"] if e["type"] == "wash_ended"]
    seen = {t["frame"] for t in truth if not t["blind"]}
    if not (start and end):
        return scenario, Frames(truth, (frozenset(seen),))
    before = frozenset(f for f in seen if f < start[0])
    after = frozenset(f for f in seen if f > end[0])
    return scenario, Frames(truth, tuple(s for s in (before, after) if s))


def class_id_of(obj: dict) -> int:
    """The detector class id of a truth object."""
    if obj["class"] == "tile":
        return TILE_UP if obj["face_up"] else TILE_DOWN
    return CLASS_OF_TRUTH[obj["class"]]


def _face(obj: dict, rng: np.random.Generator, noise: NoiseConfig) -> int:
    if obj["class"] == "tile" and obj["face_up"]:
        face = FACE_INDEX[f"tile_{obj['face']}"]
    elif obj["class"] == "die" and obj.get("die_value"):
        face = FACE_INDEX[f"die_{obj['die_value']}"]
    else:
        return -1
    return int(rng.integers(len(FACE_CLASSES))) if rng.random() < noise.face_error_prob else face


def noisy_detections(
    objects: list[dict], rng: np.random.Generator, noise: NoiseConfig
) -> Detections:
    """Detections ``(N, ...)`` from one frame's truth objects, degraded per ``noise``."""
    kept = [
        o
        for o in objects
        if o["visibility"] >= noise.min_visibility and rng.random() >= noise.dropout_prob
    ]
    xyxy = np.array([o["xyxy"] for o in kept], np.float64).reshape(-1, 4)
    side = np.repeat(xyxy[:, 2:] - xyxy[:, :2], 2, axis=0).reshape(-1, 4)
    xyxy = xyxy + rng.normal(0.0, noise.jitter_frac, xyxy.shape) * side
    vis = np.array([o["visibility"] for o in kept], np.float64)
    conf = np.clip(vis + rng.normal(0.0, noise.confidence_sigma, len(kept)), 0.05, 1.0)
    cls = [class_id_of(o) for o in kept]
    faces = [_face(o, rng, noise) for o in kept]
    clutter = _clutter(xyxy[np.isin(cls, (TILE_DOWN, TILE_UP))], rng, noise)
    xyxy = np.vstack([xyxy, clutter])
    n_extra = len(clutter)
    dets = Detections.from_arrays(
        xyxy,
        cls + [TILE_DOWN] * n_extra,
        np.concatenate([conf, np.full(n_extra, noise.clutter_confidence)]),
    )
    face = np.array(faces + [-1] * n_extra, np.int32)
    return dets.with_faces(face, np.where(face >= 0, 0.9, 0.0))


def _clutter(tiles_xyxy: np.ndarray, rng: np.random.Generator, noise: NoiseConfig) -> np.ndarray:
    """False tile boxes ``(K, 4)``: copies of real tile boxes shifted by one to three sides."""
    k = rng.poisson(noise.clutter_per_frame) if len(tiles_xyxy) else 0
    src = tiles_xyxy[rng.integers(len(tiles_xyxy), size=k)] if k else np.zeros((0, 4))
    side = np.repeat(src[:, 2:] - src[:, :2], 2, axis=0).reshape(-1, 4)[:, :2]
    shift = rng.uniform(1.0, 3.0, (k, 2)) * side * rng.choice((-1, 1), (k, 2))
    return src + np.hstack([shift, shift])


def truth_tiles(objects: list[dict], min_visibility: float) -> tuple[list[int], np.ndarray]:
    """Ids and boxes ``(N, 4)`` of the tiles that are scored on a frame."""
    tiles = [o for o in objects if o["class"] == "tile" and o["visibility"] >= min_visibility]
    return [o["id"] for o in tiles], np.array([o["xyxy"] for o in tiles], np.float64).reshape(-1, 4)


def reported_tiles(tracks: list[Track], frame: int) -> tuple[list[int], np.ndarray]:
    """Ids and boxes ``(N, 4)`` of tile tracks matched on ``frame`` (not coasting)."""
    seen = [t for t in tracks if t.kind == "tile" and t.last_seen_frame == frame]
    return [t.track_id for t in seen], np.array([t.xyxy for t in seen], np.float64).reshape(-1, 4)


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


def track_noisy_truth(
    folder: Path, noise: NoiseConfig, seed: int, config: TrackerConfig | None = None
) -> Segments:
    """Run the tracker on noisy ground truth of a rendered clip; scored frame pairs."""
    scenario, frames = read_clip(folder)
    tracker = Tracker(config, layout_from_scenario(scenario).zone_of)
    rng = np.random.default_rng(seed)
    segments: Segments = [[] for _ in frames.segments]
    for t in frames.truth:
        tracks = tracker.update(noisy_detections(t["objects"], rng, noise), t["frame"])
        _score_frame(segments, frames, t, tracks, noise.min_visibility)
    return segments


def _score_frame(
    segments: Segments, frames: Frames, truth: dict, tracks: list[Track], min_visibility: float
) -> None:
    k = frames.segment_of(truth["frame"])
    if k is not None:
        segments[k].append(
            (
                *truth_tiles(truth["objects"], min_visibility),
                *reported_tiles(tracks, truth["frame"]),
            )
        )


def load_models() -> tuple:
    """The ONNX detector and face reader from ``models/`` (``--detector`` mode only)."""
    from vision.detector import Detector, FaceReader  # onnxruntime only in this mode

    return Detector(), FaceReader()


def track_detector(
    folder: Path, min_visibility: float, models: tuple, config: TrackerConfig | None = None
) -> Segments:
    """Run the detector + face reader (``models``) and the tracker on the clip's video."""
    import av  # decode only in this mode

    from vision.types import Frame

    scenario, frames = read_clip(folder)
    detector, reader = models
    tracker = Tracker(config, layout_from_scenario(scenario).zone_of)
    segments: Segments = [[] for _ in frames.segments]
    with av.open(str(folder / "clip.mp4")) as container:
        for t, vf in zip(frames.truth, container.decode(video=0), strict=False):
            image = vf.to_ndarray(format="bgr24")
            frame = Frame("scenario", t["frame"], t["time_s"], image)
            tracks = tracker.update(reader(image, detector(frame)), t["frame"])
            _score_frame(segments, frames, t, tracks, min_visibility)
    return segments


def ensure_clip(clips: Path, seed: int, scale: float, fps: int) -> Path:
    """The rendered clip for ``seed`` under ``clips`` (rendered once, then reused)."""
    folder = clips / f"seed{seed}_s{scale}_f{fps}"
    if not (folder / "scenario.json").exists():
        from vision.synth.clip import ClipConfig, render_scenario  # scripts may use the renderer
        from vision.synth.scenario import ScenarioTiming

        render_scenario(
            seed, (), folder, ClipConfig(scale=scale), ScenarioTiming(fps=fps), progress=False
        )
    return folder


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


def evaluate(segments: Segments) -> dict:
    """All scores of one run."""
    frames = sum(len(s) for s in segments)
    return {**mot_scores(segments), "hota": hota_score(segments), "frames": frames}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--scale", type=float, default=0.5)
    parser.add_argument("--fps", type=int, default=25)
    parser.add_argument("--clips", type=Path, default=Path(".cache/tracking_clips"))
    parser.add_argument("--detector", action="store_true", help="use models/ instead of truth")
    parser.add_argument("--noise-seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="write the scores as JSON here")
    args = parser.parse_args(argv)
    if not 0.05 <= args.scale <= 1.0 or args.fps < 1:
        print("evaluate_tracking: --scale must be in [0.05, 1] and --fps >= 1", file=sys.stderr)
        return 2
    if args.detector and not Path("models/manifest.json").exists():
        print("evaluate_tracking: --detector needs models/manifest.json", file=sys.stderr)
        return 2
    noise, results = NoiseConfig(), {}
    try:
        models = load_models() if args.detector else None
        for seed in args.seeds:
            folder = ensure_clip(args.clips, seed, args.scale, args.fps)
            segments = (
                track_detector(folder, noise.min_visibility, models)
                if models
                else track_noisy_truth(folder, noise, args.noise_seed)
            )
            results[str(seed)] = evaluate(segments)
            print(f"seed {seed}: {results[str(seed)]}")
    except (OSError, ValueError, KeyError) as err:  # LayoutError, ModelError: ValueErrors
        print(f"evaluate_tracking: {err}", file=sys.stderr)
        return 2
    report = {
        "mode": "detector" if args.detector else "noisy_truth",
        "scale": args.scale,
        "fps": args.fps,
        "noise": None if args.detector else asdict(noise),
        "seeds": results,
        "metrics_from": {"idf1_mota": "motmetrics", "hota": "trackeval"},
    }
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
