"""``dice_not_flat`` (7.2): a die not lying flat when the cup is opened. Re-shake.

Raised on :class:`DiceRead` with ``flat=False`` (a die stayed unreadable, read tipped), when
the throw is read at least ``sure_throw`` sure (its least sure die, the tipped one included): a
picture in which the other dice read weakly is too poor to call one tipped
(two_rows_wine/wager_after_no_more_bets_20900: 4 2 4 read tipped at 0.73, 5 at 0.51, 4 at
0.38); ends with the next flat read (the re-shake), or with the round.

Also raised, late, on a re-shake seen whole: a throw read flat, then thrown again before the
deal (``DiceRead(flat=None)``: the dice found thrown again, or a new throw unread), then a new
throw read at least ``sure_throw`` sure with other values. The dealer re-shook the dice: a die
was not flat, though the reader took the tipped die for a value (red_dealer_mpeg4,
two_rows_wine and navy_two_rows_dealer ``dice_not_flat_20800``: a tipped die read as the
face on top). Dated to the first throw, opened and ended as the new throw is read. The same
dice read again with the same values is no re-shake (a die seen again after a hand passed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pipeline.round.events import DiceRead, GroupDelivered, TableEvent, TableState
from pipeline.rules.base import Finding, RulesConfig


class DiceNotFlat:
    kind: ClassVar[str] = "dice_not_flat"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._raised = False
        self._read: DiceRead | None = None  # the last throw read flat, before the deal
        self._again = False  # thrown again since it was read
        self._dealt = False

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        findings: list[Finding] = []
        for event in events:
            match event:
                case GroupDelivered():
                    self._dealt = True
                case DiceRead(flat=False, confidence=sure) if sure >= self.config.sure_throw:
                    self._raised = True
                    findings.append(self._tipped(event))
                case DiceRead(flat=True) if self._raised:
                    self._raised = False
                    findings.append(self._ended(event))
                case DiceRead(flat=True) if self._read and self._reshaken(self._read, event):
                    findings += [_reshake(self._read, event), self._ended(event)]
                case DiceRead(flat=None | False):
                    self._again = self._read is not None
            if isinstance(event, DiceRead) and event.flat:
                self._read, self._again = event, False
        return findings

    def _reshaken(self, before: DiceRead, read: DiceRead) -> bool:
        return (
            self._again
            and not self._dealt
            and read.confidence >= self.config.sure_throw
            and sorted(read.values) != sorted(before.values)
        )

    @staticmethod
    def _tipped(event: DiceRead) -> Finding:
        tipped = [i + 1 for i, v in enumerate(event.values) if v is None]
        shown = " ".join("?" if v is None else str(v) for v in event.values)
        return Finding(
            None,
            event.frame,
            event.time_s,
            f"die {', '.join(map(str, tipped))} of the throw ({shown}) is not lying flat: re-shake",
            {"dice": list(event.values), "dice_not_flat": tipped},
        )

    @staticmethod
    def _ended(event: DiceRead) -> Finding:
        return Finding(None, event.frame, event.time_s, "the dice were re-shaken", ended=True)


def _reshake(before: DiceRead, read: DiceRead) -> Finding:
    shown, again = (" ".join(map(str, r.values)) for r in (before, read))
    return Finding(
        None,
        before.frame,
        before.time_s,
        f"the throw read {shown} was re-shaken before the deal (read {again}): a die was not "
        "lying flat",
        {
            "dice": list(before.values),
            "dice_not_flat": [],
            "reshaken_dice": list(read.values),
            "reshaken_s": read.time_s,
        },
    )
