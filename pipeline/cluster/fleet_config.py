"""The fleet file: the tables ``paigow fleet`` runs, one monitor each, and how it watches them.

A validated YAML (unknown keys refused, every error one line naming the file and the key)::

    ray: auto                     # a local Ray instance; or a cluster's ADDRESS (host:6379)
    watchdog: {stall_s: 30}       # how monitors are judged and restarted (WatchdogConfig)
    tables:
      - table: T1                 # the table id in the alerts (unique)
        source: rtsp://cam1/main  # as for paigow monitor: a file, a stream, a camera, a folder
        layout: layouts/t1.yaml   # the camera's layout
        journal: journals/T1.db   # the table's alert journal (unique)
        publish: tcp://0.0.0.0:5601   # its PUB endpoint (unique port)
        replay: tcp://0.0.0.0:5602    # its replay endpoint (unique port)
        metrics: 127.0.0.1:9101   # optional: its metrics endpoint (unique port)
        config: t1-settings.yaml  # optional: a settings file for this table (docs/config.md)
        loop: true                # optional: a file or folder played again and again
        realtime: true            # optional: pace a file at its frame rate, as a camera

``loop`` and ``realtime`` left out keep what the table's settings say (``source.loop``,
``source.realtime``; false by default). Relative paths (source, layout, journal, config) are
taken from the fleet file's folder; those
inside a table's settings file follow the settings rule (the current folder). Every path is
made absolute here, so a monitor finds its files wherever Ray starts it. The ports are fixed
(``*`` is refused): a restarted monitor comes back at the same address, where consoles and
the proxy wait for it. :func:`table_settings` turns a table into the Settings its monitor runs
with (its settings file under the fleet's keys). This module does not import Ray: the proxy
reads the endpoints from it.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ValidationError

from pipeline.bus.wire import check_table
from pipeline.layout import load_layout, read_yaml
from pipeline.sections import Nested, Strict, section
from pipeline.settings import FilePath, Settings, load_settings

MAX_FLEET_BYTES = 1 << 20
"""A fleet file lists tables in a few lines each: a larger one is refused before it is parsed."""
_TCP = re.compile(r"tcp://(?P<host>[^:/]+|\[[0-9a-fA-F:.]+\]):(?P<port>\d{1,5})")
_HOST_PORT = re.compile(r"(?P<host>[^:/]+|\[[0-9a-fA-F:.]+\]):(?P<port>\d{1,5})")


class FleetError(ValueError):
    """A fleet file that cannot be used; one line naming the file and the key."""


@dataclass(frozen=True)
class WatchdogConfig:
    """How the supervisor judges each monitor; each line says what changing one trades."""

    check_s: float = 1.0  # period of the poll of every monitor; lower: a failure is seen
    # sooner, more calls
    heartbeat_s: float = 5.0  # a status call not answered within this is a hung monitor
    # (killed, restarted); lower: quicker, but a busy machine may be taken for a hung one
    stall_s: float = 30.0  # a running monitor that processed no frame this long, its camera
    # not reported lost, is stalled (killed, restarted); lower: sooner, more false restarts
    start_s: float = 120.0  # a monitor still waiting for a CPU or loading its models this
    # long is stalled too; lower: a stuck start is seen sooner, a slow node restarted for
    # nothing
    backoff_first_s: float = 1.0  # wait before the first restart; doubled for each restart in
    # a row
    backoff_max_s: float = 60.0  # longest wait before a restart; higher: less churn from a
    # monitor that keeps failing, slower recovery once its cause is gone
    healthy_s: float = 300.0  # a monitor that ran this long since its start counts its
    # restarts in a row from 0 again (the back-off starts afresh)
    notice_checks: int = 5  # the monitor_restarted notice is published at the start and
    # again at this many polls, for consoles that reconnect (notices are not replayed)


WatchdogSection = section(
    WatchdogConfig,
    positive=("check_s", "heartbeat_s", "stall_s", "start_s", "backoff_first_s", "backoff_max_s"),
)


def _text(value: Any) -> Any:
    """A camera index written as a number (``source: 0``) is its text."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class FleetTable(Strict):
    """One table of the fleet (see the module doc); paths absolute once loaded."""

    table: str
    source: Annotated[str, BeforeValidator(_text)]
    layout: FilePath
    journal: FilePath
    publish: str
    replay: str
    metrics: str | None = None
    config: FilePath | None = None
    loop: bool | None = None
    realtime: bool | None = None

    @property
    def metrics_url(self) -> str | None:
        return None if self.metrics is None else f"http://{self.metrics}/metrics"

    def endpoints(self) -> dict[str, str]:
        """The table's endpoints by key (publish, replay and metrics when given)."""
        named = {"publish": self.publish, "replay": self.replay, "metrics": self.metrics}
        return {key: value for key, value in named.items() if value is not None}


