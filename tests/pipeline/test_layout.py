"""Table layout files: validation messages, zones, homography, the default and scenario layouts."""

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

from pipeline.layout import (
    LayoutError,
    as_pixel_layout,
    layout_from_scenario,
    load_default_layout,
    load_layout,
    parse_layout,
    spec_from_scenario,
)
from pipeline.review.job import layout_warnings
from vision.synth.camera import Camera, CameraParams
from vision.synth.table import default_layout, layout_dict

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def block() -> dict:
    params = CameraParams(resolution_wh=(960, 540), px_per_mm=0.54, tilt_deg=8.0)
    out = layout_dict(default_layout(), Camera.from_params(params))
    out["resolution_wh"] = [960, 540]
    return out


@pytest.fixture()
def spec(block) -> dict:
    return copy.deepcopy(spec_from_scenario(block))


def test_default_layout_has_every_zone_and_the_chung():
    layout = load_default_layout()
    assert sorted(layout.box_polygons_px) == list(range(1, 9))
    assert {"woodpile", "dice_area", "float_tray", "work_area"} <= set(layout.zones_px)
    assert layout.chung_box == 1 and layout.chung_zone == "box_1"
    assert layout.image_size_wh == (1920, 1080)


def test_default_yaml_is_what_the_script_writes(tmp_path, load_script):
    out = tmp_path / "layout.yaml"
    assert load_script("make_layout").main(["--out", str(out)]) == 0
    committed = ROOT / "pipeline" / "data" / "default_layout.yaml"
    assert out.read_text() == committed.read_text()


def test_scenario_layout_reproduces_the_renderers_pixel_zones(block):
    layout = layout_from_scenario({"layout": block, "resolution_wh": [960, 540]})
    for name, polygon in block["zones_px"].items():
        assert np.abs(layout.zones_px[name] - np.array(polygon)).max() < 0.2, name


def test_zone_of_names_box_centres_and_off_table(block):
    layout = layout_from_scenario({"layout": block})
    centres = np.array([layout.zones_px[f"box_{n}"].mean(axis=0) for n in range(1, 9)])
    far = np.array([[-500.0, -500.0]])
    zones = layout.zone_of(np.vstack([centres, far]))
    assert zones == [f"box_{n}" for n in range(1, 9)] + ["off_table"]
    assert layout.zone_of(np.zeros((0, 2))) == []


def test_image_to_table_inverts_table_to_image(block):
    layout = layout_from_scenario({"layout": block})
    mm = np.array([[0.0, 0.0], [-400.0, -300.0], [300.0, 250.0]])
    assert np.allclose(layout.image_to_table(layout.table_to_image(mm)), mm, atol=1e-6)


def test_pixel_zones_without_reference_points(spec, block):
    spec["coordinates"] = "image_px"
    del spec["reference_points"]
    spec["boxes"] = {n: block["zones_px"][f"box_{n}"] for n in range(1, 9)}
    spec["areas"] = {a: block["zones_px"][a] for a in spec["areas"]}
    layout = parse_layout(spec)
    assert layout.zone_of(np.array(block["zones_px"]["woodpile"]).mean(axis=0)) == ["woodpile"]
    with pytest.raises(LayoutError, match="no reference_points"):
        layout.image_to_table(np.zeros((1, 2)))


def test_a_pixel_layout_without_a_tile_length_estimates_it_from_the_boxes(spec, block):
    """The scale the models need (issue 19, 3) from the layout alone: with neither reference
    points nor tile_length_px, a tile's length comes from the boxes' size, and says so."""
    true_px = parse_layout(copy.deepcopy(spec)).tile_px
    assert parse_layout(copy.deepcopy(spec)).tile_px_from == "table_mm"
    spec["coordinates"] = "image_px"
    del spec["reference_points"]
    spec["boxes"] = {n: block["zones_px"][f"box_{n}"] for n in range(1, 9)}
    spec["areas"] = {a: block["zones_px"][a] for a in spec["areas"]}
    layout = parse_layout(copy.deepcopy(spec))
    assert layout.tile_px_from == "boxes" and "estimated" in layout.tile_note
    assert abs(layout.tile_px / true_px - 1) < 0.15  # the standard table's boxes
    spec["tile_length_px"] = 30.0
    given = parse_layout(spec)
    assert (given.tile_px, given.tile_px_from, given.tile_note) == (30.0, "given", None)


