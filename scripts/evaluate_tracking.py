"""MOT metrics of the tile tracker on rendered scenario rounds (IDF1, MOTA, HOTA).

    python scripts/evaluate_tracking.py --seeds 0 1 2 --scale 0.5 --fps 25 --out track.json
    python scripts/evaluate_tracking.py --seeds 3 --detector     # real detector + face reader

Input to the tracker: ground-truth boxes with noise (jitter, dropouts, confidence from
visibility, misread faces, clutter) by default, or the ONNX detector and face reader on the
decoded clip with ``--detector`` (needs ``models/manifest.json``).

What is scored: tiles only. Ground truth: tiles at least ``min_visibility`` visible. Hypotheses:
tile tracks matched on that frame (coasting tracks are hidden, not reported). Frames of the wash
(``wash_started`` .. ``wash_ended``) and blind frames are left out. IDF1 and MOTA from
py-motmetrics (IoU >= 0.5 to match); HOTA from TrackEval's reference implementation. The code:
:mod:`pipeline.evaluation.tracker_runs` and :mod:`pipeline.evaluation.tracking`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from pipeline.evaluation.tracker_runs import (
    NoiseConfig,
    load_models,
    track_detector,
    track_noisy_truth,
)
from pipeline.evaluation.tracking import evaluate


def ensure_clip(clips: Path, seed: int, scale: float, fps: int) -> Path:
    """The rendered clip for ``seed`` under ``clips`` (rendered once, then reused)."""
    folder = clips / f"seed{seed}_s{scale}_f{fps}"
    if not (folder / "scenario.json").exists():
        from vision.synth.clip import ClipConfig, render_scenario  # scripts may use the renderer
        from vision.synth.scenario import ScenarioTiming

        render_scenario(
            seed, (), folder, ClipConfig(scale=scale), ScenarioTiming(fps=fps), progress=False
        )
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--scale", type=float, default=0.5)
    parser.add_argument("--fps", type=int, default=25)
    parser.add_argument("--clips", type=Path, default=Path(".cache/tracking_clips"))
    parser.add_argument("--detector", action="store_true", help="use models/ instead of truth")
    parser.add_argument("--noise-seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="write the scores as JSON here")
    args = parser.parse_args(argv)
    if not 0.05 <= args.scale <= 1.0 or args.fps < 1:
        print("evaluate_tracking: --scale must be in [0.05, 1] and --fps >= 1", file=sys.stderr)
        return 2
    if args.detector and not Path("models/manifest.json").exists():
        print("evaluate_tracking: --detector needs models/manifest.json", file=sys.stderr)
        return 2
    noise, results = NoiseConfig(), {}
    try:
        models = load_models() if args.detector else None
        for seed in args.seeds:
            folder = ensure_clip(args.clips, seed, args.scale, args.fps)
            segments = (
                track_detector(folder, noise.min_visibility, models)
                if models
                else track_noisy_truth(folder, noise, args.noise_seed)
            )
            results[str(seed)] = evaluate(segments)
            print(f"seed {seed}: {results[str(seed)]}")
    except (OSError, ValueError, KeyError) as err:  # LayoutError, ModelError: ValueErrors
        print(f"evaluate_tracking: {err}", file=sys.stderr)
        return 2
    report = {
        "mode": "detector" if args.detector else "noisy_truth",
        "scale": args.scale,
        "fps": args.fps,
        "noise": None if args.detector else asdict(noise),
        "seeds": results,
        "metrics_from": {"idf1_mota": "motmetrics", "hota": "trackeval"},
    }
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
