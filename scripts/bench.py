"""Throughput of the table pipeline against the decode floor and ultralytics, in one run.

    python scripts/bench.py                          # the whole demo clip, the default modes
    python scripts/bench.py --frames 200             # a quick subset
    python scripts/bench.py --modes live review:2 compare+noise --repeats 3

Each mode runs in its own subprocess, one after the other (round-robin over ``--repeats``, the
figures are medians over the repeats), so its peak memory (``ru_maxrss`` from ``os.wait4``) is
its own. A mode is ``NAME[:STRIDE][+OPTION...]``:

- ``decode``: PyAV decode and conversion to BGR only, the floor;
- ``live``: decode + :class:`pipeline.runner.TablePipeline` with the motion-gated detector
  (:mod:`vision.gating`) and the face cache (:mod:`vision.faces_cache`), every frame;
- ``review:K``: the same pipeline on every K-th frame (the others decoded, not converted);
  ``review:K+stillN``: adaptive, as ``paigow review --stride K --still-stride N`` chooses
  frames (:class:`pipeline.review.StillSkip`: one in N while the picture stays still);
- ``ungated``: the pipeline as it was (full-frame detection, every face read each frame);
- ``ultralytics``: the same weights through ultralytics' ``model.track(tracker=bytetrack.yaml)``
  at imgsz 960 on CPU, its own decode included (detection and tracking only: no faces, no game);
- ``compare``: the ungated and the gated pipeline on the same decoded frames, interleaved frame
  by frame (so timed side by side under the same load): stage times, agreement of boxes,
  tracks and faces, recall against the ground truth, key events; ``+noise`` adds a baseline,
  the ungated pipeline on frames moved by a fixed +-1 grey-level pattern, to show how much two
  equally good runs differ.

Options: ``threads`` (FFmpeg frame threads for decoding), ``nonref`` (frames no other frame
refers to are not decoded: with this clip's B-pyramid, every other frame), ``ahead`` (frames
read as ``paigow review`` reads them: a worker thread decodes ahead, only the stride's frames
are converted, pictures between that no other refers to not decoded; ``decodeall``: they are),
``stillN`` (review: skip still frames, one in N kept), ``spin`` (onnxruntime's threads
spin-wait between runs, its default; ours sleep), ``frontsonly`` (live, review: the face-down
check reads only the detector's face-down boxes, not its face-up ones: the reader before
2026-12-02, to price the check of tile backs), ``nopips`` (live, review: no pip check of tile
crops, the reader before 2026-12-03, to price it), ``nofinder`` (live, review: no dice finder,
the pipeline before 2026-12-05's session 26, to price it).

Printed: frames of video per second end to end (decode included), the ratio to real time, to
the decode floor and to ultralytics, median and p90 milliseconds per processed frame (pipeline
only), peak RSS, how many key events (dice, delivery, exposures, wagers, settlement; without
track ids) differ from the ungated pipeline's, and how many of the ground-truth run's are found.
An adaptive review is also compared with the plain review of its stride, when both ran: the
key events only one of them found, listed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from pipeline.evaluation.bench.compare import run_compare
from pipeline.evaluation.bench.events import oracle_events
from pipeline.evaluation.bench.report import report
from pipeline.evaluation.bench.runs import FPS_FALLBACK, run_decode, run_pipeline, summary

ROOT = Path(__file__).resolve().parents[1]
CLIP_DIR = ROOT / "datasets" / "samples" / "demo_round"
WEIGHTS = ROOT / ".cache" / "runs" / "detector_ft" / "weights" / "best.pt"


# --- children: one mode each, one JSON line on stdout ------------------------------------------


def install_lap_shim() -> None:
    """ultralytics' ByteTrack imports ``lap`` and pip-installs it when missing (no downloads
    here): give it ``lap.lapjv`` (extend_cost, cost_limit) on scipy's assignment instead."""
    import types

    from scipy.optimize import linear_sum_assignment

    def lapjv(cost, extend_cost=True, cost_limit=np.inf, return_cost=True):
        n, m = cost.shape
        big = np.full((n + m, n + m), 1e9)
        big[:n, :m] = cost
        big[n:, m:] = 0.0
        half = cost_limit / 2 if np.isfinite(cost_limit) else 1e8
        big[np.arange(n), m + np.arange(n)] = half  # a row left unmatched costs half the limit
        big[n + np.arange(m), np.arange(m)] = half  # so does a column
        rows, cols = linear_sum_assignment(big)
        x, y = np.full(n, -1), np.full(m, -1)
        for r, c in zip(rows, cols, strict=True):
            if r < n and c < m:
                x[r], y[c] = c, r
        total = float(sum(cost[r, x[r]] for r in range(n) if x[r] >= 0))
        return total, x, y

    sys.modules["lap"] = types.SimpleNamespace(__version__="shim", lapjv=lapjv)


