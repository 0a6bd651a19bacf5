"""``payout_error`` (6.16-6.17): a winning box paid other than 1:1 less 5%. Supervisor review.

First the settlement's direction: each :class:`BoxSettled` (win: chips added, lose: chips
taken, push: left alone) is compared with what the exposed hands call for, the box's pairs
against the bank's (:func:`paigow.hands.match`: both hands won is a win, both lost a loss,
else a push; copies go to the bank). A box paid when it lost, or not paid when it won, is
raised. Then, on a win whose wager and payment are both known (chip values read), the amount:
the winnings due are 1:1 less the commission on the wager's exactly-payable part
(:func:`paigow.settlement.settle_wager`, 6.16, 6.19); paid otherwise (under, over, or in full
without the commission) is raised with the wager, what was due, what was seen and the
commission. An amount unknown is not judged (doubt is not an alert). Boxes or banks whose
faces are not all known are not judged. A settlement is judged ``settle_judge_s`` after it was seen,
unless the box settles again meanwhile (a push is only what the camera did not see: no chip
moved; a payout may be seen late, or chips misread while the dealer pays): the last one
stands. One pending as the stream ends is not judged (the settlement may have been cut off).
Ends with the round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from paigow.hands import Outcome as HandOutcome
from paigow.hands import Setting, hand_value, match
from paigow.settlement import DEFAULT_SETTLEMENT, BoxWager, settle_wager
from paigow.tiles import TileError, tile
from pipeline.round.events import BoxSettled, HandExposed, TableEvent, TableState
from pipeline.rules.base import Finding, RulesConfig, faces_text


def _setting(event: HandExposed) -> Setting | None:
    """The exposed hand as a setting, its better pair high; None when a face is unknown."""
    try:
        a = tuple(tile(f or "") for f in event.high_faces)
        b = tuple(tile(f or "") for f in event.low_faces)
    except TileError:
        return None
    if len(a) != 2 or len(b) != 2:
        return None
    return Setting(a, b) if hand_value(*a) >= hand_value(*b) else Setting(b, a)  # type: ignore[arg-type]


class PayoutError:
    kind: ClassVar[str] = "payout_error"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._hands: dict[int, HandExposed] = {}
        self._bank: HandExposed | None = None
        self._pending: dict[int, BoxSettled] = {}  # box -> its last settlement, not judged yet

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        findings: list[Finding] = []
        for event in events:
            match event:
                case HandExposed(bank=True):
                    self._bank = event
                case HandExposed(box=box):
                    self._hands[box] = event
                case BoxSettled():
                    self._pending[event.box] = event
        wait_s = self.config.settle_judge_s
        for event in [e for e in self._pending.values() if state.time_s - e.time_s >= wait_s]:
            del self._pending[event.box]
            findings += self._judged(event)
        return findings

    def _judged(self, event: BoxSettled) -> list[Finding]:
        finding = self._check(event)
        return [finding] if finding else []

    def _check(self, event: BoxSettled) -> Finding | None:
        hand, bank = self._hands.get(event.box), self._bank
        if hand is None or bank is None:
            return None
        player, banker = _setting(hand), _setting(bank)
        if player is None or banker is None:
            return None
        due = match(player, banker).value
        if due == event.outcome.value:
            return _amount_check(event, hand)
        return Finding(
            event.box,
            event.frame,
            event.time_s,
            f"box {event.box} was settled as a {event.outcome} but its hand "
            f"{faces_text(hand.high_faces)} / {faces_text(hand.low_faces)} against the bank's "
            f"{faces_text(bank.high_faces)} / {faces_text(bank.low_faces)} is a {due}: "
            "supervisor review",
            {
                "settled": str(event.outcome),
                "due": due,
                "track_ids": [*hand.high_ids, *hand.low_ids],
                "faces": [*hand.high_faces, *hand.low_faces],
                "bank_faces": [*bank.high_faces, *bank.low_faces],
                "amount_checked": False,
            },
        )


def _amount_check(event: BoxSettled, hand: HandExposed) -> Finding | None:
    """A win paid in the wrong amount (both the wager and the payment known), else None."""
    if event.outcome.value != "win" or event.wager is None or event.paid is None:
        return None
    chips = DEFAULT_SETTLEMENT.chips
    if event.wager <= 0 or not chips.can_pay(event.wager):
        return None  # not a wager the table's chips make: a misread, not judged
    due = settle_wager(BoxWager(event.box, event.wager, HandOutcome.WIN))
    if event.paid == due.payout:
        return None
    if event.paid == due.standing:
        how = "paid in full, the 5% commission not taken"
    else:
        how = "underpaid" if event.paid < due.payout else "overpaid"
    return Finding(
        event.box,
        event.frame,
        event.time_s,
        f"box {event.box} won on a wager of {event.wager} and was paid {event.paid}, "
        f"{how}: {due.payout} was due (1:1 less {due.commission} commission): "
        "supervisor review",
        {
            "settled": "win",
            "due": "win",
            "wager": event.wager,
            "standing": due.standing,
            "expected": due.payout,
            "seen": event.paid,
            "difference": event.paid - due.payout,
            "commission": due.commission,
            "track_ids": [*hand.high_ids, *hand.low_ids],
            "amount_checked": True,
        },
    )
