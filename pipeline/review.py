"""Post-incident review: a recorded video through the table pipeline, into a folder to read.

:func:`review` decodes the video, runs every ``stride``-th frame through
:class:`~pipeline.runner.TablePipeline` (fewer while the picture stays still:
:class:`StillSkip`) and writes into ``out_dir``:

- ``events.jsonl``: one JSON object per table event, ``{"type": "DiceRead", "frame": ...}``
  with every field of the event, in the order the events were revealed;
- ``journal.sqlite``, the alert journal that numbers the alerts, and ``alerts.jsonl``, each
  alert's wire object (schema 1, ``seq`` included) as journaled;
- ``snapshots/{table}/...jpg``: per irregularity, the frame where it began (the evidence's
  ``snapshot``), its evidence tracks outlined in red;
- ``annotated.mp4``: H.264 at reduced size: zones and box numbers, tracks with ids and faces,
  the phase, the open alerts;
- ``report.html`` (:mod:`pipeline.report`).

Frames come from :func:`pipeline.sources.open_source`. A stretch it cannot read (a corrupt or
truncated file) is a :class:`~pipeline.sources.Gap`: the pipeline is told the camera was lost
there (the table is blind, never empty) and the summary and the report name the interval.
The journal, the snapshots and the files are the sink; the pipeline itself does no I/O.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import av
import cv2
import numpy as np
from tqdm import tqdm

from pipeline.alerts import Alert, AlertState, to_dict
from pipeline.events import TableEvent
from pipeline.health import HealthConfig
from pipeline.journal import Journal
from pipeline.layout import Layout
from pipeline.report import REPORT_FILE, RunInfo, Unreadable, write_report
from pipeline.runner import FrameResult, PipelineConfig, TablePipeline
from pipeline.snapshots import SnapshotConfig, Snapshots, alert_line, severity_colour
from pipeline.sources import Gap, ReadAhead, Source, open_source
from vision.draw import (
    DEFAULT_STYLE,
    band_height,
    draw_card,
    draw_tracks,
    draw_zones,
    text_band,
)
from vision.gating import GatingConfig, changed_boxes, grey_small
from vision.types import Frame

if TYPE_CHECKING:
    from pipeline.bus.publisher import PublisherConfig

EVENTS_FILE = "events.jsonl"
ALERTS_FILE = "alerts.jsonl"
JOURNAL_FILE = "journal.sqlite"
VIDEO_FILE = "annotated.mp4"
OUTPUT_FILES = (EVENTS_FILE, ALERTS_FILE, JOURNAL_FILE, VIDEO_FILE, REPORT_FILE)
SNAPSHOT_DIR = "snapshots"
VIDEO_PRESET = "veryfast"  # x264 speed preset of annotated.mp4
MAX_RATE_DENOMINATOR = 1001  # frame rates as fractions: 30000/1001 stays exact


@dataclass(frozen=True)
class ReviewConfig:
    """How a review runs and what it writes; each line says what raising it trades."""

    table: str = "T1"
    stride: int = 1  # process every stride-th frame; higher: faster, but the tracker and
    # the reconstructor see coarser motion (groups and exposures may be missed)
    still_stride: int = 8  # while the picture stays still, process only every still_stride-th
    # frame (StillSkip; at most stride: off). Higher: faster on a quiet table, but events that
    # wait for the table to hold still (dice read, delivery done) come up to this many frames
    # later, and the gate may carry its detections across as many frames
    still_settle: int = GatingConfig.settle_frames  # still frames processed at stride before
    # any is skipped: at least the gate's settle_frames, so a table that has just come to rest
    # is detected in full before it is carried; lower: more skipped, higher: fewer
    video_width_px: int | None = 960  # width of annotated.mp4; None: no annotated video
    video_crf: int = 28  # H.264 quality of annotated.mp4: lower is better and bigger
    snapshots: SnapshotConfig = field(default_factory=SnapshotConfig)  # evidence frames
    pipeline: PipelineConfig | None = None


@dataclass(frozen=True)
class VideoInfo:
    """What the file says of the video it holds; ``duration_s`` None when it says not."""

    path: Path
    fps: float
    size_wh: tuple[int, int]
    duration_s: float | None

    @property
    def n_frames(self) -> int:
        """Frames the stated duration holds (0 when unknown)."""
        return round((self.duration_s or 0.0) * self.fps)


@dataclass(frozen=True)
class ReviewResult:
    """What a review found: the run's facts, every event and every journaled alert."""

    info: RunInfo
    events: list[TableEvent]
    alerts: list[Alert]
    out_dir: Path
    skipped_still: int = 0  # frames at a stride step not processed: the picture was still


