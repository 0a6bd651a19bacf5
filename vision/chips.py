"""Chip stacks in money: a deployment's chip set and a classical reader of one stack.

A **chip set** (YAML, one per casino) lists each denomination's value, name and reference
colours: ``top`` (what the middle of a chip's face shows from above) and ``edge`` (what its
side shows; several colours where the edge carries spots or alternates)::

    denominations:
      - {name: red, value: 5, top: [[45, 45, 212]], edge: [[33, 33, 156], [25, 25, 118]]}
      - {name: green, value: 25, top: [[67, 151, 45]], edge: [[49, 111, 33]]}

Colours are BGR 0..255. :func:`load_chip_set` validates it (one-line :class:`ChipSetError`).

:func:`read_stack` reads one stack inside a detector box. Seen from above at an angle, a stack
shows its top chip's face as a disc and, beyond the disc on the side away from the camera's
nadir, a band of chip edges; the box is the union of the top disc and the (hidden) bottom
disc, so the top disc's centre ``c_t`` gives the stack's lean ``d = 2 (box_centre - c_t)`` px.
The band along ``d`` is sampled and cut into chips (each edge colour a run), or, when the
caller knows how many image pixels one millimetre of height moves a point there
(``height_px_per_mm``), the count is ``|d| / (height_px_per_mm * thickness)``. Straight above
(``|d|`` shorter than a chip's worth of pixels) or with runs too short to separate, the count
and so the value are None: doubt, not a guess.

:func:`face_colour` is the top chip's colour measured the same way without a chip set (what
``paigow chips calibrate``, :mod:`vision.chip_calibration`, clusters).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import yaml

BGR = tuple[int, int, int]
MAX_CHIP_SET_BYTES = 1 << 16


class ChipSetError(ValueError):
    """A chip set file that cannot be used (the message is one line naming the fault)."""


@dataclass(frozen=True, slots=True)
class Denomination:
    """One kind of chip: its value (table currency units), name and reference colours."""

    name: str
    value: int
    top_bgr: tuple[BGR, ...]
    edge_bgr: tuple[BGR, ...]


@dataclass(frozen=True, slots=True)
class ChipSet:
    """The chips a table plays with, in the order listed."""

    denominations: tuple[Denomination, ...]

    def value_of(self, name: str) -> int:
        """Value of the denomination ``name`` (KeyError if the set has none)."""
        return {d.name: d.value for d in self.denominations}[name]

    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.denominations)


def _colours(raw: Any, where: str) -> tuple[BGR, ...]:
    if not isinstance(raw, list) or not raw:
        raise ChipSetError(f"{where}: expected a list of [b, g, r] colours")
    out = []
    for c in raw:
        ok = isinstance(c, list) and len(c) == 3
        if not ok or not all(isinstance(v, int) and 0 <= v <= 255 for v in c):
            raise ChipSetError(f"{where}: {c!r} is not [b, g, r] with ints 0..255")
        out.append((c[0], c[1], c[2]))
    return tuple(out)


def _denomination(raw: Any, where: str) -> Denomination:
    keys = {"name", "value", "top", "edge"}
    if not isinstance(raw, dict) or set(raw) != keys:
        raise ChipSetError(f"{where}: expected exactly the keys {', '.join(sorted(keys))}")
    name, value = raw["name"], raw["value"]
    if not isinstance(name, str) or not name:
        raise ChipSetError(f"{where}: name must be a non-empty string")
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ChipSetError(f"{where} ({name}): value must be a positive whole number")
    return Denomination(
        name, value, _colours(raw["top"], f"{where}.top"), _colours(raw["edge"], f"{where}.edge")
    )


def parse_chip_set(data: Any, source: str = "chip set") -> ChipSet:
    """A validated :class:`ChipSet` from parsed YAML ``data``; names and values unique."""
    if not isinstance(data, dict) or set(data) != {"denominations"}:
        raise ChipSetError(f"{source}: expected one key, denominations")
    raw = data["denominations"]
    if not isinstance(raw, list) or not raw:
        raise ChipSetError(f"{source}: denominations must be a non-empty list")
    chips = tuple(_denomination(d, f"{source}: denominations[{k}]") for k, d in enumerate(raw))
    for field in ("name", "value"):
        seen = [getattr(d, field) for d in chips]
        twice = sorted({str(v) for v in seen if seen.count(v) > 1})
        if twice:
            raise ChipSetError(f"{source}: {field} listed twice: {', '.join(twice)}")
    return ChipSet(chips)


def load_chip_set(path: str | Path) -> ChipSet:
    """Read and validate a chip set YAML file (ChipSetError on any fault, one line)."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_CHIP_SET_BYTES:
            raise ChipSetError(f"{path}: larger than {MAX_CHIP_SET_BYTES} bytes")
        data = yaml.safe_load(path.read_text())
    except OSError as e:
        raise ChipSetError(f"{path}: cannot read ({e.strerror})") from None
    except yaml.YAMLError as e:
        raise ChipSetError(f"{path}: not YAML ({str(e).splitlines()[0]})") from None
    return parse_chip_set(data, str(path))


