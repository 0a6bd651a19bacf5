"""The rules: one small module per kind of the irregularity catalogue (RULES.md section 6),
registered in one explicit table.

>>> from paigow.catalogue import catalogue
>>> sorted(RULES) == sorted(set(catalogue()) - set(UNOBSERVABLE))
True

Each rule consumes table events and state and reports findings (:mod:`pipeline.rules.base`);
:class:`RulesChecker` turns them into alerts with a lifecycle (open / update / close). A kind
that the events cannot show yet is listed in :data:`UNOBSERVABLE` with what it would need,
never given a rule that guesses.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from pipeline.rules.banker_underfunded import BankerUnderfunded
from pipeline.rules.base import Finding, Rule, RulesConfig
from pipeline.rules.camera_lost import CameraLostRule
from pipeline.rules.checker import RuleFactory, RulesChecker
from pipeline.rules.dice_not_flat import DiceNotFlat
from pipeline.rules.exposed_during_stacking import ExposedDuringStacking
from pipeline.rules.hand_exposed_by_dealer import HandExposedByDealer
from pipeline.rules.hands_mixed import HandsMixed
from pipeline.rules.house_way_violation import HouseWayViolation
from pipeline.rules.incorrect_delivery import IncorrectDelivery
from pipeline.rules.laja_exposure_excess import LajaExposureExcess
from pipeline.rules.payout_error import PayoutError
from pipeline.rules.single_tile_exposed import SingleTileExposed
from pipeline.rules.tile_tracking_risk import TileTrackingRisk
from pipeline.rules.wager_after_no_more_bets import WagerAfterNoMoreBets

__all__ = [
    "RULES",
    "UNOBSERVABLE",
    "Finding",
    "Rule",
    "RuleFactory",
    "RulesChecker",
    "RulesConfig",
]

RULES: Mapping[str, RuleFactory] = MappingProxyType(
    {
        "exposed_during_stacking": ExposedDuringStacking,
        "laja_exposure_excess": LajaExposureExcess,
        "hand_exposed_by_dealer": HandExposedByDealer,
        "single_tile_exposed": SingleTileExposed,
        "tile_tracking_risk": TileTrackingRisk,
        "house_way_violation": HouseWayViolation,
        "incorrect_delivery": IncorrectDelivery,
        "hands_mixed": HandsMixed,
        "dice_not_flat": DiceNotFlat,
        "wager_after_no_more_bets": WagerAfterNoMoreBets,
        "payout_error": PayoutError,
        "banker_underfunded": BankerUnderfunded,
        "camera_lost": CameraLostRule,
    }
)
"""Catalogue kind -> rule class (called with a :class:`RulesConfig`)."""

UNOBSERVABLE: Mapping[str, str] = MappingProxyType({})
"""Catalogue kinds without a rule yet -> what the events would have to carry."""
