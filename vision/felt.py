"""Felt colour balance: a table whose felt is a colour the detector never learnt is shown to it
as the nearest felt it knows.

The detector was trained on a few felt colours (its manifest entry lists them, ``felts_bgr``).
On another felt it loses most of what it finds (rendered stills that differ from the training
set only by the felt colour: mAP50 0.99 -> 0.68, dice 1.00 -> 0.17), while another camera
angle, lighting or sensor noise alone costs it little. So before detection the felt's own
colour is moved onto the nearest trained felt: each pixel by the felt's offset, weighted by
how close the pixel's colour is to the felt's (a Gaussian of the Lab distance, lightness
counting less than colour). Tiles, dice, chips and hands, far from the felt's colour, keep
theirs; the felt's shading and print stay. A felt near a trained one is left as it is, so a
known table is detected exactly as before.

The felt's colour is the median of a sparse grid over the middle of the picture (a ceiling
camera sees felt there; tiles and hands cover only a part of it).

Tile backs are balanced the same way (:class:`TileBacks`): the detector learnt dark grey backs
(``backs_bgr``) and finds a fifth of a set with maroon ones. The few it finds give the backs'
colour (the median of their middles, over many tiles), which is then moved onto the nearest
trained back. On stills of two looks whose backs the shipped detector never saw (30 each, one
table each): navy backs found face down 0.48 -> 0.73, face up 0.46 -> 0.69; green 0.74 ->
0.97, 0.84 -> 0.98 (``sigma`` 10-14 alike, 20-28 worse face up).

>>> balance = FeltBalance(((40, 95, 20),))
>>> green = np.full((60, 80, 3), (40, 95, 20), np.uint8)
>>> balance.shift_for(green) is None  # a trained felt: nothing to do
True
>>> red = np.full((60, 80, 3), (30, 30, 120), np.uint8)
>>> shift = balance.shift_for(red)
>>> balance.apply(red, shift)[0, 0].tolist()  # the felt becomes the trained one
[40, 95, 20]
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

import cv2
import numpy as np


@dataclass(frozen=True)
class FeltConfig:
    """How far a felt must be from the trained ones to be balanced, and what counts as felt.
    Chosen on 80 rendered stills with felts neither trained on nor in the shifted split (navy,
    black, orange, light blue, plum; ``datasets/recipes/shift_factors/tune.yaml``): mAP50 0.763
    unbalanced; 0.955 at sigma 8 onto one green (0.949 at 10, 0.905 at 20), 0.966 onto the
    nearest trained felt, 0.968 as set here. Two rendered rounds of them under harsher light
    (``tune_harsh.yaml``, every 25th frame): 0.597 unbalanced, 0.961 (with lightness in the
    known-felt test: a dark plum felt is near the trained blue by colour alone); lightness
    weight 0.04 instead of 0.25: 0.824."""

    # Lab (OpenCV's 8-bit scale) distance from the felt's colour at which a pixel's weight is
    # exp(-1/2): lower moves only the felt itself, higher also tints what lies on it
    sigma: float = 8.0
    # weight of the lightness difference against the colour difference: lower treats a
    # shaded or lit patch of felt as felt, higher spares dark tiles on a dark felt
    lightness_weight: float = 0.25
    # a felt within this of a trained felt (Lab, lightness weighted as above) is left as it
    # is; one farther is moved part of the way, all of it from ``ramp`` farther on. Higher
    # leaves more near-trained felts alone, lower moves trained felts under other light (onto
    # a trained felt: harmless). The training randomisation's own felts (colour jitter, colour
    # cast, light) came within 19.2 on 80 stills (23.3 under the shifted set's light) and
    # 21.8 on the standard suite (the demo 3.8; 3 of its 32 rounds beyond 16, with the same
    # alerts and delivery as unbalanced); the felts of tune.yaml from 8.4 on, a dark plum at
    # 20-24
    known_distance: float = 16.0
    ramp: float = 8.0
    # grid step of the felt's colour sample, px; the middle of the picture only
    sample_step_px: int = 16
    centre_fraction: float = 0.6
    # a textured, unevenly lit or codec-smeared felt varies more than ``sigma``: the weight's
    # width is at least this many times the felt's own spread (the median distance of the
    # sample from the felt's colour), so all of it moves, not only its median shade. 0: off.
    # Chosen on tune_codecs.yaml (tune_harsh's felts through three codecs, 6 rounds as video,
    # one frame in 10): mAP50-95 0.790 off, 0.799 at 2, 0.809 at 3, 0.813 at 4, 0.808 at 6
    # (mAP50 0.966-0.968 throughout). A casino-red felt, textured and lit from one side, as
    # 1080p stills: 99 of 100 objects found, 64 with ``sigma`` alone
    spread_sigmas: float = 4.0


@dataclass(frozen=True)
class BackConfig:
    """How the colour of a table's tile backs is learnt from the face-down tiles the detector
    finds, and when they are shown to it as the nearest back it learnt (module docstring)."""

    # face-down detections sampled, and how many before the colour is believed: few enough
    # to be learnt as the wash begins, when the backs first show (0.5 and 24 were learnt
    # after the wash on a teal_dim round); on the tuning looks' stills 0.3 and 10 found as
    # many face-down tiles or more (navy 0.73 -> 0.75, green 0.97 alike)
    min_confidence: float = 0.3
    min_samples: int = 10
    patch: float = 0.5  # the middle of a box sampled, this share of each side
    keep: int = 256  # the most recent samples kept (a new set of tiles is learnt again)
    # a back within this Lab distance (lightness weighted as the felt's) of a trained one is
    # left as it is; farther, moved part of the way, all of it from ``ramp`` farther on. The
    # trained backs are dark and lie within 6 of one another (dark colours are near in Lab:
    # maroon backs the network cannot see are 16 from black ones)
    known_distance: float = 8.0
    ramp: float = 6.0
    sigma: float = 14.0  # a pixel's weight is exp(-1/2) at this Lab distance from the back
    lightness_weight: float = 0.25  # of the lightness difference against the colour's
    # a back this near the felt's colour is not moved (the felt would move with it)
    felt_apart: float = 24.0


@dataclass(frozen=True)
class FeltShift:
    """The balance of one picture for one colour (the felt's, or the tile backs'): its Lab
    colour, the BGR offset onto the nearest trained one, the Lab distance at which a pixel's
    weight falls to exp(-1/2), and the weights of lightness and colour in that distance."""

    lab: np.ndarray  # (3,) float32
    offset_bgr: np.ndarray  # (3,) float32
    sigma: float
    lab_weights: np.ndarray  # (3,) float32


def to_lab(bgr) -> np.ndarray:
    """``(N, 3)`` BGR -> ``(N, 3)`` float32 Lab, OpenCV's 8-bit scale."""
    pixels = np.clip(np.asarray(bgr, np.float32), 0, 255).astype(np.uint8).reshape(-1, 1, 3)
    return cv2.cvtColor(pixels, cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float32)