def open_video(path: Path, camera: str, keep_every: int = 1, **settings) -> Source:
    """The frames and gaps of a video file (or an image folder), read ahead by a worker
    thread; only frames whose index is a multiple of ``keep_every``. ``settings``: more
    :class:`pipeline.sources.SourceConfig` fields. ValueError (one line) for a missing file, a
    file that is not a video, a video without a picture size."""
    if not path.exists():
        raise ValueError(f"{path}: no such file")
    source = open_source(str(path), camera_id=camera, keep_every=keep_every, **settings)
    if source.size_wh is None:
        source.close()
        raise ValueError(f"{path}: the video has no picture size")
    return ReadAhead(source)


def probe_video(path: Path) -> VideoInfo:
    """Check that ``path`` is a readable video and say what it holds (see :func:`open_video`)."""
    with open_video(path, "probe") as source:
        return _info(path, source)


def _info(path: Path, source: Source) -> VideoInfo:
    assert source.size_wh is not None  # open_video refuses a source without one
    return VideoInfo(path, source.fps, source.size_wh, getattr(source, "duration_s", None))


def event_record(event: TableEvent) -> dict:
    """The JSON object of one event: its type name and every field.

    >>> from pipeline.events import DiceRead
    >>> event_record(DiceRead(3, 0.12, (3, 4, 5), 12, 4, True))["type"]
    'DiceRead'
    """
    return {"type": type(event).__name__, **asdict(event)}


def picture_size(source_wh: tuple[int, int], width_px: int) -> tuple[int, int]:
    """The size of a source picture reduced to at most ``width_px`` wide, both sides even.

    >>> picture_size((1920, 1080), 960)
    (960, 540)
    """
    w, h = source_wh
    scale = min(1.0, width_px / w)
    return max(2, round(w * scale / 2) * 2), max(2, round(h * scale / 2) * 2)


class AnnotatedVideo:
    """H.264 (PyAV) of annotated frames of ``size_wh``. Timestamps are the source's frame
    indices, so a strided review plays in real time (variable frame rate)."""

    def __init__(self, path: Path, size_wh: tuple[int, int], fps: float, crf: int) -> None:
        self.size_wh = size_wh
        self._container = av.open(str(path), "w")
        rate = Fraction(fps).limit_denominator(MAX_RATE_DENOMINATOR)
        self._stream = self._container.add_stream("libx264", rate=rate)
        self._stream.width, self._stream.height = size_wh
        self._stream.pix_fmt = "yuv420p"
        self._stream.codec_context.time_base = 1 / rate
        self._stream.options = {"crf": str(crf), "preset": VIDEO_PRESET}
        self._last_pts = -1

    def write(self, image: np.ndarray, index: int) -> None:
        frame = av.VideoFrame.from_ndarray(image, format="bgr24")
        frame.pts = self._last_pts = max(index, self._last_pts + 1)
        self._container.mux(self._stream.encode(frame))

    def close(self) -> None:
        self._container.mux(self._stream.encode(None))
        self._container.close()


