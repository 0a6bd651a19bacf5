"""Oracle mode: a scenario's ground truth as per-frame tracks, as a perfect tracker would give.

Reading ``truth.jsonl.gz`` (one JSON line per frame: ``frame``, ``time_s``, ``blind``,
``objects``), each object becomes a :class:`~vision.types.Track` with its true id, class, box
and zone. The oracle knows only what a flawless tracker could: a tile's face once it has been
seen face up (kept while face down), a die's value only while the die lies flat (a tipped die
shows no single top face), a chip stack's value when the scenario gives it. While the camera
is blind the last tracks coast unchanged.

Running the round reconstructor on these tracks measures its logic apart from perception.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.round.events import TableEvent
from pipeline.round.phases import RoundReconstructor
from vision.faces import DIE_TIPPED
from vision.types import CHIP, DIE, HAND, TILE_DOWN, TILE_UP, Track

TRUTH_FILE = "truth.jsonl.gz"
SCENARIO_FILE = "scenario.json"
KIND_CLASS = {"chip": CHIP, "die": DIE, "hand": HAND}


@dataclass(frozen=True, slots=True)
class OracleFrame:
    """One frame of ground truth as tracks. ``blind``: None, or how the camera was lost."""

    index: int
    time_s: float
    blind: str | None
    tracks: tuple[Track, ...]


@dataclass
class _Memory:
    faces: dict[int, str] = field(default_factory=dict)
    born: dict[int, int] = field(default_factory=dict)
    last: tuple[Track, ...] = ()


def read_truth(path: str | Path) -> Iterator[dict]:
    """The ground-truth lines of a scenario's ``truth.jsonl.gz``, one dict per frame."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def _class_id(obj: dict) -> int:
    if obj["class"] == "tile":
        return TILE_UP if obj["face_up"] else TILE_DOWN
    return KIND_CLASS[obj["class"]]


def _track(obj: dict, index: int, memory: _Memory, values: Mapping[int, int]) -> Track:
    oid = int(obj["id"])
    if obj["class"] == "tile" and obj["face_up"] and obj.get("face"):
        memory.faces[oid] = obj["face"]
    flat = obj.get("die_flat") is not False
    x1, y1, x2, y2 = (float(v) for v in obj["xyxy"])
    return Track(
        track_id=oid,
        xyxy=(x1, y1, x2, y2),
        class_id=_class_id(obj),
        face_up=bool(obj["face_up"]) if obj["class"] == "tile" else None,
        face=memory.faces.get(oid) if obj["class"] != "die" or flat else DIE_TIPPED,
        die_value=obj.get("die_value") if flat else None,
        zone=obj.get("zone"),
        age_frames=index - memory.born.setdefault(oid, index),
        last_seen_frame=index,
        chip_value=values.get(oid) if obj["class"] == "chip" else None,
    )


def oracle_frames(
    truth: Iterable[dict], min_visibility: float = 0.0, chip_values: Mapping | None = None
) -> Iterator[OracleFrame]:
    """Ground-truth frames -> frames of perfect tracks (ids are the scenario's object ids).
    ``min_visibility``: objects showing less of themselves than this (under a hand, an arm, a
    tile) are not seen that frame, as a camera would not see them; 0: every object.
    ``chip_values``: chip stack id -> its value (a scenario's ``chip_values``), read as a
    perfect chip reader would; None: no values (as before chips were read)."""
    values = {int(k): int(v) for k, v in (chip_values or {}).items()}
    memory = _Memory()
    for line in truth:
        index, time_s, blind = int(line["frame"]), float(line["time_s"]), line.get("blind")
        if blind:
            yield OracleFrame(index, time_s, blind, memory.last)
            continue
        seen = [o for o in line["objects"] if o.get("visibility", 1.0) >= min_visibility]
        tracks = tuple(_track(obj, index, memory, values) for obj in seen)
        present = {t.track_id for t in tracks}
        for gone in set(memory.born) - present:
            del memory.born[gone]  # an object that comes back is a new track life
        memory.last = tracks
        yield OracleFrame(index, time_s, None, tracks)


def reconstruct(
    frames: Iterable[OracleFrame], reconstructor: RoundReconstructor | None = None
) -> list[TableEvent]:
    """Run the reconstructor over frames of tracks; every event, ``finish`` included."""
    reconstructor = reconstructor or RoundReconstructor()
    events: list[TableEvent] = []
    for frame in frames:
        _, new = reconstructor.update(list(frame.tracks), frame)
        events += new
    return events + reconstructor.finish()


def scenario_chip_values(clip_dir: str | Path) -> Mapping[str, int]:
    """A scenario folder's chip stack values (``scenario.json`` ``chip_values``; {} if none)."""
    path = Path(clip_dir) / SCENARIO_FILE
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8")).get("chip_values", {})


def reconstruct_clip(clip_dir: str | Path, reconstructor: RoundReconstructor | None = None):
    """Oracle mode on a scenario folder: its events from its ground-truth tracks (chip values
    from its ``scenario.json``)."""
    frames = oracle_frames(
        read_truth(Path(clip_dir) / TRUTH_FILE), 0.0, scenario_chip_values(clip_dir)
    )
    return reconstruct(frames, reconstructor)