class _FleetFile(Strict):
    ray: str = "auto"
    watchdog: Nested[WatchdogSection] = WatchdogSection()
    tables: list[FleetTable]


@dataclass(frozen=True)
class Fleet:
    """A loaded fleet file: the Ray address, the watchdog, the tables (paths absolute) and
    each table's settings (``settings[table]``)."""

    path: Path
    ray: str
    watchdog: WatchdogConfig
    tables: tuple[FleetTable, ...]
    settings: dict[str, Settings]


def load_fleet(path: str | Path, files: bool = True) -> Fleet:
    """Read, validate and resolve a fleet file: FleetError (one line) when it cannot be used,
    including a table whose layout, source or settings file is missing or bad. ``files``
    False: those files are not looked at and ``settings`` is empty (the proxy, which needs
    only the endpoints, may run where they are not)."""
    path = Path(path)
    data = read_yaml(path, "a fleet file", FleetError, MAX_FLEET_BYTES)
    if not isinstance(data, dict):
        raise FleetError(f"{path}: expected a mapping with a 'tables' list at the top level")
    try:
        parsed = _FleetFile.model_validate(data)
    except ValidationError as err:
        raise FleetError(_error_line(err, str(path), data)) from None
    if not parsed.tables:
        raise FleetError(f"{path}: tables: the fleet lists no table")
    folder = path.resolve().parent
    tables = tuple(_resolved(table, folder) for table in parsed.tables)
    for number, table in enumerate(tables):
        _check_table(table, f"{path}: tables[{number}] ({table.table})", files)
    _check_unique(tables, path)
    settings = {table.table: _settings_of(table, path) for table in tables if files}
    return Fleet(path, parsed.ray, parsed.watchdog.build(), tables, settings)


def table_settings(table: FleetTable) -> Settings:
    """The settings a table's monitor runs with: its settings file (or the defaults), then the
    fleet's keys over it; paths absolute. SettingsError (a ValueError) for a bad file."""
    overrides: dict[str, Any] = {
        "table": table.table,
        "layout": table.layout,
        "journal": {"path": table.journal},
        "bus": {"pub_endpoint": table.publish, "replay_endpoint": table.replay},
    }
    source = {key: getattr(table, key) for key in ("loop", "realtime")}
    overrides["source"] = {key: value for key, value in source.items() if value is not None}
    if table.metrics is not None:
        overrides["metrics"] = {"endpoint": table.metrics}
    settings = load_settings(table.config, overrides)
    journal, bus = settings.journal, settings.bus
    files = {
        "journal": journal.model_copy(
            update={"spill": _absolute(journal.spill), "snapshots": _absolute(journal.snapshots)}
        ),
        "bus": bus.model_copy(update={"keys": _absolute(bus.keys)}),
    }
    return settings.model_copy(update=files)


def _absolute(path: Path | None) -> Path | None:
    return None if path is None else path.resolve()


def _resolved(table: FleetTable, folder: Path) -> FleetTable:
    paths: dict[str, Any] = {
        "layout": (folder / table.layout).resolve(),
        "journal": (folder / table.journal).resolve(),
        "config": None if table.config is None else (folder / table.config).resolve(),
    }
    if not _is_live(table.source):
        paths["source"] = str((folder / table.source).resolve())
    return table.model_copy(update=paths)


