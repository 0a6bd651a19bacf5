"""The settings file (:mod:`pipeline.settings`): defaults that are the dataclasses' own, strict
validation in one line, file and command-line precedence, `paigow config show` / `check`, the
options of `monitor`, `review` and `demo`, and docs/config.md kept true."""

import re
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from pipeline.bus.publisher import PublisherConfig
from pipeline.bus.store import StoreConfig
from pipeline.cli import build_parser, main
from pipeline.cli import monitor as monitor_cli
from pipeline.cli import review as review_cli
from pipeline.cli.common import settings_of
from pipeline.evidence import SnapshotConfig
from pipeline.live.health import HealthConfig
from pipeline.live.monitor import MonitorConfig
from pipeline.live.sources import SourceConfig
from pipeline.live.vision_health import VisionHealthConfig
from pipeline.review import ReviewConfig
from pipeline.round.memory import RoundConfig
from pipeline.rules.base import RulesConfig
from pipeline.runner import PipelineConfig
from pipeline.sections import section
from pipeline.settings import Settings, SettingsError, load_settings, parse_settings
from vision.detector import DetectorConfig
from vision.tracking.config import TrackerConfig

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "datasets" / "samples" / "config.example.yaml"
DOCS = ROOT / "docs" / "config.md"

SECTIONS = {
    "detector": DetectorConfig(),
    "tracker": TrackerConfig(),
    "rules": RulesConfig(),
    "health": HealthConfig(),
    "vision_health": VisionHealthConfig(),
    "snapshots": SnapshotConfig(),
    "monitor": MonitorConfig(),
    "bus": PublisherConfig(),
    "journal": StoreConfig(),
}
"""Sections that build their dataclass whole, with no field given from elsewhere."""


def write(folder: Path, text: str, name: str = "settings.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# --- defaults ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_each_sections_defaults_are_its_dataclasses_defaults(name):
    assert getattr(Settings(), name).build() == SECTIONS[name]


def test_the_sections_with_fields_from_elsewhere_build_the_default_dataclasses():
    settings = Settings()
    assert settings.round.build(chung_box=5) == RoundConfig(chung_box=5)
    assert settings.source.build(camera_id="T9") == SourceConfig(camera_id="T9")
    assert settings.review_config(chung_box=1) == replace(
        ReviewConfig(), pipeline=settings.pipeline_config(1)
    )


def test_without_a_file_the_pipeline_gets_what_it_took_before():
    """PipelineConfig() leaves some stages None (their defaults, the round the layout's chung
    box): the settings give those defaults spelt out, and the rest unchanged."""
    before, now = PipelineConfig(), Settings().pipeline_config(chung_box=3)
    assert now.threads == before.threads
    assert now.detector == DetectorConfig(threads=before.threads)
    assert now.round == RoundConfig(chung_box=3)
    for name in ("gating", "face_cache", "view"):
        assert getattr(now, name) == getattr(before, name)
    spelt_out = {
        "tracker": TrackerConfig,
        "rules": RulesConfig,
        "health": HealthConfig,
        "vision_health": VisionHealthConfig,
    }
    for name, config_class in spelt_out.items():
        assert getattr(before, name) is None and getattr(now, name) == config_class()


def test_without_a_file_the_commands_get_what_they_took_before():
    argv = ["monitor", "0", "--layout", "L", "--table", "T1"]
    settings = settings_of(build_parser().parse_args(argv), monitor_cli.FLAGS)
    assert settings.source.build(camera_id="T1") == SourceConfig(
        realtime=False, open_timeout_s=10.0, read_timeout_s=5.0, fps=None, camera_id="T1"
    )
    assert settings.monitor.build() == MonitorConfig(queue_size=8)
    assert settings.journal.path == Path("alerts.db") and settings.detector.threads == 2
    args = build_parser().parse_args(["review", "clip.mp4", "--out", "o"])
    config = settings_of(args, review_cli.REVIEW_FLAGS).review_config(1)
    assert replace(config, pipeline=None) == ReviewConfig(table="T1", stride=1, still_stride=8)
    args = build_parser().parse_args(["demo", "--no-video"])
    settings = review_cli.effective_settings(args, review_cli.DEMO_FLAGS, review_cli.DEMO_PRESET)
    assert settings.review.stride == review_cli.DEMO_STRIDE
    assert settings.review.video_width_px is None


def test_the_defaults_survive_their_own_validation():
    assert parse_settings(Settings().model_dump()) == Settings()


def test_a_section_names_only_fields_of_its_dataclass_and_requires_one_without_default():
    @dataclass(frozen=True)
    class Knob:
        level: int
        gain: float = 0.5

    with pytest.raises(TypeError, match="Knob has no field levle"):
        section(Knob, positive=("levle",))
    knobs = section(Knob, positive=("level",))
    assert knobs.model_validate({"level": 2}).build() == Knob(2)
    with pytest.raises(ValidationError, match="level"):
        knobs.model_validate({"gain": 1.0})


# --- validation ----------------------------------------------------------------------------


def test_an_unknown_key_is_one_line_naming_it(tmp_path):
    path = write(tmp_path, "tracker:\n  max_tile: 30\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(path)
    message = str(caught.value)
    assert message == f"{path}: unknown key 'tracker.max_tile' (did you mean 'max_tiles'?)"
    with pytest.raises(SettingsError, match="unknown key 'cameras'"):
        parse_settings({"cameras": {}})


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("detector: {min_confidence: high}", "detector.min_confidence: Input should be a valid"),
        ("rules: {open_hold_s: '0.5'}", "rules.open_hold_s"),  # a quoted number is a string
        ("tracker: {hand_carry: 1}", "tracker.hand_carry"),
        ("tracker: {max_tiles: 31.5}", "tracker.max_tiles"),
        ("view: {size_wh: [1920, 1080, 3]}", "view.size_wh"),
        ("gating: 3", "gating: expected a mapping of keys, true or false"),
        ("round: [1, 2]", "round: expected a mapping"),
        ("health: {frozen_s: .nan}", "health.frozen_s: Input should be a finite number"),
        ("rules: {close_hold_s: -1}", "rules.close_hold_s: Input should be greater than"),
        ("detector: {threads: 0}", "detector.threads: Input should be greater than 0"),
        ("journal: {path: 3}", "journal.path: expected a path"),
        ("table: 7", "table: Input should be a valid string, got 7"),
    ],
)
def test_a_wrong_type_is_one_line_naming_the_key(tmp_path, text, where):
    path = write(tmp_path, text + "\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(path)
    assert str(caught.value).startswith(f"{path}: {where}"), caught.value
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("detector: [", "not valid YAML at line"),
        ("- a list\n", "expected a mapping of sections"),
        ("just words", "expected a mapping of sections"),
    ],
)
def test_a_file_that_is_no_settings_is_one_line(tmp_path, text, message):
    with pytest.raises(SettingsError, match=message):
        load_settings(write(tmp_path, text))
    with pytest.raises(SettingsError, match="cannot read"):
        load_settings(tmp_path / "missing.yaml")


