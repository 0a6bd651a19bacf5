"""``hand_exposed_by_dealer`` (10.3 / 12.3): two or more tiles of a delivered, unset hand face
up. The player may void the hand (a player/banker voids the round).

Tiles of a box count from delivery until the hand is set, collected or exposed at the
showdown; the bank's hand (the chung box) never counts. Raised on the second tile; each
further tile is more evidence. Ends when the box's hand is set, collected or exposed. Who
turned the tiles is not seen, so a player exposing their own hand (10.7) reads the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pipeline.round.events import TableEvent, TableState
from pipeline.rules.base import Finding, RulesConfig, faces_text
from pipeline.rules.exposures import HandExposures

HAND_TILES_MIN = 2  # rule 10.3: two or more tiles of the hand


class HandExposedByDealer:
    kind: ClassVar[str] = "hand_exposed_by_dealer"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._seen = HandExposures()

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        grown, ended = self._seen.digest(state, events)
        findings: list[Finding] = []
        for box in sorted(grown):
            tiles = self._seen.faces[box]
            if len(tiles) < HAND_TILES_MIN:
                continue
            frame, time_s = self._seen.last[box]
            findings.append(
                Finding(
                    box,
                    frame,
                    time_s,
                    f"{len(tiles)} tiles of the unset hand of box {box} are face up "
                    f"({faces_text(list(tiles.values()))}): the player may void the hand",
                    {**self._seen.evidence(box), "tiles_exposed": len(tiles)},
                )
            )
        for box in sorted(ended):
            if len(self._seen.faces.get(box, {})) >= HAND_TILES_MIN:
                findings.append(
                    Finding(
                        box,
                        state.frame,
                        state.time_s,
                        f"the hand of box {box} was set, collected or shown",
                        ended=True,
                    )
                )
        return findings
