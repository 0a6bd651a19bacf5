"""Run one clip end to end through the round reconstructor and print its events, one a line.

    python scripts/run_clip.py CLIP_DIR --oracle            # ground-truth tracks (oracle mode)
    python scripts/run_clip.py CLIP_DIR --oracle --jsonl    # one JSON object per event

Oracle mode feeds the reconstructor the scenario's ground truth as perfect tracks
(:mod:`pipeline.round.oracle`), so the events show the reconstructor's logic alone. Perception mode
(the clip's video through detector, face reader, tracker and layout) plugs in at
:func:`perception_frames`: it must yield ``(frame, tracks)`` pairs like :func:`oracle_source`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from pipeline.round.events import TableEvent, TileExposed, describe
from pipeline.round.oracle import TRUTH_FILE, oracle_frames, read_truth
from pipeline.round.phases import FrameLike, RoundConfig, RoundReconstructor
from vision.types import Track

FrameTracks = tuple[FrameLike, list[Track]]


def oracle_source(clip_dir: Path) -> Iterator[FrameTracks]:
    """Ground-truth tracks of a rendered scenario, frame by frame."""
    for frame in oracle_frames(read_truth(clip_dir / TRUTH_FILE)):
        yield frame, list(frame.tracks)


def perception_frames(clip_dir: Path) -> Iterator[FrameTracks]:
    """Perception mode: decode ``clip.mp4``, detect, read faces, track, assign layout zones.

    Faces are read on every frame here (simple, not fast); the layout comes from the clip's
    ``scenario.json`` (its camera is randomised per seed).
    """
    import av

    from pipeline.layout import layout_from_scenario
    from vision.detector import Detector
    from vision.face_reader import FaceReader
    from vision.tracking.tracker import Tracker
    from vision.types import Frame

    layout = layout_from_scenario(clip_dir / "scenario.json")
    detector, reader = Detector(), FaceReader()
    tracker = Tracker(zone_of=layout.zone_of)
    with av.open(str(clip_dir / "clip.mp4")) as container:
        stream = container.streams.video[0]
        fps = float(stream.average_rate or 25)
        for index, decoded in enumerate(container.decode(stream)):
            image = decoded.to_ndarray(format="bgr24")
            frame = Frame("clip", index, index / fps, image)
            detections = reader(image, detector(frame))
            yield frame, tracker.update(detections, index)


def run(source: Iterator[FrameTracks], reconstructor: RoundReconstructor) -> list[TableEvent]:
    """Every event of a stream of (frame, tracks), in the order revealed, ``finish`` last."""
    events: list[TableEvent] = []
    for frame, tracks in source:
        events += reconstructor.update(tracks, frame)[1]
    return events + reconstructor.finish()


def _line(event: TableEvent, as_json: bool) -> str:
    if as_json:
        record = {"type": type(event).__name__, **asdict(event)}
        return json.dumps(record, default=str)
    return f"{event.time_s:8.2f}s  f{event.frame:<6d} {describe(event)}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("clip", type=Path, help="scenario folder (truth.jsonl.gz, clip.mp4)")
    p.add_argument("--oracle", action="store_true", help="use ground-truth tracks")
    p.add_argument("--chung-box", type=int, default=1)
    p.add_argument("--hide-tiles", action="store_true", help="leave out single-tile exposures")
    p.add_argument("--jsonl", action="store_true", help="print events as JSON lines")
    args = p.parse_args(argv)
    source = oracle_source(args.clip) if args.oracle else perception_frames(args.clip)
    reconstructor = RoundReconstructor(RoundConfig(chung_box=args.chung_box))
    for event in run(source, reconstructor):
        if args.hide_tiles and isinstance(event, TileExposed):
            continue
        print(_line(event, args.jsonl))
    return 0


if __name__ == "__main__":
    sys.exit(main())
