"""The live pipeline on look families the models never trained on: one suite and one row each.

    python scripts/evaluate_families.py                          # every held-out family
    python scripts/evaluate_families.py --families teal_dim --clean 3 --per-kind 1
    python scripts/evaluate_families.py --families arc_green --out .cache/families.json

For each family (``datasets/recipes/looks/<name>.yaml``; the held-out ones are listed in
``families.yaml``) a suite is rendered into ``--suites/<family>`` when it is not there yet
(``paigow synth suite --randomisation <family>``: ``--clean`` clean rounds and ``--per-kind``
rounds per injectable irregularity; an interrupted render resumes), then every round runs
through the live pipeline and is scored as ``scripts/evaluate.py`` scores it
(:mod:`pipeline.evaluation.e2e`). The table printed (markdown, for ``docs/measurements.md``)
has a row per family: rounds, alert recall, false alerts per clean round, dice read, first box,
delivery order, hand membership, detection mAP50, frames/s and times real time. Bad input is
one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from pipeline.evaluation.e2e import InputError, RunConfig, evaluate_all, suite_clips
from pipeline.evaluation.e2e_score import print_report
from vision.synth.config import ConfigError, families, family_names

ROOT = Path(__file__).resolve().parents[1]
HEAD = (
    "| family | rounds | recall | false alerts / clean round | dice | first box | delivery "
    "order | hand membership | mAP50 | frames/s | x real time |"
)


def render_suite(family: str, out: Path, clean: int, per_kind: int) -> None:
    """``paigow synth suite`` for one family (kept where already rendered)."""
    command = [
        sys.executable, "-m", "pipeline.cli", "synth", "suite", "--randomisation", family,
        "--clean", str(clean), "--per-kind", str(per_kind), "--out", str(out),
    ]  # fmt: skip
    if subprocess.run(command, cwd=ROOT, check=False).returncode != 0:
        raise InputError(f"rendering the {family} suite into {out} failed")


def _fraction(text) -> str:
    return "-" if text is None else str(text)


def row(family: str, summary: dict) -> str:
    """The markdown row of one family's summary (``scripts/evaluate.py``)."""
    cells = [
        family,
        summary["rounds"],
        summary["recall"],
        summary["false_alerts_per_clean_round"],
        summary["dice_correct"],
        summary["first_box_correct"],
        summary["delivery_order_correct"],
        summary["hand_membership"],
        summary["detection"]["all"]["ap50"],
        summary["fps"],
        summary["realtime"],
    ]
    return "| " + " | ".join(_fraction(c) for c in cells) + " |"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--families", nargs="+", help="family names (default: the held-out ones)")
    p.add_argument("--suites", type=Path, default=ROOT / ".cache" / "suite" / "looks")
    p.add_argument("--clean", type=int, default=3, help="clean rounds per family")
    p.add_argument("--per-kind", type=int, default=1, help="rounds per injectable kind")
    p.add_argument("--out", type=Path, help="write every family's summary and clips (JSON)")
    p.add_argument("--vision-cache", type=Path, help="as scripts/evaluate.py --vision-cache")
    p.add_argument("--map-every", type=int, default=25, help="AP on 1 frame in N")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        known = family_names()
        names = args.families or list(families().held_out)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise InputError(f"unknown family {unknown[0]!r} (known: {', '.join(known)})")
        if args.clean < 0 or args.per_kind < 0 or args.map_every < 1:
            raise InputError("--clean and --per-kind must be 0 or more, --map-every 1 or more")
        config = RunConfig(
            map_every=args.map_every, progress=not args.quiet, vision_cache=args.vision_cache
        )
        results, rows = {}, []
        for family in names:
            suite = args.suites / family
            render_suite(family, suite, args.clean, args.per_kind)
            summary, clips = evaluate_all(suite_clips(suite), config)
            print_report(summary, clips)
            results[family] = {"summary": summary, "clips": clips}
            rows.append(row(family, summary))
    except (InputError, ConfigError) as err:
        print(f"evaluate_families: {err}", file=sys.stderr)
        return 2
    print("\n".join([HEAD, "|" + "---|" * 11, *rows]))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
