"""Rendered truth turned into the labels the detector and the face reader learn from.

Detector: five classes (``CLASSES``), boxes of objects at least ``MIN_VISIBILITY`` visible, on
the frame scaled by ``DETECT_SCALE`` (the monitor halves 1080p before the network), written as
YOLO label lines. Face reader: the 28 classes of :data:`vision.faces.FACE_CLASSES`, for tiles
face up and dice at least ``FACE_MIN_VISIBILITY`` visible, each box jittered like a
detector's. Truth objects are dicts: ``paigow synth stills`` truth names the kind ``kind``,
clip truth (``paigow synth scenario``) ``class``. Used by the dataset scripts and
:mod:`vision.synth.datasets`; nothing here needs ultralytics or torch.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

DETECT_SCALE = 0.5  # the detector's frame: 1920x1080 -> 960x540 (letterboxed to 960x544)
MIN_KEPT_FRACTION = 0.45  # a box cut by a crop or view edge is kept if this much of it remains
FACE_MIN_VISIBILITY = 0.7  # faces less visible than this are not read, nor learnt
BOX_JITTER = 0.08  # face crops: box edges moved by up to this fraction of its size
CLASSES = ("tile_down", "tile_up", "chip", "die", "hand")
NAMES = list(CLASSES)
CLASS_IDS = {name: i for i, name in enumerate(CLASSES)}
MIN_VISIBILITY = 0.3  # objects less visible get no box (datasets/recipes/stills.yaml)


def read_labels(path: Path, wh: tuple[int, int]) -> np.ndarray:
    """YOLO labels -> ``(N, 5)`` [class, x1, y1, x2, y2] in pixels of an image of size ``wh``."""
    if not path.exists() or not path.read_text().strip():
        return np.zeros((0, 5))
    a = np.loadtxt(path, ndmin=2)
    w, h = wh
    cx, cy, bw, bh = a[:, 1] * w, a[:, 2] * h, a[:, 3] * w, a[:, 4] * h
    return np.column_stack([a[:, 0], cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2])


def write_labels(path: Path, boxes: np.ndarray, wh: tuple[int, int]) -> None:
    """``(N, 5)`` [class, x1, y1, x2, y2] pixel rows of an image of size ``wh`` -> YOLO labels
    (an empty file for no box)."""
    w, h = wh
    lines = [
        f"{int(c)} {(x1 + x2) / 2 / w:.6f} {(y1 + y2) / 2 / h:.6f} {(x2 - x1) / w:.6f} "
        f"{(y2 - y1) / h:.6f}"
        for c, x1, y1, x2, y2 in boxes
    ]
    path.write_text("\n".join(lines) + ("\n" if lines else ""))


def frame_labels(objects: list[dict], scale: float) -> list[list[float]]:
    """[class, x1, y1, x2, y2] rows (pixels of the scaled frame) of one truth frame.

    >>> tile = {"class": "tile", "face_up": True, "visibility": 0.9, "xyxy": [10, 20, 30, 60]}
    >>> frame_labels([tile, {**tile, "visibility": 0.1}], 0.5)
    [[1, 5.0, 10.0, 15.0, 30.0]]
    """
    rows = []
    for o in objects:
        if o["visibility"] < MIN_VISIBILITY:
            continue
        if o["class"] == "tile":
            cls = CLASS_IDS["tile_up" if o["face_up"] else "tile_down"]
        else:
            cls = CLASS_IDS[o["class"]]
        rows.append([cls, *(round(v * scale, 1) for v in o["xyxy"])])
    return rows


def face_class(o: dict) -> str | None:
    """The face reader's class of a truth object seen well enough to read, else None (clip
    truth names the kind ``class``, still truth ``kind``).

    >>> face_class({"kind": "die", "visibility": 0.8, "die_flat": True, "die_value": 4})
    'die_4'
    >>> face_class({"class": "tile", "visibility": 0.5, "face_up": True, "face": "6-6"}) is None
    True
    """
    kind = o.get("class") or o.get("kind")
    if o["visibility"] < FACE_MIN_VISIBILITY:
        return None
    if kind == "tile" and o["face_up"]:
        return f"tile_{o['face']}"
    if kind == "die":
        return f"die_{o['die_value']}" if o["die_flat"] else "die_tipped"
    return None


def jitter_box(xyxy, rng: np.random.Generator) -> tuple[float, ...]:
    """The box with each edge moved by up to ``BOX_JITTER`` of its size, like a detector's."""
    x1, y1, x2, y2 = xyxy
    w, h = x2 - x1, y2 - y1
    d = rng.uniform(-BOX_JITTER, BOX_JITTER, 4) * np.array([w, h, w, h])
    return x1 + d[0], y1 + d[1], x2 + d[2], y2 + d[3]
