"""``exposed_during_stacking`` (10.1 / 12.1): a tile turned face up before delivery, while the
tiles belong to no hand: in the wash, while the woodpile is stacked, before the deal, or in the
woodpile while the deal goes on. The dealer performs a laja.

Raised on the first such tile of a round; each further tile is more evidence. Ends when the
woodpile stands built with every tile face down again, or delivery begins. More than
``laja_max_tiles`` such tiles is also ``laja_exposure_excess``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pipeline.round.events import TableEvent, TableState
from pipeline.rules.base import Finding, RulesConfig
from pipeline.rules.exposures import StackingExposures


class ExposedDuringStacking:
    kind: ClassVar[str] = "exposed_during_stacking"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._seen = StackingExposures()

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        new, ended = self._seen.digest(events)
        findings = [
            Finding(
                None,
                e.frame,
                e.time_s,
                f"tile {e.face or '?'} (track {e.track_id}) turned face up before delivery, "
                f"during the {e.phase} phase: the dealer performs a laja",
                {**self._seen.evidence(), "tiles_exposed": len(self._seen.faces)},
            )
            for e in new
        ]
        if ended is not None:
            findings.append(
                Finding(
                    None,
                    ended.frame,
                    ended.time_s,
                    "the exposed tiles are face down again",
                    ended=True,
                )
            )
        return findings
