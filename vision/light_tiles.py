"""Light tiles: a table whose tiles are light (ivory, cream, white) is shown to the models with
its tiles' lightness turned over, as the dark tiles with light pips they learnt.

Every tile the detector, the face reader and the face-down check learnt is dark, with white
and red pips. On a table of ivory tiles with black pips the detector finds none (the held-out
family ``ivory_olive_spots``: tiles AP50 0.0, the tiles read as chips), so no wash, woodpile,
delivery or hand is seen. In lightness an ivory tile with black pips is a dark tile with
white pips turned over. So once a table's tiles are known to be light, each tile-sized patch
of their colour (with the pips inside it) has its lightness turned over and its colour moved
onto the trained back: the body becomes dark, black pips white, red pips stay red. The rest
of the picture keeps its pixels: the felt, hands, chips, and dice and print, patches far
smaller than a tile.

The tiles' colour is learnt from the woodpile area: a patch there much lighter than the
felt, not reddish (a hand), that stays still for ``still_s`` (a woodpile stands for many
seconds; hands and sleeves move) and covers a good part of the area. A table of dark tiles
never shows one, and is shown to the models exactly as before.

>>> tiles = LightTiles(np.array([[0, 0], [80, 0], [80, 40], [0, 40]]), 30.0, (18, 18, 20))
>>> felt = np.full((120, 240, 3), (30, 80, 78), np.uint8)  # the woodpile at the top left
>>> ivory = felt.copy()
>>> ivory[5:35, 10:70] = (196, 222, 234)
>>> tiles.apply(ivory) is ivory  # nothing learnt yet: the picture as it is
True
>>> for k in range(16):  # four seconds of a still woodpile
...     tiles.observe(ivory, k * 0.25)
>>> tiles.colour_bgr is not None
True
>>> tiles.apply(ivory)[20, 40].tolist(), tiles.apply(ivory)[0, 0].tolist()  # tile, felt
([18, 17, 21], [30, 80, 78])
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.felt import felt_colour, to_lab


@dataclass(frozen=True)
class LightTileConfig:
    """When a table's tiles count as light, and which pixels are turned over."""

    every_s: float = 0.2  # how often the woodpile area is looked at (seconds of video)
    # a light patch is at least this much lighter than the felt (Lab lightness, 0-255)
    lighter_than_felt: float = 70.0
    # and at most this far from neutral in Lab a (green-red): a hand is redder; higher: more
    # tile colours count, and light skin too
    max_redness: float = 8.0
    still_change: float = 10.0  # a still pixel's lightness changes at most this between looks
    still_s: float = 3.0  # how long a light patch must stay still to be the tiles
    # share of the woodpile area the still light patch covers (a built woodpile covers most
    # of it; print and a die hardly any)
    min_cover: float = 0.2
    # this many tiles found at once by the detector in the woodpile area are a woodpile of the
    # dark tiles it learnt (a built one shows 8 stacks' tops): the watch ends, nothing learnt
    dark_woodpile: int = 8
    # a pixel within this Lab distance of the tiles' colour is tile, lightness counting
    # lightness_weight of colour: a tile in shade or light differs from it mostly in
    # lightness; light skin, felt under glare, white sleeves and dice 12-16 in colour
    sigma: float = 12.0
    lightness_weight: float = 0.1
    # a pixel darker than the tiles by more than this (Lab lightness) is not tile (felt, lit
    # by a spot, can be as near in colour); a tile's shaded sides are about 40 darker
    darker_than: float = 60.0
    # a pixel redder than the tiles (Lab a) is this much farther: skin is redder than a
    # light tile, and a light hand in dim light is otherwise as near as the tiles' shade
    redder_weight: float = 2.0
    # a pip this far from the tiles' colour (Lab colour distance) begins to count as coloured,
    # and wholly so coloured_over beyond: its lightness is kept (a red pip stays as dark as
    # the red pips learnt), a dark pip's turned
    coloured_from: float = 20.0
    coloured_over: float = 30.0
    # a patch thinner than this share of a tile's long side is print, not tile (a tile is half
    # as wide as it is long)
    thinnest: float = 0.12
    # a patch smaller than this share of a tile (long side squared) is left as it is: a die,
    # print; a tile mostly under a hand too
    min_area: float = 0.2
    # a hole in a patch smaller than this share of a tile is a pip (turned over with its
    # tile); a larger one is felt between tiles
    max_hole: float = 0.15


