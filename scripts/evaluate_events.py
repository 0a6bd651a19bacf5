"""Event accuracy of the round reconstructor against scenario ground truth.

    python scripts/evaluate_events.py CLIP_DIR [CLIP_DIR ...] --out events.json
    python scripts/evaluate_events.py --render 0 1 2 --work /tmp/clips   # render, then score

Each clip folder holds ``truth.jsonl.gz`` and ``scenario.json`` (``paigow synth`` or
``vision.synth.clip.render_scenario``). The events come from oracle mode (ground-truth tracks,
:mod:`pipeline.round.oracle`), so what is measured is the reconstructor's logic alone.

Scored per round: the dice (as a multiset), the first box, the full delivery order (box, tile
count and tile ids of every group, in order). Per ground-truth event: *found* when an event of
the same kind and identity (the box, the group's order index) lies within ``--tolerance-s``;
*correct* when its content also agrees (hand pairs, exposed pairs, settlement outcome, group
contents, dice). Ground-truth events inside a blind interval cannot be seen and are left out.
Reconstructed events of a scored kind that match nothing are counted as *extra*. For each
injected irregularity, whether the events carry its evidence (what the rules checker needs).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from paigow.dice import Placement, check_delivery
from pipeline.round.events import (
    BankStaked,
    BoxSettled,
    DeliveryDone,
    DiceRead,
    GroupDelivered,
    HandCollected,
    HandExposed,
    HandSet,
    HandsMerged,
    NoMoreBets,
    Phase,
    PhaseChanged,
    TableEvent,
    TileExposed,
    WagerChanged,
    WashEnded,
    WoodpileBuilt,
)
from pipeline.round.oracle import SCENARIO_FILE, reconstruct_clip

TOLERANCE_S = 1.0  # how far in video time a reconstructed event may lie from the true one
EVENTS_BEFORE_DELIVERY = (Phase.WOODPILE, Phase.WAGERS, Phase.DICE, Phase.WASH)
UNSET_PHASES = (Phase.DELIVERY, Phase.SETTING)


def event_key(event: TableEvent) -> tuple | None:
    """The ground-truth kind and identity an event stands for; None for unscored events."""
    match event:
        case PhaseChanged(after=Phase.WASH):
            return ("wash_started",)
        case WashEnded():
            return ("wash_ended",)
        case WoodpileBuilt():
            return ("woodpile_built",)
        case WagerChanged(box=box, before=0, after=after, after_no_more_bets=False) if after:
            return ("wager_placed", box)
        case NoMoreBets():
            return ("no_more_bets",)
        case DiceRead(flat=True):
            return ("dice_read",)
        case GroupDelivered(order_index=k):
            return ("group_delivered", k)
        case DeliveryDone():
            return ("delivery_done",)
        case HandCollected(box=box):
            return ("hand_collected", box)
        case HandSet(box=box):
            return ("hand_set", box)
        case HandExposed(box=box):
            return ("hand_exposed", box)
        case BoxSettled(box=box):
            return ("settled", box)
        case BankStaked():
            return ("bank_staked",)
    return None


def truth_key(truth: dict) -> tuple:
    """The kind and identity of a ground-truth event (see :func:`event_key`)."""
    kind = truth["type"]
    if kind == "group_delivered":
        return (kind, truth["order_index"])
    if "box" in truth:
        return (kind, truth["box"])
    return (kind,)


def _pairs(*pairs) -> set[frozenset[int]]:
    return {frozenset(p) for p in pairs}


def content_ok(truth: dict, event: TableEvent) -> bool | None:
    """Whether a matched event's content agrees with the truth; None when there is none."""
    match event:
        case DiceRead(values=values, first_box=first):
            return sorted(values) == sorted(truth["dice"]) and first == truth["first_box"]
        case GroupDelivered(box=box, tile_count=n, track_ids=ids):
            same_ids = set(ids) == set(truth["tile_ids"])
            return box == truth["box"] and n == truth["tile_count"] and same_ids
        case HandSet(high=high, low=low):
            return (set(high), set(low)) == (set(truth["high"]), set(truth["low"]))
        case HandExposed(high_ids=high, low_ids=low):
            return (set(high), set(low)) == (set(truth["high"]), set(truth["low"]))
        case BoxSettled(outcome=outcome, paid=paid):
            money = paid is None or outcome.value != "win" or paid == truth.get("paid", paid)
            return outcome.value == (truth.get("outcome") or "push") and money
        case BankStaked(mode=mode, stake=stake):
            return mode == truth["mode"] and stake in (None, truth["amount"])
        case HandCollected(track_ids=ids):
            return set(ids) == set(truth["tile_ids"])
    return None


