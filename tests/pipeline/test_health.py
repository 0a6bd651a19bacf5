"""Frame health on synthetic pictures: blank and frozen feeds, glitches, restoration."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.live import health as health_module
from pipeline.live.health import (
    BLANK,
    FROZEN,
    CameraWatch,
    FrameHealth,
    HealthConfig,
    change,
    grey_sample,
    is_blank,
)
from pipeline.round.events import CameraLost, CameraRestored

FPS = 5
SHAPE = (60, 80, 3)


def live(seed: int) -> np.ndarray:
    """A picture of a live camera: texture plus sensor noise that differs every frame."""
    rng = np.random.default_rng(seed)
    base = np.tile(np.linspace(40, 200, SHAPE[1], dtype=np.float64), (SHAPE[0], 1))[..., None]
    return np.clip(base + rng.normal(0, 4, SHAPE), 0, 255).astype(np.uint8)


def blank() -> np.ndarray:
    return np.zeros(SHAPE, np.uint8)


class Feed:
    """Frames into a FrameHealth, events collected."""

    def __init__(self, **config) -> None:
        self.health = FrameHealth(HealthConfig(**config))
        self.index = 0
        self.events: list[CameraLost | CameraRestored] = []

    def show(self, *images: np.ndarray) -> list:
        out = []
        for image in images:
            out += self.health.update(image, self.index, self.index / FPS)
            self.index += 1
        self.events += out
        return out


def test_samples_and_measures():
    image = live(0)
    sample = grey_sample(image, 4)
    assert sample.shape == (15, 20) and sample.dtype == np.float32
    assert grey_sample(image[..., 0], 4).shape == (15, 20)
    assert is_blank(grey_sample(blank(), 4), 2.0) and not is_blank(sample, 2.0)
    assert change(sample, sample) == 0.0
    assert change(sample, None) == change(sample, sample[:5]) == float("inf")


def test_a_live_feed_raises_nothing():
    feed = Feed(frozen_s=1.0)
    feed.show(*(live(i) for i in range(40)))
    assert feed.events == []
    assert feed.health.lost is None


def test_blank_frames_lose_the_camera_from_the_first_one():
    feed = Feed(blank_frames=3)
    feed.show(*(live(i) for i in range(5)))
    assert feed.show(blank(), blank()) == []
    (lost,) = feed.show(blank())
    assert lost == CameraLost(5, 1.0, BLANK)
    feed.show(*(blank() for _ in range(5)))
    (back,) = feed.show(live(99))
    assert back == CameraRestored(13, 2.6, 1.6)
    assert feed.show(*(live(100 + i) for i in range(5))) == []


def test_suspect_is_the_checks_own_test_and_the_update_reuses_its_sample(monkeypatch):
    """A review asks whether a frame would be blank or a repeat before the frame's update:
    the picture is sampled once."""
    health = FrameHealth()
    first = live(0)
    assert health.suspect(blank()) and not health.suspect(first)  # nothing seen yet
    health.update(first, 0, 0.0)
    sampled = []

    def counted(image, stride_px):
        sampled.append(image)
        return grey_sample(image, stride_px)

    monkeypatch.setattr(health_module, "grey_sample", counted)
    assert health.suspect(first.copy()) and health.suspect(blank())
    second = live(1)
    assert not health.suspect(second)
    health.update(second, 1, 1 / FPS)
    assert len(sampled) == 3  # the update took the sample of the question
    assert health.suspect(second)  # now the last picture


def test_a_frozen_feed_is_dated_to_the_first_repeat():
    feed = Feed(frozen_s=0.8, refresh_frames=0)  # restored at the first live frame
    feed.show(*(live(i) for i in range(5)))
    still = live(4)  # the last live picture, repeated
    assert feed.show(still, still, still) == []
    (lost,) = feed.show(still)
    assert (lost.frame, lost.reason) == (5, FROZEN)
    feed.show(still, still)
    (back,) = feed.show(live(50))
    assert (back.frame, back.lost_s) == (11, pytest.approx(1.2))


def test_frozen_is_judged_in_video_seconds_whatever_share_of_frames_is_looked_at():
    for step in (1, 2):  # every frame, or one in two as a review reads them
        health, events = FrameHealth(HealthConfig(frozen_s=1.0)), []
        still = live(4)
        pictures = [live(i) for i in range(4)] + [still] * 12
        for n, picture in enumerate(pictures[::step]):
            frame = n * step
            events += [(frame, e) for e in health.update(picture, frame, frame / FPS)]
        [(frame, lost)] = events  # the picture last changed at frame 4 (0.8 s)
        assert lost.frame == 4 + step  # dated to the first repeat looked at
        assert frame == {1: 9, 2: 10}[step]  # the first frame looked at 1 s on, not 5 repeats on


def test_codec_noise_on_a_repeated_picture_still_reads_frozen():
    rng = np.random.default_rng(7)
    still = live(1)
    feed = Feed(frozen_s=0.6, frozen_diff_max=0.1)
    feed.show(live(0))
    for _ in range(4):  # a few pixels flicker by a grey level, as re-encoding leaves them
        flicker = still.copy()
        flicker[rng.integers(0, SHAPE[0], 20), rng.integers(0, SHAPE[1], 20)] += 1
        feed.show(flicker)
    assert [e.reason for e in feed.events] == [FROZEN]


def test_an_encoder_refining_the_frozen_picture_does_not_restore_the_camera():
    feed = Feed(frozen_s=0.6, frozen_diff_max=0.1, restore_diff_min=0.5, refresh_frames=0)
    still = live(3)
    feed.show(live(0), still, still, still, still)
    assert [e.reason for e in feed.events] == [FROZEN]
    refined = still.copy()
    refined[:, : SHAPE[1] // 4] += 1  # a quarter of the picture moves by a grey level: 0.25
    assert feed.show(refined, refined) == []
    (back,) = feed.show(live(9))
    assert isinstance(back, CameraRestored)


def test_a_recorder_refreshing_a_frozen_picture_every_group_of_pictures_keeps_it_frozen():
    """MPEG-4 Part 2 at a low bit rate re-sends a frozen picture every 12 frames, changed by
    up to 3.8 grey levels over 1-3 frames (held-out red_dealer_mpeg4/camera_lost_21000): the
    runs of repeats between refreshes never reached a second, and the freeze went unseen."""
    still, refreshed = live(4), live(5)  # a refresh: another noise draw of the picture

    def frozen_with_refreshes(feed: Feed) -> None:
        feed.show(*(live(i) for i in range(4)))
        for _ in range(3):  # 3 groups of pictures: 4 repeats, a refresh of 2 frames
            feed.show(*([still] * 4), refreshed, still)
        feed.show(*([still] * 4))

    plain = Feed(frozen_s=1.0, refresh_frames=0)
    frozen_with_refreshes(plain)
    assert plain.events == []  # each run of repeats shorter than a second
    feed = Feed(frozen_s=1.0)
    frozen_with_refreshes(feed)
    (lost,) = feed.events
    assert (lost.frame, lost.reason) == (5, FROZEN)  # dated to the first repeat
    n = feed.index
    assert feed.show(live(60), live(61), live(62)) == []  # perhaps one more refresh
    (back,) = feed.show(live(63))  # a fourth changed frame: live again, since the first
    assert isinstance(back, CameraRestored) and (back.frame, back.time_s) == (n, n / FPS)
    assert feed.show(*(live(70 + i) for i in range(10))) == []


def test_glitches_shorter_than_the_thresholds_are_ignored():
    feed = Feed(blank_frames=3, frozen_s=0.8)
    feed.show(live(0), blank(), blank(), live(1), live(2), live(2), live(2), live(3))
    assert feed.events == []


def test_blank_after_frozen_stays_one_loss():
    feed = Feed(blank_frames=3, frozen_s=0.4)
    still = live(0)
    feed.show(live(1), still, still, still, blank(), blank(), blank(), blank())
    assert [type(e) for e in feed.events] == [CameraLost]
    feed.show(live(5))
    assert [type(e) for e in feed.events] == [CameraLost, CameraRestored]


def test_a_frame_the_source_could_not_give_loses_the_camera_at_once():
    feed = Feed()
    feed.show(live(0), live(1))
    (lost,) = feed.health.no_picture(2, 0.4, "read timeout")
    assert lost == CameraLost(2, 0.4, "read timeout")
    assert feed.health.no_picture(3, 0.6, "read timeout") == []
    feed.index = 4
    (back,) = feed.show(live(1))  # judged afresh: not a repeat of the picture before the gap
    assert back == CameraRestored(4, 0.8, 0.4)


def test_the_callers_image_is_left_alone_and_reset_forgets():
    feed = Feed(blank_frames=1)
    image = blank()
    before = image.copy()
    feed.show(image)
    assert np.array_equal(image, before) and feed.health.lost is not None
    feed.health.reset()
    assert feed.health.lost is None
    assert feed.show(live(1)) == []


def test_camera_watch_needs_restore_frames_in_a_row_and_honours_since():
    watch = CameraWatch(restore_frames=2)
    assert watch.update(10, 2.0, None) == []
    (lost,) = watch.update(12, 2.4, "frozen", since=(11, 2.2))
    assert lost == CameraLost(11, 2.2, "frozen")
    assert watch.update(13, 2.6, None) == []
    assert watch.update(14, 2.8, "frozen") == []  # not two usable frames in a row
    assert watch.update(15, 3.0, None) == []
    (back,) = watch.update(16, 3.2, None)
    assert back == CameraRestored(15, 3.0, 0.8)
