"""``paigow config show`` and ``paigow config check FILE``: the settings of a deployment.

``show`` prints the effective settings as YAML (the defaults, then ``--config FILE``, then each
``--set KEY=VALUE``); its output is a settings file that reads back the same. ``check``
validates a settings file and what it names (the layout file, the house way, the detector's
model entry) and prints one line. Every key, its default and what it trades:
``docs/config.md``. A bad file is one line on stderr, status 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.cli.common import add_settings_options, settings_of

SHOW_HEADER = "# paigow settings: the defaults, then --config, then --set (docs/config.md)\n"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "config",
        help="the settings of a deployment: print the effective ones, check a file",
        description="One YAML file sets what a deployment sets (detector, gating, tracker, "
        "round, rules, bus, journal, ...); `monitor`, `review` and `demo` take it as --config.",
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="{show,check}")
    show = actions.add_parser(
        "show",
        help="print the effective settings as YAML",
        description="Print the effective settings: the defaults, then --config FILE, then each "
        "--set. The output is itself a settings file.",
    )
    add_settings_options(show)
    show.set_defaults(func=cmd_show)
    check = actions.add_parser(
        "check",
        help="validate a settings file",
        description="Validate a settings file and what it names: the layout file, the house "
        "way and the detector's model entry. Prints one line; status 2 when it is bad.",
    )
    check.add_argument("file", type=Path, metavar="FILE", help="settings YAML")
    check.set_defaults(func=cmd_check)


def cmd_show(args: argparse.Namespace) -> int:
    print(SHOW_HEADER + settings_of(args, {}).to_yaml(), end="")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from paigow.houseway import load_way
    from pipeline.layout import load_layout
    from pipeline.settings import SettingsError, load_settings
    from vision.onnx import load_manifest

    settings = load_settings(args.file)
    named = []
    if settings.layout is not None:
        _named(args.file, "layout", load_layout, settings.layout)
        named.append(f"layout {settings.layout}")
    way = _named(args.file, "rules.house_way", load_way, settings.rules.house_way)
    named.append(f"house way {way.name}")
    model = settings.detector.model
    if model not in load_manifest():
        raise SettingsError(f"{args.file}: detector.model: no {model!r} in the models' manifest")
    print(f"{args.file}: ok ({', '.join(named)}, model {model})")
    return 0


def _named(file: Path, key: str, load: Callable[[Any], Any], value: Any) -> Any:
    """What ``load(value)`` gives; its error (a bad layout, an unknown way) as one line naming
    the key."""
    from pipeline.settings import SettingsError

    try:
        return load(value)
    except ValueError as err:  # LayoutError, WayError: one line each
        raise SettingsError(f"{file}: {key}: {err}") from None