def _status_lines(result: FrameResult, table: str) -> list[str]:
    frame, state = result.frame, result.state
    blind = "  CAMERA LOST" if result.blind else ""
    head = f"{table}  frame {frame.index}  {frame.time_s:.2f} s"
    if state is None:
        return [head + blind]
    facts = []
    if state.dice:
        facts.append(f"dice {' '.join(map(str, state.dice))} -> first box {state.first_box}")
    if state.delivery:
        facts.append("delivered to boxes " + " ".join(map(str, state.delivery)))
    return [
        f"{head}  round {state.round_index}  {str(state.phase).upper()}{blind}",
        "   ".join(facts),
    ]


class Annotator:
    """Pictures of the annotated video: a status band (frame, time, round, phase, dice,
    delivery), the frame reduced to ``picture_wh`` with zones, box numbers and tracks (ids,
    faces; the open alerts' evidence in red), and a band of open alerts below."""

    STATUS_LINES = 2
    ALERT_LINES = 3

    def __init__(self, layout: Layout, table: str, picture_wh: tuple[int, int]) -> None:
        self.layout, self.table, self.picture_wh = layout, table, picture_wh
        self.style = DEFAULT_STYLE.for_width(picture_wh[0])
        extra = band_height(self.STATUS_LINES, self.style) + band_height(
            self.ALERT_LINES, self.style
        )
        self.size_wh = (picture_wh[0], picture_wh[1] + extra)

    def frame(self, result: FrameResult, open_alerts: Mapping[tuple, Alert]) -> np.ndarray:
        image, style, (w, _) = result.frame.image, self.style, self.picture_wh
        scale = w / image.shape[1]
        view = cv2.resize(image, self.picture_wh, interpolation=cv2.INTER_AREA)
        view = draw_zones(view, self.layout.zones_px, scale, style)
        highlight = {i for a in open_alerts.values() for i in _track_ids(a)}
        view = draw_tracks(view, result.tracks, scale, highlight, style)
        alerts = [(alert_line(a), severity_colour(a)) for a in open_alerts.values()]
        return np.vstack(
            [
                text_band(w, _status_lines(result, self.table), self.STATUS_LINES, style=style),
                view,
                text_band(w, alerts, self.ALERT_LINES, style=style),
            ]
        )

    def gap(self, gap: Gap) -> np.ndarray:
        end = "the end" if gap.end_s is None else f"{gap.end_s:.2f} s"
        lines = ["NO PICTURE", f"{gap.start_s:.2f} s to {end}", gap.reason]
        return draw_card(self.size_wh, lines, self.style)


def _track_ids(alert: Alert) -> list[int]:
    return [i for i in alert.evidence.get("track_ids", ()) if type(i) is int]


class _InOrder:
    """Jobs run one after another on a worker thread, at most ``depth`` waiting (a caller
    beyond that waits), so drawing and encoding the annotated video overlap the pipeline on
    the other core. The first error a job raises is raised to the caller, at its next
    :meth:`submit` or at :meth:`close`; the jobs after it are not run."""

    def __init__(self, depth: int = 8) -> None:
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue(depth)
        self._error: BaseException | None = None
        self._raised = False
        self._thread = threading.Thread(target=self._work, name="annotated-video", daemon=True)
        self._thread.start()

    def submit(self, job: Callable[[], None]) -> None:
        self._raise()
        self._jobs.put(job)

    def close(self) -> None:
        """Wait for the jobs submitted; raise the first error not raised yet."""
        self._jobs.put(None)
        self._thread.join()
        self._raise()

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            if self._error is None:
                try:
                    job()
                except BaseException as exc:  # handed to the caller's thread
                    self._error = exc

    def _raise(self) -> None:
        if self._error is not None and not self._raised:
            self._raised = True
            raise self._error


