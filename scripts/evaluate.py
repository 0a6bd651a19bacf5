"""End-to-end evaluation of the live pipeline on rendered scenario clips: video in, alerts out.

    python scripts/evaluate.py CLIP_DIR [CLIP_DIR ...] --out e2e.json
    python scripts/evaluate.py --suite .cache/suite/std --out e2e.json
    python scripts/evaluate.py CLIP_DIR --golden tests/golden/e2e_demo.json --check

Every decoded frame of ``clip.mp4`` goes through :class:`pipeline.runner.TablePipeline` as the
live monitor runs it (default config: motion gating on; the clip camera's layout; frames the
truth marks blind fed as the video has them, for the health check to find), then ``finish()``.
Scored against the scenario's truth with the offline evaluators' own code: alerts
(``evaluate_rules``: per kind recall, precision, latency from the irregularity's start, and
here medians; false alerts per clean round and in all); dice, first box and delivery order
(as ``evaluate_perception``); hand membership (each played hand's tiles exposed as its box's);
the stakes as "no more bets" is inferred (each box's stacks then against the plan's one stack per
wager); tile IDF1, MOTA, HOTA outside the wash (``evaluate_tracking``);
AP50 and AP50-95 per class (``vision.metrics``, as ``evaluate_models``) on 1 frame in
``--map-every`` against objects at least 30% visible, of the boxes the pipeline produced (gated:
some carried forward; above the operating confidence: what the monitor sees, not the model's
best); speed (frames/s of decode + pipeline, video seconds per wall second).

``--golden FILE --check``: floors (``min``) and ceilings (``max``) keyed by dotted paths into the
summary (``per_kind.dice_not_flat.recall``), give or take ``tolerance``; exit 1 when one is not
met. Bad input is one line on stderr and exit 2. The code: :mod:`pipeline.evaluation.e2e` and
:mod:`pipeline.evaluation.e2e_score`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pipeline.evaluation.e2e import (
    MAP_EVERY,
    InputError,
    RunConfig,
    check_clip,
    evaluate_all,
    suite_clips,
)
from pipeline.evaluation.e2e_score import print_report, shortfalls


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("clips", nargs="*", type=Path, help="scenario folders (clip.mp4, truth)")
    p.add_argument("--suite", type=Path, help="a folder of `paigow synth suite` (suite.json)")
    p.add_argument("--out", type=Path, help="write the summary and per-clip figures here")
    p.add_argument("--limit-frames", type=int, help="only the first N frames of each clip")
    p.add_argument("--stride", type=int, default=1, help="process 1 frame in N (default 1)")
    p.add_argument(
        "--still-stride",
        type=int,
        default=1,
        help="and 1 in N while the picture stays still, as `paigow review` (default 1: off)",
    )
    p.add_argument("--map-every", type=int, default=MAP_EVERY, help="AP on 1 frame in N")
    p.add_argument("--golden", type=Path, help="floors and ceilings for the summary (JSON)")
    p.add_argument("--check", action="store_true", help="exit 1 when --golden is not met")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument(
        "--no-felt", action="store_true", help="no felt balance (vision.felt): the network alone"
    )
    p.add_argument(
        "--pixel-layout",
        choices=("estimated", "unscaled"),
        help="each round's layout as image-pixel polygons without reference points or tile "
        "length, as a casino might write it: the tile's length estimated from the boxes, or "
        "none (the picture at its own scale)",
    )
    p.add_argument(
        "--vision-cache",
        type=Path,
        help="record the models' detections here, or replay them when recorded already "
        "(same clip, models and settings): only the tracker, the round and the rules run again",
    )
    return p.parse_args(argv)


def _inputs(args: argparse.Namespace) -> tuple[list[Path], dict | None]:
    """Clip folders and golden figures, checked before any clip runs."""
    if args.check and args.golden is None:
        raise InputError("--check needs --golden")
    for name in ("limit_frames", "stride", "still_stride", "map_every"):
        if (value := getattr(args, name)) is not None and value < 1:
            raise InputError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    clips = list(args.clips) + (suite_clips(args.suite) if args.suite else [])
    if not clips:
        raise InputError("give clip folders or --suite DIR")
    golden = None
    if args.golden:
        try:
            golden = json.loads(args.golden.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise InputError(f"{args.golden}: {err}") from None
    return [check_clip(c) for c in clips], golden


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        clips, golden = _inputs(args)
        config = RunConfig(
            args.limit_frames,
            args.stride,
            args.still_stride,
            args.map_every,
            not args.quiet,
            not args.no_felt,
            args.vision_cache,
            args.pixel_layout,
        )
        summary, figures = evaluate_all(clips, config)
    except InputError as err:
        print(f"evaluate: {err}", file=sys.stderr)
        return 2
    print_report(summary, figures)
    if args.out:
        report = json.dumps({"summary": summary, "clips": figures}, indent=1)
        args.out.write_text(report + "\n", encoding="utf-8")
    missed = shortfalls(summary, golden) if golden else []
    for line in missed:
        print(f"short of {args.golden}: {line}")
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
