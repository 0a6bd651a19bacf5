"""Throughput of the table pipeline against the decode floor and ultralytics, in one run.

    python scripts/bench.py                          # the whole demo clip, the default modes
    python scripts/bench.py --frames 200             # a quick subset
    python scripts/bench.py --modes live review:2 compare+noise --repeats 3

Each mode runs in its own subprocess, one after the other (round-robin over ``--repeats``, the
figures are medians over the repeats), so its peak memory (``ru_maxrss`` from ``os.wait4``) is
its own. A mode is ``NAME[:STRIDE][+OPTION...]``:

- ``decode``: PyAV decode and conversion to BGR only, the floor;
- ``live``: decode + :class:`pipeline.runner.TablePipeline` with the motion-gated detector
  (:mod:`vision.gating`) and the face cache (:mod:`vision.faces_cache`), every frame;
- ``review:K``: the same pipeline on every K-th frame (the others decoded, not converted);
  ``review:K+stillN``: adaptive, as ``paigow review --stride K --still-stride N`` chooses
  frames (:class:`pipeline.review.StillSkip`: one in N while the picture stays still);
- ``ungated``: the pipeline as it was (full-frame detection, every face read each frame);
- ``ultralytics``: the same weights through ultralytics' ``model.track(tracker=bytetrack.yaml)``
  at imgsz 960 on CPU, its own decode included (detection and tracking only: no faces, no game);
- ``compare``: the ungated and the gated pipeline on the same decoded frames, interleaved frame
  by frame (so timed side by side under the same load): stage times, agreement of boxes,
  tracks and faces, recall against the ground truth, key events; ``+noise`` adds a baseline,
  the ungated pipeline on frames moved by a fixed +-1 grey-level pattern, to show how much two
  equally good runs differ.

Options: ``threads`` (FFmpeg frame threads for decoding), ``nonref`` (frames no other frame
refers to are not decoded: with this clip's B-pyramid, every other frame), ``ahead`` (frames
read as ``paigow review`` reads them: a worker thread decodes ahead, only the stride's frames
are converted, pictures between that no other refers to not decoded; ``decodeall``: they are),
``stillN`` (review: skip still frames, one in N kept), ``spin`` (onnxruntime's threads
spin-wait between runs, its default; ours sleep).

Printed: frames of video per second end to end (decode included), the ratio to real time, to
the decode floor and to ultralytics, median and p90 milliseconds per processed frame (pipeline
only), peak RSS, how many key events (dice, delivery, exposures, wagers, settlement; without
track ids) differ from the ungated pipeline's, and how many of the ground-truth run's are found.
An adaptive review is also compared with the plain review of its stride, when both ran: the
key events only one of them found, listed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CLIP_DIR = ROOT / "datasets" / "samples" / "demo_round"
WEIGHTS = ROOT / ".cache" / "runs" / "detector_ft" / "weights" / "best.pt"
MATCH_IOU = 0.5  # a gated box agrees with an ungated one above this IoU, same class
CONFIDENT = 0.5  # agreement is also reported for ungated boxes at least this confident
VISIBLE = 0.5  # ground-truth objects at least this visible count for recall
FPS_FALLBACK = 25.0


# --- children: one mode each, one JSON line on stdout ------------------------------------------


def frames(clip: Path, limit: int | None, stride: int = 1, options: frozenset = frozenset()):
    """``(index, time_s, fps, image or None)`` of the clip; ``image`` is converted to BGR only
    on every ``stride``-th frame. Options: ``threads`` (FFmpeg frame threads), ``nonref``
    (frames no other frame refers to are not decoded at all: with this clip's B-pyramid, every
    other frame; an encoder without B-frames gives every frame), ``ahead`` (read as ``paigow
    review`` reads: :func:`pipeline.review.open_video`, a worker thread decoding ahead; only
    every ``stride``-th frame is given, and pictures between that none refers to are not
    decoded), ``decodeall`` (with ``ahead``: every picture decoded, as before that)."""
    import av

    if "ahead" in options:
        from pipeline.review import open_video
        from vision.types import Frame

        skip = "decodeall" not in options
        with open_video(clip, "bench", stride, skip_unreferenced=skip) as source:
            for item in source:
                if isinstance(item, Frame):
                    if limit is not None and item.index >= limit:
                        break
                    yield item.index, item.time_s, source.fps, item.image
        return
    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        if "threads" in options:
            stream.thread_type = "AUTO"
        if "nonref" in options:
            stream.codec_context.skip_frame = "NONREF"
        fps = float(stream.average_rate or FPS_FALLBACK)
        for n, decoded in enumerate(container.decode(stream)):
            index = n
            if "nonref" in options:
                index = round(float(decoded.pts * stream.time_base) * fps)
            if limit is not None and index >= limit:
                break
            image = decoded.to_ndarray(format="bgr24") if n % stride == 0 else None
            yield index, index / fps, fps, image


class Timed:
    """A stage wrapped to time its calls (seconds, one entry per call)."""

    def __init__(self, stage) -> None:
        self.stage, self.times = stage, []

    def __call__(self, *args):
        t = time.perf_counter()
        out = self.stage(*args)
        self.times.append(time.perf_counter() - t)
        return out

    def __getattr__(self, name: str):  # the stage's other methods (a gate's ``unchanged``)
        return getattr(self.stage, name)


def make_pipeline(args, gated: bool, still_stride: int = 1):
    """A :class:`TablePipeline` for the clip (its ``scenario.json`` layout), its detector and
    reader wrapped in :class:`Timed`; gated: motion-gated detector (``--gating`` settings, as a
    review with ``still_stride`` sets them) and face cache."""
    from pipeline.layout import layout_from_scenario
    from pipeline.review import ReviewConfig, pipeline_config
    from pipeline.runner import PipelineConfig, TablePipeline
    from vision.detector import Detector
    from vision.face_reader import FaceReader
    from vision.gating import GatedDetector, GatingConfig

    detector, reader = Detector(), FaceReader()
    if gated:
        config = GatingConfig(**json.loads(args.gating))
        review = ReviewConfig(stride=1, still_stride=still_stride)
        config = pipeline_config(replace(review, pipeline=PipelineConfig(gating=config))).gating
        detector = GatedDetector(detector, config)
    layout = layout_from_scenario(args.clip / "scenario.json")
    timed_detector, timed_reader = Timed(detector), Timed(reader)
    # the pipeline keeps its face cache around the (timed) reader when gated
    config = PipelineConfig() if gated else PipelineConfig(face_cache=None)
    pipe = TablePipeline("bench", layout, config, detector=timed_detector, reader=timed_reader)
    return pipe, timed_detector, timed_reader


KEY_EVENTS = (
    "DiceRead",
    "GroupDelivered",
    "DeliveryDone",
    "TileExposed",
    "HandExposed",
    "WagerChanged",
    "BoxSettled",
)  # the game's facts: dice, delivery order, exposures, wagers, settlement


def _sorted(values) -> list:
    return sorted(values, key=lambda v: (v is None, str(v)))


def event_key(event) -> str:
    """An event without track ids, frame or time, faces in a set sorted: what two pipelines
    that number their tracks differently must still agree on."""
    from dataclasses import asdict

    from pipeline.round.events import DiceRead, GroupDelivered, HandExposed

    fields = asdict(event)
    fields = {k: v for k, v in fields.items() if k not in ("frame", "time_s", "track_id")}
    match event:
        case DiceRead(values=values):
            fields["values"] = _sorted(values)
        case GroupDelivered(track_ids=ids):
            fields["track_ids"] = len(ids)
        case HandExposed(high_faces=high, low_faces=low):
            fields |= {"high_faces": _sorted(high), "low_faces": _sorted(low)}
    for k in ("track_ids", "high", "low", "high_ids", "low_ids"):
        if isinstance(fields.get(k), (list, tuple)):
            fields[k] = len(fields[k])  # how many tiles, not which ids
    return f"{type(event).__name__}: " + json.dumps(fields, default=str, sort_keys=True)


def event_lines(events) -> list[str]:
    """Events as id-free keys (:func:`event_key`), sorted within a frame."""
    return [key for _, key in sorted((e.frame, event_key(e)) for e in events)]


def oracle_events(clip: Path, limit: int | None) -> list[str] | None:
    """The round reconstructor's events on the scenario's ground-truth tracks."""
    from pipeline.layout import layout_from_scenario
    from pipeline.round.oracle import TRUTH_FILE, oracle_frames, read_truth, reconstruct
    from pipeline.round.phases import RoundConfig, RoundReconstructor

    if not (clip / TRUTH_FILE).exists():
        return None
    layout = layout_from_scenario(clip / "scenario.json")
    reconstructor = RoundReconstructor(RoundConfig(chung_box=layout.chung_box))
    truth = (t for t in read_truth(clip / TRUTH_FILE) if limit is None or t["frame"] < limit)
    return event_lines(reconstruct(oracle_frames(truth), reconstructor))


def key_events(lines: list[str]) -> list[str]:
    return [line for line in lines if line.split(":")[0] in KEY_EVENTS]


def key_sides(a: list[str], b: list[str]) -> tuple[list[str], list[str]]:
    """Key events only in ``a`` and only in ``b`` (multisets: a repeat counts)."""
    from collections import Counter

    ca, cb = Counter(key_events(a)), Counter(key_events(b))
    return sorted((ca - cb).elements()), sorted((cb - ca).elements())


def key_difference(a: list[str], b: list[str]) -> int:
    only_a, only_b = key_sides(a, b)
    return len(only_a) + len(only_b)


def found_in(lines: list[str], truth: list[str]) -> tuple[int, int]:
    """How many of ``truth``'s key events ``lines`` has (as a multiset), of how many."""
    from collections import Counter

    truth_keys = Counter(key_events(truth))
    return sum((Counter(key_events(lines)) & truth_keys).values()), sum(truth_keys.values())


