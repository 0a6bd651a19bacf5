"""How often a wager stack's value is read exactly, per look family, on rendered frames.

    python scripts/evaluate_chips.py                                  # every family, 8 frames
    python scripts/evaluate_chips.py --families arc_green teal_dim --frames 4 --out chips.json
    python scripts/evaluate_chips.py --designs classic spots inlay plain --calibrated
    python scripts/evaluate_chips.py --frames 0 --distractors 4      # plaques and lammers only

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

``--designs`` draws the chips in each named design (:data:`vision.synth.scene.CHIP_STYLES`; a
row per family and design) in place of the family's own; ``--calibrated`` reads each design
against a chip set calibrated from one rendered frame of it (:func:`vision.chip_calibration.
calibrate` on a stack of each denomination, named as in the chip set) instead of the fixed set.

The markdown table printed has a row per family (and design): stacks, exact value (runs,
camera), wrong value (a value given that is not the truth: the harmful case), top chip read,
the median image px one chip's edge spans, and ms per read.

``--distractors N`` adds a second table: per family, ``N`` still scenes with 1-2 plaques and 2-3
lammers (cash-like objects that are not chips, which the detector never saw), the **shipped
detector** run on each frame, and how many of the distractors at least 0.5 visible it calls a
chip (a chip box of IoU >= 0.5 with the distractor's truth box). Bad input: one line on stderr,
exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from vision.chip_calibration import calibrate
from vision.chips import ChipSet, ChipSetError, load_chip_set, read_stack
from vision.synth.config import ChipRanges, ConfigError, family_names, randomisation
from vision.synth.render import Renderer
from vision.synth.round_plan import DENOMS, PlanConfig
from vision.synth.scene import CHIP_STYLES, ChipStack, Scene
from vision.synth.stills import scene_seed
from vision.synth.stills_content import random_scene

ROOT = Path(__file__).resolve().parents[1]
CHIP_SET = ROOT / "datasets" / "chipsets" / "rendered.yaml"
WAGER_DENOMS = 4  # a rendered round's wagers use the first four denominations
HEIGHT_PROBE_MM = 10.0
PLAQUES, LAMMERS = (1.0, 2.0), (2.0, 3.0)  # per distractor scene
DISTRACTOR_VISIBILITY = 0.5
DISTRACTOR_HEAD = (
    "| family | plaques | called chip | lammers | called chip | chips in those frames | "
    "chips found |"
)
HEAD = (
    "| family | design | stacks | exact value (band runs) | exact value (camera scale) | "
    "wrong value (runs) | top chip | px per chip (median) | ms per read |"
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


def with_design(dr, design: str | None, plaques=(0.0, 0.0), lammers=(0.0, 0.0)):
    """``dr`` with its chips drawn in ``design`` (None: its own) and these distractors."""
    styles = dr.chips.styles if design is None else (design,)
    return replace(dr, chips=ChipRanges(styles, plaques, lammers))


def calibrated_set(design: str, chips: ChipSet) -> ChipSet:
    """``chips`` calibrated from one default-camera frame of ``design``: a stack of each
    denomination, its truth box, named and valued as in ``chips``."""
    names = chips.names()
    stacks = tuple(
        ChipStack(k, (-300.0 + 120.0 * k, 60.0), (name,) * 3) for k, name in enumerate(names)
    )
    result = Renderer().render(Scene(chips=stacks, chip_style=design))
    boxes = np.array([o.xyxy for o in sorted(result.objects, key=lambda o: o.obj_id)])
    values = [(d.name, d.value) for d in chips.denominations]
    return calibrate(result.image, boxes, values).chip_set


def score_family(
    family: str, frames: int, chips: ChipSet, min_visibility: float, design: str | None = None
) -> dict:
    """Counts for one family over ``frames`` rendered scenes."""
    dr, renderer = with_design(randomisation(family), design), Renderer()
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
        "design": design or "/".join(dr.chips.styles),
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
        s["design"],
        s["stacks"],
        s["exact_value"],
        s["exact_value_camera"],
        s["wrong_value"],
        s["top_chip"],
        s["px_per_chip_median"],
        s["ms_per_read"],
    ]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _iou(a, b) -> float:
    lo, hi = np.maximum(a[:2], b[:2]), np.minimum(a[2:], b[2:])
    inter = float(np.prod(np.clip(hi - lo, 0, None)))
    union = float(np.prod(a[2:] - a[:2]) + np.prod(b[2:] - b[:2])) - inter
    return inter / max(union, 1e-9)


def score_distractors(family: str, frames: int, detector) -> dict:
    """How often the shipped detector calls a plaque or a lammer a chip, in one family."""
    from vision.types import CHIP, Frame

    dr = with_design(randomisation(family), None, PLAQUES, LAMMERS)
    renderer = Renderer()
    counts = {"plaque": [0, 0], "lammer": [0, 0], "chip": [0, 0]}
    for index in range(frames):
        rng = np.random.default_rng(scene_seed("test", 1, index))
        result = renderer.render(random_scene(rng, dr))
        det = detector(Frame(family, index, 0.0, result.image))
        boxes = det.xyxy[det.class_id == CHIP].astype(np.float64)
        for obj in result.objects:
            if obj.kind not in counts or obj.visibility < DISTRACTOR_VISIBILITY:
                continue
            truth = np.array(obj.xyxy)
            counts[obj.kind][0] += 1
            counts[obj.kind][1] += any(_iou(truth, b) >= 0.5 for b in boxes)
    return (
        {"family": family}
        | {f"{k}s": n for k, (n, _) in counts.items()}
        | {f"{k}s_called_chip": hit for k, (_, hit) in counts.items()}
    )


def distractor_row(s: dict) -> str:
    cells = [s["family"], s["plaques"], s["plaques_called_chip"], s["lammers"]]
    cells += [s["lammers_called_chip"], s["chips"], s["chips_called_chip"]]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--families", nargs="+", help="look families or YAML files (default: all)")
    p.add_argument("--frames", type=int, default=8, help="rendered scenes per family")
    p.add_argument("--chip-set", type=Path, default=CHIP_SET)
    p.add_argument("--min-visibility", type=float, default=0.95)
    p.add_argument("--designs", nargs="+", help=f"chip designs ({', '.join(CHIP_STYLES)})")
    p.add_argument("--calibrated", action="store_true", help="a chip set calibrated per design")
    p.add_argument("--distractors", type=int, default=0, help="scenes per family with plaques")
    p.add_argument("--out", type=Path, help="write the summaries as JSON here")
    args = p.parse_args(argv)
    try:
        if args.frames < 0 or args.distractors < 0:
            raise ValueError("--frames and --distractors must be at least 0")
        for design in args.designs or ():
            if design not in CHIP_STYLES:
                raise ValueError(f"unknown design {design!r} (known: {', '.join(CHIP_STYLES)})")
        chips = load_chip_set(args.chip_set)
        names = args.families or list(family_names())
        for name in names:
            randomisation(name)
    except (ValueError, ChipSetError, ConfigError) as e:
        print(f"evaluate_chips: {e}", file=sys.stderr)
        return 2
    summaries: dict[str, list] = {"stacks": [], "distractors": []}
    if args.frames:
        print(HEAD)
        print("|" + " --- |" * (HEAD.count("|") - 1))
        for design in args.designs or [None]:
            chip_set = calibrated_set(design or "classic", chips) if args.calibrated else chips
            for name in names:
                summary = score_family(name, args.frames, chip_set, args.min_visibility, design)
                summaries["stacks"].append(summary)
                print(row(summary), flush=True)
    if args.distractors:
        from vision.detector import Detector, DetectorConfig

        detector = Detector(DetectorConfig())
        print("\n" + DISTRACTOR_HEAD)
        print("|" + " --- |" * (DISTRACTOR_HEAD.count("|") - 1))
        for name in names:
            summaries["distractors"].append(score_distractors(name, args.distractors, detector))
            print(distractor_row(summaries["distractors"][-1]), flush=True)
    if args.out:
        args.out.write_text(json.dumps(summaries, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
