"""The ``compare`` mode: the ungated and the gated pipeline (and the noise baseline) on the same
decoded frames, interleaved; boxes, tracks and faces against the ungated pipeline's, recall and
precision against the ground truth."""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np

from pipeline.evaluation.bench.events import (
    event_lines,
    found_in,
    key_difference,
    key_events,
    oracle_events,
)
from pipeline.evaluation.bench.runs import frames, gate_stats, make_pipeline, ms

MATCH_IOU = 0.5  # a gated box agrees with an ungated one above this IoU, same class
CONFIDENT = 0.5  # agreement is also reported for ungated boxes at least this confident
VISIBLE = 0.5  # ground-truth objects at least this visible count for recall


def _agreement(ref, got) -> tuple[int, int, int, int]:
    """Ungated boxes ``ref`` matched by gated boxes ``got``: (matched, all, matched confident,
    confident)."""
    from vision.geometry import UNION_EPS, iou_matrix

    if not len(ref):
        return 0, 0, 0, 0
    hit = np.zeros(len(ref), bool)
    if len(got):
        same = ref.class_id[:, None] == got.class_id[None, :]
        hit = ((iou_matrix(ref.xyxy, got.xyxy, eps=UNION_EPS) > MATCH_IOU) & same).any(axis=1)
    sure = ref.confidence >= CONFIDENT
    return int(hit.sum()), len(ref), int(hit[sure].sum()), int(sure.sum())


def _track_agreement(ref, got, frame: int) -> tuple[int, int, int, int]:
    """Ungated tracks seen on ``frame`` matched by a gated track of the same kind (IoU); and
    of the face-up tiles and dice among the matched, how many read the same face or value."""
    from vision.geometry import UNION_EPS, iou_matrix

    ref = [t for t in ref if t.last_seen_frame == frame]
    if not ref or not got:
        return 0, len(ref), 0, 0
    ref_xyxy, got_xyxy = np.array([t.xyxy for t in ref]), np.array([t.xyxy for t in got])
    iou = iou_matrix(ref_xyxy, got_xyxy, eps=UNION_EPS)
    matched = shown = same = 0
    for i, t in enumerate(ref):
        j = int(iou[i].argmax())
        if iou[i, j] > MATCH_IOU and got[j].kind == t.kind:
            matched += 1
            if t.face_up or t.kind == "die":
                shown += 1
                same += (got[j].face, got[j].die_value) == (t.face, t.die_value)
    return matched, len(ref), same, shown


def truth_boxes(clip: Path):
    """Per frame: ground-truth ``(xyxy (N, 4), class_id (N,))`` of the objects at least
    ``VISIBLE`` visible (the scenario's ``truth.jsonl.gz``), or None where there is none."""
    from pipeline.round.oracle import TRUTH_FILE, read_truth
    from vision.types import DETECTOR_CLASSES, TILE_DOWN, TILE_UP

    def class_id(obj: dict) -> int:
        if obj["class"] == "tile":
            return TILE_UP if obj["face_up"] else TILE_DOWN
        return DETECTOR_CLASSES.index(obj["class"])

    path = clip / TRUTH_FILE
    if not path.exists():
        while True:
            yield None
    for line in read_truth(path):
        objs = [o for o in line["objects"] if o["visibility"] >= VISIBLE]
        yield (
            np.array([o["xyxy"] for o in objs], np.float32).reshape(-1, 4),
            np.array([class_id(o) for o in objs], np.int64),
        )


def _recall(truth, det) -> np.ndarray:
    """(truth matched, truth, detections matching a truth box, detections) at MATCH_IOU."""
    from vision.geometry import UNION_EPS, iou_matrix

    xyxy, cls = truth
    if not len(xyxy) or not len(det):
        return np.array([0, len(xyxy), 0, len(det)])
    ok = (iou_matrix(xyxy, det.xyxy, eps=UNION_EPS) > MATCH_IOU) & (
        cls[:, None] == det.class_id[None, :]
    )
    return np.array([ok.any(axis=1).sum(), len(xyxy), ok.any(axis=0).sum(), len(det)])


def fixed_noise(shape: tuple, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A fixed pattern of -1/0/+1 grey levels per pixel (added, subtracted): a camera whose
    pixels differ by one level, the same on every frame (still frames stay exact repeats)."""
    step = np.random.default_rng(seed).integers(-1, 2, shape)
    return (step > 0).astype(np.uint8), (step < 0).astype(np.uint8)


def _versus(ref, got, truth, frame: int) -> np.ndarray:
    """Per-frame counts of one pipeline's result against the ungated one's and the truth."""
    if ref.detections is None or got.detections is None:
        return np.zeros(12, np.int64)
    out = [*_agreement(ref.detections, got.detections)]
    out += _track_agreement(ref.tracks, got.tracks, frame)
    out += [*_recall(truth, got.detections)] if truth is not None else [0, 0, 0, 0]
    return np.array(out, np.int64)


def run_compare(args, noise_baseline: bool) -> dict:
    """Ungated, gated (and the noise baseline: ungated on frames with :func:`fixed_noise`) on
    the same frames, interleaved; each compared with the ungated pipeline."""
    from vision.types import Frame

    names = ["ungated", "gated"] + (["noise baseline"] if noise_baseline else [])
    runs = {n: make_pipeline(args, gated=n == "gated") for n in names}
    times, events = defaultdict(list), defaultdict(list)
    counts = defaultdict(lambda: np.zeros(12, np.int64))
    noise = None
    clip = frames(args.clip / "clip.mp4", args.frames)
    for (index, time_s, _fps, image), truth in zip(clip, truth_boxes(args.clip), strict=False):
        results = {}
        for name, (pipe, _, _) in runs.items():
            picture = image
            if name == "noise baseline":
                noise = noise or fixed_noise(image.shape)
                picture = cv2.subtract(cv2.add(image, noise[0]), noise[1])
            t = time.perf_counter()
            results[name] = pipe.process(Frame("bench", index, time_s, picture))
            times[name].append(time.perf_counter() - t)
            events[name] += results[name].events
            counts[name] += _versus(results["ungated"], results[name], truth, index)
    lines = {}
    for name, (pipe, _, _) in runs.items():
        lines[name] = event_lines(events[name] + pipe.finish()[0])
    oracle = oracle_events(args.clip, args.frames)
    out = {
        "events": lines,
        "oracle_key_events": None if oracle is None else len(key_events(oracle)),
    }
    for name, (pipe, det, reader) in runs.items():
        c = counts[name]
        out[name] = {
            "ms": ms(times[name]),
            "detector_ms": ms(det.times),
            "reader_ms": ms(reader.times),
            "detection_agreement": c[0] / max(c[1], 1),
            "confident_agreement": c[2] / max(c[3], 1),
            "boxes": int(c[1]),
            "track_agreement": c[4] / max(c[5], 1),
            "shown_face_agreement": c[6] / max(c[7], 1),
            "truth_recall": c[8] / max(c[9], 1),
            "truth_precision": c[10] / max(c[11], 1),
            "truth_objects": int(c[9]),
            "key_events_differing": key_difference(lines["ungated"], lines[name]),
            "events_in_order": lines[name] == lines["ungated"],
            "oracle_found": None if oracle is None else found_in(lines[name], oracle)[0],
        }
        if name == "gated":
            out[name] |= {"gating": gate_stats(det.stage), "faces": vars(pipe.reader.stats)}
    return out
