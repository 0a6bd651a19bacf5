"""scripts/evaluate_camera.py: the camera check alone over recorded rounds, against their true
blind intervals."""

from __future__ import annotations

import json

import av
import numpy as np

FPS = 5


def _round(folder, frozen: tuple[int, int] | None, n: int = 30) -> None:
    """A small clip of a live picture (noise that differs every frame), frozen from
    ``frozen[0]`` to ``frozen[1]`` (the last live picture repeated), with its scenario."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(1)
    base = np.tile(np.linspace(40, 200, 160), (120, 1))[..., None].repeat(3, axis=2)
    with av.open(str(folder / "clip.mp4"), "w") as out:
        stream = out.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
        last = None
        for index in range(n):
            if frozen and frozen[0] <= index < frozen[1] and last is not None:
                picture = last
            else:
                picture = np.clip(base + rng.normal(0, 6, base.shape), 0, 255).astype(np.uint8)
            last = picture
            out.mux(stream.encode(av.VideoFrame.from_ndarray(picture, format="bgr24")))
        out.mux(stream.encode())
    blind = [[frozen[0], frozen[1], "frozen"]] if frozen else []
    (folder / "scenario.json").write_text(json.dumps({"fps": FPS, "blind_intervals": blind}))


def test_a_freeze_is_found_and_a_live_round_raises_nothing(tmp_path, load_script, capsys):
    script = load_script("evaluate_camera")
    _round(tmp_path / "suite" / "camera_lost", (10, 20))
    _round(tmp_path / "suite" / "clean", None)
    out = tmp_path / "camera.json"
    assert script.main([str(tmp_path / "suite"), "--out", str(out)]) == 0
    assert "2 rounds: 1 of 1 camera losses found, 0 false" in capsys.readouterr().out
    lost, clean = json.loads(out.read_text())
    assert lost["found"] == 1 and lost["false"] == 0 and 9 <= lost["lost"][0] <= 11
    assert clean["lost"] == [] and clean["false"] == 0


def test_bad_input_is_one_line_and_exit_2(tmp_path, load_script, capsys):
    script = load_script("evaluate_camera")
    assert script.main([str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evaluate_camera: ") and err.count("\n") == 1
    (tmp_path / "empty").mkdir()
    assert script.main([str(tmp_path / "empty")]) == 2
