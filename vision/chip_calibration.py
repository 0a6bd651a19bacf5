"""A chip set from one frame: the stacks a camera sees, grouped by their top chip's colour.

:func:`calibrate` takes a frame and the boxes of its chip stacks (the detector's), measures
each stack's top colour (:func:`vision.chips.face_colour`, the measurement
:func:`vision.chips.read_stack` reads the top chip by), groups the colours into as many
clusters as values are given (k-means in Lab, lightness weighted as the reader weighs it,
started deterministically from the lightest colour and then the farthest), and gives each
cluster a value:

- **plain values** (``[1, 5, 25]``): in the order given to the clusters sorted **lightest
  first** (Lab lightness of the cluster's colour), each named after its nearest basic colour
  (:data:`BASIC_COLOURS`); the picture and the YAML show which colour got which value, for the
  user to check and edit;
- **named values** (``[("white", 1), ("red", 5)]``, names from :data:`BASIC_COLOURS`): each
  cluster to the name whose basic colour it is nearest, all together (the assignment of least
  total distance), keeping the user's names.

Each denomination's ``top`` is the cluster's median colour; its ``edge`` (not in the picture
under a ceiling camera) is the top in a chip side's shade (:data:`EDGE_SHADES`), for the user to
replace with measured edge colours where a camera sees the sides. :func:`contact_sheet` draws
each cluster's stacks with its value, for checking by eye.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from scipy.optimize import linear_sum_assignment

from vision.chips import DEFAULT_READER, ChipSet, Denomination, face_colour

BGR = tuple[int, int, int]
# colour names a cluster may be given, each with a reference BGR (what a chip of that colour
# looks like under table lighting)
BASIC_COLOURS: dict[str, BGR] = {
    "white": (225, 225, 222),
    "grey": (128, 128, 128),
    "black": (32, 30, 30),
    "red": (40, 40, 190),
    "orange": (30, 120, 235),
    "yellow": (60, 200, 230),
    "green": (60, 135, 40),
    "teal": (140, 140, 30),
    "blue": (170, 80, 30),
    "purple": (130, 45, 110),
    "pink": (180, 120, 240),
    "brown": (40, 70, 120),
}
# a chip's side against its lit face (the renderer's side shades over its face lift)
EDGE_SHADES = (0.73, 0.55)
KMEANS_ROUNDS = 30


class CalibrationError(ValueError):
    """A frame or values that cannot be calibrated from (one line)."""


@dataclass(frozen=True, slots=True)
class Cluster:
    """One denomination found: its value and name, its top colour and the boxes (indices into
    the boxes given) whose top chip is of it."""

    name: str
    value: int
    top_bgr: BGR
    members: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Calibration:
    """The chip set written, its clusters in the same order, and each box's top colour."""

    chip_set: ChipSet
    clusters: tuple[Cluster, ...]
    tops_bgr: tuple[BGR, ...]


def _weighted_lab(bgr) -> np.ndarray:
    arr = np.asarray(bgr, np.float32).reshape(-1, 1, 3) / 255.0
    lab = cv2.cvtColor(arr, cv2.COLOR_BGR2Lab).reshape(-1, 3)
    return lab * np.array([DEFAULT_READER.lightness_weight, 1.0, 1.0], np.float32)


def kmeans(points: np.ndarray, k: int, rounds: int = KMEANS_ROUNDS) -> np.ndarray:
    """Cluster index ``(N,)`` of each of ``points (N, 3)`` (Lab, lightness first), k-means
    started from the lightest point and then each time the point farthest from those chosen
    (deterministic: the same points give the same clusters)."""
    centres = [points[int(points[:, 0].argmax())]]
    while len(centres) < k:
        near = np.min([np.linalg.norm(points - c, axis=1) for c in centres], axis=0)
        centres.append(points[int(near.argmax())])
    centre = np.array(centres)
    label = np.zeros(len(points), int)
    for _ in range(rounds):
        label = np.linalg.norm(points[:, None] - centre[None], axis=2).argmin(axis=1)
        moved = np.array(
            [points[label == j].mean(axis=0) if np.any(label == j) else centre[j] for j in range(k)]
        )
        if np.allclose(moved, centre):
            break
        centre = moved
    return label


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return out


def _names_and_values(
    tops: list[np.ndarray], values: list[int] | list[tuple[str, int]]
) -> list[tuple[str, int]]:
    """Per cluster (top colours ``tops``, weighted Lab): its name and value."""
    basic = _weighted_lab(list(BASIC_COLOURS.values()))
    top = np.array(tops)
    if values and isinstance(values[0], tuple):
        named = [BASIC_COLOURS[name] for name, _ in values]  # names checked by the caller
        cost = np.linalg.norm(top[:, None] - _weighted_lab(named)[None], axis=2)
        rows, cols = linear_sum_assignment(cost)
        given = dict(zip(rows.tolist(), cols.tolist(), strict=True))
        return [values[given[j]] for j in range(len(tops))]
    nearest = np.linalg.norm(top[:, None] - basic[None], axis=2).argmin(axis=1)
    names = _unique([list(BASIC_COLOURS)[int(i)] for i in nearest])
    order = sorted(range(len(tops)), key=lambda j: -top[j, 0])
    value_of = {j: v for j, v in zip(order, values, strict=True)}
    return [(names[j], int(value_of[j])) for j in range(len(tops))]


