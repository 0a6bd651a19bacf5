"""The irregularity catalogue (RULES.md section 6) as data: ``paigow/data/catalogue.csv``.

Each row names an alert ``kind`` (its stable wire name), the rule it cites (1996 numbering, and
the 1998 number where there is one), its severity, what the monitor sees, and the action the
rules call for. The file is read on first use, never at import:

>>> catalogue()["dice_not_flat"].action
're-shake'

Severity, chosen for the surveillance room (the rules assign none):

- ``critical``: integrity or money of the whole round at stake, or the monitor blind:
  ``incorrect_delivery`` (round void; a classic way to steer hands), ``wager_after_no_more_bets``
  (past posting is a cheating act), ``camera_lost`` (every other check is off).
- ``high``: changes who wins or what is paid on a hand and needs action before settlement:
  ``hand_exposed_by_dealer``, ``tile_tracking_risk`` (an advantage-play vector),
  ``house_way_violation``, ``hands_mixed``, ``payout_error``.
- ``medium``: procedural, cured by a reshuffle or a change of banking mode before money moves:
  ``laja_exposure_excess``, ``banker_underfunded``.
- ``low``: routine, cured on the spot with no effect on any outcome:
  ``exposed_during_stacking`` (a laja), ``single_tile_exposed`` (turned over, not a misdeal),
  ``dice_not_flat`` (re-shake).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib.resources import files
from types import MappingProxyType

CATALOGUE_FILE = "catalogue.csv"
COLUMNS = ("kind", "rule", "rule_1998", "severity", "seen_as", "action")
OPTIONAL_COLUMNS = frozenset({"rule_1998"})
"""Columns that may be left empty (rules with no 1998 number)."""


class Severity(StrEnum):
    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


@dataclass(frozen=True, slots=True)
class Irregularity:
    """One catalogue entry. ``rule_1998`` is None where the 1998 rules have no number."""

    kind: str
    rule: str
    rule_1998: str | None
    severity: Severity
    seen_as: str
    action: str

    @property
    def citation(self) -> str:
        """The rule as alerts cite it: ``"10.1 / 12.1"``, or the 1996 rule alone."""
        return f"{self.rule} / {self.rule_1998}" if self.rule_1998 else self.rule


def parse_catalogue(text: str, source: str = CATALOGUE_FILE) -> dict[str, Irregularity]:
    """Parse catalogue CSV text (header ``COLUMNS``, one row per kind), in file order.

    Raises ValueError naming ``source`` and the line for a wrong header, a row with too many
    or too few fields, an empty required field, an unknown severity or a repeated kind.
    """
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    _check_header(reader.fieldnames, source)
    entries: dict[str, Irregularity] = {}
    for row in reader:
        where = f"{source} line {reader.line_num}"
        entry = _parse_row(row, where)
        if entry.kind in entries:
            raise ValueError(f"{where}: kind {entry.kind!r} appears twice")
        entries[entry.kind] = entry
    return entries


def _check_header(fieldnames: object, source: str) -> None:
    found = tuple(fieldnames or ())
    unknown = [c for c in found if c not in COLUMNS]
    missing = [c for c in COLUMNS if c not in found]
    if unknown or missing or len(found) != len(COLUMNS):
        raise ValueError(
            f"{source} line 1: columns must be {', '.join(COLUMNS)}; "
            f"unknown {unknown}, missing {missing}"
        )


def _parse_row(row: dict[str | None, str | None], where: str) -> Irregularity:
    if None in row:
        raise ValueError(f"{where}: more fields than the {len(COLUMNS)} columns")
    values = {c: (row[c] or "").strip() for c in COLUMNS}
    for column in COLUMNS:
        if not values[column] and column not in OPTIONAL_COLUMNS:
            raise ValueError(f"{where}: field {column!r} is empty")
    try:
        severity = Severity(values["severity"])
    except ValueError:
        allowed = ", ".join(s.value for s in Severity)
        raise ValueError(
            f"{where}: unknown severity {values['severity']!r} (use {allowed})"
        ) from None
    return Irregularity(
        kind=values["kind"],
        rule=values["rule"],
        rule_1998=values["rule_1998"] or None,
        severity=severity,
        seen_as=values["seen_as"],
        action=values["action"],
    )


@cache
def catalogue() -> Mapping[str, Irregularity]:
    """The shipped catalogue, kind -> entry, read once from package data (read-only view)."""
    text = files("paigow").joinpath("data", CATALOGUE_FILE).read_text(encoding="utf-8")
    return MappingProxyType(parse_catalogue(text))


def irregularity(kind: str) -> Irregularity:
    """The catalogue entry for ``kind``; KeyError with the known kinds if there is none."""
    entries = catalogue()
    if kind not in entries:
        raise KeyError(f"no irregularity {kind!r} in the catalogue; known: {', '.join(entries)}")
    return entries[kind]


def __getattr__(name: str) -> Mapping[str, Irregularity]:
    """``CATALOGUE`` is loaded on first access (PEP 562), so importing reads no file."""
    if name == "CATALOGUE":
        return catalogue()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
