"""The ``paigow`` command: one composition root that dispatches to sub-commands.

One module per command (:mod:`pipeline.cli.game`, ``synth``, ``detect``, ``chips``, ``alerts``,
``console``, ``monitor``, ``fleet``, ``proxy``, ``review``, ``config``); what several share lives in
:mod:`pipeline.cli.common`, and no command imports another or this package. Each command
module exposes ``register(subparsers)``, which adds its parser and sets ``func(args) -> int``.
Bad input raises :class:`~pipeline.cli.common.UsageError` (or a ``ValueError`` from the engine)
and becomes one line on stderr with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from pipeline.cli import (
    alerts,
    chips,
    config,
    console,
    detect,
    fleet,
    game,
    monitor,
    proxy,
    review,
    synth,
)
from pipeline.cli.common import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE

DEBUG_ENV = "PAIGOW_DEBUG"
COMMANDS = (game, synth, detect, chips, alerts, console, monitor, fleet, proxy, review, config)


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as a single line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="paigow", description="Pai Gow table monitor and game engine.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in COMMANDS:
        module.register(sub)
    return parser


def _interruptible() -> None:
    """Ctrl-C (SIGINT) raises KeyboardInterrupt even when this process was started with SIGINT
    ignored (a background job of a script inherits that), as every command promises."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _interruptible()
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:  # TileError, WayError and UsageError are ValueErrors
        print(f"paigow {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"paigow {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug, not bad input: still one line unless debugging
        if os.environ.get(DEBUG_ENV):
            raise
        print(
            f"paigow {args.command}: internal error: {exc!r} (set {DEBUG_ENV}=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
