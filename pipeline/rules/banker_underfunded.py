"""``banker_underfunded`` (11.2(b), 11.3(b)): a player/banker whose wager is below the total of
the other wagers, or a co-banker below 50% of them. Play as house bank / co-bank.

Not observable yet, so there is no rule: the checker registers the kind as unobservable
(:data:`pipeline.rules.UNOBSERVABLE`) instead of raising guesses. The check needs the money on
the table, and the events carry chip *stacks* per box
(:class:`~pipeline.round.events.WagerChanged`), not their values; nor do they say who banks
(house, player/banker, co-bank). Once chip denominations are read per stack and the banking
mode is known, :func:`paigow.settlement.banker_funding_problem` decides it.
"""

from __future__ import annotations

KIND = "banker_underfunded"
NOT_OBSERVABLE = (
    "needs wager amounts (chip values per stack) and the banking mode; the events carry only "
    "chip stacks per box"
)
