"""Settling a round: commission, exact payability and the three banking modes.

Rules (RULES.md section 5): a winning wager against the bank is paid 1:1 less 5% commission
(6.16); a player/banker pays 5% of net winnings after winners are paid and stakes returned
(6.17); a wager that cannot be paid exactly in chips at 1:1 less 5% is refused, and if accepted
only its exactly-payable part stands (6.18-6.19). A player/banker must cover at least the total
of the other wagers (11.2(b)); a co-banker must put up at least 50% of it, the house matching
(11.3(b)). Shortfall in the losing wager area comes out of the banker's wager.

Money: every amount is an ``int`` in the table's money unit, the unit the chip denominations are
given in (use cents-valued chips for tables with fractional chips). Rates are ``Decimal``, so
commission is computed exactly, never with floats.

>>> wager_step(), winning_payout(100), split_wager(25)
(20, 95, (20, 5))
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, Decimal
from enum import StrEnum
from fractions import Fraction
from itertools import pairwise
from math import gcd, lcm

from paigow.dice import validate_box
from paigow.hands import Outcome

DEFAULT_DENOMINATIONS = (1, 5, 25, 100, 500, 1000)
DEFAULT_COMMISSION_RATE = Decimal("0.05")
"""6.16-6.17: 5% of winnings."""
DEFAULT_COBANK_MIN_SHARE = Decimal("0.5")
"""11.3(b): a co-banker puts up at least half of the other wagers' total."""
COBANK_PARTIES = 2
"""A co-bank result is split equally between the co-banker and the house."""
_ROUNDINGS = frozenset(getattr(decimal, n) for n in dir(decimal) if n.startswith("ROUND_"))


def _check_amount(amount: int, what: str, *, positive: bool = False) -> int:
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise ValueError(f"{what} must be a whole number of money units, got {amount!r}")
    if amount < 0 or (positive and amount == 0):
        sign = "positive" if positive else "non-negative"
        raise ValueError(f"{what} must be {sign}, got {amount}")
    return amount


@dataclass(frozen=True, slots=True)
class ChipSet:
    """The chip denominations on the table, in money units, strictly increasing.

    Every denomination is a multiple of the smallest, so an amount can be paid exactly in
    chips precisely when it is a non-negative multiple of :attr:`smallest`.
    """

    denominations: tuple[int, ...] = DEFAULT_DENOMINATIONS

    def __post_init__(self) -> None:
        values = tuple(self.denominations)
        object.__setattr__(self, "denominations", values)  # accept any sequence, keep a tuple
        if not values:
            raise ValueError("a chip set needs at least one denomination")
        for value in values:
            _check_amount(value, "a chip denomination", positive=True)
        if any(a >= b for a, b in pairwise(values)):
            raise ValueError(f"chip denominations must strictly increase, got {values}")
        odd = [v for v in values if v % values[0]]
        if odd:
            raise ValueError(
                f"chip denominations {odd} are not multiples of the smallest, {values[0]}"
            )

    @property
    def smallest(self) -> int:
        return self.denominations[0]

    def can_pay(self, amount: int | Decimal) -> bool:
        """Whether ``amount`` can be paid exactly in chips (a non-negative chip multiple)."""
        return amount >= 0 and amount % self.smallest == 0


