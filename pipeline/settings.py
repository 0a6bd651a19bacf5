"""One validated configuration for what a deployment sets: every stage's settings in one file.

A settings YAML has one section per component, each holding some of that component's keys
(``docs/config.md`` lists them all with their defaults and what each trades)::

    table: T7                       # the table id in the alerts (monitor: required somewhere)
    layout: /etc/paigow/t7.yaml     # the camera's layout file
    detector: {threads: 4}
    gating: false                   # a stage that can be turned off: false
    rules: {open_hold_s: 0.5, house_way: canberra}
    journal: {path: /var/lib/paigow/t7.db}

A section takes its keys and their defaults from the frozen dataclass its stage already takes
(:mod:`pipeline.sections`), so each default is written once, beside its trade-off, and each
section builds that dataclass. The effective settings are the defaults, then the file, then the
command line (``overrides``); relative paths are taken from the current folder, as on the
command line. Unknown keys and wrong types are refused, and every error is one line naming the
key (:class:`SettingsError`).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    ValidationError,
    field_validator,
)

from pipeline.bus.proxy import PROXY_KEY, ProxyConfig
from pipeline.bus.publisher import PublisherConfig
from pipeline.bus.store import StoreConfig
from pipeline.bus.wire import check_table
from pipeline.evidence import SnapshotConfig
from pipeline.layout import read_yaml
from pipeline.live.health import HealthConfig
from pipeline.live.metrics import MetricsConfig, parse_endpoint
from pipeline.live.monitor import MonitorConfig
from pipeline.live.sources import SourceConfig
from pipeline.live.vision_health import VisionHealthConfig
from pipeline.review.config import ReviewConfig
from pipeline.round.memory import RoundConfig
from pipeline.rules.base import RulesConfig
from pipeline.runner import PipelineConfig
from pipeline.sections import Nested, Section, Strict, Switch, section
from vision.detector import DetectorConfig
from vision.dice_finder import DiceFinderConfig
from vision.faces_cache import FaceCacheConfig
from vision.gating import GatingConfig
from vision.light_tiles import LightTileConfig
from vision.places import PlaceConfig
from vision.tracking.config import TrackerConfig
from vision.view import ViewConfig

MAX_SETTINGS_BYTES = 1 << 20
"""A settings file is a few kilobytes: a larger one is refused before it is parsed."""
DEFAULT_JOURNAL = Path("alerts.db")


def _path(value: Any) -> Any:
    if not isinstance(value, str | Path) or not str(value):
        raise ValueError(f"expected a path, got {value!r}")
    return Path(value)


FilePath = Annotated[Path, BeforeValidator(_path)]


def _endpoint(value: str) -> str:
    if "://" not in value or any(c.isspace() for c in value):
        raise ValueError(f"{value!r} is no ZeroMQ endpoint (such as tcp://10.0.0.11:5556)")
    return value


Endpoint = Annotated[str, AfterValidator(_endpoint)]
TableName = Annotated[str, AfterValidator(check_table)]


class SettingsError(ValueError):
    """Settings that cannot be used; the message is one line naming the file and the key."""


class _BusFiles(Section):
    keys: FilePath | None = None  # the CURVE keys folder (paigow keys); None: no encryption


class TableEndpoints(Strict):
    """Where the proxy finds one table's publisher: its monitor's ``bus`` endpoints."""

    publish: Endpoint  # the table's PUB endpoint (bus.pub_endpoint of its monitor)
    replay: Endpoint  # its replay endpoint (bus.replay_endpoint)


class _ProxyFiles(Section):
    keys: FilePath | None = None  # the CURVE keys folder; None: no encryption
    key_name: str = PROXY_KEY  # the proxy's own keypair in it, on every table's allow-list
    tables: dict[TableName, TableEndpoints] = Field(default_factory=dict)  # table -> its
    # publisher's endpoints

    def table_map(self) -> dict[str, tuple[str, str]]:
        """Table -> (PUB endpoint, replay endpoint), as :class:`RoomProxy` takes them."""
        return {table: (ends.publish, ends.replay) for table, ends in self.tables.items()}


class _JournalFiles(Section):
    path: FilePath = DEFAULT_JOURNAL  # the SQLite alert journal
    spill: FilePath | None = None  # where alerts wait while the journal refuses writes;
    # None: beside the journal (JOURNAL.spill.jsonl); put it on another disk
    snapshots: FilePath | None = None  # folder the alerts' snapshot paths are under; None: the
    # journal's folder


class _MetricsChecks(Section):
    @field_validator("endpoint", check_fields=False)
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is not None:
            parse_endpoint(value)  # malformed: one line; a port in use shows only when bound
        return value


DetectorSection = section(DetectorConfig, positive=("threads",))
GatingSection = section(GatingConfig, positive=("mask_scale", "full_every_frames"))
FaceCacheSection = section(FaceCacheConfig, positive=("thumbnail_px",))
ViewSection = section(ViewConfig, positive=("learnt_tile_px",))
DiceFinderSection = section(DiceFinderConfig, positive=("open_die", "split_die", "split_dice"))
PlacesSection = section(PlaceConfig, positive=("cell_px", "min_change", "keep_frames"))
LightTilesSection = section(
    LightTileConfig, positive=("every_s", "sigma", "coloured_over", "dark_woodpile")
)
TrackerSection = section(TrackerConfig)
RoundSection = section(RoundConfig, exclude=("chung_box",), signed=("first_box_offset",))
RulesSection = section(RulesConfig)
HealthSection = section(HealthConfig, positive=("stride_px",))
VisionHealthSection = section(VisionHealthConfig)
SnapshotSection = section(SnapshotConfig, positive=("width_px", "every_s"))
SourceSection = section(
    SourceConfig,
    exclude=("camera_id", "keep_every", "skip_unreferenced"),  # the table; a review's own
    positive=("open_timeout_s", "read_timeout_s", "fps"),
)
MonitorSection = section(
    MonitorConfig, positive=("queue_size", "status_interval_s", "log_interval_s", "stride")
)
MetricsSection = section(MetricsConfig, base=_MetricsChecks, positive=("stall_s",))
BusSection = section(PublisherConfig, base=_BusFiles)
ProxySection = section(
    ProxyConfig,
    base=_ProxyFiles,
    positive=(
        "request_timeout_s",
        "max_pending",
        "table_in_flight",
        "max_replay_limit",
        "replay_hwm",
    ),
)
JournalSection = section(StoreConfig, base=_JournalFiles, positive=("retry_first_s", "retry_max_s"))
ReviewSection = section(
    ReviewConfig,
    exclude=("table", "snapshots", "pipeline"),  # the top-level table; sections of their own
    positive=("stride", "still_stride", "video_width_px"),
)


PIPELINE_DEFAULTS = PipelineConfig()  # which stages are on unless a file turns them off


def _on_or_off(section_class: type[Section], config: Any) -> Section | None:
    return None if config is None else section_class.of(config)


class Settings(Strict):
    """Every setting of a deployment; each section builds its stage's dataclass."""

    table: str | None = None  # the table id named in the alerts; None: review calls it
    # ReviewConfig.table, the monitor needs one
    layout: FilePath | None = None  # the camera's layout YAML; None: review looks beside the
    # video, then takes the packaged one; the monitor needs one
    detector: Nested[DetectorSection] = DetectorSection()
    gating: Switch[GatingSection] = _on_or_off(GatingSection, PIPELINE_DEFAULTS.gating)
    face_cache: Switch[FaceCacheSection] = _on_or_off(
        FaceCacheSection, PIPELINE_DEFAULTS.face_cache
    )
    view: Switch[ViewSection] = _on_or_off(ViewSection, PIPELINE_DEFAULTS.view)
    dice_finder: Switch[DiceFinderSection] = _on_or_off(
        DiceFinderSection, PIPELINE_DEFAULTS.dice_finder
    )
    places: Switch[PlacesSection] = _on_or_off(PlacesSection, PIPELINE_DEFAULTS.places)
    light_tiles: Switch[LightTilesSection] = _on_or_off(
        LightTilesSection, PIPELINE_DEFAULTS.light_tiles
    )
    tracker: Nested[TrackerSection] = TrackerSection()
    round: Nested[RoundSection] = RoundSection()
    rules: Nested[RulesSection] = RulesSection()
    health: Nested[HealthSection] = HealthSection()
    vision_health: Nested[VisionHealthSection] = VisionHealthSection()
    snapshots: Nested[SnapshotSection] = SnapshotSection()
    source: Nested[SourceSection] = SourceSection()
    monitor: Nested[MonitorSection] = MonitorSection()
    metrics: Nested[MetricsSection] = MetricsSection()
    bus: Nested[BusSection] = BusSection()
    journal: Nested[JournalSection] = JournalSection()
    proxy: Nested[ProxySection] = ProxySection()
    review: Nested[ReviewSection] = ReviewSection()

    def pipeline_config(self, chung_box: int) -> PipelineConfig:
        """The settings of every stage of a table's pipeline; ``chung_box`` from the layout."""
        return PipelineConfig(
            threads=self.detector.threads,  # the face reader's too
            detector=self.detector.build(),
            gating=_built(self.gating),
            face_cache=_built(self.face_cache),
            tracker=self.tracker.build(),
            round=self.round.build(chung_box=chung_box),
            rules=self.rules.build(),
            health=self.health.build(),
            vision_health=self.vision_health.build(),
            view=_built(self.view),
            dice_finder=_built(self.dice_finder),
            places=_built(self.places),
            light_tiles=_built(self.light_tiles),
        )

    def review_config(self, chung_box: int) -> ReviewConfig:
        """What a review runs with (its table: ``table``, else ReviewConfig's)."""
        table = {} if self.table is None else {"table": self.table}
        snapshots = self.snapshots.build()
        return self.review.build(
            pipeline=self.pipeline_config(chung_box), snapshots=snapshots, **table
        )

    def to_yaml(self) -> str:
        """The settings as a YAML document that :func:`parse_settings` reads back the same."""
        data = self.model_dump(mode="json")
        return yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=100)


