"""`paigow detect`: JSON lines in input-image pixels; bad input in one line, exit 2."""

import json
import re

import cv2
import numpy as np
import pytest

from pipeline.cli import main
from vision.synth.config import randomisation
from vision.synth.render import Renderer
from vision.synth.stills import scene_seed
from vision.synth.stills_content import random_scene


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    renderer = Renderer()
    rng = np.random.default_rng(scene_seed("test", 901, 0))
    result = renderer.render(
        random_scene(rng, randomisation("training"), renderer.layout, renderer.settings)
    )
    path = tmp_path_factory.mktemp("detect") / "frame.png"
    cv2.imwrite(str(path), result.image)
    return path, result


def test_detect_json_schema_and_counts(rendered, capsys):
    path, result = rendered
    assert main(["detect", "--json", str(path)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["image"], record["width"], record["height"]) == (str(path), 1920, 1080)
    dets = record["detections"]
    assert dets and {d["class"] for d in dets} <= {"tile", "chip", "die", "hand"}
    for d in dets:
        assert set(d) == {"class", "face_up", "face", "die_value", "xyxy", "obb", "confidence"}
        assert 0 <= d["xyxy"][0] < d["xyxy"][2] <= 1920 + 5
    tiles_true = sum(1 for o in result.objects if o.kind == "tile" and o.visibility > 0.7)
    tiles_found = sum(1 for d in dets if d["class"] == "tile")
    assert tiles_found >= 0.8 * tiles_true


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [("missing.png", None, "no such file"), ("broken.png", b"not an image", "not an image")],
)
def test_bad_images_are_one_line_and_exit_2(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    assert main(["detect", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("width", "height", "message"),
    [
        (5000, 2, "a 5000x2 image is too small"),
        (2, 5000, "a 2x5000 image is too small"),
        (8, 8, "a 8x8 image is too small"),
        (6000, 64, r"a 6000x64 image is too thin .* \(aspect ratio 94:1\)"),
    ],
    ids=["wide-strip", "tall-strip", "tiny", "thin"],
)
def test_degenerate_images_are_one_line_and_exit_2(tmp_path, capsys, width, height, message):
    path = tmp_path / "odd.png"
    cv2.imwrite(str(path), np.full((height, width, 3), 90, np.uint8))
    assert main(["detect", str(path)]) == 2
    err = capsys.readouterr().err
    assert re.search(f"{path}: {message}", err) and err.count("\n") == 1