def still_option(options) -> int:
    """N of a ``stillN`` option (1 without one: no still frames skipped)."""
    return next((int(o.removeprefix("still")) for o in options if o.startswith("still")), 1)


def run_pipeline(args, gated: bool, stride: int, options: frozenset) -> dict:
    from pipeline.review import StillSkip, keep_watching
    from vision.types import Frame

    still = still_option(options)
    pipe, det, reader = make_pipeline(args, gated, still)
    skip = StillSkip(stride, still, pipe)
    per_frame, events, last, result = [], [], 0, None

    def process(frame: Frame) -> None:
        nonlocal result
        t = time.perf_counter()
        result = pipe.process(frame)
        per_frame.append(time.perf_counter() - t)
        events.extend(result.events)

    start = time.perf_counter()
    for index, time_s, _fps, image in frames(args.clip / "clip.mp4", args.frames, stride, options):
        last = index
        if image is None:
            continue
        frame = Frame("bench", index, time_s, image)
        if not skip.enabled:
            process(frame)  # as converted (with nonref, frames() strides decoded frames)
            continue
        for chosen in skip.take(frame, keep_watching(result)):
            process(chosen)
    for frame in skip.flush():
        process(frame)
    events += pipe.finish()[0]
    wall = time.perf_counter() - start
    out = summary(per_frame, last + 1, wall)  # frames of video covered
    out |= {"events": event_lines(events), "detector_ms": _ms(det.times)}
    out |= {"reader_ms": _ms(reader.times), "still_skipped": skip.skipped}
    if gated:
        out |= {"gating": gate_stats(det.stage), "faces": vars(pipe.reader.stats)}
    return out