class _Dumper(yaml.SafeDumper):
    """Sections in block style, lists (a size, a colour) on one line."""


_Dumper.add_representer(
    list, lambda dumper, data: dumper.represent_sequence("tag:yaml.org,2002:seq", data, True)
)


def _built(part: Section | None) -> Any:
    return None if part is None else part.build()


def merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``, mapping by mapping (neither is changed).

    >>> merge({"a": {"x": 1, "y": 2}, "b": 1}, {"a": {"y": 3}})
    {'a': {'x': 1, 'y': 3}, 'b': 1}
    """
    out = dict(base)
    for key, value in top.items():
        under = out.get(key)
        both = isinstance(under, Mapping) and isinstance(value, Mapping)
        out[key] = merge(under, value) if both else value
    return out


def assignment(key: str, value: Any) -> dict[str, Any]:
    """The override setting one dotted key: ``assignment("rules.open_hold_s", 0.5)`` ->
    ``{"rules": {"open_hold_s": 0.5}}``."""
    *parents, last = key.split(".")
    if not all((*parents, last)):
        raise SettingsError(f"'{key}' is no settings key (section.key, e.g. tracker.max_tiles)")
    out: dict[str, Any] = {last: value}
    for parent in reversed(parents):
        out = {parent: out}
    return out


def parse_assignment(text: str) -> dict[str, Any]:
    """``KEY=VALUE`` from the command line as an override; VALUE is read as YAML (``0.5``,
    ``false``, ``null``, ``[1280, 720]``; anything else is a string)."""
    key, sep, value = text.partition("=")
    if not sep:
        raise SettingsError(f"'{text}': expected KEY=VALUE, e.g. rules.open_hold_s=0.5")
    try:
        parsed = yaml.safe_load(value)
    except yaml.YAMLError:
        raise SettingsError(f"'{text}': the value is not valid YAML") from None
    return assignment(key.strip(), parsed)


def parse_settings(data: Any, source: str = "settings") -> Settings:
    """Validate a settings document (parsed YAML; None: empty) into :class:`Settings`."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise SettingsError(f"{source}: expected a mapping of sections at the top level")
    try:
        return Settings.model_validate(data)
    except ValidationError as err:
        raise SettingsError(_error_line(err, source)) from None


