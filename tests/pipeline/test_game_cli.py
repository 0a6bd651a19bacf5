"""`paigow way`, `paigow match`, `paigow edge`: output, JSON keys and one-line errors (exit 2)."""

import json
import subprocess
import sys

import pytest

from pipeline.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_way_prints_both_hands(capsys):
    code, out, _ = run(capsys, "way", "6-6", "1-1", "4-5", "2-3")
    assert code == 0
    assert "Wong (Day)" in out and "7 (Teen high)" in out


def test_way_json_keys(capsys):
    _, out, _ = run(capsys, "way", "--json", "6-6", "1-1", "4-5", "2-3")
    data = json.loads(out)
    assert set(data) == {"house_way", "tiles", "high", "low", "rule_line"}
    assert data["high"]["tiles"] == ["1-1", "4-5"]
    assert set(data["high"]) == {"tiles", "name", "points", "rank", "ranks"}


def test_match_json(capsys):
    _, out, _ = run(
        capsys,
        "match",
        "--json",
        "--player",
        "6-6",
        "1-1",
        "4-5",
        "2-3",
        "--bank",
        "5-5",
        "5-5",
        "3-4",
        "1-4",
    )
    data = json.loads(out)
    assert data["result"] == "push"
    assert data["bank"]["high"]["name"] == "Pair of Mooy"


def test_match_with_explicit_setting(capsys):
    _, out, _ = run(
        capsys,
        "match",
        "--json",
        "--player",
        "1-2",
        "2-4",
        "/",
        "6-6",
        "4-5",
        "--bank",
        "1-3",
        "2-2",
        "/",
        "5-5",
        "4-6",
    )
    assert json.loads(out)["result"] == "win"


def test_edge_json(capsys):
    _, out, _ = run(capsys, "edge", "--json")
    data = json.loads(out)
    assert {"win", "lose", "push", "player_edge", "banker_edge", "seconds"} <= set(data)
    assert 0.022 <= data["player_edge"] <= 0.026


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["way", "7-7", "1-1", "2-2", "3-3"], "no such Pai Gow tile: '7-7'"),
        (["way", "6-6", "6-6", "6-6", "1-1"], "the deck holds only 2 6-6 tiles, got 3"),
        (["way", "6-6", "1-1", "2-3"], "expected 4 tiles, got 3"),
        (["way", "6-6", "1-1", "2-3", "4-5", "--house-way", "atlantis"], "unknown house way"),
        (
            ["match", "--player", "6-6", "6-6", "1-1", "2-3", "--bank", "6-6", "4-5", "2-2", "3-3"],
            "the deck holds only 2 6-6 tiles, got 3",
        ),
        (
            [
                "match",
                "--player",
                "2-3",
                "1-1",
                "/",
                "4-5",
                "6-6",
                "--bank",
                "5-5",
                "5-5",
                "3-4",
                "1-4",
            ],
            "player: invalid setting",
        ),
        (["edge", "--commission", "1.5"], "commission must be in [0, 1)"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_malformed_way_file_is_one_line_naming_the_line(capsys, tmp_path):
    path = tmp_path / "broken.way"
    path.write_text("name broken\ntwo-pairs\nsplit teen with 9&99\nmaximise low\n")
    code, _, err = run(capsys, "way", "6-6", "1-1", "4-5", "2-3", "--house-way", str(path))
    assert code == 2
    assert "broken.way line 3" in err and err.count("\n") == 1


def test_argparse_errors_are_one_line_and_exit_2():
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "way"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "required" in proc.stderr
