"""`paigow chips calibrate`: a chip set from a rendered frame whose chips are known."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import yaml

from pipeline.cli import main
from pipeline.cli.chips import chip_boxes
from pipeline.layout import DEFAULT_LAYOUT_RESOURCE
from vision.chip_calibration import CalibrationError, calibrate, look_alike
from vision.chips import load_chip_set, read_stack
from vision.synth.render import Renderer
from vision.synth.scene import DENOMINATIONS, ChipStack, Scene

VALUES = (1, 5, 25, 100, 500, 1000)


def _iou(a, b) -> float:
    lo, hi = np.maximum(a[:2], b[:2]), np.minimum(a[2:], b[2:])
    inter = float(np.prod(np.clip(hi - lo, 0, None)))
    area = lambda r: float(np.prod(r[2:] - r[:2]))  # noqa: E731
    return inter / (area(a) + area(b) - inter)


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    """A default-camera frame with two stacks (2-6 chips of one colour) in each of the seven
    boxes, every denomination twice or more; its path, image and the truth (box, top chip)."""
    renderer = Renderer()
    stacks = []
    for number in range(1, 8):
        box = renderer.layout.box(number)
        for dx in (-30.0, 30.0):
            k = len(stacks)
            xy = tuple(float(v) for v in box.to_table(np.array([[dx, 20.0]]))[0])
            stacks.append(ChipStack(k, xy, (DENOMINATIONS[k % 6],) * (2 + k % 5)))
    result = renderer.render(Scene(chips=tuple(stacks)))
    truth = [(np.array(o.xyxy), stacks[o.obj_id].denominations[-1]) for o in result.objects]
    path = tmp_path_factory.mktemp("chips") / "frame.png"
    cv2.imwrite(str(path), result.image)
    return path, result.image, truth


def _truth_of(box, truth) -> str:
    best = max(truth, key=lambda t: _iou(np.asarray(box, np.float64), t[0]))
    assert _iou(np.asarray(box, np.float64), best[0]) > 0.5
    return best[1]


def test_each_cluster_holds_the_stacks_of_one_denomination(frame):
    _, image, truth = frame
    boxes = chip_boxes(image, None, 0.25, 2)
    assert len(boxes) == len(truth)
    result = calibrate(image, boxes, list(VALUES))
    found = [{_truth_of(boxes[i], truth) for i in c.members} for c in result.clusters]
    assert all(len(names) == 1 for names in found)
    assert {n for names in found for n in names} == set(DENOMINATIONS)
    # plain values go lightest first: white's cluster gets the first value, black's the last
    by_name = {names.pop(): c.value for names, c in zip(found, result.clusters, strict=True)}
    assert by_name["white"] == 1 and by_name["black"] == 1000


def test_the_written_set_loads_and_reads_the_frames_top_chips(frame, tmp_path, capsys):
    path, image, truth = frame
    out, png = tmp_path / "chips.yaml", tmp_path / "clusters.png"
    values = "white=1,red=5,green=25,black=100,purple=500,yellow=1000"
    args = ["chips", "calibrate", str(path), "--values", values, "--out", str(out)]
    assert main([*args, "--png", str(png)]) == 0
    assert "14 chip stack(s)" in capsys.readouterr().out
    chips = load_chip_set(out)
    assert {d.name: d.value for d in chips.denominations} == dict(
        zip(("white", "red", "green", "black", "purple", "yellow"), VALUES, strict=True)
    )
    for box, top in truth:
        assert read_stack(image, box, chips).denominations[-1:] == (top,)
    sheet = cv2.imread(str(png))
    assert sheet is not None and sheet.shape[0] == 6 * 72


def test_more_values_than_colours_on_the_frame_is_warned(frame, tmp_path, capsys):
    """Only white and black stacks kept, three values asked: two clusters of one colour (or
    fewer colours than values, refused in one line)."""
    path, image, truth = frame
    boxes = chip_boxes(image, None, 0.25, 2)
    kept = [b for b in boxes if _truth_of(b, truth) in ("white", "black")]
    try:
        assert look_alike(calibrate(image, kept, [1, 5, 100]))
    except CalibrationError as err:
        assert "fewer colours than the 3 values" in str(err)
    assert not look_alike(calibrate(image, boxes, list(VALUES)))
    out = tmp_path / "chips.yaml"
    assert main(["chips", "calibrate", str(path), "--values", "1,5,25,100,500,1000", "--out",
                 str(out)]) == 0  # fmt: skip
    assert "warning" not in capsys.readouterr().err


def test_a_layout_shows_the_detector_the_table_view(frame, tmp_path):
    """The frame filmed from the dealer's side (turned half round) with its layout: the
    detector sees the table upright through the view and the boxes come back to the frame."""
    _, image, truth = frame
    h, w = image.shape[:2]
    package, name = DEFAULT_LAYOUT_RESOURCE
    from importlib import resources

    spec = yaml.safe_load(resources.files(package).joinpath(name).read_text())
    points = np.array(spec["reference_points"]["image_px"], np.float64)
    spec["reference_points"]["image_px"] = (np.array([w, h]) - points).tolist()
    layout = tmp_path / "turned.yaml"
    layout.write_text(yaml.safe_dump(spec))
    turned = cv2.rotate(image, cv2.ROTATE_180)
    boxes = chip_boxes(turned, layout, 0.25, 2)
    assert len(boxes) == len(truth)
    turned_truth = [(np.array([w - b[2], h - b[3], w - b[0], h - b[1]]), n) for b, n in truth]
    assert {_truth_of(b, turned_truth) for b in boxes} == set(DENOMINATIONS)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ("1,x", "'x' is not a whole number"),
        ("1,5,1", "value given twice: 1"),
        ("white=1,5", "name every value"),
        ("mauve=1,red=5", "unknown colour name 'mauve'"),
        ("0,5", "value 0 is not a positive whole number"),
        (",".join(str(v) for v in range(1, 21)), "fewer than the 20 values given"),
    ],
)
def test_bad_values_are_one_line_and_exit_2(frame, tmp_path, capsys, values, message):
    path, _, _ = frame
    args = ["chips", "calibrate", str(path), "--values", values, "--out", str(tmp_path / "c.yaml")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "c.yaml").exists()


def test_a_missing_frame_or_folder_is_one_line(frame, tmp_path, capsys):
    path, _, _ = frame
    for args in (
        [str(tmp_path / "none.png"), "--out", str(tmp_path / "c.yaml")],
        [str(path), "--out", str(tmp_path / "no" / "c.yaml")],
    ):
        assert main(["chips", "calibrate", *args, "--values", "1,5"]) == 2
        err = capsys.readouterr().err
        assert ("no such file" in err or "does not exist" in err) and err.count("\n") == 1
