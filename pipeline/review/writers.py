"""The files of a review, written in the order the pipeline reveals things: ``events.jsonl``,
``alerts.jsonl``, the evidence snapshots and the annotated video (drawn and encoded on a
thread of its own)."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from pipeline.alerts import Alert, AlertState, to_dict
from pipeline.evidence import Snapshots
from pipeline.layout import Layout
from pipeline.live.sources import Gap
from pipeline.review.annotate import AnnotatedVideo, Annotator, picture_size
from pipeline.review.config import ALERTS_FILE, EVENTS_FILE, VIDEO_FILE, ReviewConfig
from pipeline.review.video import VideoInfo
from pipeline.round.events import TableEvent
from pipeline.runner import FrameResult


def event_record(event: TableEvent) -> dict:
    """The JSON object of one event: its type name and every field.

    >>> from pipeline.round.events import DiceRead
    >>> event_record(DiceRead(3, 0.12, (3, 4, 5), 12, 4, True))["type"]
    'DiceRead'
    """
    return {"type": type(event).__name__, **asdict(event)}


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
        """Write the alert's snapshot (:meth:`pipeline.evidence.Snapshots.snapshot`)."""
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
