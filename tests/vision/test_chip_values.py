"""Chip tracks get their value, read once per new or moved stack (vision/chip_values.py)."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from vision.chip_values import ChipValues, ChipValuesConfig
from vision.types import CHIP, TILE_UP, Track

FELT_BGR = (40, 95, 20)
EDGES = ((33, 33, 156), (25, 25, 118))  # red chips' edge shades in the rendered set
RED_TOP = (45, 45, 213)


def _three_reds() -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """Three red chips (5 each) leaning down the image, 5 px of edge per chip."""
    image = np.zeros((200, 200, 3), np.uint8)
    image[:] = FELT_BGR
    base, step, radius = np.array([100.0, 107.5]), 5.0, 40
    for k in range(3):
        for sub in np.arange(0.0, step, 0.25):
            xy = tuple(round(float(v) * 4) for v in base - [0.0, step * k + sub])
            cv2.circle(image, xy, radius * 4, EDGES[k % 2], -1, cv2.LINE_AA, 2)
    top = base - [0.0, step * 3]
    cv2.circle(
        image, tuple(round(float(v) * 4) for v in top), radius * 4, RED_TOP, -1, cv2.LINE_AA, 2
    )
    return image, (top[0] - radius, top[1] - radius, base[0] + radius, base[1] + radius)


def _track(track_id: int, xyxy, class_id: int = CHIP, last_seen: int = 0) -> Track:
    return Track(track_id, tuple(xyxy), class_id, None, None, None, "box_2", 1, last_seen)


def test_a_new_chip_track_is_read_and_a_still_one_is_not_read_again():
    image, box = _three_reds()
    values = ChipValues.from_config(ChipValuesConfig())
    (first,) = values.update(image, [_track(7, box)], frame_index=0)
    assert first.chip_value == 15
    blank = np.zeros_like(image)  # a still stack keeps its reading: the picture is not read
    (again,) = values.update(blank, [_track(7, box, last_seen=1)], frame_index=1)
    assert again.chip_value == 15 and (values.stats.read, values.stats.reused) == (1, 1)


def test_a_moved_stack_is_read_again_and_an_ended_track_is_forgotten():
    image, box = _three_reds()
    values = ChipValues.from_config(ChipValuesConfig())
    values.update(image, [_track(7, box)], frame_index=0)
    moved = tuple(v + 10.0 for v in box)
    (track,) = values.update(np.zeros_like(image), [_track(7, moved, last_seen=1)], 1)
    assert track.chip_value is None and values.stats.read == 2
    values.update(image, [], frame_index=2)
    (back,) = values.update(np.zeros_like(image), [_track(7, box, last_seen=3)], 3)
    assert back.chip_value is None and values.stats.read == 3


def test_other_tracks_pass_unchanged_and_hidden_stacks_keep_their_value():
    image, box = _three_reds()
    values = ChipValues.from_config(ChipValuesConfig())
    tile = _track(1, (0.0, 0.0, 20.0, 50.0), TILE_UP)
    out = values.update(image, [tile, _track(7, box)], frame_index=0)
    assert out[0] is tile and out[1].chip_value == 15
    hidden = replace(_track(7, tuple(v + 30.0 for v in box)), last_seen_frame=0)
    (kept,) = values.update(np.zeros_like(image), [hidden], frame_index=5)
    assert kept.chip_value == 15
