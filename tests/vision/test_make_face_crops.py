"""scripts/make_face_crops.py: face crops of the training looks, never of a held-out family."""

import cv2
import numpy as np


def test_varied_backs_give_each_scene_a_back_of_its_own(tmp_path, load_script):
    script = load_script("make_face_crops")
    args = ["--n", "4", "--looks", "training", "--seed-index", "900", "--workers", "1"]
    assert script.main([*args, "--out", str(tmp_path / "own")]) == 0
    assert script.main([*args, "--out", str(tmp_path / "wide"), "--varied-backs"]) == 0
    own = sorted((tmp_path / "own" / "faces" / "train").glob("tile_*/*.png"))
    wide = sorted((tmp_path / "wide" / "faces" / "train").glob("tile_*/*.png"))
    assert len(own) > 20
    # the same scenes and tiles, cut at the same boxes: only the backs' colour differs
    assert [p.relative_to(tmp_path / "own") for p in own] == [
        p.relative_to(tmp_path / "wide") for p in wide
    ]
    changed = [
        np.abs(cv2.imread(str(a)).astype(int) - cv2.imread(str(b))).mean() > 4
        for a, b in zip(own, wide, strict=True)
    ]
    assert sum(changed) >= 5  # some backs drawn are as dark as the training look's own


def test_a_held_out_family_is_refused_with_one_line(tmp_path, load_script, capsys):
    script = load_script("make_face_crops")
    assert script.main(["--n", "1", "--looks", "teal_dim", "--out", str(tmp_path)]) == 2
    assert script.main(["--n", "1", "--looks", "nonsense", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "held out" in err and "nonsense" in err
    assert not (tmp_path / "faces").exists()
