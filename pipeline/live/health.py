"""Frame health: is the camera giving usable pictures? Blank and frozen feeds become events.

A *blank* frame has next to no contrast (a black or flat substitute picture); a *frozen* feed
repeats the same picture. Neither may be read as an empty or a still table (DESIGN.md, Sources):
the interval is blind. :class:`FrameHealth` looks at each frame's pixels and emits one
:class:`~pipeline.round.events.CameraLost` when the feed goes bad and one
:class:`~pipeline.round.events.CameraRestored` when it comes back. :class:`CameraWatch` is the part
that turns per-frame verdicts into those two events; oracle mode feeds it the scenario's own
verdicts (its ``blind`` field) instead of pixels.

Numpy only; every threshold is a :class:`HealthConfig` field.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.round.events import CameraLost, CameraRestored

BLANK = "blank"
FROZEN = "frozen"


@dataclass(frozen=True)
class HealthConfig:
    """Thresholds of the frame-health check; each line says what raising it trades."""

    blank_std_max: float = 2.0  # grey-level std (0-255) at or below which a frame is blank;
    # higher: a dim, flat picture may pass for blank
    blank_frames: int = 3  # blank frames in a row before the camera counts as lost; higher:
    # a glitch of a frame or two is ignored, but the alert comes later
    frozen_diff_max: float = 0.001  # mean absolute grey-level change from the previous frame
    # at or below which a frame repeats it: an exact repeat, give or take an encoder's
    # refinement. A still table changes more than this through sensor noise (rendered clips
    # after H.264: 0.0016 and up, while frozen stretches sit at 0 with refinements up to 0.007,
    # so a run counts repeats only). Higher: frozen feeds are caught through codec noise, but
    # a still table filmed with little noise passes for frozen (0.1 did, several times a round)
    frozen_s: float = 1.0  # video seconds the picture must repeat, since it last changed,
    # before the feed counts as frozen (25 repeats at 25 fps, 12 at the review's 1 frame in
    # 2: the same wait whatever share of frames is looked at); lower: faster alerts, more
    # false ones on a still table
    refresh_frames: int = 3  # changed frames in a row that leave a run of repeats going when
    # a repeat follows them: a recorder re-encoding a frozen picture refreshes it once a
    # group of pictures (MPEG-4 Part 2 at 1-2 Mbit/s: by up to 3.8 grey levels, over 1-3
    # frames, every 12). After a freeze the restoration is told this many frames late, dated
    # to the first changed frame. Higher: a freeze is found through longer refreshes, but a
    # live table whose encoder repeats frames exactly between bursts of change could pass for
    # frozen; 0: any change ends the run
    restore_diff_min: float = 0.5  # while lost, the mean grey-level change a frame needs to
    # count as live again (above frozen_diff_max: an encoder refining a repeated picture is
    # not a live feed); higher: fewer false restorations, but a still table after a real
    # freeze is recognised as live only once something moves
    restore_frames: int = 1  # usable frames in a row before the camera counts as restored
    stride_px: int = 4  # look at every stride_px-th pixel each way; higher: cheaper, coarser


def grey_sample(image: np.ndarray, stride_px: int) -> np.ndarray:
    """A coarse grey picture: ``(H, W, 3)`` or ``(H, W)`` uint8 -> ``(ceil(H/s), ceil(W/s))``
    float32, every ``stride_px``-th pixel each way, channels averaged.

    >>> grey_sample(np.full((4, 6, 3), 9, np.uint8), 2).shape
    (2, 3)
    """
    sample = image[::stride_px, ::stride_px].astype(np.float32)
    if sample.ndim == 2:
        return sample
    return sample @ np.full(sample.shape[2], 1.0 / sample.shape[2], np.float32)  # the mean of
    # the channels, 5x faster than .mean(axis=2)


def is_blank(sample: np.ndarray, std_max: float) -> bool:
    """No picture: the grey levels hardly vary (std at most ``std_max``)."""
    return sample.size == 0 or float(sample.std()) <= std_max


def change(sample: np.ndarray, previous: np.ndarray | None) -> float:
    """Mean absolute grey-level change between two samples; infinite when there is no
    previous sample or the size changed.

    >>> change(np.zeros((2, 2)), np.ones((2, 2)))
    1.0
    """
    if previous is None or previous.shape != sample.shape:
        return float("inf")
    return float(np.abs(sample - previous).mean())


@dataclass
class FrameRun:
    """A run of frames with the same verdict (a problem, an impossible sight): where it began
    and how long it is. ``extend(hit, ...)`` each frame; a miss ends the run."""

    frame: int = 0
    time_s: float = 0.0
    count: int = 0
    last_s: float = 0.0  # time of its latest frame

    def extend(self, hit: bool, frame: int, time_s: float) -> None:
        if not hit:
            self.count = 0
            return
        if self.count == 0:
            self.frame, self.time_s = frame, time_s
        self.count += 1
        self.last_s = time_s

    def lasted(self, time_s: float, hold_s: float) -> bool:
        """The run is going and began ``hold_s`` or more before ``time_s`` (video times are
        sums of frame steps: 0.04 * 25 may fall just short of 1.0)."""
        return self.count > 0 and time_s - self.time_s >= hold_s - 1e-6


class CameraWatch:
    """Per-frame verdicts in, :class:`CameraLost` / :class:`CameraRestored` out, once each.

    ``update(frame, time_s, problem, since, live_since)`` once per frame: ``problem`` is None
    for a usable frame, else the reason; ``since`` the (frame, time) the problem began, when
    earlier than this frame; ``live_since`` (frame, time, count): the ``count`` frames before
    this one, from that frame on, were usable though judged when they came as still lost (held
    back as a possible refresh of a frozen picture). The loss is dated to its start; the
    restoration to the first of ``restore_frames`` usable frames in a row.
    """

    def __init__(self, restore_frames: int = 1) -> None:
        self._restore_frames = restore_frames
        self.reset()

    def reset(self) -> None:
        self._lost: CameraLost | None = None
        self._good = FrameRun()

    @property
    def lost(self) -> CameraLost | None:
        """The loss in progress, if any."""
        return self._lost

    def update(
        self,
        frame: int,
        time_s: float,
        problem: str | None,
        since: tuple[int, float] | None = None,
        live_since: tuple[int, float, int] | None = None,
    ) -> list[CameraLost | CameraRestored]:
        self._good.extend(problem is None, frame, time_s)
        if live_since is not None and problem is None and self._good.count == 1:
            first, first_s, held = live_since  # frames held back as a possible refresh were
            self._good.frame, self._good.time_s = first, first_s  # live: the usable run
            self._good.count += held  # began at the first of them
        if self._lost is None:
            if problem is None:
                return []
            start_frame, start_s = since or (frame, time_s)
            self._lost = CameraLost(start_frame, start_s, problem)
            return [self._lost]
        if self._good.count < self._restore_frames:
            return []
        lost, self._lost = self._lost, None
        back_frame, back_s = self._good.frame, self._good.time_s
        return [CameraRestored(back_frame, back_s, round(back_s - lost.time_s, 3))]


class FrameHealth:
    """Pixels in, camera events out: ``update(image, frame, time_s)`` once per frame, in order
    (``no_picture(frame, time_s, reason)`` for a frame the source could not give); ``reset()``
    forgets. The caller's image is never modified."""

    def __init__(self, config: HealthConfig | None = None) -> None:
        self.config = config or HealthConfig()
        self._watch = CameraWatch(self.config.restore_frames)
        self.reset()

    def reset(self) -> None:
        self._watch.reset()
        self._previous: np.ndarray | None = None
        self._blank = FrameRun()
        self._frozen = FrameRun()
        self._refreshing = 0  # changed frames in a row inside a run of repeats (refresh_frames)
        self._refresh_start = (0, 0.0)  # the first of them
        self._moved = False  # the picture has changed at least once
        self._changed_s = 0.0  # time of the last frame that was not a repeat
        self._previous_seen = False
        self._sampled: tuple[np.ndarray, np.ndarray] | None = None  # (image, its sample)

    @property
    def lost(self) -> CameraLost | None:
        return self._watch.lost

    def suspect(self, image: np.ndarray) -> bool:
        """Whether ``image``, given next, would be blank or a repeat of the last picture
        (this check's own test and thresholds): a picture that may not be taken for a still
        table. The sample is made once: the image's update, if it comes next, uses it."""
        cfg = self.config
        sample = self._sample(image)
        return (
            is_blank(sample, cfg.blank_std_max)
            or change(sample, self._previous) <= cfg.frozen_diff_max
        )

    def update(
        self, image: np.ndarray, frame: int, time_s: float
    ) -> list[CameraLost | CameraRestored]:
        cfg = self.config
        sample = self._sample(image)
        blank = is_blank(sample, cfg.blank_std_max)
        step = change(sample, self._previous)
        self._previous = sample
        self._blank.extend(blank, frame, time_s)
        self._moved |= self._previous_seen and step > cfg.frozen_diff_max
        self._previous_seen = True
        # a feed is frozen only once it has been seen live: a still table at start-up (a
        # rendered clip's opening has no sensor noise) is not a frozen camera
        repeat = self._moved and step <= cfg.frozen_diff_max and not blank
        refresh = not repeat and not blank and self._frozen.count > 0
        live_since = None
        if refresh and self._refreshing < cfg.refresh_frames:
            if not self._refreshing:
                self._refresh_start = (frame, time_s)
            self._refreshing += 1  # perhaps the encoder refreshing a frozen picture: the run
            # holds while a repeat may follow
        else:
            if self._refreshing and not repeat:  # no refresh: the picture changed from the
                live_since = (*self._refresh_start, self._refreshing)  # first of those frames
            self._refreshing = 0
            self._frozen.extend(repeat, frame, time_s)
            if not repeat:
                self._changed_s = time_s
        problem, since = self._verdict(blank or step < cfg.restore_diff_min)
        return self._watch.update(frame, time_s, problem, since, live_since)

    def no_picture(
        self, frame: int, time_s: float, reason: str
    ) -> list[CameraLost | CameraRestored]:
        """A frame the source could not give (``reason``: a read failure, a timeout): the camera
        is lost at once, dated here; the next picture is judged afresh."""
        self._previous = None
        self._blank, self._frozen = FrameRun(), FrameRun()
        self._refreshing = 0
        return self._watch.update(frame, time_s, reason)

    def _sample(self, image: np.ndarray) -> np.ndarray:
        """The grey sample of ``image``, kept for the last image asked about (it is held, so
        its identity is not reused)."""
        sampled = self._sampled
        if sampled is not None and sampled[0] is image:
            return sampled[1]
        sample = grey_sample(image, self.config.stride_px)
        self._sampled = (image, sample)
        return sample

    def _frozen_for_s(self) -> float:
        """Video seconds since the picture last changed, in the current run of repeats."""
        return self._frozen.last_s - self._changed_s

    def _verdict(self, suspect: bool) -> tuple[str | None, tuple[int, float] | None]:
        """The confirmed problem and when it began; while lost, a frame that is blank or
        barely changed (``suspect``) keeps the camera lost."""
        cfg = self.config
        if self._blank.count >= cfg.blank_frames:
            return BLANK, (self._blank.frame, self._blank.time_s)
        if self._frozen.count and self._frozen_for_s() >= cfg.frozen_s - 1e-6:
            return FROZEN, (self._frozen.frame, self._frozen.time_s)
        lost = self._watch.lost
        if lost is not None and suspect:
            return lost.reason, None
        return None, None
