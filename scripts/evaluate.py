"""End-to-end evaluation of the live pipeline on rendered scenario clips: video in, alerts out.

    python scripts/evaluate.py CLIP_DIR [CLIP_DIR ...] --out e2e.json
    python scripts/evaluate.py --suite .cache/suite/std --out e2e.json
    python scripts/evaluate.py CLIP_DIR --golden tests/golden/e2e_demo.json --check

Every decoded frame of ``clip.mp4`` goes through :class:`pipeline.runner.TablePipeline` as the
live monitor runs it (default config: motion gating on; the clip camera's layout; frames the
truth marks blind fed as the video has them, for the health check to find), then ``finish()``.
Scored against the scenario's truth with the offline evaluators' own code: alerts
(``evaluate_rules``: per kind recall, precision, latency from the irregularity's start, and
here medians; false alerts per clean round and in all); dice, first box and delivery order
(as ``evaluate_perception``); tile IDF1, MOTA, HOTA outside the wash (``evaluate_tracking``);
AP50 and AP50-95 per class (``vision.metrics``, as ``evaluate_models``) on 1 frame in
``--map-every`` against objects at least 30% visible, of the boxes the pipeline produced (gated:
some carried forward; above the operating confidence: what the monitor sees, not the model's
best); speed (frames/s of decode + pipeline, video seconds per wall second).

``--golden FILE --check``: floors (``min``) and ceilings (``max``) keyed by dotted paths into the
summary (``per_kind.dice_not_flat.recall``), give or take ``tolerance``; exit 1 when one is not
met. Bad input is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import pickle
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import av
import numpy as np
from evaluate_perception import MIN_VISIBILITY, round_figures  # scripts/ on sys.path
from evaluate_rules import WALL_TIME, ClipRun, Score, score_clip, summarise
from evaluate_tracking import class_id_of, read_clip, reported_tiles, truth_tiles
from evaluate_tracking import evaluate as tracking_scores
from tqdm import tqdm

from pipeline.alerts import Alert, AlertState, to_dict
from pipeline.events import HandExposed, TableEvent, describe
from pipeline.layout import layout_from_scenario
from pipeline.review import ReviewConfig, keep_watching, pipeline_config, still_skip
from pipeline.runner import NO_PICTURE, FrameResult, TablePipeline
from vision.detector import DetectorConfig
from vision.geometry import UNION_EPS, iou_matrix
from vision.metrics import DetectionEvaluator
from vision.types import DETECTOR_CLASSES, Detections, Frame, Track

CLIP_FILES = ("clip.mp4", "scenario.json", "truth.jsonl.gz")
MEMBERSHIP_IOU = 0.3  # a hand's track lies on the truth tile it overlaps this much
MAP_EVERY = 10  # AP on 1 frame in this many: neighbouring frames are nearly the same picture
TABLE = "T1"
ROW = "{:26s} {:>4} {:>5} {:>6} {:>6} {:>5} {:>7} {:>7}"  # the per-kind table


class InputError(Exception):
    """Bad input: reported as one line, exit status 2."""


@dataclass(frozen=True)
class RunConfig:
    limit_frames: int | None = None  # stop after this many frames (quick tests)
    stride: int = 1  # process 1 frame in this many (as review mode); 1: every frame
    still_stride: int = 1  # and 1 in this many while the picture stays still, as review
    # mode chooses frames (pipeline.review.StillSkip); at most stride: off
    map_every: int = MAP_EVERY
    progress: bool = True
    felt: bool = True  # unknown felts balanced (vision.felt); False: the network alone
    vision_cache: Path | None = None  # record what the vision stages saw here; replay it when
    # recorded already (same clip, models and settings): only the round and the rules run


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


def suite_clips(folder: Path) -> list[Path]:
    """The round folders listed in ``folder/suite.json`` (``paigow synth suite``)."""
    index = folder / "suite.json"
    try:
        return [folder / entry["name"] for entry in json.loads(index.read_text("utf-8"))]
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise InputError(f"{index}: not a suite index ({err!r})") from None


def check_clip(folder: Path) -> Path:
    """The folder, or :class:`InputError` when it is not a rendered scenario clip."""
    if not folder.is_dir():
        raise InputError(f"{folder}: no such folder")
    missing = [name for name in CLIP_FILES if not (folder / name).is_file()]
    if missing:
        raise InputError(f"{folder}: no {' and no '.join(missing)}")
    return folder


def run_pipeline(clip: Path, scenario: dict, config: RunConfig) -> Observed:
    """Decoded frames of ``clip.mp4`` through a fresh :class:`TablePipeline`, then finish():
    every frame, or the frames ``paigow review`` would process with the same strides. With a
    vision cache, a recorded run's detections and tracks are replayed instead."""
    review = ReviewConfig(stride=config.stride, still_stride=config.still_stride)
    settings = pipeline_config(review)
    if not config.felt:
        settings = replace(settings, detector=DetectorConfig(threads=settings.threads, felt=None))
    pipe = TablePipeline(TABLE, layout_from_scenario(scenario), settings)
    cache = _cache_file(clip, config)
    recorded = _recorded(cache)
    if recorded is not None:
        return _replay(pipe, recorded, config)
    skip = still_skip(review, pipe)
    fps, seen, result = scenario["fps"], Observed(), None
    total = min(scenario["n_frames"], config.limit_frames or scenario["n_frames"])
    start = time.perf_counter()
    with (
        av.open(str(clip / "clip.mp4")) as container,
        tqdm(total=total, desc=clip.name, unit="frame", disable=not config.progress) as bar,
    ):
        for index, picture in enumerate(container.decode(container.streams.video[0])):
            if index >= total:
                break
            bar.update(1)
            seen.video_s = (index + 1) / fps
            if index % config.stride:
                continue
            frame = Frame(clip.name, index, index / fps, picture.to_ndarray(format="bgr24"))
            for chosen in skip.take(frame, keep_watching(pipe, result)):
                result = _process(pipe, chosen, seen, config)
    for chosen in skip.flush():
        _process(pipe, chosen, seen, config)
    events, alerts = pipe.finish(WALL_TIME)
    seen.wall_s = time.perf_counter() - start
    seen.events += events
    seen.alerts += alerts
    if cache is not None:
        _record(cache, seen)
    return seen