def test_a_stage_is_switched_off_by_false_and_an_empty_section_keeps_its_defaults(tmp_path):
    path = write(tmp_path, "gating: false\ndetector: {felt: false}\ntracker:\nview: true\n")
    settings = load_settings(path)
    config = settings.pipeline_config(chung_box=1)
    assert config.gating is None and config.detector.felt is None
    assert config.tracker == TrackerConfig() and config.view == PipelineConfig().view
    assert "gating: false" in settings.to_yaml()
    assert load_settings(write(tmp_path, "")) == Settings()


def test_a_nullable_setting_takes_null():
    settings = parse_settings({"round": {"no_more_bets_quiet_s": None}, "tracker": {}})
    assert settings.round.build(chung_box=1).no_more_bets_quiet_s is None


# --- precedence ----------------------------------------------------------------------------


def test_the_command_line_overrides_the_file_which_overrides_the_preset(tmp_path):
    path = write(tmp_path, "rules: {open_hold_s: 0.5, laja_max_tiles: 3}\nreview: {stride: 4}\n")
    preset = {"review": {"stride": 2, "video_crf": 30}}
    overrides = {"rules": {"open_hold_s": 0.7}}
    settings = load_settings(path, overrides, preset)
    assert (settings.rules.open_hold_s, settings.rules.laja_max_tiles) == (0.7, 3)
    assert (settings.review.stride, settings.review.video_crf) == (4, 30)
    assert settings.rules.close_hold_s == RulesConfig.close_hold_s


def test_a_flag_given_overrides_the_file_and_one_left_out_does_not(tmp_path):
    path = write(tmp_path, "table: T7\ndetector: {threads: 4}\nmonitor: {queue_size: 16}\n")
    argv = ["monitor", "0", "--config", str(path), "--threads", "1"]
    argv += ["--set", "monitor.queue_size=32", "--set", "rules.house_way=canberra"]
    settings = settings_of(build_parser().parse_args(argv), monitor_cli.FLAGS)
    assert settings.detector.threads == 1 and settings.table == "T7"
    assert settings.monitor.queue_size == 32 and settings.rules.house_way == "canberra"
    argv = ["monitor", "0", "--config", str(path), "--set", "detector.threads=3", "--threads", "2"]
    assert settings_of(build_parser().parse_args(argv), monitor_cli.FLAGS).detector.threads == 2


def test_the_demos_stride_yields_to_a_file_and_to_the_option(tmp_path):
    def stride(*argv: str) -> int:
        args = build_parser().parse_args(["demo", *argv])
        return settings_of(args, review_cli.DEMO_FLAGS, review_cli.DEMO_PRESET).review.stride

    path = write(tmp_path, "review: {stride: 3}\n")
    assert stride() == review_cli.DEMO_STRIDE
    assert stride("--config", str(path)) == 3
    assert stride("--config", str(path), "--stride", "5") == 5


