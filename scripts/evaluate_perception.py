"""Perception mode on rendered scenario clips: video -> detector -> face reader -> tracker ->
round reconstructor, scored against the scenario's ground truth.

    python scripts/evaluate_perception.py .cache/suite/clean/clean_* --out perception.json

Per clip: the dice (as a multiset) and the first box of the last flat throw, the full delivery
order (the boxes of DeliveryDone in order and each box's tile count, against the plan's
groups), and tile tracking outside the wash (IDF1, MOTA from py-motmetrics; HOTA from
TrackEval when installed), with ground truth the tiles at least 30% visible (a tile beneath
another in a woodpile stack is not visible and not scored). Detections are cached per clip
under ``--cache`` (npz), so the tracker and the reconstructor can be re-run in seconds. The
code: :mod:`pipeline.evaluation.perception`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from pipeline.evaluation.perception import score_clip, summary_of


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("clips", nargs="+", type=Path, help="scenario folders (clip.mp4, truth)")
    p.add_argument("--cache", type=Path, default=Path(".cache/detections"))
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    started = time.perf_counter()
    clips = [score_clip(c, args.cache) for c in args.clips]
    summary = summary_of(clips, time.perf_counter() - started)
    for c in clips:
        print(
            f"{c['clip']}: dice {c['dice_seen']} (truth {c['dice_true']}) "
            f"first box {'ok' if c['first_box_ok'] else 'WRONG'}, delivery "
            f"{'ok' if c['delivery_ok'] else 'WRONG ' + str(c['delivery_seen'])}, "
            f"IDF1 {c['tracking']['idf1']:.3f} "
            f"(stack order free {c['tracking_stack_order_free']['idf1']:.3f}, outside the "
            f"woodpile's building {c['tracking_outside_woodpile_building']['idf1']:.3f})"
        )
    print(json.dumps(summary))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "clips": clips}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
