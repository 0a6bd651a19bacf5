"""A contact sheet of a rendered scenario clip: one frame at each ground-truth moment.

``python -m vision.synth.scenario_sheet CLIP_DIR --out docs/scenario.png`` reads ``clip.mp4`` and
``scenario.json`` and shows the wash, woodpile, dice, delivery, each injected irregularity and
the exposure, each frame labelled with its time and what the ground truth says happens there.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import av
import cv2
import numpy as np

TILE_WH = (640, 360)
COLUMNS = 3
MOMENTS = (
    "wash_started",
    "woodpile_built",
    "dice_read",
    "group_delivered",
    "hand_set",
    "hand_exposed",
)


def _moments(summary: dict) -> list[tuple[int, str]]:
    picks: dict[int, str] = {}
    for kind in MOMENTS:
        events = [e for e in summary["events"] if e["type"] == kind]
        if events:
            e = events[len(events) // 2]
            picks[e["frame"]] = kind + (f" box {e['box']}" if "box" in e else "")
    for irr in summary["irregularities"]:
        picks[(irr["start_frame"] + irr["end_frame"]) // 2] = f"INJECTED {irr['kind']}"
    return sorted(picks.items())[: COLUMNS * 3]


def _frames(clip: Path, wanted: set[int]) -> dict[int, np.ndarray]:
    out = {}
    with av.open(str(clip)) as container:
        for i, frame in enumerate(container.decode(video=0)):
            if i in wanted:
                out[i] = frame.to_ndarray(format="bgr24")
            if len(out) == len(wanted):
                break
    return out


def scenario_sheet(clip_dir: Path) -> np.ndarray:
    summary = json.loads((clip_dir / "scenario.json").read_text(encoding="utf-8"))
    moments = _moments(summary)
    frames = _frames(clip_dir / "clip.mp4", {f for f, _ in moments})
    tiles = []
    for f, text in moments:
        img = cv2.resize(frames[f], TILE_WH, interpolation=cv2.INTER_AREA)
        label = f"{f / summary['fps']:.1f} s  {text}"
        cv2.rectangle(img, (0, 0), (12 + 9 * len(label), 26), (0, 0, 0), -1)
        cv2.putText(
            img, label, (6, 19), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (255, 255, 255), 1, cv2.LINE_AA
        )
        tiles.append(img)
    while len(tiles) % COLUMNS:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i : i + COLUMNS]) for i in range(0, len(tiles), COLUMNS)]
    return np.vstack(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Contact sheet of a scenario clip.")
    parser.add_argument("clip_dir", type=Path)
    parser.add_argument("--out", type=Path, default=Path("docs/scenario.png"))
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(args.out), scenario_sheet(args.clip_dir))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