def _cache_file(clip: Path, config: RunConfig) -> Path | None:
    """Where the vision stages' output on ``clip`` under ``config``, today's models and vision
    code is kept."""
    if config.vision_cache is None:
        return None
    root = Path(__file__).resolve().parents[1]  # today's models and vision code
    sources = [
        root / "models" / "manifest.json",
        root / "pipeline" / "runner.py",  # how frames reach the models (the table view)
        *sorted((root / "vision").glob("*.py")),
    ]
    models = b"".join(f.read_bytes() for f in sources)
    key = json.dumps(
        [
            str(clip.resolve()),
            hashlib.sha256(models).hexdigest(),
            config.stride,
            config.still_stride,
            config.limit_frames,
            config.map_every,
            config.felt,
        ]
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return config.vision_cache / f"{clip.name}-{digest}.pkl.gz"


def _record(cache: Path, seen: Observed) -> None:
    """Each processed frame's vision output (no picture), the video and wall seconds."""
    frames = []
    for result in seen.results:
        slim = replace(result.frame, image=NO_PICTURE)
        frames.append(replace(result, frame=slim, state=None, events=[], alerts=[]))
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_suffix(".partial")
    with gzip.open(partial, "wb") as out:
        pickle.dump((frames, seen.video_s, seen.wall_s), out)
    partial.replace(cache)  # a run stopped while writing leaves no cache that looks whole


def _recorded(cache: Path | None) -> tuple | None:
    """A recorded run's frames, video and wall seconds; None when there is none, or when the
    file cannot be read (it is then recorded again, and says so)."""
    if cache is None or not cache.exists():
        return None
    try:
        with gzip.open(cache, "rb") as src:
            return pickle.load(src)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ValueError) as err:
        print(f"evaluate: {cache}: unreadable ({err}); running the clip again", file=sys.stderr)
        return None