def run_decode(args, options: frozenset) -> dict:
    per_frame, last = [], 0
    start = time.perf_counter()
    t = start
    for index, *_ in frames(args.clip / "clip.mp4", args.frames, 1, options):
        now = time.perf_counter()
        per_frame.append(now - t)
        t, last = now, index
    return summary(per_frame, last + 1, time.perf_counter() - start)


def install_lap_shim() -> None:
    """ultralytics' ByteTrack imports ``lap`` and pip-installs it when missing (no downloads
    here): give it ``lap.lapjv`` (extend_cost, cost_limit) on scipy's assignment instead."""
    import types

    from scipy.optimize import linear_sum_assignment

    def lapjv(cost, extend_cost=True, cost_limit=np.inf, return_cost=True):
        n, m = cost.shape
        big = np.full((n + m, n + m), 1e9)
        big[:n, :m] = cost
        big[n:, m:] = 0.0
        half = cost_limit / 2 if np.isfinite(cost_limit) else 1e8
        big[np.arange(n), m + np.arange(n)] = half  # a row left unmatched costs half the limit
        big[n + np.arange(m), np.arange(m)] = half  # so does a column
        rows, cols = linear_sum_assignment(big)
        x, y = np.full(n, -1), np.full(m, -1)
        for r, c in zip(rows, cols, strict=True):
            if r < n and c < m:
                x[r], y[c] = c, r
        total = float(sum(cost[r, x[r]] for r in range(n) if x[r] >= 0))
        return total, x, y

    sys.modules["lap"] = types.SimpleNamespace(__version__="shim", lapjv=lapjv)