class LightTiles:
    """One table's tiles, light or not. ``woodpile_px (N, 2)``: the woodpile area's polygon,
    ``tile_px`` a tile's long side and ``dice_px (M, 2)`` the dice area's polygon (never
    turned: white dice together are as large as a tile), in the pixels the models see;
    ``back_bgr``: the trained back the tiles are shown as. It remembers what it learnt."""

    def __init__(
        self,
        woodpile_px,
        tile_px: float,
        back_bgr,
        config: LightTileConfig | None = None,
        dice_px=None,
    ):
        self.config = config or LightTileConfig()
        # the dice area's polygon: dice are white, and no tile lies there
        self._dice = None if dice_px is None else np.asarray(dice_px, np.float64).reshape(-1, 2)
        self._no_tiles: np.ndarray | None = None  # its mask at half size, made at first use
        self.tile_px = float(tile_px)
        self.back_lab = to_lab(back_bgr)[0]
        self._lab: np.ndarray | None = None  # the tiles' colour (Lab), once learnt light
        poly = np.asarray(woodpile_px, np.float64).reshape(-1, 2)
        self._box = (
            *np.floor(poly.min(axis=0)).astype(int),
            *np.ceil(poly.max(axis=0)).astype(int),
        )
        self._poly = poly
        self._area_mask: tuple | None = None  # (frame size, the area's mask in its box)
        self._next_s = -np.inf
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # the last look: light, lightness
        self._still_since: float | None = None
        self._seen: list[np.ndarray] = []  # Lab colours of the still light patches since then
        self.dark = False  # a woodpile of dark tiles was found: nothing to learn

    @property
    def colour_bgr(self) -> np.ndarray | None:
        """The tiles' colour ``(3,)`` BGR once they are learnt light, else None."""
        if self._lab is None:
            return None
        lab = self._lab.astype(np.uint8).reshape(1, 1, 3)
        return cv2.cvtColor(lab, cv2.COLOR_LAB2BGR).reshape(3).astype(np.float32)

    def observe(self, image: np.ndarray, time_s: float) -> None:
        """Look at the woodpile area of ``image (H, W, 3)`` BGR (every ``every_s``) until the
        tiles are learnt light."""
        cfg = self.config
        if self._lab is not None or self.dark:
            return
        looked_s = self._next_s - cfg.every_s
        if looked_s <= time_s < self._next_s:
            return  # looked at lately
        if time_s < looked_s:  # the clock went back (a stream started again): start afresh
            self._last, self._still_since, self._seen = None, None, []
        self._next_s = time_s + cfg.every_s
        crop, area = self._area(image)
        if crop is None:
            return
        lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB)
        lightness = lab[..., 0].astype(np.int16)
        felt = to_lab(felt_colour(image))[0]
        light = (lightness > felt[0] + cfg.lighter_than_felt) & area
        light &= np.abs(lab[..., 1].astype(np.int16) - 128) <= cfg.max_redness
        k = max(3, int(self.tile_px * 2 * cfg.thinnest) | 1)  # print lines, lettering
        light = cv2.morphologyEx(light.astype(np.uint8), cv2.MORPH_OPEN, np.ones((k, k), np.uint8))
        light = light.astype(bool)
        last, self._last = self._last, (light, lightness)
        still = None
        if last is not None and last[0].shape == light.shape:
            still = light & last[0] & (np.abs(lightness - last[1]) <= cfg.still_change)
        if still is None or still.sum() < cfg.min_cover * area.sum():
            self._still_since, self._seen = None, []
            return
        if self._still_since is None:
            self._still_since = time_s
        self._seen.append(np.median(lab[still].reshape(-1, 3), axis=0))
        if time_s - self._still_since >= cfg.still_s:
            colour = np.median(np.stack(self._seen), axis=0).astype(np.uint8).reshape(1, 1, 3)
            self._lab = colour.reshape(3).astype(np.float32)
            levels = np.arange(256, dtype=np.float32)[:, None]
            weights = np.tile(np.array([cfg.lightness_weight, 1.0, 1.0], np.float32), (256, 1))
            weights[levels[:, 0] > self._lab[1], 1] = cfg.redder_weight
            lut = np.square((levels - self._lab) * weights)  # (256, 3): each channel's term
            lut[levels[:, 0] < self._lab[0] - cfg.darker_than, 0] = np.inf  # felt, shadow
            self._lut = lut.reshape(1, 256, 3)

    def tiles_found(self, xyxy: np.ndarray) -> None:
        """The detector found tiles ``xyxy (N, 4)`` in the picture it was shown: while nothing
        is learnt, ``dark_woodpile`` or more of them centred in the woodpile area at once are a
        woodpile of the dark tiles it learnt, and the watch ends for good (a white sleeve
        resting there for long, later, teaches nothing)."""
        if self._lab is not None or self.dark or len(xyxy) < self.config.dark_woodpile:
            return
        poly = self._poly.astype(np.float32)
        boxes = np.asarray(xyxy, np.float64)
        centres = (boxes[:, :2] + boxes[:, 2:]) / 2
        inside = sum(cv2.pointPolygonTest(poly, (x, y), False) >= 0 for x, y in centres.tolist())
        self.dark = inside >= self.config.dark_woodpile

    def apply(self, image: np.ndarray) -> np.ndarray:
        """``image`` with its light tiles turned over (``image`` itself until they are learnt,
        or where none is in sight). Which pixels are tile is found at half size (a quarter of
        the cost) and blended in at the edges."""
        if self._lab is None:
            return image
        cfg = self.config
        h, w = image.shape[:2]
        small = cv2.resize(image, ((w + 1) // 2, (h + 1) // 2), interpolation=cv2.INTER_AREA)
        near = cv2.LUT(cv2.cvtColor(small, cv2.COLOR_BGR2LAB), self._lut)
        near = cv2.transform(near, np.ones((1, 3), np.float32)) <= cfg.sigma**2
        tile_px = self.tile_px / 2
        if self._dice is not None:
            near &= ~self._dice_mask(near.shape)
        near = _with_pips(near, cfg.max_hole * tile_px**2)  # pips first: a face stays whole
        k = max(3, int(tile_px * cfg.thinnest) | 1)  # printed lines and lettering go
        near = cv2.morphologyEx(near.astype(np.uint8), cv2.MORPH_OPEN, np.ones((k, k), np.uint8))
        mask, boxes = _large(near, cfg.min_area * tile_px**2)
        if not mask.any():
            return image
        out = image.copy()
        for x, y, bw, bh in boxes:  # each patch's box, grown by a pixel for the blend
            x1, y1 = max(x - 1, 0), max(y - 1, 0)
            x2, y2 = min(x + bw + 1, mask.shape[1]), min(y + bh + 1, mask.shape[0])
            part = cv2.resize(mask[y1:y2, x1:x2].astype(np.float32), (2 * (x2 - x1), 2 * (y2 - y1)))
            part = part[: h - 2 * y1, : w - 2 * x1]
            rows = slice(2 * y1, 2 * y1 + part.shape[0])
            cols = slice(2 * x1, 2 * x1 + part.shape[1])
            out[rows, cols] = self._turned(image[rows, cols], part)  # boxes may overlap: from
            # the picture, never from what an earlier box turned
        return out

    def _turned(self, pixels: np.ndarray, alpha: np.ndarray) -> np.ndarray:
        """``pixels (h, w, 3)`` BGR turned over, blended by ``alpha (h, w)`` in [0, 1]: the
        farther a pixel's lightness is from the tiles', the lighter it is made (dark pips
        white; the body the back, a lit rim or glare a little lighter, as on a dark tile); a
        coloured pip keeps its lightness. The body's colour is moved onto the back's, a dark
        pip's hardly."""
        lab = cv2.cvtColor(pixels, cv2.COLOR_BGR2LAB).astype(np.float32)
        lightness, colour = lab[..., :1], lab[..., 1:]
        off = np.linalg.norm(colour - self._lab[1:], axis=-1, keepdims=True)
        cfg = self.config
        coloured = np.clip((off - cfg.coloured_from) / cfg.coloured_over, 0, 1)
        turned = self.back_lab[0] + np.abs(self._lab[0] - lightness)  # lit parts: lighter
        body = (1 - coloured) * np.clip(lightness / max(self._lab[0], 1.0), 0, 1)
        lab = np.concatenate(
            [
                coloured * lightness + (1 - coloured) * turned,
                colour + body * (self.back_lab[1:] - self._lab[1:]),
            ],
            axis=-1,
        )
        turned = cv2.cvtColor(np.clip(lab, 0, 255).astype(np.uint8), cv2.COLOR_LAB2BGR)
        a = alpha[..., None]
        return np.round(a * turned + (1 - a) * pixels).astype(np.uint8)

    def _dice_mask(self, shape: tuple[int, int]) -> np.ndarray:
        """The dice area at half size (of ``shape``), grown by a tile's width."""
        if self._no_tiles is None or self._no_tiles.shape != shape:
            mask = np.zeros(shape, np.uint8)
            cv2.fillPoly(mask, [np.round(self._dice / 2).astype(np.int32)], 1)
            k = max(3, int(self.tile_px / 4) | 1)
            self._no_tiles = cv2.dilate(mask, np.ones((k, k), np.uint8)).astype(bool)
        return self._no_tiles

    def _area(self, image: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The woodpile area's bounding crop of ``image`` and the area's mask in it."""
        h, w = image.shape[:2]
        x1, y1, x2, y2 = self._box
        x1, y1, x2, y2 = max(x1, 0), max(y1, 0), min(x2, w), min(y2, h)
        if x2 - x1 < 2 or y2 - y1 < 2:
            return None, None
        if self._area_mask is None or self._area_mask[0] != (h, w):
            mask = np.zeros((y2 - y1, x2 - x1), np.uint8)
            cv2.fillPoly(mask, [np.round(self._poly - (x1, y1)).astype(np.int32)], 1)
            self._area_mask = ((h, w), mask.astype(bool))
        return image[y1:y2, x1:x2], self._area_mask[1]


def _large(mask: np.ndarray, min_px: float) -> tuple[np.ndarray, np.ndarray]:
    """The connected patches of ``mask`` of at least ``min_px`` pixels, and their bounding
    boxes ``(K, 4)`` x, y, width, height."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    keep = np.zeros(n, bool)
    keep[1:] = stats[1:, cv2.CC_STAT_AREA] >= min_px
    return keep[labels], stats[keep, :4]


def _with_pips(mask: np.ndarray, max_hole_px: float) -> np.ndarray:
    """``mask`` with its holes of fewer than ``max_hole_px`` pixels filled (a tile's pips)."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats((~mask).astype(np.uint8), connectivity=4)
    small = np.zeros(n, bool)
    small[1:] = stats[1:, cv2.CC_STAT_AREA] < max_hole_px
    return mask | small[labels]
