"""Still-frame skip: which frames a review processes while the picture stays still
(:class:`StillSkip`), when it must keep watching all the same (:func:`keep_watching`), and the
pipeline settings that let the motion gate carry its detections across the frames skipped."""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from pipeline.review.config import ReviewConfig
from pipeline.runner import FrameResult, PipelineConfig, TablePipeline
from vision.types import Frame


class Stages(Protocol):
    """What the pipeline's stages would make of a frame given next, asked before it is
    (:class:`~pipeline.runner.TablePipeline` answers; each test is then not made again)."""

    def unchanged(self, frame: Frame) -> bool:
        """The motion gate would see nothing changed (it would carry its detections)."""
        ...

    def suspect(self, frame: Frame) -> bool:
        """The health check would see a blank picture or a repeat of the last one."""
        ...


class StillSkip:
    """Which frames a review processes: every ``stride``-th (``index % stride == 0``) while the
    picture changes, one in ``still_stride`` while it stays still.

    A frame at a stride step is *still* when the motion gate would carry it: ``stages`` (the
    pipeline the frames go through) says its gate sees no change (:meth:`Stages.unchanged`).
    (A pipeline whose detector has no gate sees every frame changed: nothing is skipped.)
    Nothing is skipped until ``settle`` still frames in a row have been processed (by then the
    gate has detected the resting table in full), while the caller says the pipeline must
    keep watching (:func:`keep_watching`: the camera is lost, or a die or a face is still being
    read), or where the health check would see a repeated or blank picture
    (:meth:`Stages.suspect`: a frozen or blank feed is judged at the usual pace). When a change
    is seen after skipped frames, the last one skipped (the step just before) is processed
    first: motion is seen from its start at stride steps, as without skipping. Between stride
    steps nothing is looked at.

    Per frame in order, :meth:`take` says which frames to process now, and the caller
    processes them, in order, through ``stages`` (whose answers depend on the frames it has
    seen); :meth:`flush` gives the frame held back (before a gap, at the end) and forgets the
    picture.
    """

    def __init__(
        self,
        stride: int,
        still_stride: int,
        stages: Stages,
        settle: int = ReviewConfig.still_settle,
    ) -> None:
        self.stride, self.still_stride, self.settle = stride, still_stride, settle
        self.stages = stages
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
        if self._last is None or watch or not self.stages.unchanged(frame):
            self._still = 0
            return self._process(frame, keep_held=True)
        self._still += 1
        if (
            self._still <= self.settle
            or frame.index - self._last.index >= self.still_stride
            or self.stages.suspect(frame)
        ):
            return self._process(frame, keep_held=False)
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
        self._still = 0  # still stride steps in a row

    def _process(self, frame: Frame, keep_held: bool) -> list[Frame]:
        """``frame`` processed now (after the frame held back, if ``keep_held``)."""
        if not keep_held:
            self._drop_held()
        self._last = frame
        return [*self._take_held(), frame]


def keep_watching(result: FrameResult | None) -> bool:
    """Whether the frames after ``result`` (the pipeline's last) must not be skipped, however
    still the picture: the camera is lost (``result.blind``: its return is judged at the usual
    pace), or a die or a face-up tile in view is not read yet (each frame is another reading
    of its face: on a rendered round, skipping lost the only flat reading of three dice that
    took 12 frames to read)."""
    if result is None:
        return False
    if result.blind:
        return True
    now = result.frame.index
    return any(
        t.last_seen_frame == now
        and (t.die_value is None if t.kind == "die" else t.face_up and t.face is None)
        for t in result.tracks
        if t.kind in ("die", "tile")
    )


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
    """The frame chooser of a review with ``config`` on ``pipe`` (which answers its
    questions)."""
    return StillSkip(config.stride, config.still_stride, pipe, config.still_settle)