def run_ultralytics(args) -> dict:
    os.environ["YOLO_OFFLINE"] = "1"
    install_lap_shim()
    import torch
    from ultralytics import YOLO

    torch.set_num_threads(2)
    model = YOLO(str(WEIGHTS))
    stream = model.track(
        source=str(args.clip / "clip.mp4"),
        imgsz=960,
        device="cpu",
        tracker="bytetrack.yaml",
        stream=True,
        save=False,
        verbose=False,
    )
    per_frame, n = [], 0
    start = time.perf_counter()
    t = start
    for _result in stream:
        now = time.perf_counter()
        per_frame.append(now - t)
        t, n = now, n + 1
        if args.frames is not None and n >= args.frames:
            break
    return summary(per_frame, n, time.perf_counter() - start)


def summary(per_frame: list[float], n_decoded: int, wall: float) -> dict:
    return {
        "frames": n_decoded,
        "processed": len(per_frame),
        "wall_s": wall,
        "fps": n_decoded / wall if wall else 0.0,
        "ms": _ms(per_frame),
    }


def _ms(times: list[float]) -> dict:
    if not times:
        return {"median": 0.0, "p90": 0.0, "mean": 0.0, "max": 0.0}
    a = np.array(times) * 1000
    return {
        "median": float(np.median(a)),
        "p90": float(np.quantile(a, 0.9)),
        "mean": float(a.mean()),
        "max": float(a.max()),
    }


def gate_stats(gate) -> dict:
    s = gate.stats
    return {
        "full": s.full,
        "full_by": s.full_by,
        "regional": s.regional,
        "carried": s.carried,
        "region_runs": s.region_runs,
        "detected_area_fraction": s.detected_area_fraction,
    }


# --- compare: ungated and gated on the same frames --------------------------------------------


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
            "ms": _ms(times[name]),
            "detector_ms": _ms(det.times),
            "reader_ms": _ms(reader.times),
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


def child(args) -> dict:
    """One mode: ``name[:stride][+option...]``, e.g. ``review:2+threads``."""
    name, *opts = args.child.split("+")
    mode, _, stride = name.partition(":")
    options = frozenset(opts)
    if "spin" in options:  # onnxruntime's threads spin-wait between runs, its default
        from vision.onnx import OnnxModel

        OnnxModel.spin_wait = True
    match mode:
        case "decode":
            return run_decode(args, options)
        case "live":
            return run_pipeline(args, gated=True, stride=1, options=options)
        case "review":
            return run_pipeline(args, gated=True, stride=int(stride or 1), options=options)
        case "ungated":
            return run_pipeline(args, gated=False, stride=1, options=options)
        case "ultralytics":
            return run_ultralytics(args)
        case "compare":
            return run_compare(args, noise_baseline="noise" in options)
    raise SystemExit(f"unknown mode {args.child!r}")


# --- parent: run the children, print the table ------------------------------------------------


MODES = ("decode", "live", "review", "ungated", "ultralytics", "compare")
DEFAULT_MODES = [
    "decode",
    "decode+nonref",
    "live",
    "review:2",
    "review:2+nonref",
    "review:4",
    "review:2+still8",
    "ultralytics",
    "compare",
]


