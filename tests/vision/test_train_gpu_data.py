"""The data that travels to the GPU machine (``scripts/train_gpu.py``): packed frames decode back
to the frames they came from, with the labels of those frames, and face crops are labelled as
the face reader's classes."""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.faces import FACE_CLASSES

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
DEMO = ROOT / "datasets" / "samples" / "demo_round"
EVERY = 60


@pytest.fixture(scope="module")
def train_gpu():
    sys.path.insert(0, str(SCRIPTS))  # train_gpu.py imports build_datasets beside it
    try:
        spec = importlib.util.spec_from_file_location("train_gpu", SCRIPTS / "train_gpu.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(SCRIPTS))


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
        expected = train_gpu.frame_labels(truth[index]["objects"], 0.5)
        assert len(labels) == len(expected)
        assert sorted(labels[:, 0].astype(int)) == sorted(int(r[0]) for r in expected)


def test_face_crops_are_named_by_the_readers_classes(packed):
    out, _ = packed
    folders = [p.name for p in (out / "faces").iterdir()]
    assert folders and set(folders) <= set(FACE_CLASSES)
    crop = cv2.imread(str(next((out / "faces" / folders[0]).glob("*.jpg"))))
    assert crop.shape == (96, 96, 3)
