"""How much a chip stack's place changes when the stack is put down or taken away, against how
much it changes when nothing moved: the figures behind ``vision.places.PlaceConfig.min_change``.

    python scripts/evaluate_places.py ROUND_FOLDER... [--gap 25]

Each folder is a rendered round (``clip.mp4``, ``scenario.json``, ``truth.jsonl.gz``). For every
chip stack of the truth lying in a box: its place (its true box) in the boxes' sketches
(``vision.places``) of a frame before it was put down against one after ("moved"), and of two
frames ``--gap`` apart while it lay there ("stayed"), and the same for stacks taken away;
only frames where no hand, tile or other chip overlaps the place. Prints the differences'
spread per kind of sample. Use rounds of the training families only to set the threshold.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import av
import numpy as np

from pipeline.layout import layout_from_scenario
from vision.places import PlaceConfig, PlaceMemory, place_difference


def _overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _free(objects: list[dict], spot, own: int) -> bool:
    """No hand, tile or other chip over ``spot`` in a frame's truth."""
    return not any(o["id"] != own and _overlaps(o["xyxy"], spot) for o in objects)


def samples(folder: Path, gap: int) -> dict[str, list[float]]:
    scenario = json.loads((folder / "scenario.json").read_text())
    layout = layout_from_scenario(scenario)
    boxes = {int(k[4:]): np.asarray(v) for k, v in layout.zones_px.items() if k.startswith("box_")}
    memory = PlaceMemory(boxes, PlaceConfig())
    with gzip.open(folder / "truth.jsonl.gz", "rt") as lines:
        frames = [json.loads(line) for line in lines]
    sketches = []
    with av.open(str(folder / "clip.mp4")) as container:
        for picture in container.decode(container.streams.video[0]):
            sketches.append(memory.sketch(picture.to_ndarray(format="bgr24")))
    chips: dict[int, dict[int, tuple]] = {}  # chip id -> frame -> (box, xyxy)
    for row in frames:
        for o in row["objects"]:
            if o["class"] == "chip" and str(o.get("zone", "")).startswith("box_"):
                chips.setdefault(o["id"], {})[row["frame"]] = (int(o["zone"][4:]), o["xyxy"])
    out: dict[str, list[float]] = {"put down": [], "taken away": [], "stayed": []}

    def diff(box, spot, a, b):
        if a >= len(sketches) or b >= len(sketches) or box not in sketches[a]:
            return None
        (x0, y0, then), (_, _, now) = sketches[a][box], sketches[b][box]
        return place_difference(then, now, (x0, y0), spot, PlaceConfig().cell_px)

    for cid, seen in chips.items():
        first, last = min(seen), max(seen)
        box, spot = seen[first]
        clear = [  # the stack where it was put down, nothing else over it
            f
            for f in sorted(seen)
            if max(abs(a - b) for a, b in zip(seen[f][1], spot, strict=True)) <= 2
            and _free(frames[f]["objects"], spot, cid)
        ]
        before = [f for f in range(first) if _free(frames[f]["objects"], spot, cid)]
        after = [  # the stack gone: nothing over its place
            f
            for f in range(last + 1, len(frames))
            if not any(_overlaps(o["xyxy"], spot) for o in frames[f]["objects"])
        ]
        if before and clear and before[-1] > 0:
            out["put down"].append(diff(box, spot, before[-1], clear[0]))
        if after and clear:
            out["taken away"].append(diff(box, spot, clear[-1], after[0]))
        for a, b in zip(clear, clear[gap:], strict=False):
            if b - a == gap:
                out["stayed"].append(diff(box, spot, a, b))
    return {k: [v for v in vals if v is not None] for k, vals in out.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folders", type=Path, nargs="+")
    p.add_argument("--gap", type=int, default=25, help="frames between two 'stayed' pictures")
    args = p.parse_args(argv)
    for folder in args.folders:
        if not all((folder / n).is_file() for n in ("clip.mp4", "scenario.json", "truth.jsonl.gz")):
            print(f"evaluate_places: {folder}: not a rendered round", file=sys.stderr)
            return 2
    total: dict[str, list[float]] = {}
    for folder in args.folders:
        found = samples(folder, args.gap)
        for kind, vals in found.items():
            total.setdefault(kind, []).extend(vals)
        stayed = np.array(found["stayed"] or [0.0])
        moved = np.array(found["put down"] + found["taken away"] or [np.nan])
        print(
            f"{folder.name}: moved {len(found['put down']) + len(found['taken away'])}, least "
            f"{np.nanmin(moved):.1f} | stayed {len(found['stayed'])}, most {stayed.max():.1f}, "
            f"99th percentile {np.percentile(stayed, 99):.1f}",
            flush=True,
        )
    for kind, vals in total.items():
        if vals:
            q = np.percentile(vals, [0, 1, 5, 50, 95, 99, 99.9, 100]).round(1).tolist()
            over = sum(v >= PlaceConfig().min_change for v in vals)
            print(
                f"{kind}: {len(vals)} samples, percentiles 0/1/5/50/95/99/99.9/100: {q}; "
                f"{over} at min_change ({PlaceConfig().min_change}) or more"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