def _mode(spec: str) -> str:
    name, *opts = spec.split("+")
    mode, _, stride = name.partition(":")
    if mode not in MODES or not (stride == "" or stride.isdigit()):
        raise argparse.ArgumentTypeError(f"not a mode: {spec!r}")
    still = [o for o in opts if o.startswith("still")]
    if set(opts) - {"threads", "nonref", "noise", "ahead", "decodeall", "spin", *still}:
        raise argparse.ArgumentTypeError(f"unknown option in {spec!r}")
    if any(not o.removeprefix("still").isdigit() for o in still) or (still and mode != "review"):
        raise argparse.ArgumentTypeError(f"stillN is a review option with a number: {spec!r}")
    return spec


def spawn(mode: str, args) -> dict:
    """Run one mode in a subprocess; its JSON result plus its own peak RSS in MiB."""
    cmd = [sys.executable, __file__, "--child", mode, "--clip", str(args.clip)]
    cmd += ["--gating", args.gating]
    if args.frames is not None:
        cmd += ["--frames", str(args.frames)]
    env = os.environ | {"YOLO_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env, cwd=ROOT)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"bench: mode {mode} failed (exit {proc.returncode})")
    result = json.loads(out.decode().strip().splitlines()[-1])
    return result | {"rss_mib": usage.ru_maxrss / 1024}


def _median(runs: list[dict], *keys) -> float:
    values = []
    for r in runs:
        for k in keys:
            r = r[k]
        values.append(r)
    return statistics.median(values)


def report(results: dict[str, list[dict]], clip_fps: float, oracle: list[str] | None) -> None:
    floor = _median(results["decode"], "fps") if "decode" in results else None
    ultra = _median(results["ultralytics"], "fps") if "ultralytics" in results else None
    compares = [r for mode, runs in results.items() if mode.startswith("compare") for r in runs]
    reference = compares[0]["events"]["ungated"] if compares else None
    reference = reference or next(iter(results.get("ungated", [])), {}).get("events")
    print(
        f"{'mode':<24}{'frames':>7}{'fps':>7}{'x real':>7}{'/decode':>8}{'/ultra':>7}"
        f"{'ms med':>7}{'ms p90':>7}{'RSS MiB':>8}  key events differing; oracle's found"
    )
    for mode, runs in results.items():
        if mode.startswith("compare"):
            continue
        fps = _median(runs, "fps")
        same = "-"
        if reference is not None and "events" in runs[0]:
            same = str(max(key_difference(reference, r["events"]) for r in runs))
            if oracle is not None:
                found, total = found_in(runs[0]["events"], oracle)
                same += f"; {found}/{total}"
        print(
            f"{mode:<24}{runs[0]['frames']:>7}{fps:>7.1f}{fps / clip_fps:>7.2f}"
            f"{fps / floor if floor else float('nan'):>8.2f}"
            f"{fps / ultra if ultra else float('nan'):>7.2f}"
            f"{_median(runs, 'ms', 'median'):>7.1f}{_median(runs, 'ms', 'p90'):>7.1f}"
            f"{_median(runs, 'rss_mib'):>8.0f}  {same}"
        )
        if "gating" in runs[0]:
            skipped = runs[-1].get("still_skipped")
            still = f"  still frames skipped {skipped}" if skipped else ""
            print(f"{'':<24}gate {runs[-1]['gating']}  faces {runs[-1]['faces']}{still}")
    report_adaptive(results)
    for c in compares:
        report_compare(c)


def report_adaptive(results: dict[str, list[dict]]) -> None:
    """Each adaptive review (``+stillN``) against the plain review of its stride: speed and
    the key events only one of them found (first repeats)."""
    for mode, runs in results.items():
        opts = mode.split("+")
        plain = "+".join(o for o in opts if not o.startswith("still"))
        if plain == mode or plain not in results:
            continue
        base = results[plain]
        only_plain, only_still = key_sides(base[0]["events"], runs[0]["events"])
        speed = _median(runs, "fps") / _median(base, "fps")
        print(
            f"\n{mode} against {plain}: {speed:.2f}x the speed, processed "
            f"{runs[0]['processed']} frames instead of {base[0]['processed']}; "
            f"key events differing: {len(only_plain) + len(only_still)} "
            f"of {len(key_events(base[0]['events']))}"
        )
        for line in only_plain:
            print(f"    - {line}")
        for line in only_still:
            print(f"    + {line}")


def report_compare(c: dict) -> None:
    others = [n for n, v in c.items() if n != "ungated" and isinstance(v, dict) and "ms" in v]
    u = c["ungated"]
    print("\ncompare (same frames, interleaved), ms per frame, against the ungated pipeline:")
    for name in others:
        o = c[name]
        for stage in ("ms", "detector_ms", "reader_ms"):
            a, b = u[stage], o[stage]
            print(
                f"  {name:<15}{stage.removesuffix('_ms').replace('ms', 'pipeline'):<10} "
                f"median {a['median']:6.1f} -> {b['median']:6.1f}   mean {a['mean']:6.1f} -> "
                f"{b['mean']:6.1f}   ratio (mean) {a['mean'] / max(b['mean'], 1e-9):5.2f}x"
            )
    n_key = len(key_events(c["events"]["ungated"]))
    print(
        f"\n  {'':<15}{'boxes':>8}{'conf>=.5':>9}{'tracks':>8}{'faces':>8}{'recall':>8}"
        f"{'precis.':>8}{'key ev. differing':>19}{'oracle found':>14}"
    )
    for name in ["ungated", *others]:
        o = c[name]
        oracle = (
            "-" if o["oracle_found"] is None else f"{o['oracle_found']}/{c['oracle_key_events']}"
        )
        print(
            f"  {name:<15}{o['detection_agreement']:>8.4f}{o['confident_agreement']:>9.4f}"
            f"{o['track_agreement']:>8.4f}{o['shown_face_agreement']:>8.4f}"
            f"{o['truth_recall']:>8.4f}{o['truth_precision']:>8.4f}"
            f"{o['key_events_differing']:>13d} of {n_key:<3d}{oracle:>14}"
        )
    print(
        f"  (boxes: ungated boxes matched at IoU > {MATCH_IOU}, same class; conf>=.5: those at "
        f"confidence >= {CONFIDENT}; tracks: ungated tracks seen matched; faces: same face or die "
        f"value on matched face-up tracks; recall/precision: against the ground truth, objects "
        f"at least {VISIBLE} visible; key events: {', '.join(KEY_EVENTS)}, without track ids, "
        "as multisets)"
    )
    if "gated" in c:
        print(f"  gate {c['gated']['gating']}  faces {c['gated']['faces']}")
    for name in others:
        if c[name]["key_events_differing"]:
            print(f"  key events ungated -> {name}:")
            only_a, only_b = key_sides(c["events"]["ungated"], c["events"][name])
            print(
                "\n".join(
                    [f"    - {line}" for line in only_a] + [f"    + {line}" for line in only_b]
                )
            )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clip", type=Path, default=CLIP_DIR, help="folder with clip.mp4")
    p.add_argument("--frames", type=int, default=None, help="first N frames (default: all)")
    p.add_argument(
        "--modes",
        nargs="+",
        default=DEFAULT_MODES,
        type=_mode,
        help="NAME[:STRIDE][+OPTION...]; names: "
        + ", ".join(MODES)
        + "; options: threads, nonref (decoding), noise (compare: add the noise baseline)",
    )
    p.add_argument("--repeats", type=int, default=1, help="round-robin repeats of each mode")
    p.add_argument(
        "--gating", default="{}", help="GatingConfig fields as JSON, e.g. '{\"context_px\": 96}'"
    )
    p.add_argument("--json", type=Path, help="also write every result here")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0
    modes = args.modes
    results: dict[str, list[dict]] = defaultdict(list)
    for _ in range(args.repeats):
        for mode in modes:
            results[mode].append(spawn(mode, args))
            print(f"  ran {mode}: {results[mode][-1].get('fps', 0):.1f} fps", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=float))
    report(results, FPS_FALLBACK, oracle_events(args.clip, args.frames))
    return 0


if __name__ == "__main__":
    sys.exit(main())
