"""Chip designs and cash-like distractors in the renderer (opt-in per look family)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vision.chips import load_chip_set, read_stack
from vision.synth.config import ChipRanges, ConfigError, load_randomisation, randomisation
from vision.synth.render import Renderer
from vision.synth.scene import CHIP_STYLES, DENOMINATIONS, ChipStack, Distractor, Scene
from vision.synth.settings import DEFAULT_SETTINGS
from vision.synth.sprites import chip_sprite
from vision.synth.stills import yolo_lines
from vision.synth.stills_content import random_scene

RENDERED = Path(__file__).resolve().parents[2] / "datasets" / "chipsets" / "rendered.yaml"


def test_each_design_draws_another_chip_face():
    faces = [chip_sprite("red", DEFAULT_SETTINGS, style).bgra for style in CHIP_STYLES]
    for k, a in enumerate(faces):
        for b in faces[k + 1 :]:
            assert a.shape == b.shape and np.abs(a.astype(int) - b).mean() > 2.0


def test_a_family_names_its_designs_and_an_unknown_one_is_one_line(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("chips: {styles: [spots, plain], plaques: [1, 2], lammers: [0, 3]}\n")
    dr = load_randomisation(good)
    assert dr.chips == ChipRanges(("spots", "plain"), (1.0, 2.0), (0.0, 3.0))
    bad = tmp_path / "bad.yaml"
    bad.write_text("chips: {styles: [gold]}\n")
    with pytest.raises(ConfigError, match=r"chips\.styles: unknown 'gold'") as e:
        load_randomisation(bad)
    assert "\n" not in str(e.value)


def test_the_default_draws_no_distractor_and_todays_chips():
    dr = randomisation("training")
    scene = random_scene(np.random.default_rng(3), dr)
    assert scene.chip_style == "classic" and scene.distractors == ()


def test_distractors_are_rendered_but_get_no_detector_box():
    dr = replace(randomisation("training"), chips=ChipRanges(("inlay",), (2.0, 2.0), (3.0, 3.0)))
    scene = random_scene(np.random.default_rng(3), dr)
    assert scene.chip_style == "inlay"
    assert sorted(d.kind for d in scene.distractors) == ["lammer"] * 3 + ["plaque"] * 2
    result = Renderer().render(scene)
    kinds = [o.kind for o in result.objects]
    assert kinds.count("plaque") == 2 and kinds.count("lammer") == 3
    boxed = [o for o in result.objects if o.visibility >= 0.3 and o.xyxy[2] > o.xyxy[0]]
    lines = yolo_lines(result.objects, scene.camera.resolution_wh, 0.3)
    assert len(lines) == sum(o.kind not in ("plaque", "lammer") for o in boxed)


def test_a_lammer_changes_the_picture_where_it_lies():
    thing = Distractor(0, (0.0, 60.0), "lammer", (60, 200, 235), "BUY")
    plain, marked = Renderer().render(Scene()), Renderer().render(Scene(distractors=(thing,)))
    (truth,) = marked.objects
    x0, y0, x1, y1 = (round(v) for v in truth.xyxy)
    diff = np.abs(plain.image[y0:y1, x0:x1].astype(int) - marked.image[y0:y1, x0:x1])
    assert truth.kind == "lammer" and diff.mean() > 20


@pytest.mark.parametrize("style", ["spots", "inlay", "plain"])
def test_the_top_chip_of_another_design_is_read_with_the_rendered_set(style):
    chips = load_chip_set(RENDERED)
    stacks = tuple(
        ChipStack(k, (-300.0 + 120.0 * k, 60.0), ("white", name))
        for k, name in enumerate(DENOMINATIONS)
    )
    result = Renderer().render(Scene(chips=stacks, chip_style=style))
    for obj in result.objects:
        read = read_stack(result.image, obj.xyxy, chips)
        assert read.denominations[-1:] == (DENOMINATIONS[obj.obj_id],)