def run_ultralytics(args) -> dict:
    os.environ["YOLO_OFFLINE"] = "1"
    install_lap_shim()
    import torch
    from ultralytics import YOLO

    torch.set_num_threads(2)
    model = YOLO(str(WEIGHTS))
    stream = model.track(
        source=str(args.clip / "clip.mp4"),
        imgsz=960,
        device="cpu",
        tracker="bytetrack.yaml",
        stream=True,
        save=False,
        verbose=False,
    )
    per_frame, n = [], 0
    start = time.perf_counter()
    t = start
    for _result in stream:
        now = time.perf_counter()
        per_frame.append(now - t)
        t, n = now, n + 1
        if args.frames is not None and n >= args.frames:
            break
    return summary(per_frame, n, time.perf_counter() - start)


def child(args) -> dict:
    """One mode: ``name[:stride][+option...]``, e.g. ``review:2+threads``."""
    name, *opts = args.child.split("+")
    mode, _, stride = name.partition(":")
    options = frozenset(opts)
    if "spin" in options:  # onnxruntime's threads spin-wait between runs, its default
        from vision.onnx import OnnxModel

        OnnxModel.spin_wait = True
    match mode:
        case "decode":
            return run_decode(args, options)
        case "live":
            return run_pipeline(args, gated=True, stride=1, options=options)
        case "review":
            return run_pipeline(args, gated=True, stride=int(stride or 1), options=options)
        case "ungated":
            return run_pipeline(args, gated=False, stride=1, options=options)
        case "ultralytics":
            return run_ultralytics(args)
        case "compare":
            return run_compare(args, noise_baseline="noise" in options)
    raise SystemExit(f"unknown mode {args.child!r}")


# --- parent: run the children, print the table ------------------------------------------------


MODES = ("decode", "live", "review", "ungated", "ultralytics", "compare")
DEFAULT_MODES = [
    "decode",
    "decode+nonref",
    "live",
    "review:2",
    "review:2+nonref",
    "review:4",
    "review:2+still8",
    "ultralytics",
    "compare",
]


def _mode(spec: str) -> str:
    name, *opts = spec.split("+")
    mode, _, stride = name.partition(":")
    if mode not in MODES or not (stride == "" or stride.isdigit()):
        raise argparse.ArgumentTypeError(f"not a mode: {spec!r}")
    still = [o for o in opts if o.startswith("still")]
    known = {"threads", "nonref", "noise", "ahead", "decodeall", "spin", "frontsonly", "nopips"}
    known |= {"nofinder"}
    known |= set(still)
    if set(opts) - known:
        raise argparse.ArgumentTypeError(f"unknown option in {spec!r}")
    if any(not o.removeprefix("still").isdigit() for o in still) or (still and mode != "review"):
        raise argparse.ArgumentTypeError(f"stillN is a review option with a number: {spec!r}")
    return spec


def spawn(mode: str, args) -> dict:
    """Run one mode in a subprocess; its JSON result plus its own peak RSS in MiB."""
    cmd = [sys.executable, __file__, "--child", mode, "--clip", str(args.clip)]
    cmd += ["--gating", args.gating]
    if args.frames is not None:
        cmd += ["--frames", str(args.frames)]
    env = os.environ | {"YOLO_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env, cwd=ROOT)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"bench: mode {mode} failed (exit {proc.returncode})")
    result = json.loads(out.decode().strip().splitlines()[-1])
    return result | {"rss_mib": usage.ru_maxrss / 1024}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--clip", type=Path, default=CLIP_DIR, help="folder with clip.mp4 (or the clip.mp4 itself)"
    )
    p.add_argument("--frames", type=int, default=None, help="first N frames (default: all)")
    p.add_argument(
        "--modes",
        nargs="+",
        default=DEFAULT_MODES,
        type=_mode,
        help="NAME[:STRIDE][+OPTION...]; names: "
        + ", ".join(MODES)
        + "; options: threads, nonref (decoding), noise (compare: add the noise baseline)",
    )
    p.add_argument("--repeats", type=int, default=1, help="round-robin repeats of each mode")
    p.add_argument(
        "--gating", default="{}", help="GatingConfig fields as JSON, e.g. '{\"context_px\": 96}'"
    )
    p.add_argument("--json", type=Path, help="also write every result here")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0
    if args.clip.name == "clip.mp4":  # the video itself given: its folder
        args.clip = args.clip.parent
    if not (args.clip / "clip.mp4").is_file():
        print(f"bench: {args.clip}: no clip.mp4 there (give a round's folder)", file=sys.stderr)
        return 2
    modes = args.modes
    results: dict[str, list[dict]] = defaultdict(list)
    for _ in range(args.repeats):
        for mode in modes:
            results[mode].append(spawn(mode, args))
            print(f"  ran {mode}: {results[mode][-1].get('fps', 0):.1f} fps", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=float))
    report(results, FPS_FALLBACK, oracle_events(args.clip, args.frames))
    return 0


if __name__ == "__main__":
    sys.exit(main())