def chip_set_yaml(chip_set: ChipSet) -> str:
    """The YAML text of ``chip_set`` (what :func:`load_chip_set` reads back)."""
    rows = [
        {"name": d.name, "value": d.value, "top": [list(c) for c in d.top_bgr]}
        | {"edge": [list(c) for c in d.edge_bgr]}
        for d in chip_set.denominations
    ]
    return yaml.safe_dump({"denominations": rows}, sort_keys=False, default_flow_style=None)


@dataclass(frozen=True, slots=True)
class ReaderConfig:
    """How a stack is read; lengths relative to the top disc's radius unless ``_px``."""

    thickness_mm: float = 3.3
    chip_diameter_mm: float = 40.0
    # the top colour is the median of the face's middle, out to this share of its radius
    top_sample: float = 0.45
    # a top face narrower than this share of the box's short side is not considered
    min_radius: float = 0.7
    # the edge band is averaged across this share of the radius either side of the lean's axis
    band_halfwidth: float = 0.25
    # samples per pixel along the band
    band_step_px: float = 0.5
    # a lean shorter than this reads as straight above: no count (higher: fewer wrong counts
    # from box jitter; lower: counts on flatter views)
    min_lean_px: float = 2.0
    # a chip shorter than this along the band cannot be told from its neighbours: no count
    min_chip_px: float = 2.5
    # the longest edge run may be this many times the median (chips are equally thick; longer:
    # several chips merged, so no count). Lower: fewer wrong counts, more doubt
    max_run_spread: float = 1.6
    # L (lightness) counts this much against a and b in colour distances (lower: more tolerant
    # of lighting, but white and black drift together)
    lightness_weight: float = 0.6
    # confidence below this: value None (higher: more doubt, fewer wrong values)
    min_confidence: float = 0.3


DEFAULT_READER = ReaderConfig()


@dataclass(frozen=True, slots=True)
class ChipRead:
    """What a stack shows: ``denominations`` bottom to top (may hold only the top chip when the
    count is unknown), ``count`` and ``value`` None when not read, ``confidence`` 0..1."""

    value: int | None
    count: int | None
    denominations: tuple[str, ...]
    confidence: float


UNREAD = ChipRead(None, None, (), 0.0)


def _lab(bgr: np.ndarray) -> np.ndarray:
    """``(..., 3)`` BGR 0..255 to Lab (L 0..100, a and b about -128..127), float32."""
    arr = np.asarray(bgr, dtype=np.float32).reshape(-1, 1, 3) / 255.0
    return cv2.cvtColor(arr, cv2.COLOR_BGR2Lab).reshape(np.shape(bgr))