def _replay(pipe: TablePipeline, recorded: tuple, config: RunConfig) -> Observed:
    """A recorded run through today's round and rules; wall seconds are the recorded run's."""
    frames, video_s, wall_s = recorded
    seen = Observed(video_s=video_s)
    for recorded in frames:
        result = pipe.rejudge(recorded, WALL_TIME)
        _keep(result, seen, config)
    events, alerts = pipe.finish(WALL_TIME)
    seen.events += events
    seen.alerts += alerts
    seen.wall_s = wall_s
    return seen


def _process(pipe: TablePipeline, frame: Frame, seen: Observed, config: RunConfig):
    result = pipe.process(frame, WALL_TIME)
    if config.vision_cache is not None:
        seen.results.append(result)
    return _keep(result, seen, config)


def _keep(result: FrameResult, seen: Observed, config: RunConfig) -> FrameResult:
    frame = result.frame
    seen.alerts += result.alerts
    seen.events += result.events
    seen.tracks[frame.index] = result.tracks
    if frame.index % config.map_every == 0:
        seen.detections[frame.index] = result.detections
    return result


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


def evaluate_clip(clip: Path, config: RunConfig, detection: DetectionEvaluator):
    """Run and score one clip: its :class:`ClipRun` (for the alert score) and its figures; its
    AP frames also go to ``detection`` (the suite's)."""
    try:
        scenario = json.loads((clip / "scenario.json").read_text(encoding="utf-8"))
    except ValueError as err:
        raise InputError(f"{clip / 'scenario.json'}: not JSON ({err})") from None
    seen = run_pipeline(clip, scenario, config)
    if config.limit_frames:  # irregularities after the last frame read are not scored
        last = min(scenario["n_frames"], config.limit_frames)
        irregular = [i for i in scenario["irregularities"] if i["start_frame"] < last]
        scenario = {**scenario, "irregularities": irregular}
    run = ClipRun(clip.name, scenario, seen.alerts, len(seen.events), seen.wall_s)
    own = DetectionEvaluator(DETECTOR_CLASSES)
    _, frames = read_clip(clip)
    truth = {t["frame"]: t for t in frames.truth}
    return run, {
        "clip": clip.name,
        "injections": scenario["injections"],
        "alerts": [to_dict(a) for a in seen.alerts if a.state is AlertState.OPEN],
        **round_figures(scenario["plan"], seen.events),
        **hand_membership(scenario["plan"], seen, truth),
        "tracking": tracking_figures(frames, seen, [own, detection]),
        "detection": _rounded(own.summary()),
        "frames": len(seen.tracks),
        "video_s": round(seen.video_s, 3),
        "wall_s": round(seen.wall_s, 2),
        "fps": round(len(seen.tracks) / seen.wall_s, 2),
        "events": [f"{e.time_s:.2f}s {describe(e)}" for e in seen.events],
    }


