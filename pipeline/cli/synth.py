"""``paigow synth``: still datasets, scenario clips and the standard scenario suite.

The renderer (``vision.synth``) is imported only when one of these commands runs, so the
monitor's runtime never loads it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

SUITE_CLEAN_ROUNDS = 10
SUITE_ROUNDS_PER_KIND = 3
SUITE_CLEAN_SEED = 10_000
SUITE_INJECTED_SEED = 20_000
SPLITS = ("train", "val", "test", "shifted")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("synth", help="render synthetic stills, scenario clips and the suite")
    synth = p.add_subparsers(dest="synth_command", required=True, parser_class=type(p))

    s = synth.add_parser("stills", help="YOLO detection stills and face-reader crops")
    s.add_argument("--n", type=int, required=True, help="number of images")
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--split", choices=SPLITS, default="train")
    s.add_argument("--seed", type=int, default=0, help="first seed within the split's range")
    s.set_defaults(func=cmd_stills)

    s = synth.add_parser("scenario", help="one scripted round as mp4 with ground truth")
    s.add_argument(
        "--inject",
        action="append",
        default=[],
        metavar="KIND",
        help="an irregularity to inject (repeatable); none for a clean round",
    )
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--out", type=Path, required=True)
    _clip_options(s)
    s.set_defaults(func=cmd_scenario)

    s = synth.add_parser(
        "suite",
        help=f"the standard suite: {SUITE_CLEAN_ROUNDS} clean rounds "
        f"and {SUITE_ROUNDS_PER_KIND} per injectable kind",
    )
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--kinds", nargs="*", metavar="KIND", help="only these kinds (default: all)")
    s.add_argument("--clean", type=int, default=SUITE_CLEAN_ROUNDS, help="clean rounds")
    s.add_argument("--per-kind", type=int, default=SUITE_ROUNDS_PER_KIND)
    _clip_options(s)
    s.set_defaults(func=cmd_suite)


def _clip_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--scale", type=float, default=1.0, help="frame size relative to the camera's (default 1.0)"
    )
    p.add_argument(
        "--randomisation",
        default="training",
        help="domain-randomisation set: training, shifted, a look family "
        "(datasets/recipes/looks) or a YAML file",
    )


def _clip_config(args: argparse.Namespace):
    from vision.synth.clip import ClipConfig

    if not 0.1 <= args.scale <= 1.0:
        raise ValueError(f"--scale must be in [0.1, 1.0], got {args.scale}")
    return ClipConfig(randomisation=args.randomisation, scale=args.scale)


def _injections(kinds: list[str]) -> tuple[str, ...]:
    from vision.synth.round_plan import INJECTABLE

    chosen = tuple(k for k in kinds if k != "none")
    for k in chosen:
        if k not in INJECTABLE:
            raise ValueError(f"cannot inject {k!r}; choose from none, {', '.join(INJECTABLE)}")
    return chosen


def _note_opencv() -> None:
    from vision.synth.render import opencv_note

    if note := opencv_note():
        print(note, file=sys.stderr)


def cmd_stills(args: argparse.Namespace) -> int:
    from vision.synth.stills import make_stills

    if args.n < 1:
        raise ValueError(f"--n must be at least 1, got {args.n}")
    _note_opencv()
    start = time.perf_counter()
    make_stills(args.n, args.out, args.split, args.seed)
    seconds = time.perf_counter() - start
    print(
        f"wrote {args.n} {args.split} stills to {args.out} in {seconds:.1f} s "
        f"({args.n / seconds:.2f} images/s)"
    )
    return 0


def cmd_scenario(args: argparse.Namespace) -> int:
    from vision.synth.clip import render_scenario

    injections, cfg = _injections(args.inject), _clip_config(args)
    _note_opencv()
    start = time.perf_counter()
    summary = render_scenario(args.seed, injections, args.out, cfg)
    seconds = time.perf_counter() - start
    n = summary["n_frames"]
    print(
        f"wrote {args.out / 'clip.mp4'}: {n} frames ({n / summary['fps']:.1f} s of video) "
        f"in {seconds:.1f} s, {n / seconds:.1f} frames/s rendered and encoded"
    )
    for irr in summary["irregularities"]:
        print(
            f"  injected {irr['kind']} box={irr['box']} {irr['start_s']:.2f}-{irr['end_s']:.2f} s"
        )
    return 0


def suite_entries(clean: int, per_kind: int, kinds: list[str] | None) -> list[tuple[int, tuple]]:
    """(seed, injections) of the standard suite; seeds never overlap the stills' ranges."""
    from vision.synth.round_plan import INJECTABLE

    entries: list[tuple[int, tuple]] = [(SUITE_CLEAN_SEED + i, ()) for i in range(clean)]
    for k_index, kind in enumerate(kinds or INJECTABLE):
        entries += [(SUITE_INJECTED_SEED + 100 * k_index + i, (kind,)) for i in range(per_kind)]
    return entries


def cmd_suite(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from vision.synth.clip import render_scenario

    kinds = list(_injections(args.kinds)) if args.kinds else None
    cfg = _clip_config(args)
    entries = suite_entries(args.clean, args.per_kind, kinds)
    _note_opencv()
    index, start = [], time.perf_counter()
    reused, before = 0, _suite_index(args.out)
    for seed, injections in tqdm(entries, desc="suite", unit="round"):
        name = f"{'+'.join(injections) or 'clean'}_{seed}"
        same_look = before.get(name, {}).get("randomisation") == cfg.randomisation
        summary = _rendered(args.out / name, seed, injections, cfg) if same_look else None
        if summary is None:
            summary = render_scenario(seed, injections, args.out / name, cfg, progress=False)
        else:
            reused += 1
        index.append(
            {
                "name": name,
                "seed": seed,
                "injections": list(injections),
                "n_frames": summary["n_frames"],
                "randomisation": cfg.randomisation,
            }
        )
        args.out.mkdir(parents=True, exist_ok=True)  # after each round: an interrupted suite
        (args.out / "suite.json").write_text(json.dumps(index, indent=1), encoding="utf-8")
    seconds = time.perf_counter() - start
    print(
        f"wrote {len(entries)} rounds to {args.out} in {seconds:.0f} s "
        f"({reused} already rendered and kept)"
    )
    return 0


def _suite_index(out: Path) -> dict[str, dict]:
    """Entries of a suite already written to ``out``, by round name (empty when none)."""
    try:
        return {e["name"]: e for e in json.loads((out / "suite.json").read_text("utf-8"))}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _rendered(folder: Path, seed: int, injections: tuple, cfg) -> dict | None:
    """The scenario summary of a round already rendered in ``folder`` with the same seed,
    injections, frame size and randomisation (an interrupted suite resumes where it stopped:
    ``scenario.json`` is written last), else None."""
    try:
        done = json.loads((folder / "scenario.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    same = (
        done.get("seed") == seed
        and tuple(done.get("injections", ())) == tuple(injections)
        and done.get("randomisation", "training") == cfg.randomisation
        and done.get("scale", 1.0) == cfg.scale
        and (folder / "clip.mp4").exists()
    )
    return done if same else None
