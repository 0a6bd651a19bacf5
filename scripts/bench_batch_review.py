"""Batch review on a local Ray instance with 1 and then 2 workers, side by side, in one run.

    python scripts/bench_batch_review.py .cache/suite/std9              # a suite's rounds
    python scripts/bench_batch_review.py DIR... --workers 1 2 4 --stride 2 --no-video

Each SUITE_DIR gives its recordings as ``paigow review SUITE_DIR`` finds them: the video files
in it, else those of its sub-folders (a suite from ``paigow synth suite``; the layout is the
``scenario.json`` beside each clip). For each worker count, every recording is reviewed afresh
(nothing skipped) into a temporary folder, as ``paigow review RECORDING... --workers N``
reviews them: a local Ray instance of N CPUs, one task per recording, each task's detector on
its share of the cores. The wall time includes starting the instance and each worker loading
the models.

Printed per count: recordings reviewed (and failed), seconds of video, wall seconds, the ratio
of the two (x real time), the speed-up against the first count, and the seconds the reviews
themselves took, summed over the tasks (against the wall time: how well the workers overlap).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from pipeline.cluster.batch import run_on_ray
from pipeline.review import BatchRun, Summary, plan_batch, recordings_of
from pipeline.settings import load_settings


def suite_recordings(folders: list[Path]) -> list[Path]:
    """The recordings of each folder, as ``paigow review FOLDER`` finds them."""
    for folder in folders:
        if not folder.is_dir():
            raise SystemExit(f"bench_batch_review: {folder}: not a folder")
    found = recordings_of(folders)
    if not found or any(path in folders for path in found):
        raise SystemExit("bench_batch_review: a folder holds no recordings")
    return found


def bench(recordings: list[Path], workers: int, settings: dict, out: Path) -> dict:
    """Review every recording into ``out`` with ``workers`` at once; the figures."""
    plan = plan_batch(recordings, out, settings, redo=True)
    start = time.perf_counter()
    with BatchRun(out, plan) as run:
        run_on_ray(plan.jobs, run, "auto", workers)
    wall_s = time.perf_counter() - start
    done = [e.summary for e in run.entries.values() if isinstance(e.summary, Summary)]
    return {
        "workers": workers,
        "done": len(done),
        "failed": run.failures,
        "video_s": sum(s.duration_s for s in done),
        "wall_s": wall_s,
        "task_s": sum(s.wall_s for s in done),
    }


def report(rows: list[dict]) -> None:
    first = rows[0]["video_s"] / rows[0]["wall_s"]
    print(
        f"\n{'workers':>7}{'done':>6}{'failed':>7}{'video s':>9}{'wall s':>8}{'x real':>8}"
        f"{'speed-up':>9}{'task s':>8}"
    )
    for r in rows:
        speed = r["video_s"] / r["wall_s"]
        print(
            f"{r['workers']:>7}{r['done']:>6}{r['failed']:>7}{r['video_s']:>9.1f}"
            f"{r['wall_s']:>8.1f}{speed:>8.2f}{speed / first:>9.2f}{r['task_s']:>8.1f}"
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("suites", type=Path, nargs="+", metavar="SUITE_DIR")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], metavar="N")
    p.add_argument("--stride", type=int, default=1, metavar="N", help="review.stride")
    p.add_argument("--no-video", action="store_true", help="skip annotated.mp4")
    p.add_argument("--keep", type=Path, metavar="DIR", help="keep the review folders here")
    args = p.parse_args(argv)
    recordings = suite_recordings(args.suites)
    review = {"stride": args.stride} | ({"video_width_px": None} if args.no_video else {})
    settings = load_settings(None, {"review": review}).model_dump(mode="json")
    print(
        f"{len(recordings)} recordings, workers {args.workers}, {os.cpu_count()} cores",
        file=sys.stderr,
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as scratch:
        base = args.keep or Path(scratch)
        for workers in args.workers:
            rows.append(bench(recordings, workers, settings, base / f"workers{workers}"))
    report(rows)
    return 1 if any(r["failed"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