def _rounded(summary: dict) -> dict:
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
    return {
        "recall": alerts.pop("recall"),
        "latency_median_s": _median([x for k in score.kinds.values() for x in k.latencies_s]),
        "false_alerts_per_clean_round": per_clean if score.clean_rounds else None,
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
        "hand_membership": _membership(clips),
        "hand_membership_clean": _membership([c for c in clips if not c["injections"]]),
        "tracking_mean": {k: round(float(np.mean(v)), 4) if v else None for k, v in mean.items()},
        "detection": _rounded(detection.summary()),
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
    tiles = sum(c["hand_tiles"] for c in clips)
    return round(sum(c["hand_tiles_right"] for c in clips) / tiles, 4) if tiles else None


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
        f"{ok[c['first_box_ok']]}, delivery {ok[c['delivery_ok']]}, hands "
        f"{c['hand_tiles_right']}/{c['hand_tiles']} | IDF1 "
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
        f"round), dice {s['dice_correct']}, first box {s['first_box_correct']}, delivery "
        f"{s['delivery_order_correct']}, hand membership {s['hand_membership']} (clean "
        f"{s['hand_membership_clean']}), IDF1 {s['tracking_mean']['idf1']}, mAP50 "
        f"{d['all']['ap50']} (tiles down/up {d['tile_down']['ap50']}/{d['tile_up']['ap50']}), "
        f"{s['fps']} frames/s, {s['realtime']}x real time"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("clips", nargs="*", type=Path, help="scenario folders (clip.mp4, truth)")
    p.add_argument("--suite", type=Path, help="a folder of `paigow synth suite` (suite.json)")
    p.add_argument("--out", type=Path, help="write the summary and per-clip figures here")
    p.add_argument("--limit-frames", type=int, help="only the first N frames of each clip")
    p.add_argument("--stride", type=int, default=1, help="process 1 frame in N (default 1)")
    p.add_argument(
        "--still-stride",
        type=int,
        default=1,
        help="and 1 in N while the picture stays still, as `paigow review` (default 1: off)",
    )
    p.add_argument("--map-every", type=int, default=MAP_EVERY, help="AP on 1 frame in N")
    p.add_argument("--golden", type=Path, help="floors and ceilings for the summary (JSON)")
    p.add_argument("--check", action="store_true", help="exit 1 when --golden is not met")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument(
        "--no-felt", action="store_true", help="no felt balance (vision.felt): the network alone"
    )
    p.add_argument(
        "--vision-cache",
        type=Path,
        help="record the detections and tracks here, or replay them when recorded already "
        "(same clip, models and settings): only the round and the rules run again",
    )
    return p.parse_args(argv)


def _inputs(args: argparse.Namespace) -> tuple[list[Path], dict | None]:
    """Clip folders and golden figures, checked before any clip runs."""
    if args.check and args.golden is None:
        raise InputError("--check needs --golden")
    for name in ("limit_frames", "stride", "still_stride", "map_every"):
        if (value := getattr(args, name)) is not None and value < 1:
            raise InputError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    clips = list(args.clips) + (suite_clips(args.suite) if args.suite else [])
    if not clips:
        raise InputError("give clip folders or --suite DIR")
    golden = None
    if args.golden:
        try:
            golden = json.loads(args.golden.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise InputError(f"{args.golden}: {err}") from None
    return [check_clip(c) for c in clips], golden


def evaluate_all(clips: list[Path], config: RunConfig) -> tuple[dict, list[dict]]:
    """Every clip run and scored: the summary and the per-clip figures."""
    detection, runs, figures = DetectionEvaluator(DETECTOR_CLASSES), [], []
    for clip in clips:
        try:
            run, clip_figures = evaluate_clip(clip, config, detection)
        except (OSError, ValueError, KeyError, av.FFmpegError) as err:  # a damaged clip
            raise InputError(f"{clip}: {type(err).__name__}: {err}") from None
        runs.append(run)
        figures.append(clip_figures)
    summary = summary_of(runs, figures, detection)
    settings = {**asdict(config), "vision_cache": config.vision_cache and str(config.vision_cache)}
    summary["config"] = {"pipeline": "PipelineConfig() (motion gating on)", **settings}
    return summary, figures


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        clips, golden = _inputs(args)
        config = RunConfig(
            args.limit_frames,
            args.stride,
            args.still_stride,
            args.map_every,
            not args.quiet,
            not args.no_felt,
            args.vision_cache,
        )
        summary, figures = evaluate_all(clips, config)
    except InputError as err:
        print(f"evaluate: {err}", file=sys.stderr)
        return 2
    print_report(summary, figures)
    if args.out:
        report = json.dumps({"summary": summary, "clips": figures}, indent=1)
        args.out.write_text(report + "\n", encoding="utf-8")
    missed = shortfalls(summary, golden) if golden else []
    for line in missed:
        print(f"short of {args.golden}: {line}")
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
