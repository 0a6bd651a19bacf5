"""What several ``paigow`` commands share: exit statuses, the usage error, argument types, the
settings options (``--config``, ``--set``), the layout size check and a clean stop on SIGINT or
SIGTERM (:class:`StopOnSignals`).

Imports nothing of the commands, nor of ``pipeline.cli`` itself, so any command may import it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline.settings import Settings

EXIT_USAGE = 2
EXIT_INTERNAL = 1
EXIT_INTERRUPTED = 130  # SIGINT (Ctrl-C), as a shell reports it


class UsageError(ValueError):
    """Bad input from the command line; printed as one line, exit status 2."""


def read_image(path: Path):
    """The BGR image at ``path``; UsageError (one line) when it is missing or unreadable."""
    import cv2

    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    image = cv2.imread(str(path))
    if image is None:
        raise UsageError(f"{path}: not an image OpenCV can read")
    return image


def positive(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    """An argparse ``type`` for a number above 0 (a one-line usage error otherwise)."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} must be > 0")
        return value

    return parse


def add_settings_options(p: argparse.ArgumentParser) -> None:
    """``--config FILE`` and ``--set KEY=VALUE``: the settings, before the command's own flags
    (which override both when given)."""
    p.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="settings YAML (docs/config.md); the other options override it",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one setting over --config, e.g. --set rules.open_hold_s=0.5 (repeatable)",
    )


def settings_of(
    args: argparse.Namespace,
    flags: Mapping[str, str],
    preset: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Settings:
    """The effective :class:`~pipeline.settings.Settings` of a command: the defaults, its
    ``preset``, ``--config``, each ``--set``, then ``extra`` and the ``flags`` that were given
    (argument name -> dotted settings key; a flag left out is None and sets nothing)."""
    from pipeline.settings import assignment, load_settings, merge, parse_assignment

    overrides: dict[str, Any] = {}
    for text in args.set:
        overrides = merge(overrides, parse_assignment(text))
    overrides = merge(overrides, extra or {})
    for name, key in flags.items():
        if getattr(args, name) is not None:
            overrides = merge(overrides, assignment(key, getattr(args, name)))
    return load_settings(args.config, overrides, preset)


def check_size(layout, size_wh: tuple[int, int] | None, prefix: str = "") -> None:
    """Warn on stderr when the layout was drawn for frames of another size than the source's."""
    from pipeline.live.run import size_warning

    warning = size_warning(layout, size_wh)
    if warning:
        print(f"{prefix}{warning}", file=sys.stderr)


class StopOnSignals:
    """While entered in the main thread, SIGINT and SIGTERM set ``stop`` (a clean stop) and
    the first one is kept in ``signal``; a second one raises KeyboardInterrupt (stop at once).
    Entered in another thread it changes nothing. The handlers before are put back on exit."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.signal: int | None = None
        self._before: dict[int, Any] = {}

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.signal is not None:
            raise KeyboardInterrupt
        self.signal = signum
        self.stop.set()

    def __enter__(self) -> StopOnSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                self._before[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self._before.items():
            signal.signal(signum, handler)

    @property
    def exit_status(self) -> int:
        """130 after SIGINT (as a shell reports it), else 0."""
        return EXIT_INTERRUPTED if self.signal == signal.SIGINT else 0