def load_settings(
    path: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    preset: Mapping[str, Any] | None = None,
) -> Settings:
    """The effective settings: the defaults, then ``preset`` (a command's own defaults, like
    the demo's stride), then the file at ``path``, then ``overrides`` (the command line)."""
    layers = merge(preset or {}, read_settings_file(path) if path is not None else {})
    settings = parse_settings(layers, str(path) if path is not None else "settings")
    if overrides:
        settings = parse_settings(merge(layers, overrides), "command line")
    return settings


def read_settings_file(path: str | Path) -> dict[str, Any]:
    """The parsed YAML of a settings file (a mapping; an empty file is ``{}``)."""
    path = Path(path)
    data = read_yaml(path, "a settings file", SettingsError, MAX_SETTINGS_BYTES)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: expected a mapping of sections at the top level")
    return data


def _error_line(err: ValidationError, source: str) -> str:
    """The first error as one line: where, what, and what was given."""
    errors = err.errors()
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    if first["type"] == "extra_forbidden":
        return f"{source}: unknown key '{where}'{_did_you_mean(first['loc'])}{more}"
    message = first["msg"].removeprefix("Value error, ")
    given = "" if first["type"] == "value_error" else f", got {_short(first['input'])}"
    return f"{source}: {where}: {message}{given}{more}"


def _did_you_mean(loc: tuple) -> str:
    """A known key close to the unknown one at ``loc``, as a hint (or nothing)."""
    holder: Any = Settings()
    for part in loc[:-1]:
        holder = getattr(holder, str(part), None)
    if not isinstance(holder, BaseModel):
        return ""
    close = difflib.get_close_matches(str(loc[-1]), list(type(holder).model_fields), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
