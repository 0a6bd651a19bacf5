"""Tiles turning face up where they should not, as the four exposure rules see them.

Two memories shared by pairs of rules: :class:`StackingExposures` (tiles exposed before
delivery: ``exposed_during_stacking``, ``laja_exposure_excess``) and :class:`HandExposures`
(tiles of delivered, unset hands: ``single_tile_exposed``, ``hand_exposed_by_dealer``). Each
rule keeps its own instance, so the rules stay independent of one another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.round.events import (
    HandCollected,
    HandExposed,
    HandSet,
    Phase,
    PhaseChanged,
    TableEvent,
    TableState,
    TileExposed,
    WoodpileBuilt,
)
from pipeline.rules.base import BEFORE_DELIVERY, UNSET_PHASES

WOODPILE = "woodpile"  # the layout's area (pipeline.layout.REQUIRED_AREAS)


@dataclass
class StackingExposures:
    """Tiles exposed in a round before delivery (wash, stacking, wagers, dice), in order; and
    tiles exposed in the woodpile whatever the phase: they still belong to no hand (the round
    takes a deal to have begun when a group first comes to rest in a box, which on a table it
    never learnt can be a stack set down beside the woodpile as it is built)."""

    faces: dict[int, str | None] = field(default_factory=dict)  # track id -> face
    last: TileExposed | None = None  # the latest exposure

    def digest(self, events: Sequence[TableEvent]) -> tuple[list[TileExposed], TableEvent | None]:
        """The new exposures among ``events``, and the event that ended the episode (the
        woodpile built with every tile face down, or delivery begun), if any."""
        new: list[TileExposed] = []
        ended: TableEvent | None = None
        for event in events:
            match event:
                case TileExposed(box=None, phase=phase, zone=zone) if (
                    phase in BEFORE_DELIVERY or zone == WOODPILE
                ):
                    if event.track_id not in self.faces:
                        self.faces[event.track_id] = event.face
                        new.append(event)
                    self.last, ended = event, None
                case WoodpileBuilt() | PhaseChanged(after=Phase.DELIVERY) if self.last:
                    self.last, ended = None, event
        return new, ended

    def evidence(self) -> dict:
        return {"track_ids": list(self.faces), "faces": list(self.faces.values())}


@dataclass
class HandExposures:
    """Tiles of delivered, unset hands turned face up, per box. The chung box is left out:
    the bank's hand is exposed by the dealer as the game goes (10.6). A box stops counting as
    unset once its hand is set, collected or exposed, or the exposure phase begins."""

    faces: dict[int, dict[int, str | None]] = field(default_factory=dict)  # box -> id -> face
    first_s: dict[int, float] = field(default_factory=dict)  # box -> state time first seen
    last: dict[int, tuple[int, float]] = field(default_factory=dict)  # box -> latest exposure
    done: set[int] = field(default_factory=set)  # boxes no longer unset
    showdown: bool = False  # the exposure phase has begun

    def digest(self, state: TableState, events: Sequence[TableEvent]) -> tuple[set[int], set[int]]:
        """Boxes with newly exposed tiles, and boxes whose exposure episode ended."""
        grown: set[int] = set()
        ended: set[int] = set()
        for event in events:
            match event:
                case TileExposed(box=int(box), phase=phase) if self._counts(state, box, phase):
                    tiles = self.faces.setdefault(box, {})
                    if event.track_id not in tiles:
                        tiles[event.track_id] = event.face
                        self.first_s.setdefault(box, state.time_s)
                        self.last[box] = (event.frame, event.time_s)
                        grown.add(box)
                case HandSet(box=box) | HandCollected(box=box) | HandExposed(box=box):
                    self.done.add(box)
                    if box in self.faces:
                        ended.add(box)
                case PhaseChanged(after=after) if after.order >= Phase.EXPOSURE.order:
                    self.showdown = True
                    ended |= set(self.faces)
        return grown - ended, ended

    def _counts(self, state: TableState, box: int, phase: Phase) -> bool:
        return (
            phase in UNSET_PHASES
            and not self.showdown
            and box != state.chung_box
            and box not in self.done
        )

    def unset(self, box: int) -> bool:
        """The box's hand still counts as unset."""
        return box not in self.done and not self.showdown

    def evidence(self, box: int) -> dict:
        tiles = self.faces.get(box, {})
        return {"track_ids": list(tiles), "faces": list(tiles.values())}
