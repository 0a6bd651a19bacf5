"""The review loop: :func:`review` opens the video, the journal and the writer, runs the frames
:class:`~pipeline.review.stillskip.StillSkip` chooses (and every gap) through the pipeline, in
order, and writes the report."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from pipeline.alerts import Alert
from pipeline.journal import Journal
from pipeline.layout import Layout
from pipeline.live.sources import Gap, Source
from pipeline.review.config import JOURNAL_FILE, ReviewConfig
from pipeline.review.report import RunInfo, Unreadable, write_report
from pipeline.review.stillskip import StillSkip, keep_watching, pipeline_config, still_skip
from pipeline.review.video import VideoInfo, open_video, video_info
from pipeline.review.writers import ReviewWriter
from pipeline.round.events import TableEvent
from pipeline.runner import FrameResult, TablePipeline
from vision.types import Frame

if TYPE_CHECKING:
    from pipeline.bus.publisher import PublisherConfig


@dataclass(frozen=True)
class ReviewResult:
    """What a review found: the run's facts, every event and every journaled alert."""

    info: RunInfo
    events: list[TableEvent]
    alerts: list[Alert]
    out_dir: Path
    skipped_still: int = 0  # frames at a stride step not processed: the picture was still


Emit = Callable[[list[Alert]], list[Alert]]


@dataclass
class _Found:
    events: list[TableEvent] = field(default_factory=list)
    alerts: list[Alert] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    processed: int = 0
    last_s: float = 0.0  # video time of the last frame processed
    wall_s: float = 0.0
    phase: str = "-"  # the round's phase after the last frame processed

    def status(self, started: float) -> dict[str, Any]:
        """What a published review says of itself in its heartbeats (as a monitor does)."""
        elapsed = time.perf_counter() - started
        fps = self.processed / elapsed if elapsed > 0 else 0.0
        return {"fps": round(fps, 1), "phase": self.phase, "state": "reviewing"}


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
    read: Callable[[Frame], None],
    found: _Found,
) -> _Found:
    """The review loop: the frames ``skip`` chooses and every gap through the pipeline and
    into the writer, in order, into ``found``; the pipeline's end last. ``read``: told of
    every frame read."""
    result = None
    for item in source:
        if isinstance(item, Gap):
            for frame in skip.flush():  # the frame held back, seen before the gap
                _step(pipe, frame, writer, emit, found)
            result = _step(pipe, item, writer, emit, found)
            continue
        for frame in skip.take(item, keep_watching(result)):
            result = _step(pipe, frame, writer, emit, found)
        read(item)
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
    if result.state is not None:
        found.phase = str(result.state.phase)
    found.events += result.events
    found.alerts += _alerts(result.alerts, writer, emit)
    writer.draw(result, gap)
    return result


def _emitter(
    journal: Journal,
    stack: ExitStack,
    config: ReviewConfig,
    publish: PublisherConfig | None,
    on_alert: Callable[[Alert], None] | None,
    status: Callable[[], dict[str, Any]],
) -> Emit:
    """Journal (and publish, with ``status`` in the heartbeats) alerts; tell ``on_alert`` of
    each as it is stored."""
    emit: Emit = journal.append_all
    if publish is not None:
        from pipeline.bus.publisher import AlertPublisher

        publisher = stack.enter_context(AlertPublisher(journal, config.table, publish))
        publisher.status = status
        emit = publisher.emit_all
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
    config: ReviewConfig = ReviewConfig(),  # noqa: B008  frozen: a shared default is safe
    *,
    layout_source: str = "given",
    publish: PublisherConfig | None = None,
    on_alert: Callable[[Alert], None] | None = None,
    progress: bool = True,
    pipe: TablePipeline | None = None,
    on_read: Callable[[float], None] | None = None,
) -> ReviewResult:
    """Review ``video`` into ``out_dir`` (made if absent; ValueError if it already holds a
    journal). ``publish``: also publish the alerts on the bus. ``on_alert``: called with each
    alert once journaled. ``progress``: a tqdm bar on stderr. ``pipe``: a pipeline built by
    the caller (its table must be ``config.table``); default: one with the shipped models.
    ``on_read``: called with the video time (s) of each frame read, processed or not."""
    if config.stride < 1 or config.still_stride < 1:
        raise ValueError(f"strides must be at least 1, got {config.stride}, {config.still_stride}")
    if (out_dir / JOURNAL_FILE).exists():
        raise ValueError(f"{out_dir}: already holds a review ({JOURNAL_FILE}); choose another")
    start = time.perf_counter()
    with ExitStack() as stack:
        source = stack.enter_context(open_video(video, config.table, config.stride))
        info = video_info(video, source)
        pipe = pipe or TablePipeline(config.table, layout, pipeline_config(config))
        out_dir.mkdir(parents=True, exist_ok=True)
        journal = stack.enter_context(Journal(out_dir / JOURNAL_FILE))
        found = _Found()
        emit = _emitter(journal, stack, config, publish, on_alert, lambda: found.status(start))
        writer = ReviewWriter(out_dir, layout, info, config)
        stack.callback(writer.close)
        bar = stack.enter_context(_progress(info, video.name, progress))
        skip = still_skip(config, pipe)
        _run(pipe, source, skip, writer, emit, _reader(bar, on_read), found)
    found.wall_s = time.perf_counter() - start
    run = _run_info(video, layout_source, info, config, found)
    write_report(out_dir, run, found.events, found.alerts)
    return ReviewResult(run, found.events, found.alerts, out_dir, skip.skipped)


def _reader(bar: tqdm, on_read: Callable[[float], None] | None) -> Callable[[Frame], None]:
    """What is told of each frame read: the bar (frames read, those not processed included)
    and ``on_read`` (the frame's video time)."""

    def read(frame: Frame) -> None:
        bar.update(frame.index + 1 - bar.n)
        if on_read is not None:
            on_read(frame.time_s)

    return read


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
