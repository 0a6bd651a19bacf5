"""A rendered clip's truth as the evaluations score it: the frames, the segments scored, and
the tiles of a frame on each side (truth, and what the tracker reports).

Clip folders are written by ``paigow synth scenario`` (``scenario.json``, ``truth.jsonl.gz``,
``clip.mp4``). Frames of the wash (``wash_started`` .. ``wash_ended``) and blind frames are not
scored; the frames before and after the wash are separate segments.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.types import CHIP, DIE, HAND, TILE_DOWN, TILE_UP, Track

CLASS_OF_TRUTH = {"chip": CHIP, "die": DIE, "hand": HAND}


@dataclass(frozen=True)
class Frames:
    """A clip's per-frame truth and the scored segments: runs of frame indices before and after
    the wash, scored as separate sequences (a good wash is meant to break identity).
    """

    truth: list[dict]
    segments: tuple[frozenset[int], ...]

    def segment_of(self, frame: int) -> int | None:
        return next((i for i, s in enumerate(self.segments) if frame in s), None)


def read_clip(folder: Path) -> tuple[dict, Frames]:
    """``scenario.json`` and truth of a rendered clip; wash and blind frames are not scored."""
    scenario = json.loads((folder / "scenario.json").read_text(encoding="utf-8"))
    with gzip.open(folder / "truth.jsonl.gz", "rt", encoding="utf-8") as f:
        truth = [json.loads(line) for line in f]
    start = [e["frame"] for e in scenario["events"] if e["type"] == "wash_started"]
    end = [e["frame"] for e in scenario["events"] if e["type"] == "wash_ended"]
    seen = {t["frame"] for t in truth if not t["blind"]}
    if not (start and end):
        return scenario, Frames(truth, (frozenset(seen),))
    before = frozenset(f for f in seen if f < start[0])
    after = frozenset(f for f in seen if f > end[0])
    return scenario, Frames(truth, tuple(s for s in (before, after) if s))


def class_id_of(obj: dict) -> int:
    """The detector class id of a truth object."""
    if obj["class"] == "tile":
        return TILE_UP if obj["face_up"] else TILE_DOWN
    return CLASS_OF_TRUTH[obj["class"]]


def truth_tiles(objects: list[dict], min_visibility: float) -> tuple[list[int], np.ndarray]:
    """Ids and boxes ``(N, 4)`` of the tiles that are scored on a frame."""
    tiles = [o for o in objects if o["class"] == "tile" and o["visibility"] >= min_visibility]
    return [o["id"] for o in tiles], np.array([o["xyxy"] for o in tiles], np.float64).reshape(-1, 4)


def reported_tiles(tracks: list[Track], frame: int) -> tuple[list[int], np.ndarray]:
    """Ids and boxes ``(N, 4)`` of tile tracks matched on ``frame`` (not coasting)."""
    seen = [t for t in tracks if t.kind == "tile" and t.last_seen_frame == frame]
    return [t.track_id for t in seen], np.array([t.xyxy for t in seen], np.float64).reshape(-1, 4)
