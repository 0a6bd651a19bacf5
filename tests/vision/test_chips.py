"""The chip set file and the stack reader (vision/chips.py)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.chips import (
    UNREAD,
    ChipSetError,
    chip_set_yaml,
    load_chip_set,
    parse_chip_set,
    read_stack,
)
from vision.synth import round_plan
from vision.synth.objects import CHIP_SIDE_SHADES
from vision.synth.paint import scale_bgr
from vision.synth.render import Renderer
from vision.synth.scene import ChipStack, Scene
from vision.synth.sprites import CHIP_CENTRE_LIFT, CHIP_COLOURS

RENDERED = Path(__file__).resolve().parents[2] / "datasets" / "chipsets" / "rendered.yaml"
CHIPS = load_chip_set(RENDERED)
FELT_BGR = (40, 95, 20)


def _row(name: str = "red", value: int = 5) -> dict:
    return {"name": name, "value": value, "top": [[45, 45, 212]], "edge": [[33, 33, 156]]}


@pytest.mark.parametrize(
    ("data", "fault"),
    [
        ({"denominations": [_row(), _row("blue", 5)]}, "value listed twice: 5"),
        ({"denominations": [_row(), _row("red", 25)]}, "name listed twice: red"),
        ({"denominations": [_row(value=0)]}, "value must be a positive whole number"),
        ({"denominations": [_row() | {"top": [[300, 0, 0]]}]}, "ints 0..255"),
        ({"denominations": [{"name": "red", "value": 5}]}, "expected exactly the keys"),
        ({"denominations": []}, "non-empty list"),
        ([1, 2], "expected one key, denominations"),
    ],
)
def test_a_bad_chip_set_is_refused_in_one_line(data, fault):
    with pytest.raises(ChipSetError) as e:
        parse_chip_set(data, "chips.yaml")
    assert fault in str(e.value) and "\n" not in str(e.value)


def test_a_chip_set_round_trips_through_its_yaml(tmp_path):
    path = tmp_path / "chips.yaml"
    path.write_text(chip_set_yaml(CHIPS))
    assert load_chip_set(path) == CHIPS


def test_a_missing_or_broken_file_is_one_line(tmp_path):
    with pytest.raises(ChipSetError, match="cannot read"):
        load_chip_set(tmp_path / "none.yaml")
    (tmp_path / "bad.yaml").write_text("denominations: [\n")
    with pytest.raises(ChipSetError, match="not YAML"):
        load_chip_set(tmp_path / "bad.yaml")


def test_the_rendered_chip_set_matches_the_renderers_chips():
    for d in CHIPS.denominations:
        body = CHIP_COLOURS[d.name][0]
        assert d.top_bgr == (tuple(scale_bgr(body, CHIP_CENTRE_LIFT)),)
        assert d.edge_bgr == tuple(tuple(scale_bgr(body, s)) for s in CHIP_SIDE_SHADES)
    values = getattr(round_plan, "CHIP_VALUES", None)
    if values is not None:
        assert {d.name: d.value for d in CHIPS.denominations} == values


def _side_view(names: tuple[str, ...], chip_px: float, radius_px: float = 40.0):
    """A stack seen leaning down the image: one disc per chip (edge colours alternating), the
    top chip's face on top; returns the image and the stack's box."""
    image = np.zeros((200, 200, 3), np.uint8)
    image[:] = FELT_BGR
    base = np.array([100.0, 100.0 + chip_px * len(names) / 2])
    for k, name in enumerate(names):
        edge = CHIPS.denominations[CHIPS.names().index(name)].edge_bgr
        centre = base - [0.0, chip_px * k]
        for step in np.arange(0.0, chip_px, 0.25):
            xy = tuple(round(float(v) * 4) for v in centre - [0.0, step])
            cv2.circle(image, xy, int(radius_px * 4), edge[k % len(edge)], -1, cv2.LINE_AA, 2)
    top = base - [0.0, chip_px * len(names)]
    face = CHIPS.denominations[CHIPS.names().index(names[-1])].top_bgr[0]
    cv2.circle(image, tuple(int(v * 4) for v in top), int(radius_px * 4), face, -1, cv2.LINE_AA, 2)
    box = (top[0] - radius_px, top[1] - radius_px, base[0] + radius_px, base[1] + radius_px)
    return image, box


@pytest.mark.parametrize(
    "names", [("red", "red", "green"), ("white", "red", "red", "black"), ("purple",)]
)
def test_a_leaning_stack_is_read_exactly(names):
    image, box = _side_view(names, chip_px=5.0)
    expected = sum(CHIPS.value_of(n) for n in names)
    by_runs = read_stack(image, box, CHIPS)
    by_camera = read_stack(image, box, CHIPS, height_px_per_mm=5.0 / 3.3)
    assert (by_runs.value, by_runs.count, by_runs.denominations) == (expected, len(names), names)
    assert (by_camera.value, by_camera.denominations) == (expected, names)


def test_a_stack_seen_straight_above_gives_its_top_chip_but_no_value():
    image, box = _side_view(("green", "green", "red"), chip_px=0.0)
    read = read_stack(image, box, CHIPS)
    assert (read.value, read.count, read.denominations) == (None, None, ("red",))


def test_chips_too_thin_for_the_camera_give_no_value():
    image, box = _side_view(("green", "red"), chip_px=5.0)
    read = read_stack(image, box, CHIPS, height_px_per_mm=0.3)
    assert read.value is None and read.denominations == ("red",)


def test_a_rendered_stack_top_is_read():
    scene = Scene(chips=(ChipStack(0, (0.0, 60.0), ("white", "green", "black")),))
    result = Renderer().render(scene)
    (truth,) = result.objects
    assert read_stack(result.image, truth.xyxy, CHIPS).denominations[-1:] == ("black",)


def test_an_empty_or_outside_box_is_unread():
    image = np.zeros((50, 50, 3), np.uint8)
    assert read_stack(image, (60.0, 60.0, 90.0, 90.0), CHIPS) == UNREAD
    assert read_stack(image, (10.0, 10.0, 12.0, 40.0), CHIPS) == UNREAD
