"""Issue 18 probes, end to end: bad input is one line on stderr and status 2, never a traceback.

Each probe is one that used to end otherwise (a NaN coordinate accepted, a RecursionError, a
decode error without the file name, a cv2 error with status 1, a half-written JPEG read as a
frame).
"""

from importlib import resources
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from pipeline.cli import main
from pipeline.live.sources import open_source
from vision.types import Frame

EXIT_USAGE = 2
DEFAULT_LAYOUT = Path(__file__).resolve().parents[2] / "pipeline" / "data" / "default_layout.yaml"


def default_spec() -> dict:
    text = resources.files("pipeline").joinpath("data/default_layout.yaml").read_text("utf-8")
    return yaml.safe_load(text)


def monitor(tmp_path: Path, layout: Path) -> int:
    """``paigow monitor`` on an image folder with ``layout`` (read before anything else)."""
    folder = tmp_path / "shots"
    folder.mkdir(exist_ok=True)
    cv2.imwrite(str(folder / "f0.png"), np.zeros((1080, 1920, 3), np.uint8))
    journal = tmp_path / "alerts.db"
    argv = ["monitor", str(folder), "--layout", str(layout), "--table", "T1"]
    return main([*argv, "--journal", str(journal)])


def one_error_line(capsys: pytest.CaptureFixture) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda s: s["boxes"][1][0].__setitem__(0, float("nan")), "boxes.1.0.0"),
        (lambda s: s["areas"]["dice_area"][2].__setitem__(1, float("inf")), "areas.dice_area.2.1"),
        (
            lambda s: s["reference_points"]["image_px"][0].__setitem__(0, float("nan")),
            "reference_points.image_px.0.0",
        ),
        (lambda s: s.update(image_size_wh=[1920, float("inf")]), "image_size_wh.1"),
    ],
    ids=["box-nan", "area-inf", "reference-nan", "size-inf"],
)
def test_a_layout_with_non_finite_coordinates_exits_2_naming_the_key(tmp_path, capsys, edit, key):
    spec = default_spec()
    edit(spec)
    layout = tmp_path / "cam.yaml"
    layout.write_text(yaml.safe_dump(spec), encoding="utf-8")
    assert monitor(tmp_path, layout) == EXIT_USAGE
    err = one_error_line(capsys)
    assert f"{layout}: {key}: " in err and "finite" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (("[" * 20000 + "]" * 20000).encode(), "nested too deep"),
        (("- " * 20000 + "x\n").encode(), "nested too deep"),
        ("camera: café\n".encode("latin-1"), "not UTF-8 text"),
    ],
    ids=["deep-flow-list", "deep-block-list", "latin-1"],
)
def test_an_unparseable_layout_file_exits_2_naming_the_file(tmp_path, capsys, content, message):
    layout = tmp_path / "cam.yaml"
    layout.write_bytes(content)
    assert monitor(tmp_path, layout) == EXIT_USAGE
    err = one_error_line(capsys)
    assert f"paigow monitor: error: {layout}: {message}" in err


def test_detect_on_a_5000x2_image_exits_2_naming_it(tmp_path, capsys):
    strip = tmp_path / "strip.png"
    cv2.imwrite(str(strip), np.full((2, 5000, 3), 128, np.uint8))
    assert main(["detect", str(strip)]) == EXIT_USAGE
    err = one_error_line(capsys)
    assert f"paigow detect: error: {strip}: a 5000x2 image is too small" in err


def test_a_half_written_jpeg_in_a_folder_is_not_a_frame(tmp_path):
    folder = tmp_path / "shots"
    folder.mkdir()
    for i in range(4):
        image = np.random.default_rng(i).integers(0, 255, (60, 80, 3), np.uint8)
        cv2.imwrite(str(folder / f"f{i}.jpg"), image)
    last = folder / "f3.jpg"
    last.write_bytes(last.read_bytes()[:-600])  # the camera is still writing it
    assert cv2.imread(str(last)) is not None  # OpenCV decodes it, grey below the cut
    source = open_source(str(folder), fps=10)
    with source:
        frames = [item for item in source if isinstance(item, Frame)]
    assert [f.index for f in frames] == [0, 1, 2]
    assert source.incomplete == [last]


def test_monitor_warns_of_a_layout_for_another_frame_size_and_skips_unusable_frames(
    tmp_path, capsys
):
    folder = tmp_path / "shots"
    folder.mkdir()
    for name, (h, w) in {"f0.png": (120, 160), "f1.png": (2, 5000), "f2.png": (120, 160)}.items():
        cv2.imwrite(str(folder / name), np.zeros((h, w, 3), np.uint8))
    argv = ["monitor", str(folder), "--layout", str(DEFAULT_LAYOUT), "--table", "T1"]
    ports = ["--publish", "tcp://127.0.0.1:*", "--replay", "tcp://127.0.0.1:*"]
    assert main([*argv, *ports, "--journal", str(tmp_path / "alerts.db")]) == 0
    err = capsys.readouterr().err
    assert "warning: the layout is for 1920x1080 frames, the video is 160x120" in err
    assert "frame 1 skipped: " in err and "Traceback" not in err