class ReviewWriter:
    """The files of one review. Per source item :meth:`remember`, then for each alert
    :meth:`snapshot` before it is journaled and :meth:`journaled` after, then :meth:`draw`;
    :meth:`close` at the end."""

    def __init__(self, out_dir: Path, layout: Layout, info: VideoInfo, config: ReviewConfig):
        self.out_dir, self.layout, self.config = out_dir, layout, config
        self._events = open(out_dir / EVENTS_FILE, "w", encoding="utf-8")  # noqa: SIM115
        self._alerts = open(out_dir / ALERTS_FILE, "w", encoding="utf-8")  # noqa: SIM115
        self._snapshots = Snapshots(out_dir, layout, config.snapshots)
        self._video: AnnotatedVideo | None = None
        self._drawing: _InOrder | None = None
        if config.video_width_px:
            picture_wh = picture_size(info.size_wh, config.video_width_px)
            self._annotator = Annotator(layout, config.table, picture_wh)
            self._video = AnnotatedVideo(
                out_dir / VIDEO_FILE, self._annotator.size_wh, info.fps, config.video_crf
            )
            self._drawing = _InOrder()
        self.open_alerts: dict[tuple, Alert] = {}  # key -> latest alert, until it closes

    def remember(self, result: FrameResult, gap: Gap | None = None) -> None:
        """A processed frame (or the start of a ``gap``): its events; the frame for snapshots."""
        for event in result.events:
            self._events.write(json.dumps(event_record(event)) + "\n")
        if gap is None:
            self._snapshots.push(result.frame, result.tracks)

    def draw(self, result: FrameResult, gap: Gap | None = None) -> None:
        """The frame's picture in the annotated video (a card saying what is missing for a
        gap), with the alerts open after it."""
        if self._video is None or self._drawing is None:
            return
        video, annotator, alerts = self._video, self._annotator, dict(self.open_alerts)

        def draw_it() -> None:  # on the drawing thread
            view = annotator.frame(result, alerts) if gap is None else annotator.gap(gap)
            video.write(view, result.frame.index)

        self._drawing.submit(draw_it)

    def snapshot(self, alert: Alert) -> Alert:
        """Write the alert's snapshot (:meth:`pipeline.snapshots.Snapshots.snapshot`)."""
        return self._snapshots.snapshot(alert)

    def journaled(self, alerts: list[Alert]) -> None:
        """Alerts as the journal numbered them: to ``alerts.jsonl`` and the open set."""
        for alert in alerts:
            self._alerts.write(json.dumps(to_dict(alert), ensure_ascii=False) + "\n")
            if alert.state == AlertState.CLOSE:
                self.open_alerts.pop(alert.key, None)
            else:
                self.open_alerts[alert.key] = alert
        self._alerts.flush()

    def close(self) -> None:
        self._events.close()
        self._alerts.close()
        if self._video is not None and self._drawing is not None:
            try:
                self._drawing.close()
            finally:
                self._video.close()


Emit = Callable[[list[Alert]], list[Alert]]


