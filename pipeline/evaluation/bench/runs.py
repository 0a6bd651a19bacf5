"""One bench mode's run: the clip's frames decoded (:func:`frames`), the decode floor
(:func:`run_decode`) or the table pipeline on them (:func:`run_pipeline`), timed; the summary
a child prints as its JSON line."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from pipeline.evaluation.bench.events import event_lines

FPS_FALLBACK = 25.0


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


def make_pipeline(
    args,
    gated: bool,
    still_stride: int = 1,
    read_backs: bool = True,
    check_pips: bool = True,
    find_dice: bool = True,
):
    """A :class:`TablePipeline` for the clip (its ``scenario.json`` layout), its detector and
    reader wrapped in :class:`Timed`; gated: motion-gated detector (``--gating`` settings, as a
    review with ``still_stride`` sets them) and face cache; ``read_backs`` False: the face-down
    check reads the face-down boxes only (the reader before 2026-12-02); ``check_pips`` False:
    no pip check of tile crops (the reader before 2026-12-03); ``find_dice`` False: no dice
    finder (the pipeline before session 26)."""
    from pipeline.layout import layout_from_scenario
    from pipeline.review import ReviewConfig, pipeline_config
    from pipeline.runner import PipelineConfig, TablePipeline
    from vision.detector import Detector
    from vision.face_reader import FaceReader
    from vision.gating import GatedDetector, GatingConfig

    detector, reader = Detector(), FaceReader(read_backs=read_backs, check_pips=check_pips)
    if gated:
        config = GatingConfig(**json.loads(args.gating))
        review = ReviewConfig(stride=1, still_stride=still_stride)
        config = pipeline_config(replace(review, pipeline=PipelineConfig(gating=config))).gating
        detector = GatedDetector(detector, config)
    layout = layout_from_scenario(args.clip / "scenario.json")
    timed_detector, timed_reader = Timed(detector), Timed(reader)
    # the pipeline keeps its face cache around the (timed) reader when gated
    config = PipelineConfig() if gated else PipelineConfig(face_cache=None)
    if not find_dice:
        config = replace(config, dice_finder=None)
    pipe = TablePipeline("bench", layout, config, detector=timed_detector, reader=timed_reader)
    return pipe, timed_detector, timed_reader


def still_option(options) -> int:
    """N of a ``stillN`` option (1 without one: no still frames skipped)."""
    return next((int(o.removeprefix("still")) for o in options if o.startswith("still")), 1)


def run_pipeline(args, gated: bool, stride: int, options: frozenset) -> dict:
    from pipeline.review import StillSkip, keep_watching
    from vision.types import Frame

    still = still_option(options)
    pipe, det, reader = make_pipeline(
        args, gated, still, *(o not in options for o in ("frontsonly", "nopips", "nofinder"))
    )
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
    out |= {"events": event_lines(events), "detector_ms": ms(det.times)}
    out |= {"reader_ms": ms(reader.times), "still_skipped": skip.skipped}
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


def summary(per_frame: list[float], n_decoded: int, wall: float) -> dict:
    return {
        "frames": n_decoded,
        "processed": len(per_frame),
        "wall_s": wall,
        "fps": n_decoded / wall if wall else 0.0,
        "ms": ms(per_frame),
    }


def ms(times: list[float]) -> dict:
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
