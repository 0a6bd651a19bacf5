"""``single_tile_exposed`` (10.4 / 12.4): exactly one tile of a delivered, unset hand face up.
Not a misdeal: the tile is turned over.

Which tiles count is as for ``hand_exposed_by_dealer``. A lone exposed tile waits
``single_tile_wait_s`` for a second one (then the hand is exposed, 10.3, and this rule keeps
quiet); still alone, it is raised, but not while another tile of the hand shows face up with
its face unread (``TableState.turning``): "one tile" would be a guess (teal_dim/
hand_exposed_by_dealer_20200 read 1 frame in 2: the dealer's second tile, 4-4, read at
0.84-0.89, under the 0.9 a face needs). Ends when the box's hand is set, collected or exposed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pipeline.round.events import TableEvent, TableState
from pipeline.rules.base import Finding, RulesConfig
from pipeline.rules.exposures import HandExposures


class SingleTileExposed:
    kind: ClassVar[str] = "single_tile_exposed"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._seen = HandExposures()
        self._raised: set[int] = set()
        self._turning_s: dict[tuple[int, int], float] = {}  # (box, tile) -> showing up since
        self._doubted: set[int] = set()  # boxes where a second tile showed up, face unread

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        _, ended = self._seen.digest(state, events)
        self._doubt(state, ended)
        findings = [self._finding(box) for box in self._due(state, ended)]
        for box in sorted(ended & self._raised):
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

    def _due(self, state: TableState, ended: set[int]) -> list[int]:
        """Boxes with one exposed tile that has waited long enough, not yet raised."""
        wait_s = self.config.single_tile_wait_s
        return [
            box
            for box, tiles in sorted(self._seen.faces.items())
            if len(tiles) == 1
            and box not in self._raised
            and box not in ended
            and self._seen.unset(box)
            and state.time_s - self._seen.first_s[box] >= wait_s
            and box not in self._doubted
        ]

    def _doubt(self, state: TableState, ended: set[int]) -> None:
        """Boxes with a tile other than the exposed ones showing face up, its face unread,
        ``single_tile_wait_s`` or more: that the hand shows one tile is not known."""
        now = {(box, tid) for box, ids in state.turning.items() for tid in ids}
        self._turning_s = {k: self._turning_s.get(k, state.time_s) for k in now}
        self._doubted -= ended
        for (box, tid), since_s in self._turning_s.items():
            exposed = self._seen.faces.get(box, {})
            if tid not in exposed and state.time_s - since_s >= self.config.single_tile_wait_s:
                self._doubted.add(box)

    def _finding(self, box: int) -> Finding:
        self._raised.add(box)
        ((track_id, face),) = self._seen.faces[box].items()
        frame, time_s = self._seen.last[box]
        return Finding(
            box,
            frame,
            time_s,
            f"one tile of the unset hand of box {box} is face up ({face or '?'}, track "
            f"{track_id}): not a misdeal, turn it over",
            self._seen.evidence(box),
        )