def _evidence(irregularity: dict, events: list[TableEvent]) -> bool | None:
    """Whether the events hold what the rules need to raise this irregularity (None: n/a)."""
    kind, box = irregularity["kind"], irregularity["box"]
    detail = irregularity["detail"]
    tests: dict[str, Callable[[TableEvent], bool]] = {
        "exposed_during_stacking": lambda e: (
            isinstance(e, TileExposed) and e.phase in EVENTS_BEFORE_DELIVERY
        ),
        "laja_exposure_excess": lambda e: (
            isinstance(e, TileExposed) and e.phase in EVENTS_BEFORE_DELIVERY
        ),
        "single_tile_exposed": lambda e: (
            isinstance(e, TileExposed) and e.box == box and e.phase in UNSET_PHASES
        ),
        "hand_exposed_by_dealer": lambda e: (
            isinstance(e, TileExposed) and e.box == box and e.phase in UNSET_PHASES
        ),
        "hands_mixed": lambda e: (
            isinstance(e, HandsMerged) and set(e.boxes) == {box, detail["other_box"]}
        ),
        "dice_not_flat": lambda e: isinstance(e, DiceRead) and not e.flat,
        "wager_after_no_more_bets": lambda e: (
            isinstance(e, WagerChanged)
            and e.box == box
            and e.after_no_more_bets
            and e.phase.order < Phase.EXPOSURE.order
        ),
        "house_way_violation": lambda e: isinstance(e, HandExposed) and e.bank,
        "payout_error": lambda e: (
            isinstance(e, BoxSettled) and e.box == box and e.paid == detail["paid"]
        ),
        "banker_underfunded": lambda e: (
            isinstance(e, BankStaked) and (e.mode, e.stake) == (detail["mode"], detail["stake"])
        ),
    }
    if kind == "incorrect_delivery":
        return _delivery_problems(events)
    test = tests.get(kind)
    return None if test is None else any(test(e) for e in events)


def _delivery_problems(events: list[TableEvent]) -> bool:
    dice = [e for e in events if isinstance(e, DiceRead) and e.flat]
    groups = [e for e in events if isinstance(e, GroupDelivered)]
    if not dice or dice[-1].first_box is None:
        return False
    placements = [Placement(g.box, g.tile_count) for g in groups]
    return bool(check_delivery(dice[-1].first_box, placements))


@dataclass
class ClipScore:
    """Scores of one clip (one round)."""

    name: str
    dice_ok: bool = False
    first_box_ok: bool = False
    delivery_ok: bool = False
    total: Counter = field(default_factory=Counter)
    found: Counter = field(default_factory=Counter)
    checked: Counter = field(default_factory=Counter)
    correct: Counter = field(default_factory=Counter)
    extra: Counter = field(default_factory=Counter)
    unobservable: int = 0
    time_errors_s: list[float] = field(default_factory=list)
    evidence: dict[str, bool] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)


def _blind(truth: dict, intervals: list[list]) -> bool:
    return any(start <= truth["frame"] < end for start, end, *_ in intervals)


def _match(
    truths: list[dict], events: list[TableEvent], score: ClipScore, tol_s: float, blind: list
) -> None:
    """Greedy in time: each truth takes the nearest unused event of its kind and identity.

    Truths in a blind interval may take an event (revealed when the camera returns, so with
    no time limit) but are scored apart, as unobservable.
    """
    keyed = [(event_key(e), e) for e in events]
    used: set[int] = set()
    for truth in truths:
        key, unseen = truth_key(truth), _blind(truth, blind)
        limit_s = float("inf") if unseen else tol_s
        options = [
            (abs(e.time_s - truth["time_s"]), i)
            for i, (k, e) in enumerate(keyed)
            if k == key and i not in used and abs(e.time_s - truth["time_s"]) <= limit_s
        ]
        if unseen:
            score.unobservable += 1
            used.update(i for _, i in sorted(options)[:1])
            continue
        score.total[key[0]] += 1
        if not options:
            score.misses.append(f"{truth['time_s']:.1f}s {key}")
            continue
        error_s, best = min(options)
        used.add(best)
        score.time_errors_s.append(error_s)
        score.found[key[0]] += 1
        ok = content_ok(truth, keyed[best][1])
        if ok is not None:
            score.checked[key[0]] += 1
            score.correct[key[0]] += ok
    for i, (key, _) in enumerate(keyed):
        if key is not None and i not in used:
            score.extra[key[0]] += 1