class _Palette:
    """Reference colours in Lab with the denomination each belongs to; ``parts`` picks the
    colours (``top``, ``edge`` or both, in that order)."""

    def __init__(self, chip_set: ChipSet, parts: tuple[str, ...], lightness_weight: float):
        colours, owner = [], []
        for part in parts:
            for k, d in enumerate(chip_set.denominations):
                for c in d.top_bgr if part == "top" else d.edge_bgr:
                    colours.append(c)
                    owner.append(k)
        self.weights = np.array([lightness_weight, 1.0, 1.0], np.float32)
        self.lab = _lab(np.array(colours, np.float32)) * self.weights
        self.owner = np.array(owner)

    def distances(self, lab: np.ndarray) -> np.ndarray:
        """``(N, C)`` distances of ``N`` Lab samples to the ``C`` references."""
        return np.linalg.norm((lab * self.weights)[:, None, :] - self.lab[None], axis=2)

    def nearest(self, lab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per sample: index of the nearest reference colour, and a 0..1 margin to the nearest
        colour of another denomination (0: halfway between two)."""
        dist = self.distances(lab)
        best = dist.argmin(axis=1)
        other = np.where(self.owner[None, :] == self.owner[best][:, None], np.inf, dist)
        d1, d2 = dist[np.arange(len(best)), best], other.min(axis=1)
        margin = np.where(np.isfinite(d2), (d2 - d1) / np.maximum(d2 + d1, 1e-6), 1.0)
        return best, margin


def _disc_mask(shape: tuple[int, int], centre: np.ndarray, radius: float) -> np.ndarray:
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    return (xx + 0.5 - centre[0]) ** 2 + (yy + 0.5 - centre[1]) ** 2 <= radius**2


def _top_disc(topness: np.ndarray, min_radius: float) -> tuple[np.ndarray, float]:
    """Centre ``(2,)`` px and radius of the top face in a crop of the box.

    ``topness (h, w)``: how much more each pixel looks like a chip's face than like an edge.
    For each candidate centre the lean and radius follow from the box (see module docstring);
    the candidate whose face is most face-like against the rest of the box wins.
    ``min_radius``: share of half the box's short side below which a candidate is not
    considered.
    """
    h, w = topness.shape
    half = min(w, h) / 2
    centre_box = np.array([w / 2, h / 2])
    integral = cv2.integral(topness.astype(np.float64))
    best, best_score = (centre_box, half), -np.inf
    for cy in np.arange(half, h - half + 1, 1.0):
        for cx in np.arange(half, w - half + 1, 1.0):
            c = np.array([cx, cy])
            lean = 2 * np.abs(centre_box - c)
            radius = min(w - lean[0], h - lean[1]) / 2
            if radius < half * min_radius:
                continue
            x0, y0 = (round(float(v)) for v in c - radius * 0.7)
            x1, y1 = (round(float(v)) for v in c + radius * 0.7)
            inner = integral[y1, x1] - integral[y0, x1] - integral[y1, x0] + integral[y0, x0]
            area_in = (x1 - x0) * (y1 - y0)
            score = inner / max(area_in, 1) - (integral[-1, -1] - inner) / max(h * w - area_in, 1)
            if score > best_score:
                best, best_score = (c, radius), score
    return best


def _band_profile(
    crop_lab: np.ndarray, top: np.ndarray, start: float, lean: np.ndarray, cfg: ReaderConfig
) -> np.ndarray:
    """Lab samples ``(N, 3)`` along the edge band from ``start`` px beyond the face's centre
    for ``|lean|`` px, top chip first (each the median across the band)."""
    length = float(np.linalg.norm(lean))
    u = lean / length
    normal = np.array([-u[1], u[0]])
    along = np.arange(start + cfg.band_step_px / 2, start + length, cfg.band_step_px)
    across = np.linspace(-cfg.band_halfwidth, cfg.band_halfwidth, 5) * start
    pts = top + along[:, None, None] * u + across[None, :, None] * normal
    map_xy = (pts - 0.5).astype(np.float32)
    samples = cv2.remap(crop_lab, map_xy[..., 0], map_xy[..., 1], cv2.INTER_LINEAR)
    return np.median(samples, axis=1)


def _runs(labels: np.ndarray) -> list[tuple[int, int]]:
    """``(label, length)`` of each run of equal labels."""
    cuts = np.flatnonzero(np.diff(labels)) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [len(labels)]])
    return [(int(labels[s]), int(e - s)) for s, e in zip(starts, ends, strict=True)]


def _chips_from_band(
    band_lab: np.ndarray,
    edge: _Palette,
    per_chip: float | None,
    radius: float,
    cfg: ReaderConfig,
) -> tuple[list[int], float] | None:
    """Denomination indices of the band's chips, top first, and a confidence; None if unread.

    With ``per_chip`` (samples per chip, from the camera) the band is cut evenly; without it,
    each run of one edge colour is one chip (edges alternate colour or shade chip to chip),
    and a run longer than a chip can look (its thickness at the face's scale, ``radius`` px)
    is chips that merged: no count.
    """
    colour, margin = edge.nearest(band_lab)
    if per_chip is not None:
        n = max(1, round(len(colour) / per_chip))
        cuts = np.linspace(0, len(colour), n + 1)
        owners, conf = [], []
        for a, b in itertools.pairwise(cuts):
            part = slice(int(a), max(int(a) + 1, int(b)))
            votes = np.bincount(edge.owner[colour[part]], minlength=edge.owner.max() + 1)
            owners.append(int(votes.argmax()))
            conf.append(votes.max() / votes.sum() * float(np.mean(margin[part])))
        return owners, float(min(conf))
    shortest = cfg.min_chip_px / cfg.band_step_px
    runs = [(c, n) for c, n in _runs(colour) if n >= shortest]
    if not runs:
        return None
    merged: list[list[int]] = []
    for c, n in runs:
        if merged and merged[-1][0] == c:
            merged[-1][1] += n
        else:
            merged.append([c, n])
    lengths = np.array([n for _, n in merged], np.float64)
    longest_chip = 2 * radius * cfg.thickness_mm / cfg.chip_diameter_mm / cfg.band_step_px
    if lengths.max() > cfg.max_run_spread * min(np.median(lengths), longest_chip):
        return None  # chips of one thickness: a run this long is chips that merged
    chips = [c for c, _ in merged]
    kept = sum(n for _, n in runs) / len(colour)
    return [int(edge.owner[c]) for c in chips], float(np.mean(margin)) * kept


def _clip_box(image: np.ndarray, box_xyxy) -> tuple[int, int, int, int] | None:
    """``box_xyxy`` rounded and clipped to ``image``; None when under 4 px either way."""
    x0, y0, x1, y1 = (round(float(v)) for v in box_xyxy)
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, image.shape[1]), min(y1, image.shape[0])
    return None if x1 - x0 < 4 or y1 - y0 < 4 else (x0, y0, x1, y1)


def face_colour(image: np.ndarray, box_xyxy, config: ReaderConfig = DEFAULT_READER) -> BGR | None:
    """The top chip's face colour in a stack's box, without a chip set (calibration).

    :func:`read_stack`'s measurement: the median of the face's middle (``top_sample`` of its
    radius), the face found by the same search, with "looks like the middle of the box" as
    the face-likeness in place of a chip set's references. BGR 0..255; None for a box that is
    empty or outside the image.
    """
    clipped = _clip_box(image, box_xyxy)
    if clipped is None:
        return None
    x0, y0, x1, y1 = clipped
    crop = image[y0:y1, x0:x1]
    crop_lab = _lab(crop)
    h, w = crop_lab.shape[:2]
    weights = np.array([config.lightness_weight, 1.0, 1.0], np.float32)
    first = _disc_mask((h, w), np.array([w / 2, h / 2]), min(w, h) / 2 * config.top_sample)
    middle_lab = np.median(crop_lab[first], axis=0)
    topness = -np.linalg.norm((crop_lab - middle_lab) * weights, axis=2)
    top, radius = _top_disc(topness, config.min_radius)
    middle = _disc_mask((h, w), top, radius * config.top_sample)
    b, g, r = np.median(crop[middle].astype(np.float64), axis=0)
    return round(b), round(g), round(r)


def read_stack(
    image: np.ndarray,
    box_xyxy: tuple[float, float, float, float] | np.ndarray,
    chip_set: ChipSet,
    config: ReaderConfig = DEFAULT_READER,
    height_px_per_mm: float | None = None,
) -> ChipRead:
    """Read the stack in ``box_xyxy`` (image px) of ``image (H, W, 3)`` BGR uint8.

    ``height_px_per_mm``: image px one mm of height moves a point at this stack (from the
    camera); None: count the band's runs instead. Never raises on odd boxes: returns
    :data:`UNREAD` for a box that is empty or outside the image.
    """
    clipped = _clip_box(image, box_xyxy)
    if clipped is None:
        return UNREAD
    x0, y0, x1, y1 = clipped
    crop_lab = _lab(image[y0:y1, x0:x1])
    tops = _Palette(chip_set, ("top",), config.lightness_weight)
    edge = _Palette(chip_set, ("edge",), config.lightness_weight)
    pixels = crop_lab.reshape(-1, 3)
    topness = edge.distances(pixels).min(axis=1) - tops.distances(pixels).min(axis=1)
    top, radius = _top_disc(topness.reshape(crop_lab.shape[:2]), config.min_radius)
    middle = crop_lab[_disc_mask(crop_lab.shape[:2], top, radius * config.top_sample)]
    colour, margin = tops.nearest(np.median(middle, axis=0)[None])
    top_name = chip_set.denominations[int(tops.owner[colour[0]])].name
    only_top = ChipRead(None, None, (top_name,), float(margin[0]))
    lean = 2 * (np.array([(x1 - x0) / 2, (y1 - y0) / 2]) - top)
    if np.linalg.norm(lean) < config.min_lean_px:
        return only_top
    per_chip = None
    if height_px_per_mm is not None:
        chip_px = height_px_per_mm * config.thickness_mm
        if chip_px < config.min_chip_px:
            return only_top
        per_chip = chip_px / config.band_step_px
    band = _band_profile(crop_lab, top, radius, lean, config)
    read = _chips_from_band(band, edge, per_chip, radius, config) if len(band) else None
    if read is None:
        return only_top
    owners, confidence = read
    names = tuple(chip_set.denominations[k].name for k in reversed(owners))
    if names[-1] != top_name or confidence < config.min_confidence:
        return ChipRead(None, len(names), names, confidence)
    value = sum(chip_set.value_of(n) for n in names)
    return ChipRead(value, len(names), names, confidence)
