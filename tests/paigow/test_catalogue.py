"""The irregularity catalogue: shipped data matches RULES.md section 6; the loader validates."""

from __future__ import annotations

import subprocess
import sys

import pytest

import paigow.catalogue as catalogue_module
from paigow.catalogue import (
    COLUMNS,
    Irregularity,
    Severity,
    catalogue,
    irregularity,
    parse_catalogue,
)

# RULES.md section 6: kind -> (1996 rule, 1998 rule or None).
RULES_TABLE = {
    "exposed_during_stacking": ("10.1", "12.1"),
    "laja_exposure_excess": ("10.2", "12.2"),
    "hand_exposed_by_dealer": ("10.3", "12.3"),
    "single_tile_exposed": ("10.4", "12.4"),
    "tile_tracking_risk": ("10.5", "12.7"),
    "house_way_violation": ("10.8", "12.8"),
    "incorrect_delivery": ("10.14", None),
    "hands_mixed": ("10.15-10.16", None),
    "dice_not_flat": ("7.2", None),
    "wager_after_no_more_bets": ("6.4", None),
    "banker_underfunded": ("11.2(b), 11.3(b)", None),
    "payout_error": ("6.16-6.17", None),
    "camera_lost": ("(system)", None),
}

HEADER = ",".join(COLUMNS)
GOOD_ROW = "dice_not_flat,7.2,,low,a die not flat,re-shake"


def test_shipped_catalogue_has_the_13_kinds_of_rules_section_6():
    entries = catalogue()
    assert list(entries) == list(RULES_TABLE)
    for kind, (rule, rule_1998) in RULES_TABLE.items():
        entry = entries[kind]
        assert (entry.kind, entry.rule, entry.rule_1998) == (kind, rule, rule_1998)
        assert entry.seen_as and entry.action
        assert isinstance(entry.severity, Severity)


def test_shipped_entries_read_as_the_rules_say():
    assert irregularity("laja_exposure_excess").action == "reshuffle"
    assert irregularity("incorrect_delivery").action == "round void, reshuffle"
    assert irregularity("wager_after_no_more_bets").seen_as.startswith(
        'chips in a box added, removed or altered after "no more bets"'
    )
    assert irregularity("tile_tracking_risk").citation == "10.5 / 12.7"
    assert irregularity("payout_error").citation == "6.16-6.17"


def test_every_severity_is_used():
    assert {e.severity for e in catalogue().values()} == set(Severity)
    assert irregularity("incorrect_delivery").severity is Severity.CRITICAL
    assert irregularity("single_tile_exposed").severity is Severity.LOW


def test_catalogue_is_cached_and_read_only():
    assert catalogue() is catalogue()
    with pytest.raises(TypeError):
        catalogue()["new_kind"] = catalogue()["camera_lost"]  # type: ignore[index]


def test_lazy_module_attribute():
    assert catalogue_module.CATALOGUE is catalogue()
    with pytest.raises(AttributeError, match="has no attribute 'NOPE'"):
        _ = catalogue_module.NOPE


def test_importing_reads_no_file():
    code = (
        "import paigow.catalogue as c, sys; "
        "assert c.catalogue.cache_info().currsize == 0; "
        "from paigow.catalogue import CATALOGUE; "
        "assert c.catalogue.cache_info().currsize == 1"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_kind():
    with pytest.raises(KeyError, match="no irregularity 'dealer_asleep' in the catalogue"):
        irregularity("dealer_asleep")


def test_parse_good_text():
    entries = parse_catalogue(f"{HEADER}\n{GOOD_ROW}\n\n")
    assert entries == {
        "dice_not_flat": Irregularity(
            "dice_not_flat", "7.2", None, Severity.LOW, "a die not flat", "re-shake"
        )
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"{HEADER},colour\n{GOOD_ROW},red\n", r"line 1: .*unknown \['colour'\]"),
        ("kind,rule,severity,seen_as,action\n", r"line 1: .*missing \['rule_1998'\]"),
        (f"{HEADER},kind\n", "line 1: columns must be"),
        ("", "line 1: columns must be"),
        (f"{HEADER}\n{GOOD_ROW}\n{GOOD_ROW}\n", "line 3: kind 'dice_not_flat' appears twice"),
        (f"{HEADER}\ndice_not_flat,7.2,,low,,re-shake\n", "line 2: field 'seen_as' is empty"),
        (f"{HEADER}\n,7.2,,low,x,re-shake\n", "line 2: field 'kind' is empty"),
        (f"{HEADER}\ndice_not_flat,7.2,,low\n", "line 2: field 'seen_as' is empty"),
        (f"{HEADER}\n{GOOD_ROW},extra\n", "line 2: more fields than the 6 columns"),
        (
            f"{HEADER}\ndice_not_flat,7.2,,urgent,x,y\n",
            "line 2: unknown severity 'urgent' \\(use critical, high, medium, low\\)",
        ),
    ],
)
def test_parse_errors_name_the_line(text, message):
    with pytest.raises(ValueError, match=rf"^test\.csv {message}"):
        parse_catalogue(text, source="test.csv")
