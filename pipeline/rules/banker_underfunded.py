"""``banker_underfunded`` (11.2(b), 11.3(b)): a player/banker whose stake is below the total of
the other wagers, or a co-banker below 50% of it. Play as house bank / co-bank.

Judged on :class:`~pipeline.round.events.BankStaked`, told as bets close: the stake in the
banker wager area, the banking mode it shows (one stack: a player/banker; two: a co-banker and
the house's match) and the boxes' wagers then. :func:`paigow.settlement.banker_funding_problem`
decides. A stake or a wager whose value is unknown is not judged (doubt is not an alert); no
event, the house banks alone and nothing is due. Ends with the round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from paigow.settlement import BankMode, banker_funding_problem, playable_mode
from pipeline.round.events import BankStaked, TableEvent, TableState
from pipeline.rules.base import Finding, RulesConfig


class BankerUnderfunded:
    kind: ClassVar[str] = "banker_underfunded"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config

    def reset(self) -> None:
        pass

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        return [f for e in events if isinstance(e, BankStaked) if (f := _judged(e)) is not None]


def _judged(event: BankStaked) -> Finding | None:
    if event.stake is None or event.wagers_total is None:
        return None
    mode = BankMode(event.mode)
    problem = banker_funding_problem(mode, event.stake, event.wagers_total)
    if problem is None:
        return None
    return Finding(
        None,
        event.frame,
        event.time_s,
        problem,
        {
            "mode": mode.value,
            "stake": event.stake,
            "house_match": event.house_match,
            "wagers_total": event.wagers_total,
            "plays_as": playable_mode(mode, event.stake, event.wagers_total).value,
        },
    )
