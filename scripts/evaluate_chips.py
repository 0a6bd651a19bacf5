"""How often a wager stack's value is read exactly, per look family, on rendered frames.

    python scripts/evaluate_chips.py                                  # every family, 8 frames
    python scripts/evaluate_chips.py --families arc_green teal_dim --frames 4 --out chips.json

For each family, ``--frames`` still scenes are drawn (:func:`vision.synth.stills_content.
random_scene`, seeds from the test split) and every chip stack's chips are replaced by a wager
drawn the way a rendered round draws one (:class:`vision.synth.round_plan.PlanConfig`
``chips_per_stack``, the first four denominations, each chip chosen independently), so the
stacks are what a box holds at "no more bets". Each stack at least ``--min-visibility`` visible
is read by :func:`vision.chips.read_stack` inside its **truth box** (the reader alone, not the
detector) against ``datasets/chipsets/rendered.yaml``, twice: by the edge band's colour runs
(what the live pipeline does) and with the camera's true height scale at the stack
(``height_px_per_mm``, an upper bound for a calibrated camera). Truth: the scene's
denominations and the chip set's values.

The markdown table printed has a row per family: stacks, exact value (runs, camera), wrong
value (a value given that is not the truth: the harmful case), top chip read, the median
image px one chip's edge spans, and ms per read. Bad input: one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from vision.chips import ChipSet, ChipSetError, load_chip_set, read_stack
from vision.synth.config import ConfigError, family_names, randomisation
from vision.synth.render import Renderer
from vision.synth.round_plan import DENOMS, PlanConfig
from vision.synth.scene import ChipStack, Scene
from vision.synth.stills import scene_seed
from vision.synth.stills_content import random_scene

ROOT = Path(__file__).resolve().parents[1]
CHIP_SET = ROOT / "datasets" / "chipsets" / "rendered.yaml"
WAGER_DENOMS = 4  # a rendered round's wagers use the first four denominations
HEIGHT_PROBE_MM = 10.0
HEAD = (
    "| family | stacks | exact value (band runs) | exact value (camera scale) | wrong value "
    "(runs) | top chip | px per chip (median) | ms per read |"
)


def wager_scene(scene: Scene, rng: np.random.Generator) -> Scene:
    """``scene`` with each stack's chips replaced by a wager as a rendered round draws one."""
    low, high = PlanConfig().chips_per_stack
    stacks = tuple(
        replace(s, denominations=tuple(DENOMS[int(i)] for i in rng.integers(0, WAGER_DENOMS, n)))
        for s, n in zip(scene.chips, rng.integers(low, high, len(scene.chips)), strict=True)
    )
    return replace(scene, chips=stacks)


def _height_px_per_mm(camera, xy_mm) -> float:
    """Image px one mm of height moves the point above ``xy_mm`` (from the true camera)."""
    base = np.array([xy_mm], dtype=np.float64)
    lifted = camera.table_to_image(camera.lift(base, HEIGHT_PROBE_MM))
    return float(np.linalg.norm(lifted - camera.table_to_image(base)) / HEIGHT_PROBE_MM)


def score_family(family: str, frames: int, chips: ChipSet, min_visibility: float) -> dict:
    """Counts for one family over ``frames`` rendered scenes."""
    dr, renderer = randomisation(family), Renderer()
    n = exact = exact_camera = wrong = top = 0
    chip_px, read_s = [], 0.0
    for index in range(frames):
        rng = np.random.default_rng(scene_seed("test", 0, index))
        scene = wager_scene(random_scene(rng, dr), rng)
        result = renderer.render(scene)
        stacks: dict[int, ChipStack] = {s.obj_id: s for s in scene.chips}
        for obj in result.objects:
            if obj.kind != "chip" or obj.visibility < min_visibility:
                continue
            stack = stacks[obj.obj_id]
            truth = sum(chips.value_of(d) for d in stack.denominations)
            scale = _height_px_per_mm(result.camera, stack.xy_mm)
            start = time.perf_counter()
            by_runs = read_stack(result.image, obj.xyxy, chips)
            read_s += time.perf_counter() - start
            by_camera = read_stack(result.image, obj.xyxy, chips, height_px_per_mm=scale)
            n += 1
            exact += by_runs.value == truth
            exact_camera += by_camera.value == truth
            wrong += by_runs.value is not None and by_runs.value != truth
            top += by_runs.denominations[-1:] == stack.denominations[-1:]
            chip_px.append(scale * 3.3)
    return {
        "family": family,
        "stacks": n,
        "exact_value": round(exact / max(n, 1), 3),
        "exact_value_camera": round(exact_camera / max(n, 1), 3),
        "wrong_value": round(wrong / max(n, 1), 3),
        "top_chip": round(top / max(n, 1), 3),
        "px_per_chip_median": round(float(np.median(chip_px)), 2) if chip_px else None,
        "ms_per_read": round(read_s / max(n, 1) * 1000, 1),
    }


def row(s: dict) -> str:
    cells = [
        s["family"],
        s["stacks"],
        s["exact_value"],
        s["exact_value_camera"],
        s["wrong_value"],
        s["top_chip"],
        s["px_per_chip_median"],
        s["ms_per_read"],
    ]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--families", nargs="+", help="look families or YAML files (default: all)")
    p.add_argument("--frames", type=int, default=8, help="rendered scenes per family")
    p.add_argument("--chip-set", type=Path, default=CHIP_SET)
    p.add_argument("--min-visibility", type=float, default=0.95)
    p.add_argument("--out", type=Path, help="write the summaries as JSON here")
    args = p.parse_args(argv)
    try:
        if args.frames < 1:
            raise ValueError("--frames must be at least 1")
        chips = load_chip_set(args.chip_set)
        names = args.families or list(family_names())
        for name in names:
            randomisation(name)
    except (ValueError, ChipSetError, ConfigError) as e:
        print(f"evaluate_chips: {e}", file=sys.stderr)
        return 2
    print(HEAD)
    print("|" + " --- |" * (HEAD.count("|") - 1))
    summaries = []
    for name in names:
        summaries.append(score_family(name, args.frames, chips, args.min_visibility))
        print(row(summaries[-1]), flush=True)
    if args.out:
        args.out.write_text(json.dumps(summaries, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