def _round_facts(scenario: dict, events: list[TableEvent], score: ClipScore) -> None:
    plan = scenario["plan"]
    dice = [e for e in events if isinstance(e, DiceRead) and e.flat]
    if dice:
        score.dice_ok = sorted(dice[-1].values) == sorted(plan["dice"])
        score.first_box_ok = dice[-1].first_box == plan["first_box"]
    seen = [
        (g.box, g.tile_count, frozenset(g.track_ids))
        for g in events
        if isinstance(g, GroupDelivered)
    ]
    true = [(g["box"], len(g["tile_ids"]), frozenset(g["tile_ids"])) for g in plan["groups"]]
    score.delivery_ok = seen == true


def score_clip(clip_dir: Path, events: list[TableEvent], tol_s: float = TOLERANCE_S) -> ClipScore:
    """Score one clip's reconstructed events against its ``scenario.json``."""
    scenario = json.loads((clip_dir / SCENARIO_FILE).read_text(encoding="utf-8"))
    score = ClipScore(clip_dir.name)
    _match(scenario["events"], events, score, tol_s, scenario.get("blind_intervals", []))
    _round_facts(scenario, events, score)
    for irregularity in scenario["irregularities"]:
        has = _evidence(irregularity, events)
        if has is not None:
            score.evidence[irregularity["kind"]] = has
    return score


def summarise(scores: list[ClipScore]) -> dict:
    """Totals over clips: rates for the round facts, per-kind event counts."""
    total, found, checked, correct, extra = Counter(), Counter(), Counter(), Counter(), Counter()
    for s in scores:
        total += s.total
        found += s.found
        checked += s.checked
        correct += s.correct
        extra += s.extra
    n = max(1, len(scores))
    evidence = [ok for s in scores for ok in s.evidence.values()]
    errors = [e for s in scores for e in s.time_errors_s]
    return {
        "rounds": len(scores),
        "dice_correct": sum(s.dice_ok for s in scores) / n,
        "first_box_correct": sum(s.first_box_ok for s in scores) / n,
        "delivery_order_correct": sum(s.delivery_ok for s in scores) / n,
        "events_total": sum(total.values()),
        "events_found": sum(found.values()),
        "event_recall": sum(found.values()) / max(1, sum(total.values())),
        "content_correct": sum(correct.values()) / max(1, sum(checked.values())),
        "extra_events": sum(extra.values()),
        "mean_time_error_s": round(sum(errors) / max(1, len(errors)), 3),
        "max_time_error_s": round(max(errors, default=0.0), 3),
        "unobservable_events": sum(s.unobservable for s in scores),
        "irregularity_evidence": sum(evidence) / max(1, len(evidence)),
        "per_kind": {
            k: {
                "total": total[k],
                "found": found[k],
                "extra": extra[k],
                "correct": correct[k],
                "checked": checked[k],
            }
            for k in sorted(total | extra)
        },
    }


def evaluate(clip_dirs: list[Path], tol_s: float = TOLERANCE_S) -> tuple[dict, list[ClipScore]]:
    """Oracle-mode events of each clip, scored; the summary and the per-clip scores."""
    scores = [score_clip(d, reconstruct_clip(d), tol_s) for d in clip_dirs]
    return summarise(scores), scores


def _render(seeds: list[int], injections: tuple[str, ...], work: Path) -> list[Path]:
    from vision.synth.clip import ClipConfig, render_scenario  # scripts may use the renderer
    from vision.synth.scenario import ScenarioTiming

    out = []
    for seed in seeds:
        folder = work / f"seed{seed}"
        timing = ScenarioTiming(fps=5)
        render_scenario(seed, injections, folder, ClipConfig(scale=0.25), timing, progress=False)
        out.append(folder)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("clips", nargs="*", type=Path, help="scenario folders")
    p.add_argument("--render", nargs="*", type=int, default=[], metavar="SEED")
    p.add_argument("--inject", nargs="*", default=[], help="irregularities for --render")
    p.add_argument("--work", type=Path, default=Path("cache/events_eval"))
    p.add_argument("--tolerance-s", type=float, default=TOLERANCE_S)
    p.add_argument("--out", type=Path, help="write the summary JSON here")
    p.add_argument("--verbose", action="store_true", help="list each clip's misses")
    args = p.parse_args(argv)
    clips = list(args.clips) + _render(args.render, tuple(args.inject), args.work)
    if not clips:
        p.error("give clip folders or --render seeds")
    summary, scores = evaluate(clips, args.tolerance_s)
    for s in scores:
        flags = f"dice={s.dice_ok} first={s.first_box_ok} delivery={s.delivery_ok}"
        found = f"{sum(s.found.values())}/{sum(s.total.values())}"
        print(f"{s.name}: {flags} events {found} extra {sum(s.extra.values())} {s.evidence}")
        if args.verbose and s.misses:
            print("  missed: " + "; ".join(s.misses))
    text = json.dumps(summary, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
