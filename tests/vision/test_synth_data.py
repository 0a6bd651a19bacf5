"""Dataset plumbing: seeds, YOLO labels, config overrides, a tiny still dataset."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.synth.camera import Camera, CameraParams
from vision.synth.config import TRAINING, ConfigError, load_randomisation, override
from vision.synth.scene import ObjectTruth
from vision.synth.stills import SPLITS, make_stills, scene_seed, yolo_lines
from vision.synth.table import default_layout, zone_at, zone_polygons_px


def test_split_seed_ranges_are_disjoint() -> None:
    ranges = {
        s: {scene_seed(s, seed, i) for seed in (0, 999) for i in (0, 999_999)} for s in SPLITS
    }
    lows = sorted(min(v) for v in ranges.values())
    highs = sorted(max(v) for v in ranges.values())
    assert all(hi < lo for hi, lo in zip(highs, lows[1:], strict=False))
    with pytest.raises(ValueError):
        scene_seed("train", 1000, 0)


def test_yolo_lines_normalise_and_filter() -> None:
    obj = ObjectTruth(
        0, "tile", (100.0, 50.0, 140.0, 120.0), ((0, 0),) * 4, 0.9, "work_area", face_up=True
    )
    hidden = ObjectTruth(1, "hand", (0.0, 0.0, 10.0, 10.0), ((0, 0),) * 4, 0.1, "table")
    lines = yolo_lines((obj, hidden), (200, 100), 0.3)
    assert lines == ["1 0.600000 0.850000 0.200000 0.700000"]


def test_override_rejects_unknown_keys(tmp_path: Path) -> None:
    assert override(TRAINING, {"camera": {"tilt_deg": [1, 2]}}).camera.tilt_deg == (1.0, 2.0)
    with pytest.raises(ConfigError, match="tilt"):
        override(TRAINING, {"camera": {"tilt": [1, 2]}})
    path = tmp_path / "dr.yaml"
    path.write_text("base: shifted\nsensor: {jpeg_quality: [30, 40]}\n")
    loaded = load_randomisation(path)
    assert loaded.name == "shifted" and loaded.sensor.jpeg_quality == (30.0, 40.0)


def test_zones_map_through_camera() -> None:
    layout = default_layout()
    camera = Camera.from_params(CameraParams(tilt_deg=10.0, azimuth_deg=45.0))
    polys = zone_polygons_px(layout, camera)
    assert set(polys) >= {f"box_{k}" for k in range(1, 9)} | {"woodpile", "dice_area", "float_tray"}
    centres = np.array([layout.box(k).centre_mm for k in range(1, 9)])
    assert zone_at(layout, centres) == [f"box_{k}" for k in range(1, 9)]
    # boxes run counter-clockwise seen from above: left to right along the player rail
    assert np.all(np.diff(centres[:, 0]) > 0)


def test_make_stills_writes_yolo_and_crops(tmp_path: Path) -> None:
    out = make_stills(2, tmp_path, "val", seed=1)
    images = sorted((out / "images" / "val").glob("*.jpg"))
    labels = sorted((out / "labels" / "val").glob("*.txt"))
    assert len(images) == len(labels) == 2
    rows = [line.split() for line in labels[0].read_text().splitlines()]
    assert rows and all(len(r) == 5 and 0 <= int(r[0]) <= 4 for r in rows)
    assert (out / "data.yaml").exists() and (out / "crops" / "val.csv").exists()
    assert (out / "truth" / "val.jsonl").read_text().count("\n") == 2
