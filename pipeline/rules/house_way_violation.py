"""``house_way_violation`` (10.8 / 12.8): the bank's hand exposed in a setting other than the
house way. Re-set if the first player's hand is not yet exposed, else it stands.

The bank's exposed pairs (:class:`HandExposed` with ``bank=True``) are compared with the
setting :mod:`paigow.houseway` gives for the same four tiles. Settings are compared by the
values of their two hands, so swapping a tile for its copy, or for a tile of the same value,
is not a violation. Hands the dealer sets for an absent player (10.17) are not told apart from
hands players set themselves, so only the bank's is checked, and not when a player/banker
banks alone (:class:`BankStaked` ``player_banker``: the player sets their own hand; a
co-banker's is set the house way, 11.3). Ends with the round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from paigow.hands import HandValue, Setting, hand_value
from paigow.houseway import load_way
from paigow.tiles import TileError, tile
from pipeline.round.events import BankStaked, HandExposed, TableEvent, TableState
from pipeline.rules.base import Finding, RulesConfig, faces_text


class HouseWayViolation:
    kind: ClassVar[str] = "house_way_violation"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self._way = load_way(config.house_way)  # read once, when the checker is built
        self.reset()

    def reset(self) -> None:
        self._players_exposed = False
        self._player_banks = False

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        findings: list[Finding] = []
        for event in events:
            match event:
                case BankStaked(mode=mode):
                    self._player_banks = mode == "player_banker"
                case HandExposed(bank=True) if not self._player_banks:
                    finding = self._check(event)
                    findings += [finding] if finding else []
                case HandExposed(bank=False):
                    self._players_exposed = True
        return findings

    def _values(self, high: Sequence, low: Sequence) -> list[HandValue]:
        gee = self._way.gee
        return sorted([hand_value(*high, gee), hand_value(*low, gee)])

    def _check(self, event: HandExposed) -> Finding | None:
        faces = (*event.high_faces, *event.low_faces)
        if None in faces or len(faces) != 4:
            return None  # the faces are not all known: nothing to compare
        try:
            high = tuple(tile(f) for f in event.high_faces)
            low = tuple(tile(f) for f in event.low_faces)
            way: Setting = self._way.setting((*high, *low))
        except TileError:
            return None  # faces the deck cannot hold together (four 4-4): misread, not judged
        if self._values(high, low) == self._values(way.high, way.low):
            return None
        action = "it stands" if self._players_exposed else "re-set it"
        return Finding(
            event.box,
            event.frame,
            event.time_s,
            f"bank hand set {faces_text(event.high_faces)} / {faces_text(event.low_faces)}, "
            f"not the {self._way.name} house way {way.high[0]} {way.high[1]} / "
            f"{way.low[0]} {way.low[1]}: {action}",
            {
                "track_ids": [*event.high_ids, *event.low_ids],
                "faces": list(faces),
                "house_way": self._way.name,
                "house_way_faces": [t.face for t in way.tiles],
                "player_hand_exposed_before": self._players_exposed,
            },
        )