@dataclass(frozen=True, slots=True)
class SettlementConfig:
    """How a table settles.

    ``commission_rate``: share of winnings taken as commission (6.16-6.17).
    ``cobank_min_share``: least share of the other wagers a co-banker must put up (11.3(b)).
    ``cobanker_pays_commission``: the co-banker pays ``commission_rate`` on a winning half, as a
    player/banker does (6.17); the rules are silent, so this is a setting.
    ``banker_commission_rounding``: a ``decimal`` rounding mode bringing a banker's commission to
    a whole chip; default ``ROUND_DOWN`` (never more than the rate; the house forgoes the rest).
    """

    chips: ChipSet = field(default_factory=ChipSet)
    commission_rate: Decimal = DEFAULT_COMMISSION_RATE
    cobank_min_share: Decimal = DEFAULT_COBANK_MIN_SHARE
    cobanker_pays_commission: bool = True
    banker_commission_rounding: str = ROUND_DOWN

    def __post_init__(self) -> None:
        for name in ("commission_rate", "cobank_min_share"):
            if not isinstance(getattr(self, name), Decimal):
                raise ValueError(f"{name} must be a Decimal, got {getattr(self, name)!r}")
        if not 0 <= self.commission_rate < 1:
            raise ValueError(f"commission_rate must be in [0, 1), got {self.commission_rate}")
        if not 0 < self.cobank_min_share <= 1:
            raise ValueError(f"cobank_min_share must be in (0, 1], got {self.cobank_min_share}")
        if self.banker_commission_rounding not in _ROUNDINGS:
            raise ValueError(
                f"unknown rounding {self.banker_commission_rounding!r}; use a decimal.ROUND_* mode"
            )


DEFAULT_SETTLEMENT = SettlementConfig()


# ---------------------------------------------------------------------------------------------
# One wager: commission and exact payability (6.16, 6.18-6.19).


def _check_wager(wager: int, config: SettlementConfig) -> int:
    _check_amount(wager, "a wager")
    if not config.chips.can_pay(wager):
        raise ValueError(
            f"a wager of {wager} is not made of chips: not a multiple of {config.chips.smallest}"
        )
    return wager


def commission(winnings: int, config: SettlementConfig = DEFAULT_SETTLEMENT) -> Decimal:
    """The exact commission on ``winnings`` (money units), before any rounding to chips."""
    return _check_amount(winnings, "winnings") * config.commission_rate


def is_exactly_payable(wager: int, config: SettlementConfig = DEFAULT_SETTLEMENT) -> bool:
    """Whether a winning ``wager`` can be paid 1:1 less commission exactly in chips (6.18)."""
    return config.chips.can_pay(commission(_check_wager(wager, config), config))