def _is_live(source: str) -> bool:
    return source.isdigit() or "://" in source


def _check_table(table: FleetTable, where: str, files: bool) -> None:
    """What one table gets wrong on its own: its name, endpoints and (``files``) files."""
    try:
        check_table(table.table)
    except ValueError as exc:
        raise FleetError(f"{where}: table: {exc}") from None
    for key, endpoint in table.endpoints().items():
        if _port(endpoint) is None:
            form = "HOST:PORT" if key == "metrics" else "tcp://HOST:PORT"
            raise FleetError(
                f"{where}: {key}: {endpoint!r} is not {form} with a fixed port from 1 to 65535 "
                "(a restarted monitor must come back at the same address)"
            )
    if not files:
        return
    if not _is_live(table.source) and not Path(table.source).exists():
        raise FleetError(f"{where}: source: {table.source}: no such file or folder")
    if table.config is not None and not table.config.is_file():
        raise FleetError(f"{where}: config: {table.config}: no such file")
    try:
        load_layout(table.layout)
    except ValueError as exc:
        raise FleetError(f"{where}: layout: {exc}") from None


def _check_unique(tables: tuple[FleetTable, ...], path: Path) -> None:
    """Table ids, journals and ports each used once in the fleet (any two monitors may run
    on one machine, so a port is taken whatever the host)."""
    ids = Counter(table.table for table in tables)
    for name, count in ids.items():
        if count > 1:
            raise FleetError(f"{path}: tables: table {name} is listed {count} times")
    journals: dict[Path, str] = {}
    ports: dict[int, str] = {}
    for table in tables:
        first = journals.setdefault(table.journal, table.table)
        if first != table.table:
            raise FleetError(
                f"{path}: tables ({table.table}): journal: {table.journal} is {first}'s already"
            )
        for key, endpoint in table.endpoints().items():
            port = _port(endpoint)
            first = ports.setdefault(port, f"{table.table}'s {key}")
            if first != f"{table.table}'s {key}":
                raise FleetError(f"{path}: tables ({table.table}): {key}: port {port} is {first}")


def _port(endpoint: str) -> int | None:
    """The fixed port of ``tcp://HOST:PORT`` or ``HOST:PORT``; None for anything else."""
    form = _TCP if endpoint.startswith("tcp://") else _HOST_PORT
    found = form.fullmatch(endpoint)
    port = int(found["port"]) if found else 0
    return port if 1 <= port <= 65535 else None


def _settings_of(table: FleetTable, path: Path) -> Settings:
    where = f"{path}: tables ({table.table})"
    try:
        settings = table_settings(table)
    except ValueError as exc:
        raise FleetError(f"{where}: config: {exc}") from None
    if settings.source.loop and _is_live(table.source):
        raise FleetError(f"{where}: loop: only a file or a folder can be looped, not a stream")
    return settings


def _error_line(err: ValidationError, source: str, data: dict) -> str:
    """The first error as one line: where (a table by its number and id), what, what was
    given, and a known key close to an unknown one."""
    first = err.errors()[0]
    loc = first["loc"]
    where = ".".join(str(part) for part in loc)
    if len(loc) >= 2 and loc[0] == "tables" and isinstance(loc[1], int):
        entry = (data.get("tables") or [None] * (loc[1] + 1))[loc[1]]
        name = entry.get("table") if isinstance(entry, dict) else None
        where = f"tables[{loc[1]}]" + (f" ({name})" if name else "")
        where += "".join(f".{part}" for part in loc[2:])
    if first["type"] == "extra_forbidden":
        return f"{source}: unknown key '{where}'{_did_you_mean(loc)}"
    message = first["msg"].removeprefix("Value error, ")
    given = "" if first["type"] in ("value_error", "missing") else f", got {first['input']!r:.40}"
    return f"{source}: {where}: {message}{given}"


def _did_you_mean(loc: tuple) -> str:
    model: type[BaseModel] = _FleetFile
    if len(loc) >= 3 and loc[0] == "tables":
        model = FleetTable
    elif len(loc) == 2 and loc[0] == "watchdog":
        model = WatchdogSection
    close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""
