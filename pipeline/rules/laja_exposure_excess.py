"""``laja_exposure_excess`` (10.2 / 12.2): more than two tiles exposed before delivery in one
round (``laja_max_tiles``), which a laja cannot cure: reshuffle.

The laja itself leaves no mark the camera can tell from the stacking, so every tile exposed
before delivery in the round counts. Raised when the count passes the limit; each further tile
is more evidence. Ends as ``exposed_during_stacking`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pipeline.round.events import TableEvent, TableState
from pipeline.rules.base import Finding, RulesConfig, faces_text
from pipeline.rules.exposures import StackingExposures


class LajaExposureExcess:
    kind: ClassVar[str] = "laja_exposure_excess"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._seen = StackingExposures()

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        new, ended = self._seen.digest(events)
        findings: list[Finding] = []
        if new and len(self._seen.faces) > self.config.laja_max_tiles:
            last = new[-1]
            count = len(self._seen.faces)
            findings.append(
                Finding(
                    None,
                    last.frame,
                    last.time_s,
                    f"{count} tiles exposed before delivery "
                    f"({faces_text(list(self._seen.faces.values()))}), more than "
                    f"{self.config.laja_max_tiles}: reshuffle",
                    {**self._seen.evidence(), "tiles_exposed": count},
                )
            )
        if ended is not None and len(self._seen.faces) > self.config.laja_max_tiles:
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
