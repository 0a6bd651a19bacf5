"""Events as id-free keys, so that runs which number their tracks differently can be
compared: the key events (the game's facts), their differences, and how many of the
ground-truth run's (the reconstructor on the scenario's truth) a run finds."""

from __future__ import annotations

import json
from pathlib import Path

KEY_EVENTS = (
    "DiceRead",
    "GroupDelivered",
    "DeliveryDone",
    "TileExposed",
    "HandExposed",
    "WagerChanged",
    "BoxSettled",
)  # the game's facts: dice, delivery order, exposures, wagers, settlement


def _sorted(values) -> list:
    return sorted(values, key=lambda v: (v is None, str(v)))


def event_key(event) -> str:
    """An event without track ids, frame or time, faces in a set sorted: what two pipelines
    that number their tracks differently must still agree on."""
    from dataclasses import asdict

    from pipeline.round.events import DiceRead, GroupDelivered, HandExposed

    fields = asdict(event)
    fields = {k: v for k, v in fields.items() if k not in ("frame", "time_s", "track_id")}
    match event:
        case DiceRead(values=values):
            fields["values"] = _sorted(values)
        case GroupDelivered(track_ids=ids):
            fields["track_ids"] = len(ids)
        case HandExposed(high_faces=high, low_faces=low):
            fields |= {"high_faces": _sorted(high), "low_faces": _sorted(low)}
    for k in ("track_ids", "high", "low", "high_ids", "low_ids"):
        if isinstance(fields.get(k), (list, tuple)):
            fields[k] = len(fields[k])  # how many tiles, not which ids
    return f"{type(event).__name__}: " + json.dumps(fields, default=str, sort_keys=True)


def event_lines(events) -> list[str]:
    """Events as id-free keys (:func:`event_key`), sorted within a frame."""
    return [key for _, key in sorted((e.frame, event_key(e)) for e in events)]


def oracle_events(clip: Path, limit: int | None) -> list[str] | None:
    """The round reconstructor's events on the scenario's ground-truth tracks."""
    from pipeline.layout import layout_from_scenario
    from pipeline.round.oracle import TRUTH_FILE, oracle_frames, read_truth, reconstruct
    from pipeline.round.phases import RoundConfig, RoundReconstructor

    if not (clip / TRUTH_FILE).exists():
        return None
    layout = layout_from_scenario(clip / "scenario.json")
    reconstructor = RoundReconstructor(RoundConfig(chung_box=layout.chung_box))
    truth = (t for t in read_truth(clip / TRUTH_FILE) if limit is None or t["frame"] < limit)
    return event_lines(reconstruct(oracle_frames(truth), reconstructor))


def key_events(lines: list[str]) -> list[str]:
    return [line for line in lines if line.split(":")[0] in KEY_EVENTS]


def key_sides(a: list[str], b: list[str]) -> tuple[list[str], list[str]]:
    """Key events only in ``a`` and only in ``b`` (multisets: a repeat counts)."""
    from collections import Counter

    ca, cb = Counter(key_events(a)), Counter(key_events(b))
    return sorted((ca - cb).elements()), sorted((cb - ca).elements())


def key_difference(a: list[str], b: list[str]) -> int:
    only_a, only_b = key_sides(a, b)
    return len(only_a) + len(only_b)


def found_in(lines: list[str], truth: list[str]) -> tuple[int, int]:
    """How many of ``truth``'s key events ``lines`` has (as a multiset), of how many."""
    from collections import Counter

    truth_keys = Counter(key_events(truth))
    return sum((Counter(key_events(lines)) & truth_keys).values()), sum(truth_keys.values())