# --- the command line ----------------------------------------------------------------------


def test_config_show_prints_settings_that_read_back_the_same(tmp_path, capsys):
    path = write(tmp_path, "table: T7\ngating: false\ntracker: {max_tiles: 30}\n")
    argv = ["config", "show", "--config", str(path), "--set", "view.size_wh=[1280, 720]"]
    assert main(argv) == 0
    shown = capsys.readouterr().out
    settings = parse_settings(yaml.safe_load(shown))
    assert settings == load_settings(path, {"view": {"size_wh": [1280, 720]}})
    assert settings.table == "T7" and settings.gating is None
    assert settings.tracker.max_tiles == 30 and settings.view.size_wh == (1280, 720)
    assert main(["config", "show"]) == 0
    assert parse_settings(yaml.safe_load(capsys.readouterr().out)) == Settings()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["config", "check", "{bad}"], "unknown key 'rules.open_hold'"),
        (["config", "show", "--config", "{bad}"], "unknown key 'rules.open_hold'"),
        (["config", "show", "--set", "rules.open_hold_s"], "expected KEY=VALUE"),
        (["config", "show", "--set", "rules.open_hold_s=x"], "command line: rules.open_hold_s"),
        (["config", "check", "{tmp}/missing.yaml"], "cannot read"),
        (["config", "check", "{layout}"], "layout"),
        (["config", "check", "{way}"], "rules.house_way"),
        (["monitor", "0", "--config", "{bad}"], "unknown key 'rules.open_hold'"),
        (["monitor", "0", "--layout", "L"], "no table: give --table T"),
        (["review", "v.mp4", "--out", "o", "--config", "{bad}"], "unknown key"),
        (["demo", "--config", "{bad}"], "unknown key 'rules.open_hold'"),
    ],
    ids=lambda v: v if isinstance(v, str) else " ".join(v[:2]),
)
def test_a_bad_file_or_option_is_one_line_on_stderr_and_status_2(tmp_path, capsys, argv, message):
    files = {
        "bad": write(tmp_path, "rules: {open_hold: 1}\n", "bad.yaml"),
        "layout": write(tmp_path, f"layout: {tmp_path / 'no_layout.yaml'}\n", "layout.yaml"),
        "way": write(tmp_path, "rules: {house_way: nowhere}\n", "way.yaml"),
    }
    argv = [a.format(tmp=tmp_path, **files) for a in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and message in captured.err, captured.err
    assert captured.err.startswith(f"paigow {argv[0]}: error: ")
    assert not captured.out


def test_config_check_passes_the_example_and_names_what_it_checked(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)  # the example's layout path is relative to the checkout
    assert main(["config", "check", str(EXAMPLE.relative_to(ROOT))]) == 0
    line = capsys.readouterr().out
    assert line.count("\n") == 1 and ": ok (layout " in line and "house way" in line
    example = load_settings(EXAMPLE)
    assert example != Settings() and example.table is not None


def test_config_show_loads_no_model_runtime():
    code = (
        "import sys\nfrom pipeline.cli import main\nassert main(['config', 'show']) == 0\n"
        "assert 'onnxruntime' not in sys.modules, 'onnxruntime imported'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout)["detector"]["threads"] == DetectorConfig.threads


# --- docs/config.md ------------------------------------------------------------------------


def documented() -> dict[str, dict[str, str]]:
    """docs/config.md's tables: section -> key -> default as written ("top": the top level)."""
    tables: dict[str, dict[str, str]] = {}
    heading_of = None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^## (?:`(\w+)`|(Top level))", line)
        if heading:
            heading_of = heading.group(1) or "top"
        row = re.match(r"^\| `([\w.]+)` \| `([^`]*)` \|", line)
        if row and heading_of:
            tables.setdefault(heading_of, {})[row.group(1)] = row.group(2)
    return tables


def flat(data: dict, prefix: str = "") -> dict:
    """``{"felt": {"sigma": 8}}`` -> ``{"felt.sigma": 8}``."""
    out = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out |= flat(value, f"{prefix}{key}.")
        else:
            out[prefix + key] = value
    return out


def test_the_docs_list_every_key_with_its_default_and_no_other():
    defaults = Settings().model_dump(mode="json")
    wanted = {"top": {k: v for k, v in defaults.items() if not isinstance(v, dict)}}
    wanted |= {k: flat(v) for k, v in defaults.items() if isinstance(v, dict)}
    tables = documented()
    assert sorted(tables) == sorted(wanted)
    for part, keys in wanted.items():
        assert sorted(tables[part]) == sorted(keys), part
        for key, value in keys.items():
            written = yaml.safe_load(tables[part][key])
            assert written == value, f"{part}.{key}: docs say {written!r}, the default is {value!r}"
