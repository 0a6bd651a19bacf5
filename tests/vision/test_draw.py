"""vision.draw: pictures are annotated copies (never the caller's array), at any scale."""

import numpy as np
import pytest

from vision.draw import (
    CLASS_COLOURS,
    HIGHLIGHT,
    DrawStyle,
    band_height,
    draw_banner,
    draw_card,
    draw_detections,
    draw_tracks,
    draw_zones,
    fit_width,
    text_band,
)
from vision.types import CHIP, HAND, TILE_DOWN, TILE_UP, Detections, Track

SQUARE = np.array([[40, 40], [160, 40], [160, 140], [40, 140]], float)


def _track(track_id, xyxy, class_id=TILE_DOWN, face=None):
    up = class_id == TILE_UP
    return Track(track_id, xyxy, class_id, up, face, None, "box_1", 5, 5)


def _image():
    return np.full((180, 320, 3), 90, np.uint8)


DRAWINGS = {
    "zones": lambda im: draw_zones(im, {"box_1": SQUARE, "woodpile": SQUARE + 100}),
    "detections": lambda im: draw_detections(
        im, Detections.from_arrays([[10, 10, 40, 60]], [CHIP], [0.9])
    ),
    "tracks": lambda im: draw_tracks(im, [_track(1, (10, 10, 40, 60))], highlight={1}),
    "banner": lambda im: draw_banner(im, ["one", ("two", (0, 0, 255))], top=False),
}


@pytest.mark.parametrize("name", sorted(DRAWINGS))
def test_drawing_returns_an_annotated_copy_and_leaves_the_input_alone(name):
    image = _image()
    before = image.copy()
    out = DRAWINGS[name](image)
    assert out.shape == image.shape and out.dtype == np.uint8
    assert out is not image and not np.shares_memory(out, image)
    assert np.array_equal(image, before)
    assert not np.array_equal(out, before)


def test_tracks_are_drawn_at_scale_with_class_colours_and_highlight():
    image = np.zeros((100, 200, 3), np.uint8)
    tracks = [_track(1, (20, 40, 60, 120), TILE_UP, "6-6"), _track(2, (200, 40, 260, 120))]
    out = draw_tracks(image, tracks, scale=0.5, highlight={2})
    assert tuple(out[40, 10]) == CLASS_COLOURS[TILE_UP]  # left edge of track 1 (x 10..30)
    assert tuple(out[30, 100]) == HIGHLIGHT  # track 2 at x 100..130 outlined in red
    assert out[:19].any()  # the label "#1 6-6" above the box


def test_hands_are_outlined_without_a_label():
    image = np.zeros((100, 200, 3), np.uint8)
    out = draw_tracks(image, [Track(9, (50, 50, 90, 90), HAND, None, None, None, None, 1, 1)])
    assert not out[:45].any()


def test_zones_partly_outside_the_picture_are_clipped_not_fatal():
    huge = np.array([[-500, -500], [5000, -500], [5000, 5000]], float)
    out = draw_zones(_image(), {"table": huge, "box_3": SQUARE})
    assert out.shape == (180, 320, 3)


def test_text_band_has_a_fixed_height_and_says_what_did_not_fit():
    lines = [f"alert {i}" for i in range(5)]
    two = text_band(320, lines[:2], 3)
    five = text_band(320, lines, 3)
    assert two.shape == five.shape == (band_height(3), 320, 3)
    assert band_height(3) % 2 == 0
    assert five[band_height(2) :].any()  # the third line holds "+3 more"


def test_style_scales_with_the_picture():
    style = DrawStyle().for_width(1920)
    assert style.line_px == 2 and style.font_scale == pytest.approx(0.8)
    assert band_height(2, style) > band_height(2)


def test_fit_width_and_card():
    small, scale = fit_width(np.zeros((1080, 1920, 3), np.uint8), 640)
    assert small.shape == (360, 640, 3) and scale == pytest.approx(1 / 3)
    same, scale = fit_width(np.zeros((10, 20, 3), np.uint8), 640)
    assert same.shape == (10, 20, 3) and scale == 1.0
    card = draw_card((320, 180), ["NO PICTURE", "12.00 s to 15.00 s"])
    assert card.shape == (180, 320, 3) and card.max() == 255


def test_a_track_not_seen_in_the_frame_is_drawn_only_as_evidence():
    """A tile remembered where it was last seen (beneath a woodpile stack, under a hand) is no
    box on the picture of a later frame, unless an alert names it."""
    image = np.zeros((100, 200, 3), np.uint8)
    seen = Track(1, (20, 20, 60, 80), TILE_DOWN, False, None, None, None, 5, 7)
    remembered = Track(2, (120, 20, 160, 80), TILE_DOWN, False, None, None, None, 5, 3)
    out = draw_tracks(image, [seen, remembered], frame=7)
    assert out[50, 20].any() and not out[:, 100:].any()
    out = draw_tracks(image, [seen, remembered], highlight={2}, frame=7)
    assert tuple(out[50, 120]) == HIGHLIGHT
    assert draw_tracks(image, [remembered])[50, 120].any()  # no frame given: every track
