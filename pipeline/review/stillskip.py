"""Still-frame skip: which frames a review processes while the picture stays still
(:class:`StillSkip`), when it must keep watching all the same (:func:`keep_watching`), and the
pipeline settings that let the motion gate carry its detections across the frames skipped."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from pipeline.live.health import HealthConfig
from pipeline.review.config import ReviewConfig
from pipeline.runner import FrameResult, PipelineConfig, TablePipeline
from vision.gating import GatingConfig, changed_boxes, grey_small
from vision.types import Frame


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
    ceil(W/s), 3) uint8``, the pixels :func:`pipeline.live.health.grey_sample` takes when the
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
