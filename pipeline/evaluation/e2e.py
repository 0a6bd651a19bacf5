"""End-to-end evaluation of the live pipeline on rendered scenario clips: video in, alerts out.

Every decoded frame of ``clip.mp4`` goes through :class:`pipeline.runner.TablePipeline` as the
live monitor runs it (default config: motion gating on; the clip camera's layout; frames the
truth marks blind fed as the video has them, for the health check to find), then ``finish()``;
or the frames ``paigow review`` would process with the same strides (:class:`RunConfig`).
Scored by :mod:`pipeline.evaluation.e2e_score`; dice, first box and delivery order as
:func:`pipeline.evaluation.perception.round_figures`. With a vision cache, what the vision
stages saw is recorded, and replayed when recorded already (same clip, models and settings):
only the round and the rules run again. Used by ``scripts/evaluate.py`` and
``scripts/evaluate_families.py``; bad input raises :class:`InputError`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import pickle
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import av
from tqdm import tqdm

from pipeline.alerts import AlertState, to_dict
from pipeline.evaluation.e2e_score import (
    Observed,
    hand_membership,
    rounded_ap,
    stakes_at_bets_close,
    summary_of,
    tracking_figures,
)
from pipeline.evaluation.perception import dealt, round_figures
from pipeline.evaluation.rules import WALL_TIME, ClipRun
from pipeline.evaluation.truth import read_clip
from pipeline.layout import as_pixel_layout, layout_from_scenario
from pipeline.review import ReviewConfig, keep_watching, pipeline_config, still_skip
from pipeline.round.events import describe
from pipeline.runner import NO_PICTURE, FrameResult, TablePipeline
from vision.detector import DetectorConfig
from vision.metrics import DetectionEvaluator
from vision.types import DETECTOR_CLASSES, Frame

CLIP_FILES = ("clip.mp4", "scenario.json", "truth.jsonl.gz")
MAP_EVERY = 10  # AP on 1 frame in this many: neighbouring frames are nearly the same picture
TABLE = "T1"


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
    vision_cache: Path | None = None  # record what the vision stages saw here, or replay it
    # each round's layout as image-pixel polygons, no reference points, no tile length (as a
    # casino might write it): "estimated" (the tile's length from the boxes), "unscaled"
    pixel_layout: str | None = None


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
    layout = layout_from_scenario(scenario)
    if config.pixel_layout is not None:
        layout = as_pixel_layout(layout, scaled=config.pixel_layout == "estimated")
    pipe = TablePipeline(TABLE, layout, settings)
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
            for chosen in skip.take(frame, keep_watching(result)):
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
    """Where the models' output on ``clip`` (its folder, its ``scenario.json`` and the size of
    its video: a round rendered again in the same folder is run again) under ``config``,
    today's models and the code that runs them is kept. The tracker's code is not in the key:
    a replay tracks the recorded detections again (:meth:`TablePipeline.retrack`)."""
    if config.vision_cache is None:
        return None
    root = Path(__file__).resolve().parents[2]  # today's models and vision code
    sources = [
        root / "models" / "manifest.json",
        root / "pipeline" / "runner.py",  # how frames reach the models (the table view)
        root / "pipeline" / "live" / "health.py",  # the camera check (its events are replayed)
        *sorted(
            p
            for p in (root / "vision").rglob("*.py")
            if "synth" not in p.parts and "tracking" not in p.parts
        ),
    ]
    models = b"".join(f.read_bytes() for f in sources)
    key = json.dumps(
        [
            str(clip.resolve()),
            hashlib.sha256((clip / "scenario.json").read_bytes()).hexdigest(),
            (clip / "clip.mp4").stat().st_size,
            hashlib.sha256(models).hexdigest(),
            config.stride,
            config.still_stride,
            config.limit_frames,
            config.map_every,
            config.felt,
            *([config.pixel_layout] if config.pixel_layout else []),  # earlier keys unchanged
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
    """A recorded run's detections through today's tracker, round and rules; wall seconds are
    the recorded run's."""
    frames, video_s, wall_s = recorded
    seen = Observed(video_s=video_s)
    for recorded in frames:
        result = pipe.rejudge(pipe.retrack(recorded), WALL_TIME)
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
        **round_figures(scenario["plan"], seen.events, dealt(scenario)),
        **hand_membership(scenario["plan"], seen, truth),
        **stakes_at_bets_close(scenario["plan"], seen.events),
        "tracking": tracking_figures(frames, seen, [own, detection]),
        "detection": rounded_ap(own.summary()),
        "frames": len(seen.tracks),
        "video_s": round(seen.video_s, 3),
        "wall_s": round(seen.wall_s, 2),
        "fps": round(len(seen.tracks) / seen.wall_s, 2),
        "events": [f"{e.time_s:.2f}s {describe(e)}" for e in seen.events],
    }


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
