"""``wager_after_no_more_bets`` (6.4): chips in a box added, removed or altered after "no more
bets" and before the hands are decided (past posting). Supervisor review.

Raised on :class:`WagerChanged` with ``after_no_more_bets`` in a phase before the exposure
(chips moving at the showdown are the settlement); each further change to the box is more
evidence, with the amount added or taken when the stacks' values are known (None: unknown).
"No more bets" is itself inferred by the reconstructor (there is no visual cue).
Ends with the round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pipeline.round.events import Phase, TableEvent, TableState, WagerChanged
from pipeline.rules.base import Finding, RulesConfig


class WagerAfterNoMoreBets:
    kind: ClassVar[str] = "wager_after_no_more_bets"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._changes: dict[int, list[list[int]]] = {}  # box -> [frame, before, after]

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        findings: list[Finding] = []
        for event in events:
            match event:
                case WagerChanged(after_no_more_bets=True, phase=phase) if (
                    phase.order < Phase.EXPOSURE.order
                ):
                    findings.append(self._finding(event))
        return findings

    def _finding(self, event: WagerChanged) -> Finding:
        changes = self._changes.setdefault(event.box, [])
        changes.append([event.frame, event.before, event.after])
        verb = "added to" if event.after > event.before else "taken from"
        before, after = event.amount_before, event.amount_after
        change = None if before is None or after is None else after - before
        money = "" if change is None else f", {abs(change)} {verb.split()[0]}"
        return Finding(
            event.box,
            event.frame,
            event.time_s,
            f"chips {verb} box {event.box} after no more bets ({event.before} -> "
            f"{event.after} stacks{money}, {event.phase} phase): supervisor review",
            {
                "stacks_before": changes[0][1],
                "stacks_after": event.after,
                "changes": [list(c) for c in changes],
                "amount_before": before,
                "amount_after": after,
                "amount_changed": change,
            },
        )