def test_a_layout_written_in_pixels_keeps_its_zones(block):
    """scripts/evaluate.py --pixel-layout: a scenario's layout as a casino might write it."""
    layout = layout_from_scenario({"layout": block, "resolution_wh": [960, 540]})
    pixels = as_pixel_layout(layout)
    assert pixels.homography_img_from_table is None and pixels.tile_px_from == "boxes"
    for name, polygon in layout.zones_px.items():
        assert np.allclose(pixels.zones_px[name], polygon), name
    unscaled = as_pixel_layout(layout, scaled=False)
    assert (unscaled.tile_px, unscaled.tile_px_from, unscaled.tile_note) == (None, None, None)
    # a batch review's index says so of each recording reviewed with it
    assert layout_warnings(pixels, (960, 540)) == (pixels.tile_note,)
    assert layout_warnings(layout, (960, 540)) == ()
    assert "the layout is for 960x540 frames" in layout_warnings(layout, (640, 360))[0]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s.update(colour="green"), "unknown key 'colour'"),
        (lambda s: s["areas"].update(bar=[[0, 0], [1, 0], [1, 1]]), "areas.bar"),
        (lambda s: s["boxes"].update({9: s["boxes"][8]}), "boxes must be numbered 1-8"),
        (lambda s: s["boxes"].pop(3), "boxes must be numbered 1-8"),
        (lambda s: s["boxes"].update({1: [[0, 0], [1, 1]]}), "boxes.1"),
        (lambda s: s["boxes"].update({1: [[0, 0, 0], [1, 1, 1], [2, 0, 1]]}), "boxes.1"),
        (lambda s: s["areas"].pop("woodpile"), "areas misses woodpile"),
        (lambda s: s.pop("reference_points"), "needs reference_points"),
        (lambda s: s.update(chung_box=9), "chung_box"),
        (lambda s: s.pop("coordinates"), "missing key 'coordinates'"),
        (lambda s: s["reference_points"]["image_px"].pop(), "reference_points"),
    ],
)
def test_bad_layouts_fail_with_one_line_naming_the_key(spec, edit, message):
    edit(spec)
    with pytest.raises(LayoutError, match=message) as err:
        parse_layout(spec, "cam.yaml")
    assert "\n" not in str(err.value) and str(err.value).startswith("cam.yaml: ")


def test_collinear_reference_points_are_rejected(spec):
    spec["reference_points"] = {
        "table_mm": [[0, 0], [1, 0], [2, 0], [3, 0]],
        "image_px": [[0, 0], [1, 0], [2, 0], [3, 0]],
    }
    with pytest.raises(LayoutError, match="degenerate"):
        parse_layout(spec)


def test_load_layout_file_errors(tmp_path, spec):
    with pytest.raises(LayoutError, match="cannot read"):
        load_layout(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("boxes: [1, 2\n")
    with pytest.raises(LayoutError, match="not valid YAML"):
        load_layout(bad)
    bad.write_text("- just a list\n")
    with pytest.raises(LayoutError, match="mapping"):
        load_layout(bad)
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(spec))
    assert load_layout(good).chung_box == 1


def test_make_layout_bad_input_exits_2(tmp_path, capsys, load_script):
    code = load_script("make_layout").main(
        ["--scenario", str(tmp_path / "none.json"), "--out", str(tmp_path / "x.yaml")]
    )
    assert code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s["boxes"][1][0].__setitem__(0, float("nan")), "boxes.1.0.0: .*finite"),
        (lambda s: s["areas"]["woodpile"][1].__setitem__(1, float("inf")), "areas.woodpile.1.1"),
        (lambda s: s["reference_points"]["image_px"][2].__setitem__(0, -float("inf")), "image_px"),
        (lambda s: s["reference_points"]["table_mm"][0].__setitem__(1, float("nan")), "table_mm"),
        (lambda s: s.update(image_size_wh=[float("nan"), 540]), "image_size_wh.0: .*finite"),
        (lambda s: s.update(image_size_wh=[960, float("inf")]), "image_size_wh.1: .*finite"),
        (lambda s: s["reference_points"]["table_mm"][0].__setitem__(0, 1e300), "table_mm.0.0"),
    ],
    ids=["box-nan", "area-inf", "image-px-inf", "table-mm-nan", "size-nan", "size-inf", "huge"],
)
def test_non_finite_or_absurd_coordinates_are_one_line_naming_the_key(spec, edit, message):
    edit(spec)
    with pytest.raises(LayoutError, match=message) as err:
        parse_layout(spec, "cam.yaml")
    assert "\n" not in str(err.value) and str(err.value).startswith("cam.yaml: ")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (("[" * 20000 + "]" * 20000).encode(), "nested too deep"),
        (("- " * 20000 + "x\n").encode(), "nested too deep"),
        (b"camera: caf\xe9\n", r"not UTF-8 text \(byte 11\)"),
        (b"# padding\n" * 110_000, "larger than 1048576 bytes"),
    ],
    ids=["deep-flow", "deep-block", "latin-1", "huge"],
)
def test_unparseable_layout_files_are_one_line_naming_the_file(tmp_path, content, message):
    path = tmp_path / "cam.yaml"
    path.write_bytes(content)
    with pytest.raises(LayoutError, match=message) as err:
        load_layout(path)
    assert "\n" not in str(err.value) and str(err.value).startswith(f"{path}: ")