def felt_colour(image: np.ndarray, config: FeltConfig = FeltConfig()) -> np.ndarray:
    """The median BGR ``(3,)`` float32 of a sparse grid over the middle of ``image``."""
    return np.median(_felt_sample(image, config), axis=0).astype(np.float32)


def felt_spread(
    image: np.ndarray, felt_bgr: np.ndarray, config: FeltConfig = FeltConfig()
) -> float:
    """How much the felt of colour ``felt_bgr`` varies over ``image``: the median Lab distance
    (lightness weighted as the balance weighs it) of :func:`felt_colour`'s sample from it.

    >>> flat = np.full((64, 64, 3), (30, 30, 150), np.uint8)
    >>> felt_spread(flat, felt_colour(flat))
    0.0
    """
    weights = np.array([config.lightness_weight, 1.0, 1.0], np.float32)
    lab = to_lab(_felt_sample(image, config))
    return float(np.median(np.sqrt(np.square(lab - to_lab(felt_bgr)[0]) @ weights)))


def _felt_sample(image: np.ndarray, config: FeltConfig) -> np.ndarray:
    """``(N, 3)`` BGR: a sparse grid over the middle of ``image``."""
    h, w = image.shape[:2]
    margin = (1.0 - config.centre_fraction) / 2
    y1, y2 = int(h * margin), max(int(h * (1 - margin)), int(h * margin) + 1)
    x1, x2 = int(w * margin), max(int(w * (1 - margin)), int(w * margin) + 1)
    step = max(1, config.sample_step_px)
    return image[y1:y2:step, x1:x2:step].reshape(-1, 3)


class _Trained:
    """The colours of one kind a detector learnt (felts, tile backs), and the shift that moves
    another colour onto the nearest of them."""

    def __init__(self, trained_bgr, lightness_weight: float, what: str, kind: str) -> None:
        self.bgr = np.asarray(trained_bgr, np.float32).reshape(-1, 3)
        if not len(self.bgr):
            raise ValueError(f"{what} needs at least one trained {kind} colour")
        self.lab = to_lab(self.bgr)
        self.lab_weights = np.array([lightness_weight, 1.0, 1.0], np.float32)

    def distance(self, lab: np.ndarray, other_lab: np.ndarray) -> np.ndarray:
        return np.sqrt(((other_lab - lab) ** 2).dot(self.lab_weights))

    def onto_nearest(
        self, colour: np.ndarray, known: float, ramp: float, sigma: float
    ) -> FeltShift | None:
        """None for a colour within ``known`` of a trained one; else the shift onto the nearest,
        in part up to ``ramp`` farther (no jump where a colour's light varies about one)."""
        colour_lab = to_lab(colour)[0]
        distance = self.distance(colour_lab, self.lab)
        nearest = int(np.argmin(distance))
        if distance[nearest] <= known:
            return None
        share = min(1.0, (distance[nearest] - known) / ramp)
        offset = share * (self.bgr[nearest] - colour)
        return FeltShift(colour_lab, offset, sigma, self.lab_weights)


