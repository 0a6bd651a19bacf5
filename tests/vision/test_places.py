"""A box's place that changed (a chip stack put down or taken away) against one that did not
(the same felt and print under new camera noise), from the boxes' coarse sketches."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.places import PlaceConfig, PlaceMemory, sketch_boxes

BOXES = {1: np.array([[100, 100], [300, 100], [300, 240], [100, 240]], np.float32)}
CIRCLE = (130.0, 170.0, 170.0, 210.0)  # the printed chip circle's box, frame px


def _felt(seed: int, chip: bool = False) -> np.ndarray:
    """A wine felt with a printed chip circle (and a chip stack on it), camera noise drawn
    from ``seed``."""
    image = np.full((360, 480, 3), (60, 20, 120), np.uint8)
    cv2.circle(image, (150, 190), 18, (150, 200, 230), 2)  # the print
    if chip:
        cv2.circle(image, (150, 190), 19, (40, 160, 40), -1)
        cv2.circle(image, (150, 190), 12, (230, 230, 230), 3)
    noise = np.random.default_rng(seed).normal(0, 4, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8)


def _seen(*pictures: np.ndarray) -> PlaceMemory:
    places = PlaceMemory(BOXES)
    for index, picture in enumerate(pictures):
        places.see(index, places.sketch(picture))
    return places


def test_a_place_that_stayed_is_unchanged_and_one_a_stack_came_to_or_left_is_changed():
    assert _seen(_felt(0), _felt(1)).changed(1, [CIRCLE], since=0) is False
    assert _seen(_felt(0), _felt(1, chip=True)).changed(1, [CIRCLE], since=0) is True
    assert _seen(_felt(0, chip=True), _felt(1)).changed(1, [CIRCLE], since=0) is True
    # any of the places named: one that changed is enough
    assert _seen(_felt(0), _felt(1, chip=True)).changed(1, [(200, 120, 240, 160), CIRCLE], 0)


def test_a_picture_not_kept_is_unknown():
    places = _seen(_felt(0), _felt(1))
    assert places.changed(1, [CIRCLE], since=7) is None  # a frame never seen
    assert places.changed(2, [CIRCLE], since=0) is None  # a box not sketched
    assert places.changed(1, [(900, 900, 940, 940)], since=0) is None  # outside the box
    places.see(2, None)  # a frame seen without a picture: now unknown
    assert places.changed(1, [CIRCLE], since=0) is None
    short = PlaceMemory(BOXES, PlaceConfig(keep_frames=1))
    short.see(0, short.sketch(_felt(0)))
    short.see(1, short.sketch(_felt(1, chip=True)))
    assert short.changed(1, [CIRCLE], since=0) is None  # forgotten


def test_recorded_sketches_answer_without_a_picture():
    """A replay of recorded frames gives the memory the sketches only (no picture to sketch)."""
    recorder = PlaceMemory(BOXES)
    recorded = [recorder.sketch(_felt(0)), recorder.sketch(_felt(1, chip=True))]
    replay = PlaceMemory(BOXES)
    for index, sketch in enumerate(recorded):
        replay.see(index, sketch)
    assert replay.changed(1, [CIRCLE], since=0) is True


def test_a_spot_smaller_than_a_cell_is_judged_by_the_cell_under_its_centre():
    places = _seen(_felt(0), _felt(1, chip=True))
    assert places.changed(1, [(147.0, 187.0, 152.0, 192.0)], since=0) is True


def test_sketches_are_boxes_averaged_over_cells_clipped_to_the_frame():
    image = np.zeros((100, 100, 3), np.uint8)
    image[:, 50:] = 200
    sketch = sketch_boxes(image, {1: (40, 0, 100, 20), 2: (0, 0, 5, 5)}, 10)
    x0, y0, cells = sketch[1]
    assert (x0, y0, cells.shape) == (40, 0, (2, 6))
    assert cells[0].tolist() == [0, 200, 200, 200, 200, 200]
    assert 2 not in sketch  # smaller than a cell


@pytest.mark.parametrize("bad", [{"cell_px": 0}, {"keep_frames": 0}, {"min_change": 0.0}])
def test_a_config_that_cannot_work_is_refused(bad):
    with pytest.raises(ValueError):
        PlaceConfig(**bad)


def _tile_over(image: np.ndarray) -> np.ndarray:
    """A black tile dealt over the top half of the chip circle's place."""
    image = image.copy()
    cv2.rectangle(image, (126, 150), (176, 190), (10, 10, 10), -1)
    return image


TILE = (126.0, 150.0, 176.0, 190.0)


def test_a_tile_over_part_of_a_place_leaves_the_rest_to_judge():
    """brown_row_close/payout_error_21100 (session 44): a stack still in view, its hand dealt
    over the top of its place; the tile made the place look changed."""
    stayed = _seen(_felt(0, chip=True), _tile_over(_felt(1, chip=True)))
    assert stayed.changed(1, [CIRCLE], since=0) is True  # the tile, not the chips
    assert stayed.changed(1, [CIRCLE], since=0, covered=[TILE]) is False
    taken = _seen(_felt(0, chip=True), _tile_over(_felt(1)))
    assert taken.changed(1, [CIRCLE], since=0, covered=[TILE]) is True
    hidden = (120.0, 160.0, 180.0, 220.0)  # the whole place under tiles: not seen
    assert taken.changed(1, [CIRCLE], since=0, covered=[hidden]) is None
