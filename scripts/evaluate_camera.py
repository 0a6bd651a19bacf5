"""The camera check alone (``pipeline.live.health.FrameHealth``) over rendered rounds: the
losses it finds against each round's true blind intervals, and any it raises where the camera
was fine.

    python scripts/evaluate_camera.py .cache/suite/looks/red_dealer_mpeg4 .cache/suite/std9
    python scripts/evaluate_camera.py SUITE... --out camera.json

Each argument is a round's folder (``clip.mp4``, ``scenario.json``) or a folder of them. Every
frame is decoded and given to a fresh check at its default settings, as the monitor gives it.
A true interval (``scenario.json`` ``blind_intervals``: first and last frame) is found when a
loss is dated from 5 frames before it to its end; a loss dated anywhere else is false. Prints a
line per round with a true interval or a false loss, then the totals. Bad input is one line on
stderr and exit 2. Decoding is the cost: about 3 s a 28-s round on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import av

from pipeline.live.health import FrameHealth
from pipeline.round.events import CameraLost, CameraRestored

EARLY_FRAMES = 5  # a loss dated this many frames before a true interval still finds it


def rounds(paths: list[Path]) -> list[Path]:
    """The round folders named, or found one level below the folders named."""
    out = []
    for path in paths:
        if (path / "clip.mp4").is_file() and (path / "scenario.json").is_file():
            out.append(path)
        elif path.is_dir():
            out += sorted(p for p in path.iterdir() if (p / "clip.mp4").is_file())
        else:
            raise ValueError(
                f"{path}: not a round's folder (clip.mp4, scenario.json) or a folder of them"
            )
    if not out:
        raise ValueError("no rounds found in " + ", ".join(map(str, paths)))
    return out


def check_round(folder: Path) -> dict:
    """The camera events of one round against its true blind intervals."""
    scenario = json.loads((folder / "scenario.json").read_text())
    fps, health, events = scenario["fps"], FrameHealth(), []
    with av.open(str(folder / "clip.mp4")) as container:
        for index, picture in enumerate(container.decode(container.streams.video[0])):
            events += health.update(picture.to_ndarray(format="bgr24"), index, index / fps)
    truth = [(start, end) for start, end, *_ in scenario["blind_intervals"]]
    lost = [e.frame for e in events if isinstance(e, CameraLost)]
    restored = [e.frame for e in events if isinstance(e, CameraRestored)]

    def near(frame: int, interval: tuple[int, int]) -> bool:
        return interval[0] - EARLY_FRAMES <= frame <= interval[1]

    return {
        "round": f"{folder.parent.name}/{folder.name}",
        "truth": truth,
        "lost": lost,
        "restored": restored,
        "found": sum(any(near(f, t) for f in lost) for t in truth),
        "false": sum(not any(near(f, t) for t in truth) for f in lost),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="+", type=Path, help="round folders, or folders of them")
    p.add_argument("--out", type=Path, help="also write every round's figures here (JSON)")
    args = p.parse_args(argv)
    try:
        folders = rounds(args.paths)
        results = [check_round(folder) for folder in folders]
    except (ValueError, OSError, KeyError, av.FFmpegError) as err:
        print(f"evaluate_camera: {err}", file=sys.stderr)
        return 2
    for r in results:
        if r["truth"] or r["false"]:
            print(
                f"{r['round']}: true {r['truth']}, lost at {r['lost']}, "
                f"restored at {r['restored']}, false {r['false']}"
            )
    truth = sum(len(r["truth"]) for r in results)
    found, false = sum(r["found"] for r in results), sum(r["false"] for r in results)
    print(f"{len(results)} rounds: {found} of {truth} camera losses found, {false} false")
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