class StillSkip:
    """Which frames a review processes: every ``stride``-th (``index % stride == 0``) while the
    picture changes, one in ``still_stride`` while it stays still.

    A frame at a stride step is *still* when the motion gate's own test
    (:func:`vision.gating.changed_boxes` on its grey mask, with ``gating``'s thresholds) finds
    no change from the last frame processed: a frame skipped is one the gate would carry.
    Nothing is skipped until ``settle`` still frames in a row have been processed (by then the
    gate has detected the resting table in full), while the caller says the pipeline must
    keep watching (:func:`keep_watching`: the camera is lost, or a die or a face is still being
    read), or where the health check (``health``) would see a repeated or blank picture (a
    frozen or blank feed is judged at the usual pace). When a change is seen after skipped
    frames, the last one skipped (the step just before) is processed first: motion is seen
    from its start at stride steps, as without skipping. Between stride steps nothing is
    looked at.

    Per frame in order, :meth:`take` says which frames to process now; :meth:`flush` gives
    the frame held back (before a gap, at the end) and forgets the picture.

    >>> skip = StillSkip(stride=2, still_stride=8, settle=0)
    >>> rng = np.random.default_rng(0)
    >>> table = np.tile(np.arange(0, 256, 4, dtype=np.uint8), (64, 1))
    >>> def picture(i):  # a still table with sensor noise; a chip put down at frame 12
    ...     image = table + rng.integers(0, 2, table.shape, dtype=np.uint8)
    ...     image[20:40, 20:40] = 255 if i >= 12 else image[20:40, 20:40]
    ...     return np.dstack([image] * 3)
    >>> [f.index for i in range(22) for f in skip.take(Frame("c", i, i / 25, picture(i)))]
    [0, 8, 10, 12, 20]
    """

    def __init__(
        self,
        stride: int,
        still_stride: int,
        settle: int = ReviewConfig.still_settle,
        gating: GatingConfig | None = None,
        health: HealthConfig | None = None,
    ) -> None:
        self.stride, self.still_stride, self.settle = stride, still_stride, settle
        self.gating, self.health = gating or GatingConfig(), health or HealthConfig()
        self.skipped = 0  # frames at stride steps not processed
        self._held: Frame | None = None  # the last frame skipped
        self._forget()

    @property
    def enabled(self) -> bool:
        return self.still_stride > self.stride

    def take(self, frame: Frame, watch: bool = False) -> list[Frame]:
        """The frames to process now, in order: none, ``frame``, or the frame held back and
        ``frame``. ``watch``: skip nothing now (see :func:`keep_watching`)."""
        if frame.index % self.stride:
            return []
        if not self.enabled:
            return [frame]
        grey = grey_small(frame.image, self.gating.mask_scale)
        if self._last is None or watch or self._changed(grey):
            self._still = 0
            return self._process(frame, grey, keep_held=True)
        self._still += 1
        if (
            self._still <= self.settle
            or frame.index - self._last.index >= self.still_stride
            or self._repeat(frame)
        ):
            return self._process(frame, grey, keep_held=False)
        self._drop_held()
        self._held = frame
        return []

    def flush(self) -> list[Frame]:
        """The frame held back, if any; then forget the picture (the next frame is processed)."""
        held = self._take_held()
        self._forget()
        return held

    def _take_held(self) -> list[Frame]:
        held, self._held = self._held, None
        return [] if held is None else [held]

    def _drop_held(self) -> None:
        self.skipped += self._held is not None
        self._held = None

    def _forget(self) -> None:
        self._last: Frame | None = None  # the last frame processed
        self._last_grey: np.ndarray | None = None  # its gate mask picture
        self._last_sample: np.ndarray | None = None  # its health sample, when needed
        self._still = 0  # still stride steps in a row

    def _process(self, frame: Frame, grey: np.ndarray, keep_held: bool) -> list[Frame]:
        """``frame`` processed now (after the frame held back, if ``keep_held``)."""
        if not keep_held:
            self._drop_held()
        self._last, self._last_grey, self._last_sample = frame, grey, None
        return [*self._take_held(), frame]

    def _changed(self, grey: np.ndarray) -> bool:
        cfg = self.gating
        return bool(len(changed_boxes(self._last_grey, grey, cfg.diff_threshold, cfg.min_blob_px)))

    def _repeat(self, frame: Frame) -> bool:
        """Blank, or a repeat of the last frame processed, by the health check's thresholds on
        a coarse sample, per channel where it takes the grey: what this calls so, it would."""
        cfg = self.health
        if self._last_sample is None:
            self._last_sample = coarse_sample(self._last.image, cfg.stride_px)
        sample = coarse_sample(frame.image, cfg.stride_px)
        if max(cv2.meanStdDev(sample)[1].flat) <= cfg.blank_std_max:
            return True
        return cv2.norm(sample, self._last_sample, cv2.NORM_L1) / sample.size <= cfg.frozen_diff_max


