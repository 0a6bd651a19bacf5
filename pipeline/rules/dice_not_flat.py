"""``dice_not_flat`` (7.2): a die not lying flat when the cup is opened. Re-shake.

Raised on :class:`DiceRead` with ``flat=False`` (a die stayed unreadable, read tipped), when
the throw is read at least ``sure_throw`` sure (its least sure die, the tipped one included): a
picture in which the other dice read weakly is too poor to call one tipped
(two_rows_wine/wager_after_no_more_bets_20900: 4 2 4 read tipped at 0.73, 5 at 0.51, 4 at
0.38); ends with the next flat read (the re-shake), or with the round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pipeline.round.events import DiceRead, TableEvent, TableState
from pipeline.rules.base import Finding, RulesConfig


class DiceNotFlat:
    kind: ClassVar[str] = "dice_not_flat"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._raised = False

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        findings: list[Finding] = []
        for event in events:
            match event:
                case DiceRead(flat=False, values=values, confidence=sure) if (
                    sure >= self.config.sure_throw
                ):
                    self._raised = True
                    tipped = [i + 1 for i, v in enumerate(values) if v is None]
                    shown = " ".join("?" if v is None else str(v) for v in values)
                    findings.append(
                        Finding(
                            None,
                            event.frame,
                            event.time_s,
                            f"die {', '.join(map(str, tipped))} of the throw ({shown}) is not "
                            "lying flat: re-shake",
                            {"dice": list(values), "dice_not_flat": tipped},
                        )
                    )
                case DiceRead(flat=True) if self._raised:
                    self._raised = False
                    findings.append(
                        Finding(
                            None, event.frame, event.time_s, "the dice were re-shaken", ended=True
                        )
                    )
        return findings
