"""``tile_tracking_risk`` (10.5 / 12.7): known tiles followed through a weak wash into the
woodpile. The supervisor may order a reshuffle.

The wash-quality figure is the reconstructor's: how many tiles the tracker followed through
the whole wash still carry the face they were last seen with (:class:`WashEnded`), and how many
of the stacked tiles do (:class:`WoodpileBuilt`). A good wash leaves the tracker few known
faces; ``known_faces_min`` or more is a risk. Raised at the end of the wash (or at the
woodpile, whichever shows it first); the woodpile figure is more evidence. Ends with the round.
A "wash" shorter than ``wash_min_s`` is no wash (tiles gathered at the end of a recording were
taken for one, with the faces just shown still known): its figure is not judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pipeline.round.events import TableEvent, TableState, WashEnded, WoodpileBuilt
from pipeline.rules.base import Finding, RulesConfig


class TileTrackingRisk:
    kind: ClassVar[str] = "tile_tracking_risk"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config

    def reset(self) -> None:
        """Nothing to forget: each figure stands alone."""

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        least = self.config.known_faces_min
        findings: list[Finding] = []
        for event in events:
            match event:
                case WashEnded(known_faces=known, tiles_tracked=tiles, duration_s=lasted) if (
                    known >= least and (lasted is None or lasted >= self.config.wash_min_s)
                ):
                    where, key = "through the wash", "wash"
                case WoodpileBuilt(known_faces=known, tile_count=tiles) if known >= least:
                    where, key = "into the woodpile", "woodpile"
                case _:
                    continue
            findings.append(
                Finding(
                    None,
                    event.frame,
                    event.time_s,
                    f"{known} of {tiles} tiles were followed {where} with their faces known, "
                    "a weak wash: the supervisor may order a reshuffle",
                    {f"{key}_known_faces": known, f"{key}_tiles": tiles},
                )
            )
        return findings