def look_alike(calibration: Calibration) -> list[tuple[str, ...]]:
    """Names of clusters whose top colours are nearest the same basic colour (``black`` and
    ``black_2``): likely one denomination split in two, the frame holding fewer
    denominations than values were given."""
    basic = _weighted_lab(list(BASIC_COLOURS.values()))
    groups: dict[int, list[str]] = {}
    for cluster in calibration.clusters:
        top = _weighted_lab([cluster.top_bgr])[0]
        nearest = int(np.linalg.norm(basic - top, axis=1).argmin())
        groups.setdefault(nearest, []).append(cluster.name)
    return [tuple(names) for names in groups.values() if len(names) > 1]


def check_values(values: list[int] | list[tuple[str, int]]) -> None:
    """Raise :class:`CalibrationError` for values that cannot make a chip set: none, not
    positive, a value or name twice, a name not in :data:`BASIC_COLOURS`."""
    if not values:
        raise CalibrationError("no values given")
    pairs = values if isinstance(values[0], tuple) else [("", v) for v in values]
    for name, value in pairs:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise CalibrationError(f"value {value!r} is not a positive whole number")
        if name and name not in BASIC_COLOURS:
            known = ", ".join(BASIC_COLOURS)
            raise CalibrationError(f"unknown colour name {name!r} (known: {known})")
    for k, what in ((1, "value"), (0, "name")):
        seen = [p[k] for p in pairs if p[k] != ""]
        twice = sorted({str(v) for v in seen if seen.count(v) > 1})
        if twice:
            raise CalibrationError(f"{what} given twice: {', '.join(twice)}")


def calibrate(
    image: np.ndarray, boxes_xyxy: np.ndarray, values: list[int] | list[tuple[str, int]]
) -> Calibration:
    """A chip set with one denomination per value from the stacks in ``boxes_xyxy (N, 4)``
    (image px) of ``image`` BGR (see module docstring). CalibrationError when there are fewer
    stacks than values."""
    check_values(values)
    kept, tops = [], []
    for index, box in enumerate(np.asarray(boxes_xyxy, np.float64).reshape(-1, 4)):
        colour = face_colour(image, box)
        if colour is not None:
            kept.append(index)
            tops.append(colour)
    if len(tops) < len(values):
        raise CalibrationError(
            f"{len(tops)} chip stack(s) found, fewer than the {len(values)} values given: "
            "a frame with at least one stack of each denomination is needed"
        )
    lab = _weighted_lab(tops)
    label = kmeans(lab, len(values))
    if len(set(label.tolist())) < len(values):
        raise CalibrationError(
            f"the {len(tops)} chip stack(s) found show fewer colours than the {len(values)} "
            "values given: a frame with a stack of each denomination is needed"
        )
    centres = [np.median(lab[label == j], axis=0) for j in range(len(values))]
    clusters = []
    for j, (name, value) in enumerate(_names_and_values(centres, values)):
        members = [kept[i] for i in np.flatnonzero(label == j)]
        top = np.median(np.array([tops[i] for i in np.flatnonzero(label == j)]), axis=0)
        clusters.append(Cluster(name, value, tuple(round(float(v)) for v in top), tuple(members)))
    clusters.sort(key=lambda c: c.value)
    chip_set = ChipSet(
        tuple(
            Denomination(
                c.name,
                c.value,
                (c.top_bgr,),
                tuple(tuple(round(float(v) * s) for v in c.top_bgr) for s in EDGE_SHADES),
            )
            for c in clusters
        )
    )
    return Calibration(chip_set, tuple(clusters), tuple(tops))


def contact_sheet(
    image: np.ndarray, boxes_xyxy: np.ndarray, calibration: Calibration, cell_px: int = 72
) -> np.ndarray:
    """A picture: one row per cluster (value, name, a swatch of its colour, then each of its
    stacks cut from ``image`` and enlarged to ``cell_px``)."""
    boxes = np.asarray(boxes_xyxy, np.float64).reshape(-1, 4)
    label_w = 220
    widest = max(len(c.members) for c in calibration.clusters)
    sheet = np.full(
        (cell_px * len(calibration.clusters), label_w + cell_px * (widest + 1), 3), 40, np.uint8
    )
    for row, cluster in enumerate(calibration.clusters):
        y = row * cell_px
        text = f"{cluster.value}  {cluster.name}"
        cv2.putText(sheet, text, (8, y + cell_px // 2 + 8), 0, 0.8, (235, 235, 235), 2)
        sheet[y + 4 : y + cell_px - 4, label_w + 4 : label_w + cell_px - 4] = cluster.top_bgr
        for col, index in enumerate(cluster.members):
            x0, y0, x1, y1 = (round(float(v)) for v in boxes[index])
            crop = image[max(y0, 0) : max(y1, 1), max(x0, 0) : max(x1, 1)]
            if crop.size == 0:
                continue
            x = label_w + cell_px * (col + 1)
            sheet[y : y + cell_px, x : x + cell_px] = cv2.resize(
                crop, (cell_px, cell_px), interpolation=cv2.INTER_NEAREST
            )
    return sheet