def wager_step(config: SettlementConfig = DEFAULT_SETTLEMENT) -> int:
    """The smallest exactly-payable wager; the acceptable wagers are its positive multiples.

    A wager ``w`` (a chip multiple) is payable when ``w * rate`` is a chip multiple; with
    ``rate = p/q`` in lowest terms that holds exactly for the multiples of
    ``lcm(chip, chip * q / gcd(p, chip * q))``. At 5% and a smallest chip of 1 the step is 20.
    """
    chip = config.chips.smallest
    rate = Fraction(config.commission_rate)
    modulus = chip * rate.denominator
    return lcm(chip, modulus // gcd(rate.numerator, modulus))


def split_wager(wager: int, config: SettlementConfig = DEFAULT_SETTLEMENT) -> tuple[int, int]:
    """``(standing, returned)``: the largest exactly-payable part stands, the rest goes back (6.19).

    >>> split_wager(110), split_wager(15)
    ((100, 10), (0, 15))
    """
    _check_wager(wager, config)
    step = wager_step(config)
    standing = wager - wager % step
    return standing, wager - standing


def winning_payout(wager: int, config: SettlementConfig = DEFAULT_SETTLEMENT) -> int:
    """Winnings paid on a winning ``wager``: 1:1 less commission (6.16), stake not included.

    Raises ValueError when the wager is not exactly payable (6.18): settle its standing part.
    """
    if not is_exactly_payable(wager, config):
        standing, _ = split_wager(wager, config)
        raise ValueError(
            f"a wager of {wager} cannot be paid exactly at 1:1 less commission "
            f"(6.18); only {standing} of it stands (6.19)"
        )
    return int(wager - commission(wager, config))


def banker_commission(net_winnings: int, config: SettlementConfig = DEFAULT_SETTLEMENT) -> int:
    """A banker's commission on positive ``net_winnings`` (6.17), rounded to a whole chip.

    Rounded with ``config.banker_commission_rounding``; nothing is due on a loss. A
    player/banker's net is a sum of standing wagers, each exactly payable (6.19), so its 5% is
    always whole; the rounding matters only for a co-banker's half.
    """
    if net_winnings <= 0:
        return 0
    return _to_chips(commission(net_winnings, config), config, config.banker_commission_rounding)


def _to_chips(amount: Decimal, config: SettlementConfig, rounding: str) -> int:
    chip = config.chips.smallest
    return int((amount / chip).quantize(Decimal(1), rounding=rounding)) * chip


# ---------------------------------------------------------------------------------------------
# Banking modes (11.2-11.3).


class BankMode(StrEnum):
    HOUSE = "house"
    PLAYER_BANKER = "player_banker"
    CO_BANK = "co_bank"


def banker_funding_problem(
    mode: BankMode,
    banker_stake: int,
    other_wagers_total: int,
    config: SettlementConfig = DEFAULT_SETTLEMENT,
) -> str | None:
    """Why a banker's stake cannot bank the round (``banker_underfunded``), or None if it can.

    ``other_wagers_total``: the wagers on the other boxes, as placed, in money units.
    """
    _check_amount(banker_stake, "the banker's stake")
    _check_amount(other_wagers_total, "the other wagers' total")
    if mode is BankMode.PLAYER_BANKER and banker_stake < other_wagers_total:
        return (
            f"player/banker stake {banker_stake} is below the other wagers' total "
            f"{other_wagers_total} (11.2(b)): play as house bank or co-bank"
        )
    required = other_wagers_total * config.cobank_min_share
    if mode is BankMode.CO_BANK and banker_stake < required:
        return (
            f"co-banker stake {banker_stake} is below {config.cobank_min_share:%} of the other "
            f"wagers' total {other_wagers_total} (11.3(b)): play as house bank"
        )
    return None


def playable_mode(
    mode: BankMode,
    banker_stake: int,
    other_wagers_total: int,
    config: SettlementConfig = DEFAULT_SETTLEMENT,
) -> BankMode:
    """The mode the round actually runs under: ``mode`` if funded, else the fallback.

    An underfunded player/banker co-banks when the stake covers the co-bank minimum (11.2(b)
    leaves the choice; co-banking keeps the player in the bank), else the house banks.
    """
    if banker_funding_problem(mode, banker_stake, other_wagers_total, config) is None:
        return mode
    if mode is BankMode.PLAYER_BANKER:
        return playable_mode(BankMode.CO_BANK, banker_stake, other_wagers_total, config)
    return BankMode.HOUSE


# ---------------------------------------------------------------------------------------------
# Settling a round.


@dataclass(frozen=True, slots=True)
class BoxWager:
    """One wager: ``box`` 1..8, ``amount`` as placed (money units), its outcome against the bank.

    A box may carry several wagers (up to three players, 6.6); each settles on its own.
    """

    box: int
    amount: int
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class WagerSettlement:
    """How one wager settles. All amounts in money units.

    ``standing``: the exactly-payable part that was in play (6.19). ``returned``: chips handed
    back: the part that did not stand, plus the standing part on a win or a push. ``payout``:
    winnings paid on a win, 1:1 less commission (6.16). ``commission``: what the house kept from
    those winnings.
    """

    box: int
    outcome: Outcome
    standing: int
    returned: int
    payout: int
    commission: int

    @property
    def player_net(self) -> int:
        """The player's gain (negative: loss) on this wager."""
        return self.payout if self.outcome is Outcome.WIN else -self.lost

    @property
    def lost(self) -> int:
        """The stake taken into the losing wager area (0 unless the wager lost)."""
        return self.standing if self.outcome is Outcome.LOSE else 0

    @property
    def won_stake(self) -> int:
        """The stake the bank must match 1:1 (0 unless the wager won)."""
        return self.standing if self.outcome is Outcome.WIN else 0


@dataclass(frozen=True, slots=True)
class RoundSettlement:
    """The settled round. All amounts in money units; the nets sum to zero with the players'.

    ``mode``: the banking mode settled. ``bank_result``: the bank's result against the players
    before any commission: lost stakes less winning stakes matched 1:1. ``banker_commission``:
    what the player/banker or co-banker paid on net winnings (6.17). ``banker_net``: the
    player/banker's or co-banker's gain (0 under a house bank). ``house_net``: the house's gain
    (its share of the bank result plus every commission). ``shortfall_from_banker_stake``: what
    the winners took beyond the losing wager area, paid from the player/banker's wager.
    """

    mode: BankMode
    wagers: tuple[WagerSettlement, ...]
    bank_result: int
    banker_commission: int
    banker_net: int
    house_net: int
    shortfall_from_banker_stake: int

    @property
    def players_net(self) -> int:
        return sum(w.player_net for w in self.wagers)

    @property
    def commission_total(self) -> int:
        """All commission the house took: from winning wagers and from the banker."""
        return sum(w.commission for w in self.wagers) + self.banker_commission


def settle_wager(wager: BoxWager, config: SettlementConfig = DEFAULT_SETTLEMENT) -> WagerSettlement:
    """Settle one wager against the bank (6.16, 6.19)."""
    validate_box(wager.box)
    if not isinstance(wager.outcome, Outcome):
        raise ValueError(f"outcome must be an Outcome, got {wager.outcome!r}")
    standing, refused = split_wager(wager.amount, config)
    payout = winning_payout(standing, config) if wager.outcome is Outcome.WIN else 0
    kept = wager.outcome is not Outcome.LOSE
    return WagerSettlement(
        box=wager.box,
        outcome=wager.outcome,
        standing=standing,
        returned=refused + (standing if kept else 0),
        payout=payout,
        commission=standing - payout if wager.outcome is Outcome.WIN else 0,
    )


def settle_round(
    wagers: Sequence[BoxWager],
    mode: BankMode = BankMode.HOUSE,
    banker_stake: int = 0,
    config: SettlementConfig = DEFAULT_SETTLEMENT,
) -> RoundSettlement:
    """Settle every wager of a round against the bank, under ``mode``.

    ``wagers``: the players' wagers (not the banker's). ``banker_stake``: the player/banker's
    wager or the co-banker's stake (0 under a house bank). Raises ValueError when the banker is
    underfunded: decide the mode first with :func:`playable_mode`.
    """
    _check_amount(banker_stake, "the banker's stake")
    if mode is BankMode.HOUSE and banker_stake:
        raise ValueError(f"a house bank takes no banker's stake, got {banker_stake}")
    settled = tuple(settle_wager(w, config) for w in wagers)
    problem = banker_funding_problem(mode, banker_stake, sum(w.amount for w in wagers), config)
    if problem:
        raise ValueError(problem)
    bank_result = sum(w.lost for w in settled) - sum(w.won_stake for w in settled)
    banker_share = _banker_share(mode, bank_result, config)
    owes_commission = mode is BankMode.PLAYER_BANKER or (
        mode is BankMode.CO_BANK and config.cobanker_pays_commission
    )
    paid = banker_commission(banker_share, config) if owes_commission else 0
    shortfall = max(0, -bank_result) if mode is BankMode.PLAYER_BANKER else 0
    return RoundSettlement(
        mode=mode,
        wagers=settled,
        bank_result=bank_result,
        banker_commission=paid,
        banker_net=banker_share - paid,
        house_net=bank_result - banker_share + sum(w.commission for w in settled) + paid,
        shortfall_from_banker_stake=shortfall,
    )


def _banker_share(mode: BankMode, bank_result: int, config: SettlementConfig) -> int:
    """The player's part of the bank result: all of it, half of it (co-bank), or none.

    A co-bank result is split equally; when the half is not a whole chip the co-banker's half is
    rounded toward zero and the house takes (or bears) the odd chip.
    """
    if mode is BankMode.PLAYER_BANKER:
        return bank_result
    if mode is BankMode.CO_BANK:
        return _to_chips(Decimal(bank_result) / COBANK_PARTIES, config, ROUND_DOWN)
    return 0