def coarse_sample(image: np.ndarray, stride_px: int) -> np.ndarray:
    """About every ``stride_px``-th pixel each way of ``image (H, W, 3)``: ``(ceil(H/s),
    ceil(W/s), 3) uint8``, the pixels :func:`pipeline.health.grey_sample` takes when the
    sides divide (several times cheaper: no float copy).

    >>> coarse_sample(np.arange(48, dtype=np.uint8).reshape(4, 4, 3), 2)[:, :, 0].tolist()
    [[0, 6], [24, 30]]
    """
    h, w = image.shape[:2]
    size_wh = (-(-w // stride_px), -(-h // stride_px))
    return cv2.resize(image, size_wh, interpolation=cv2.INTER_NEAREST)


def keep_watching(pipe: TablePipeline, result: FrameResult | None) -> bool:
    """Whether the frames after ``result`` must not be skipped, however still the picture: the
    camera is lost (its return is judged at the usual pace), or a die or a face-up tile in
    view is not read yet (each frame is another reading of its face: on a rendered round,
    skipping lost the only flat reading of three dice that took 12 frames to read)."""
    if pipe.health.lost is not None:
        return True
    if result is None:
        return False
    now = result.frame.index
    return any(
        t.last_seen_frame == now
        and (t.die_value is None if t.kind == "die" else t.face_up and t.face is None)
        for t in result.tracks
        if t.kind in ("die", "tile")
    )


@dataclass
class _Found:
    events: list[TableEvent] = field(default_factory=list)
    alerts: list[Alert] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    processed: int = 0
    last_s: float = 0.0  # video time of the last frame processed
    wall_s: float = 0.0


def _alerts(alerts: list[Alert], writer: ReviewWriter, emit: Emit) -> list[Alert]:
    if not alerts:
        return []
    stored = emit([writer.snapshot(a) for a in alerts])
    writer.journaled(stored)
    return stored


def _run(
    pipe: TablePipeline,
    source: Source,
    skip: StillSkip,
    writer: ReviewWriter,
    emit: Emit,
    bar: tqdm,
) -> _Found:
    """The review loop: the frames ``skip`` chooses and every gap through the pipeline and
    into the writer, in order; the pipeline's end last."""
    found, result = _Found(), None
    for item in source:
        if isinstance(item, Gap):
            for frame in skip.flush():  # the frame held back, seen before the gap
                _step(pipe, frame, writer, emit, found)
            _step(pipe, item, writer, emit, found)
            continue
        for frame in skip.take(item, keep_watching(pipe, result)):
            result = _step(pipe, frame, writer, emit, found)
        bar.update(item.index + 1 - bar.n)  # frames read, those not given included
    for frame in skip.flush():
        _step(pipe, frame, writer, emit, found)
    final_events, final_alerts = pipe.finish()
    found.events += final_events
    found.alerts += _alerts(final_alerts, writer, emit)
    return found


def _step(
    pipe: TablePipeline, item: Frame | Gap, writer: ReviewWriter, emit: Emit, found: _Found
) -> FrameResult:
    """One frame (or the start of a gap) through the pipeline and into the writer."""
    gap = item if isinstance(item, Gap) else None
    if gap is not None:
        found.gaps.append(gap)
        result = pipe.no_frame(gap.index, gap.start_s, gap.reason)
    else:
        result = pipe.process(item)
        found.processed += 1
        found.last_s = item.time_s
    writer.remember(result, gap)
    found.events += result.events
    found.alerts += _alerts(result.alerts, writer, emit)
    writer.draw(result, gap)
    return result


def pipeline_config(config: ReviewConfig) -> PipelineConfig:
    """The pipeline settings of a review: the gate may carry its detections across the still
    frames skipped (``max_gap_frames`` at least ``still_stride``; a longer jump still means a
    full detection)."""
    cfg = config.pipeline or PipelineConfig()
    if cfg.gating is None or config.still_stride <= config.stride:
        return cfg
    gap = max(cfg.gating.max_gap_frames, config.still_stride)
    return replace(cfg, gating=replace(cfg.gating, max_gap_frames=gap))


def still_skip(config: ReviewConfig, pipe: TablePipeline) -> StillSkip:
    """The frame chooser of a review with ``config`` on ``pipe`` (its gate's and its health
    check's thresholds)."""
    gating = getattr(pipe.detector, "config", None)
    if not isinstance(gating, GatingConfig):
        gating = pipeline_config(config).gating
    return StillSkip(
        config.stride, config.still_stride, config.still_settle, gating, pipe.health.config
    )


def _emitter(
    journal: Journal,
    stack: ExitStack,
    config: ReviewConfig,
    publish: PublisherConfig | None,
    on_alert: Callable[[Alert], None] | None,
) -> Emit:
    """Journal (and publish) alerts; tell ``on_alert`` of each as it is stored."""
    emit: Emit = journal.append_all
    if publish is not None:
        from pipeline.bus.publisher import AlertPublisher

        emit = stack.enter_context(AlertPublisher(journal, config.table, publish)).emit_all
    if on_alert is None:
        return emit

    def emit_and_tell(alerts: list[Alert]) -> list[Alert]:
        stored = emit(alerts)
        for alert in stored:
            on_alert(alert)
        return stored

    return emit_and_tell


def review(
    video: Path,
    out_dir: Path,
    layout: Layout,
    config: ReviewConfig = ReviewConfig(),
    *,
    layout_source: str = "given",
    publish: PublisherConfig | None = None,
    on_alert: Callable[[Alert], None] | None = None,
    progress: bool = True,
    pipe: TablePipeline | None = None,
) -> ReviewResult:
    """Review ``video`` into ``out_dir`` (made if absent; ValueError if it already holds a
    journal). ``publish``: also publish the alerts on the bus. ``on_alert``: called with each
    alert once journaled. ``progress``: a tqdm bar on stderr. ``pipe``: a pipeline built by
    the caller (its table must be ``config.table``); default: one with the shipped models."""
    if config.stride < 1 or config.still_stride < 1:
        raise ValueError(f"strides must be at least 1, got {config.stride}, {config.still_stride}")
    if (out_dir / JOURNAL_FILE).exists():
        raise ValueError(f"{out_dir}: already holds a review ({JOURNAL_FILE}); choose another")
    start = time.perf_counter()
    with ExitStack() as stack:
        source = stack.enter_context(open_video(video, config.table, config.stride))
        info = _info(video, source)
        pipe = pipe or TablePipeline(config.table, layout, pipeline_config(config))
        out_dir.mkdir(parents=True, exist_ok=True)
        journal = stack.enter_context(Journal(out_dir / JOURNAL_FILE))
        emit = _emitter(journal, stack, config, publish, on_alert)
        writer = ReviewWriter(out_dir, layout, info, config)
        stack.callback(writer.close)
        bar = stack.enter_context(_progress(info, video.name, progress))
        skip = still_skip(config, pipe)
        found = _run(pipe, source, skip, writer, emit, bar)
    found.wall_s = time.perf_counter() - start
    run = _run_info(video, layout_source, info, config, found)
    write_report(out_dir, run, found.events, found.alerts)
    return ReviewResult(run, found.events, found.alerts, out_dir, skip.skipped)


def _progress(info: VideoInfo, name: str, enabled: bool) -> tqdm:
    """A bar of the video's frames read (processed or not)."""
    return tqdm(
        total=info.n_frames or None,
        desc=name,
        unit="frame",
        file=sys.stderr,
        disable=not enabled,
        leave=False,
    )


def _run_info(
    video: Path, layout_source: str, info: VideoInfo, config: ReviewConfig, found: _Found
) -> RunInfo:
    return RunInfo(
        video=str(video),
        table=config.table,
        layout=layout_source,
        fps=info.fps,
        duration_s=max(info.duration_s or 0.0, found.last_s),
        size_wh=info.size_wh,
        frames_processed=found.processed,
        stride=config.stride,
        wall_s=found.wall_s,
        read_until_s=found.last_s,
        unreadable=tuple(
            Unreadable(g.start_s, found.last_s if g.end_s is None else g.end_s, g.reason)
            for g in found.gaps
        ),
    )