class FeltBalance:
    """Moves an unknown felt onto the nearest of ``trained_bgr`` (see the module docstring)."""

    def __init__(self, trained_bgr, config: FeltConfig | None = None) -> None:
        self.config = config or FeltConfig()
        self.trained = _Trained(trained_bgr, self.config.lightness_weight, "FeltBalance", "felt")

    def shift_for(self, image: np.ndarray, felt_bgr: np.ndarray | None = None) -> FeltShift | None:
        """How to balance ``image`` (full frame, BGR): None when its felt is a trained one.
        ``felt_bgr``: its felt's colour where already measured (:func:`felt_colour`). The
        weight is widened to the felt's own spread (``spread_sigmas``), measured only for a
        felt that is moved."""
        cfg = self.config
        felt_bgr = felt_colour(image, cfg) if felt_bgr is None else felt_bgr
        shift = self.shift_for_colour(felt_bgr)
        if shift is None or not cfg.spread_sigmas:
            return shift
        spread = felt_spread(image, felt_bgr, cfg)
        return replace(shift, sigma=max(cfg.sigma, cfg.spread_sigmas * spread))

    def shift_for_colour(self, felt_bgr: np.ndarray) -> FeltShift | None:
        """The same for a felt of colour ``felt_bgr`` (:func:`felt_colour`), at ``sigma``."""
        cfg = self.config
        return self.trained.onto_nearest(felt_bgr, cfg.known_distance, cfg.ramp, cfg.sigma)

    def apply(self, image: np.ndarray, shift: FeltShift | None) -> np.ndarray:
        """``image (H, W, 3)`` uint8 BGR (any part or scale of the frame ``shift`` is for),
        balanced; the very array when ``shift`` is None."""
        return shifted(image, (shift,))


def shifted(image: np.ndarray, shifts) -> np.ndarray:
    """``image`` with each colour of ``shifts`` (:class:`FeltShift`, None: none) moved by its
    offset, each pixel as far as it is near that colour; the very array when there is none."""
    shifts = [s for s in shifts if s is not None]
    if not shifts or image.size == 0:
        return image
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    out = image.astype(np.float32)
    for shift in shifts:
        weight = _nearness(lab, shift)
        for channel, offset in enumerate(shift.offset_bgr):
            out[..., channel] += weight * np.float32(offset)
    return np.clip(out, 0, 255, out=out).astype(np.uint8)


def _nearness(lab: np.ndarray, shift: FeltShift) -> np.ndarray:
    """Each pixel's weight ``exp(-d^2 / 2 sigma^2)``, ``d`` its weighted Lab distance from the
    shift's colour (``lab``: 8-bit Lab). The exponential of a weighted sum of squares is the
    product of one factor per channel, so the weights are read from three 256-entry tables
    rather than computed per pixel (the same values, in about half the time)."""
    levels = np.arange(256, dtype=np.float64)
    scale = -0.5 / shift.sigma**2
    tables = [
        np.exp(scale * float(w) * np.square(levels - float(c))).astype(np.float32)
        for c, w in zip(shift.lab, shift.lab_weights, strict=True)
    ]
    weight = tables[0][lab[..., 0]]
    weight *= tables[1][lab[..., 1]]
    weight *= tables[2][lab[..., 2]]
    return weight


class TileBacks:
    """A table's tile back colour, learnt from the face-down tiles the detector finds (the
    median of their middles, over the most recent ``keep``), and the shift that shows an
    unknown back to the network as the nearest of ``trained_bgr`` (a set of tiles whose backs
    it never learnt is mostly not found: the few it finds teach the colour). One per table:
    it remembers what it saw."""

    def __init__(self, trained_bgr, config: BackConfig | None = None) -> None:
        self.config = config or BackConfig()
        self.trained = _Trained(trained_bgr, self.config.lightness_weight, "TileBacks", "back")
        self._samples: deque[np.ndarray] = deque(maxlen=self.config.keep)

    def observe(self, image: np.ndarray, xyxy: np.ndarray) -> None:
        """Sample the middles of face-down tile boxes ``(N, 4)`` (pixels of ``image``)."""
        h, w = image.shape[:2]
        margin = (1.0 - self.config.patch) / 2
        for x1, y1, x2, y2 in np.asarray(xyxy, np.float64):
            dx, dy = (x2 - x1) * margin, (y2 - y1) * margin
            a, b = max(int(x1 + dx), 0), min(int(np.ceil(x2 - dx)), w)
            c, d = max(int(y1 + dy), 0), min(int(np.ceil(y2 - dy)), h)
            if b > a and d > c:
                self._samples.append(np.median(image[c:d, a:b].reshape(-1, 3), axis=0))

    def shift(self, felt_bgr: np.ndarray) -> FeltShift | None:
        """The backs' shift: None until ``min_samples`` are seen, for a trained back, or for
        one too near the felt (``felt_bgr``, its colour) to be moved apart from it."""
        cfg = self.config
        if len(self._samples) < cfg.min_samples:
            return None
        back = np.median(np.stack(self._samples), axis=0).astype(np.float32)
        shift = self.trained.onto_nearest(back, cfg.known_distance, cfg.ramp, cfg.sigma)
        if shift is None or self.trained.distance(shift.lab, to_lab(felt_bgr)[0]) < cfg.felt_apart:
            return None
        return shift
