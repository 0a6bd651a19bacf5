"""Commission, exact payability and round settlement (rules 6.16-6.19, 11.2(b), 11.3(b))."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, ROUND_UP, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paigow.hands import Outcome
from paigow.settlement import (
    DEFAULT_SETTLEMENT,
    BankMode,
    BoxWager,
    ChipSet,
    SettlementConfig,
    banker_commission,
    banker_funding_problem,
    is_exactly_payable,
    playable_mode,
    settle_round,
    settle_wager,
    split_wager,
    wager_step,
    winning_payout,
)

WIN, LOSE, PUSH = Outcome.WIN, Outcome.LOSE, Outcome.PUSH


def _config(smallest: int = 1, rate: str = "0.05", **kwargs) -> SettlementConfig:
    return SettlementConfig(chips=ChipSet((smallest,)), commission_rate=Decimal(rate), **kwargs)


configs = st.builds(
    _config,
    smallest=st.sampled_from([1, 2, 5, 25]),
    rate=st.sampled_from(["0", "0.01", "0.025", "0.04", "0.05", "0.1", "0.4"]),
)


# --- one wager ------------------------------------------------------------------------------


@pytest.mark.parametrize(("wager", "payout"), [(20, 19), (100, 95), (1000, 950), (0, 0)])
def test_winning_payout_is_even_money_less_five_percent(wager, payout):
    assert winning_payout(wager) == payout


def test_default_step_is_20():
    assert wager_step() == 20
    assert is_exactly_payable(40) and not is_exactly_payable(25)


@pytest.mark.parametrize(
    ("smallest", "rate", "step"),
    [
        (1, "0.05", 20),
        (5, "0.05", 100),  # 5% of 20 is 1, not a 5-chip
        (25, "0.05", 500),  # 25-cent chips, amounts in cents: a $5 wager pays $4.75
        (2, "0.05", 40),
        (1, "0.04", 25),
        (1, "0.03", 100),
        (5, "0.1", 50),
        (2, "0.4", 10),
        (5, "0", 5),
    ],
)
def test_wager_step(smallest, rate, step):
    assert wager_step(_config(smallest, rate)) == step


@given(configs)
def test_wager_step_is_the_smallest_payable_wager(config):
    chip = config.chips.smallest
    candidates = range(chip, 100 * wager_step(config) + 1, chip)
    assert wager_step(config) == next(w for w in candidates if is_exactly_payable(w, config))


@pytest.mark.parametrize(("wager", "split"), [(25, (20, 5)), (110, (100, 10)), (15, (0, 15))])
def test_only_the_exactly_payable_part_stands(wager, split):
    assert split_wager(wager) == split


def test_split_with_five_unit_chips():
    assert split_wager(150, _config(5)) == (100, 50)


@given(configs, st.integers(0, 5000))
def test_split_properties(config, chips):
    wager = chips * config.chips.smallest
    standing, returned = split_wager(wager, config)
    assert standing + returned == wager
    assert is_exactly_payable(standing, config)
    assert returned < wager_step(config)
    payout = winning_payout(standing, config)
    assert 0 <= payout <= standing
    assert config.chips.can_pay(payout)


def test_unpayable_wager_is_refused():
    with pytest.raises(
        ValueError, match=r"wager of 25 .*\(6\.18\); only 20 of it stands \(6\.19\)"
    ):
        winning_payout(25)


@pytest.mark.parametrize(
    ("wager", "message"),
    [
        (-5, "a wager must be non-negative, got -5"),
        (2.5, "a wager must be a whole number of money units, got 2.5"),
        (7, "a wager of 7 is not made of chips: not a multiple of 5"),
    ],
)
def test_bad_wager(wager, message):
    with pytest.raises(ValueError, match=f"^{message}$".replace(".", r"\.")):
        split_wager(wager, _config(5))


# --- configuration --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("denominations", "message"),
    [
        ((), "a chip set needs at least one denomination"),
        ((5, 1), "chip denominations must strictly increase"),
        ((5, 5), "chip denominations must strictly increase"),
        ((2, 5), r"chip denominations \[5\] are not multiples of the smallest, 2"),
        ((0, 1), "a chip denomination must be positive, got 0"),
        ((1.5,), "a chip denomination must be a whole number"),
    ],
)
def test_bad_chip_set(denominations, message):
    with pytest.raises(ValueError, match=message):
        ChipSet(denominations)


def test_chip_set_defaults_and_payability():
    chips = ChipSet()
    assert chips.denominations == (1, 5, 25, 100, 500, 1000)
    assert ChipSet([5, 25]).denominations == (5, 25)
    assert ChipSet((5, 25)).can_pay(30) and not ChipSet((5, 25)).can_pay(31)
    assert not chips.can_pay(Decimal("1.25"))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"commission_rate": 0.05}, "commission_rate must be a Decimal"),
        ({"commission_rate": Decimal(1)}, r"commission_rate must be in \[0, 1\)"),
        ({"cobank_min_share": Decimal(0)}, r"cobank_min_share must be in \(0, 1\]"),
        ({"banker_commission_rounding": "nearest"}, "unknown rounding 'nearest'"),
    ],
)
def test_bad_config(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SettlementConfig(**kwargs)


# --- banker's funding (11.2(b), 11.3(b)) ----------------------------------------------------


def test_funding_problems():
    assert banker_funding_problem(BankMode.HOUSE, 0, 500) is None
    assert banker_funding_problem(BankMode.PLAYER_BANKER, 100, 100) is None
    assert banker_funding_problem(BankMode.PLAYER_BANKER, 90, 100) == (
        "player/banker stake 90 is below the other wagers' total 100 (11.2(b)): "
        "play as house bank or co-bank"
    )
    assert banker_funding_problem(BankMode.CO_BANK, 50, 100) is None
    assert banker_funding_problem(BankMode.CO_BANK, 49, 100) == (
        "co-banker stake 49 is below 50% of the other wagers' total 100 (11.3(b)): "
        "play as house bank"
    )
    assert banker_funding_problem(BankMode.CO_BANK, 50, 101) is not None  # needs 50.5


def test_funding_rejects_negative_amounts():
    with pytest.raises(ValueError, match="the banker's stake must be non-negative"):
        banker_funding_problem(BankMode.CO_BANK, -1, 100)


@pytest.mark.parametrize(
    ("mode", "stake", "expected"),
    [
        (BankMode.PLAYER_BANKER, 100, BankMode.PLAYER_BANKER),
        (BankMode.PLAYER_BANKER, 60, BankMode.CO_BANK),
        (BankMode.PLAYER_BANKER, 40, BankMode.HOUSE),
        (BankMode.CO_BANK, 40, BankMode.HOUSE),
        (BankMode.HOUSE, 0, BankMode.HOUSE),
    ],
)
def test_playable_mode(mode, stake, expected):
    assert playable_mode(mode, stake, 100) is expected


# --- settling a round (worked by hand) ------------------------------------------------------


def test_settle_wager_win_push_lose():
    win = settle_wager(BoxWager(5, 25, WIN))
    assert (win.standing, win.returned, win.payout, win.commission) == (20, 25, 19, 1)
    assert win.player_net == 19
    push = settle_wager(BoxWager(4, 60, PUSH))
    assert (push.standing, push.returned, push.payout, push.player_net) == (60, 60, 0, 0)
    lose = settle_wager(BoxWager(3, 45, LOSE))
    assert (lose.standing, lose.returned, lose.player_net) == (40, 5, -40)


HOUSE_ROUND = [BoxWager(2, 100, WIN), BoxWager(3, 40, LOSE), BoxWager(4, 60, PUSH)]
HOUSE_ROUND += [BoxWager(5, 25, WIN)]


def test_house_bank_round():
    # Losses 40; winners' stakes 100 + 20 matched 1:1; commission 5 + 1 to the house.
    result = settle_round(HOUSE_ROUND)
    assert [w.payout for w in result.wagers] == [95, 0, 0, 19]
    assert [w.returned for w in result.wagers] == [100, 0, 60, 25]
    assert result.bank_result == -80
    assert result.house_net == -74
    assert result.banker_net == 0 and result.banker_commission == 0
    assert result.commission_total == 6
    assert result.players_net == 74


def test_player_banker_loses_shortfall_from_stake():
    # Winners take 120 at 1:1; the losing wager area holds 40; the other 80 is the banker's.
    result = settle_round(HOUSE_ROUND, BankMode.PLAYER_BANKER, banker_stake=300)
    assert result.bank_result == -80
    assert result.shortfall_from_banker_stake == 80
    assert result.banker_commission == 0
    assert (result.banker_net, result.house_net, result.players_net) == (-80, 6, 74)


def test_player_banker_wins_pays_five_percent_of_net():
    wagers = [BoxWager(2, 100, LOSE), BoxWager(3, 60, LOSE), BoxWager(4, 40, WIN)]
    wagers.append(BoxWager(6, 20, PUSH))
    result = settle_round(wagers, BankMode.PLAYER_BANKER, banker_stake=220)
    # Net 160 - 40 = 120; commission 6 (6.17); the winner's commission 2 (6.16).
    assert (result.bank_result, result.banker_commission, result.banker_net) == (120, 6, 114)
    assert (result.house_net, result.players_net, result.shortfall_from_banker_stake) == (
        8,
        -122,
        0,
    )


@pytest.mark.parametrize(
    ("rounding", "direct", "co_bank"), [(None, 1, 0), (ROUND_UP, 2, 1), (ROUND_HALF_EVEN, 2, 0)]
)
def test_banker_commission_rounding(rounding, direct, co_bank):
    config = (
        DEFAULT_SETTLEMENT if rounding is None else _config(banker_commission_rounding=rounding)
    )
    # Net winnings 30: 5% is 1.5, not a whole chip.
    assert banker_commission(30, config) == direct
    # Whole wagers keep a player/banker's 5% exact (6.19), but a co-bank half need not be:
    # bank result 40 - 20 = 20, the co-banker's half 10, 5% of it 0.5.
    wagers = [BoxWager(3, 40, LOSE), BoxWager(4, 20, WIN)]
    result = settle_round(wagers, BankMode.CO_BANK, banker_stake=30, config=config)
    assert (result.bank_result, result.banker_commission) == (20, co_bank)
    assert result.players_net + result.banker_net + result.house_net == 0


def test_no_banker_commission_on_a_loss():
    assert banker_commission(0) == 0 and banker_commission(-40) == 0


def test_co_bank_splits_the_result_equally():
    wagers = [BoxWager(2, 100, LOSE), BoxWager(3, 60, LOSE), BoxWager(4, 40, WIN)]
    result = settle_round(wagers, BankMode.CO_BANK, banker_stake=100)
    # Bank result 120: 60 each; the co-banker pays 5% of 60 = 3.
    assert (result.bank_result, result.banker_commission, result.banker_net) == (120, 3, 57)
    assert result.house_net == 60 + 2 + 3


def test_co_bank_without_banker_commission():
    wagers = [BoxWager(2, 100, LOSE), BoxWager(3, 60, LOSE), BoxWager(4, 40, WIN)]
    config = _config(cobanker_pays_commission=False)
    result = settle_round(wagers, BankMode.CO_BANK, banker_stake=100, config=config)
    assert (result.banker_commission, result.banker_net, result.house_net) == (0, 60, 62)


@pytest.mark.parametrize(("outcome", "house_net"), [(LOSE, 5), (WIN, -5)])
def test_co_bank_odd_chip_goes_to_the_house(outcome, house_net):
    config = SettlementConfig(chips=ChipSet((5, 25)), commission_rate=Decimal(0))
    result = settle_round([BoxWager(2, 5, outcome)], BankMode.CO_BANK, 5, config)
    assert (result.banker_net, result.house_net) == (0, house_net)


def test_underfunded_banker_is_refused():
    with pytest.raises(ValueError, match=r"player/banker stake 200 is below .* 225 \(11\.2\(b\)\)"):
        settle_round(HOUSE_ROUND, BankMode.PLAYER_BANKER, banker_stake=200)
    with pytest.raises(ValueError, match=r"co-banker stake 100 is below 50%"):
        settle_round(HOUSE_ROUND, BankMode.CO_BANK, banker_stake=100)


@pytest.mark.parametrize(
    ("wager", "message"),
    [
        (BoxWager(9, 20, WIN), "box must be a box number 1 to 8, got 9"),
        (BoxWager(True, 20, WIN), "box must be a box number 1 to 8, got True"),
        (BoxWager(2, 20, "win"), "outcome must be an Outcome, got 'win'"),
        (BoxWager(2, -20, WIN), "a wager must be non-negative, got -20"),
    ],
)
def test_bad_box_wager(wager, message):
    with pytest.raises(ValueError, match=message):
        settle_round([wager])


def test_house_bank_takes_no_stake():
    with pytest.raises(ValueError, match="a house bank takes no banker's stake, got 10"):
        settle_round(HOUSE_ROUND, BankMode.HOUSE, banker_stake=10)


wager_lists = st.lists(
    st.builds(
        BoxWager,
        box=st.integers(1, 8),
        amount=st.integers(0, 500),
        outcome=st.sampled_from(list(Outcome)),
    ),
    max_size=8,
)


@given(wager_lists, st.sampled_from(list(BankMode)), st.integers(0, 4000))
def test_round_conserves_money(wagers, mode, extra):
    total = sum(w.amount for w in wagers)
    stake = {BankMode.HOUSE: 0, BankMode.PLAYER_BANKER: total, BankMode.CO_BANK: (total + 1) // 2}
    stake = stake[mode] + (extra if mode is not BankMode.HOUSE else 0)
    result = settle_round(wagers, mode, banker_stake=stake)
    assert result.players_net + result.banker_net + result.house_net == 0
    for wager, settled in zip(wagers, result.wagers, strict=True):
        assert settled.returned + settled.payout - wager.amount == settled.player_net
        assert settled.payout <= settled.standing <= wager.amount
        assert is_exactly_payable(settled.standing)
    assert -result.banker_net <= stake
