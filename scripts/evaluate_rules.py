"""Alert recall, precision and latency of the rules checker on scenario clips, in oracle mode.

    python scripts/evaluate_rules.py CLIP_DIR [CLIP_DIR ...] --out rules.json
    python scripts/evaluate_rules.py --suite --work cache/rules_suite --out rules.json
    python scripts/evaluate_rules.py --subset --work /tmp/rules_subset   # the golden subset
    python scripts/evaluate_rules.py --money --work cache/rules_money --out money.json

``--suite`` renders the standard scenario suite (``paigow synth suite``: 10 clean rounds and 3
per injectable kind) small (scale 0.25, 5 fps) into ``--work``; ``--subset`` the few clips of
``tests/golden/rules_oracle.json``; ``--money`` the money suite (:data:`MONEY`: clean rounds,
each payout_error variant twice, under-funded banks). Clips already rendered there are reused.
A payout is judged ``settle_judge_s`` after it is seen and a rendered round ends two seconds
after its first payout, so rounds with a payout_error injected, and every round of the money
suite, are rendered with a tail of :data:`PAID_TAIL_S` (folder names end ``_tail``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from pipeline.alerts import AlertState
from pipeline.evaluation.rules import EARLY_S, evaluate
from pipeline.round.oracle import SCENARIO_FILE, TRUTH_FILE

SUBSET = (
    (10000, ()),
    (10001, ()),
    (30000, ("exposed_during_stacking", "dice_not_flat", "single_tile_exposed", "camera_lost")),
    (30002, ("laja_exposure_excess", "wager_after_no_more_bets", "hand_exposed_by_dealer")),
    (30003, ("tile_tracking_risk", "house_way_violation", "hands_mixed")),
    (30005, ("incorrect_delivery",)),
    (30006, ("payout_error",)),
    (30007, ("banker_underfunded",)),
)
"""The golden subset: every injectable kind once (the camera loss frozen: an even seed) and two
clean rounds, in eight clips that render in about a minute."""
MONEY = (
    *((40000 + i, ()) for i in range(8)),
    *((40100 + i, ("payout_error",)) for i in range(6)),  # seed % 3: the variant
    *((40200 + i, ("banker_underfunded",)) for i in range(4)),  # even: player/banker
)
"""The money suite: 8 clean rounds (house, player/banker and co-bank as drawn), 2 rounds per
payout_error variant (underpaid, overpaid, no commission), 4 under-funded banks."""
PAID_TAIL_S = 4.0  # seconds a round lasts after its last payout: settle_judge_s and more


def render(
    entries: Iterable[tuple[int, tuple[str, ...]]], work: Path, tail: bool | None = None
) -> list[Path]:
    """Render (seed, injections) scenarios small into ``work`` (reusing finished ones).
    ``tail``: end rounds :data:`PAID_TAIL_S` after the settlement (None: rounds with a
    payout_error injected)."""
    from vision.synth.clip import ClipConfig, render_scenario  # scripts may use the renderer
    from vision.synth.scenario import ScenarioTiming

    out = []
    for seed, injections in entries:
        long = "payout_error" in injections if tail is None else tail
        name = f"{'+'.join(injections) or 'clean'}_{seed}" + ("_tail" if long else "")
        folder = work / name
        done = folder / SCENARIO_FILE
        if not (done.exists() and (folder / TRUTH_FILE).exists()):
            timing = ScenarioTiming(fps=5)
            timing = replace(timing, tail_s=PAID_TAIL_S) if long else timing
            render_scenario(seed, injections, folder, ClipConfig(scale=0.25), timing, False)
        out.append(folder)
    return out


def _entries(args: argparse.Namespace) -> list[tuple[int, tuple[str, ...]]]:
    entries: list[tuple[int, tuple[str, ...]]] = []
    if args.suite:
        from pipeline.cli.synth import suite_entries

        entries += suite_entries(args.clean, args.per_kind, None)
    if args.subset:
        entries += list(SUBSET)
    entries += [(seed, tuple(args.inject)) for seed in args.render]
    return entries


def _money_clips(args: argparse.Namespace) -> list[Path]:
    return render(MONEY, args.work, tail=True) if args.money else []


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("clips", nargs="*", type=Path, help="scenario folders")
    p.add_argument("--suite", action="store_true", help="render the standard suite small")
    p.add_argument("--clean", type=int, default=10, help="clean rounds of --suite")
    p.add_argument("--per-kind", type=int, default=3, help="rounds per kind of --suite")
    p.add_argument("--subset", action="store_true", help="render the golden subset small")
    p.add_argument("--money", action="store_true", help="render the money suite small")
    p.add_argument("--render", nargs="*", type=int, default=[], metavar="SEED")
    p.add_argument("--inject", nargs="*", default=[], help="irregularities for --render")
    p.add_argument("--work", type=Path, default=Path("cache/rules_eval"))
    p.add_argument("--early-s", type=float, default=EARLY_S)
    p.add_argument("--out", type=Path, help="write the summary JSON here")
    p.add_argument("--verbose", action="store_true", help="print every alert")
    args = p.parse_args(argv)
    start = time.perf_counter()
    clips = list(args.clips) + render(_entries(args), args.work) + _money_clips(args)
    rendered_s = time.perf_counter() - start
    if not clips:
        p.error("give clip folders, --suite, --subset, --money or --render seeds")
    summary, runs = evaluate(clips, early_s=args.early_s)
    summary["render_seconds"] = round(rendered_s, 1)
    for run in runs:
        opened = [a for a in run.alerts if a.state is AlertState.OPEN]
        kinds = ", ".join(f"{a.kind}@{a.video_time_s:.1f}s" for a in opened) or "no alert"
        print(f"{run.name}: {run.events} events, {kinds} ({run.seconds:.1f} s)")
        if args.verbose:
            for alert in run.alerts:
                print(
                    f"    {alert.video_time_s:6.1f}s {alert.state:6s} {alert.kind}: {alert.message}"
                )
    text = json.dumps(summary, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
