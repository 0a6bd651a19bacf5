"""The data that travels to the GPU machine (``scripts/train_gpu.py``): packed frames decode back
to the frames they came from, with the labels of those frames, and face crops are labelled as
the face reader's classes."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.faces import FACE_CLASSES
from vision.synth import config
from vision.synth.labels import DETECT_SCALE, frame_labels

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
DEMO = ROOT / "datasets" / "samples" / "demo_round"
EVERY = 60


@pytest.fixture(scope="module")
def train_gpu():
    spec = importlib.util.spec_from_file_location("train_gpu", SCRIPTS / "train_gpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def packed(train_gpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("packed")
    n = train_gpu.pack_clip(DEMO, out, every=EVERY, crf=18)
    return out, n


def test_packed_frames_decode_to_their_frames_with_their_labels(train_gpu, packed, tmp_path):
    out, n = packed
    with gzip.open(DEMO / "truth.jsonl.gz", "rt", encoding="utf-8") as f:
        truth = [json.loads(line) for line in f]
    sighted = [i for i, row in enumerate(truth) if not row["blind"] and i % EVERY == 0]
    assert n == len(sighted) > 5
    for split in ("images", "labels"):
        (tmp_path / split / "train").mkdir(parents=True)
    assert train_gpu.unpack_clip(out / "demo_round.mp4", tmp_path, "train") == n

    import av

    with av.open(str(DEMO / "clip.mp4")) as container:
        originals = {
            i: cv2.resize(f.to_ndarray(format="bgr24"), (960, 540), interpolation=cv2.INTER_AREA)
            for i, f in enumerate(container.decode(video=0))
            if i in sighted[:4]
        }
    for index in sighted[:4]:
        name = f"demo_round_{index:05d}"
        image = cv2.imread(str(tmp_path / "images" / "train" / f"{name}.jpg")).astype(int)
        # H.264 (4:2:0) then JPEG: nearest to the frame it came from of all the packed ones
        diff = {i: np.abs(image - o).mean() for i, o in originals.items()}
        assert min(diff, key=diff.get) == index and diff[index] < 5.0, diff
        labels = np.loadtxt(tmp_path / "labels" / "train" / f"{name}.txt", ndmin=2)
        expected = frame_labels(truth[index]["objects"], DETECT_SCALE)
        assert len(labels) == len(expected)
        assert sorted(labels[:, 0].astype(int)) == sorted(int(r[0]) for r in expected)


def test_face_crops_are_named_by_the_readers_classes(packed):
    out, _ = packed
    folders = [p.name for p in (out / "faces").iterdir()]
    assert folders and set(folders) <= set(FACE_CLASSES)
    crop = cv2.imread(str(next((out / "faces" / folders[0]).glob("*.jpg"))))
    assert crop.shape == (96, 96, 3)


def test_objects_of_a_turned_camera_are_cut_from_the_view_where_their_pixels_went(train_gpu):
    """A camera over the dealer's shoulder: pack cuts crops and labels from the table view (the
    picture turned upright), so an object's box in the view covers the same pixels, turned."""
    from pipeline.layout import load_default_layout
    from vision.view import TableView

    layout = load_default_layout()
    zones = {k: (1920, 1080) - v for k, v in layout.zones_px.items()}  # turned 180 degrees
    view = TableView.fit(zones, layout.tile_px, (1920, 1080))
    assert view.quarter_turns == 2
    frame = np.zeros((1080, 1920, 3), np.uint8)
    frame[500:567, 900:940] = (0, 0, 255)  # an object, red on black
    frame[500:510, 900:940] = (255, 0, 0)  # its top edge blue
    objects = [
        {"id": 1, "xyxy": [900.0, 500.0, 940.0, 567.0]},
        {"id": 2, "xyxy": [-5000.0, -5000.0, -4990.0, -4980.0]},  # not in the view: dropped
    ]
    (kept,) = train_gpu.in_view(view, objects)
    assert kept["id"] == 1
    picture = view.warp(frame)
    ys, xs = np.nonzero(picture.max(axis=2) > 127)
    np.testing.assert_allclose(
        kept["xyxy"], [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1], atol=2
    )
    x1, y1, x2, y2 = (round(v) for v in kept["xyxy"])
    cut = picture[y1:y2, x1:x2]
    inner = cut[2:-2, 2:-2]
    assert inner[-3:, :, 0].min() > 200 and inner[:3, :, 2].min() > 200  # turned: blue below


def test_stills_widen_a_looks_dice_and_keep_its_name_for_the_view():
    widened = config.widened(config.randomisation("dealer_side_slate"), True, 0.5)
    assert widened.objects.dice_styles == ("red_clear", "varied")
    assert widened.content.die_not_flat_prob == 0.5
    assert widened.name == "dealer_side_slate"  # view_stills fits the view from the name
    plain = config.widened(config.TRAINING, False)
    assert plain.objects.dice_styles == ("white_red",) and plain.content.die_not_flat_prob == 0.1


def test_a_tiles_face_crops_are_cut_every_face_gap_frames(tmp_path):
    """`train_gpu.py pack --face-gap N`: a face-up tile gives a crop every N frames (36 when not
    given), a die every 3 whatever N (face reader stage 5 took its video crops 12 apart)."""
    from vision.synth.datasets import face_crops

    image = np.full((200, 200, 3), 128, np.uint8)
    tile = {"id": 1, "class": "tile", "visibility": 1.0, "face_up": True, "face": "6-6"}
    die = {"id": 2, "class": "die", "visibility": 1.0, "die_flat": True, "die_value": 4}
    objects = [{**tile, "xyxy": [50, 40, 80, 100]}, {**die, "xyxy": [120, 120, 140, 140]}]

    def crops(tile_gap):
        out, kept = tmp_path / f"gap{tile_gap}", {}
        rng = np.random.default_rng(0)
        for index in range(72):
            face_crops(image, objects, index, kept, rng, out, "r", tile_gap)
        return len(list(out.glob("tile_6-6/*.jpg"))), len(list(out.glob("die_4/*.jpg")))

    assert crops(None) == (2, 24)
    assert crops(12) == (6, 24)
