"""`paigow synth`: a scenario written through the CLI, the suite's seeds, bad input in one line."""

import json

import pytest

from pipeline.cli import main
from pipeline.cli.synth import suite_entries
from vision.synth.round_plan import INJECTABLE


def test_suite_has_ten_clean_rounds_and_three_per_kind():
    entries = suite_entries(10, 3, None)
    assert sum(1 for _, inj in entries if not inj) == 10
    for kind in INJECTABLE:
        assert sum(1 for _, inj in entries if inj == (kind,)) == 3
    assert len({seed for seed, _ in entries}) == len(entries)


def test_scenario_command_writes_clip_and_truth(tmp_path, capsys):
    code = main(
        [
            "synth",
            "scenario",
            "--seed",
            "3",
            "--inject",
            "dice_not_flat",
            "--scale",
            "0.1",
            "--out",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "frames/s rendered" in out and "injected dice_not_flat" in out
    summary = json.loads((tmp_path / "scenario.json").read_text())
    assert [i["kind"] for i in summary["irregularities"]] == ["dice_not_flat"]
    assert (tmp_path / "clip.mp4").stat().st_size > 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["synth", "scenario", "--seed", "1", "--inject", "nonsense", "--out", "x"],
            "cannot inject 'nonsense'",
        ),
        (["synth", "scenario", "--seed", "1", "--scale", "3", "--out", "x"], "--scale must be"),
        (["synth", "stills", "--n", "0", "--out", "x"], "--n must be at least 1"),
    ],
)
def test_bad_synth_input_is_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_stills_and_suite_commands(tmp_path, capsys):
    assert (
        main(["synth", "stills", "--n", "1", "--split", "test", "--out", str(tmp_path / "s")]) == 0
    )
    assert len(list((tmp_path / "s" / "images" / "test").iterdir())) == 1
    argv = [
        "synth",
        "suite",
        "--out",
        str(tmp_path / "suite"),
        "--clean",
        "1",
        "--per-kind",
        "1",
        "--kinds",
        "camera_lost",
        "--scale",
        "0.1",
    ]
    assert main(argv) == 0
    index = json.loads((tmp_path / "suite" / "suite.json").read_text())
    assert [e["injections"] for e in index] == [[], ["camera_lost"]]
    summary = json.loads((tmp_path / "suite" / index[1]["name"] / "scenario.json").read_text())
    assert summary["blind_intervals"] and "wrote 2 rounds" in capsys.readouterr().out
