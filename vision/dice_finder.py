"""The dice finder: dice the detector missed in the dice area, found by their shape and read by
the die reader.

On a table it never learnt, the detector misses dice that lie plainly on the felt (rendered
two_rows_wine, a held-out look: one or two of three dice found in 5 of 14 rounds; dice turned
on the felt or lying on the area's print are the ones it misses). Where the dice land is known
(the layout's ``dice_area``) and so is a die's size (a quarter of a tile's long side: 16 mm
dice, 63.5 mm tiles), so the finder looks there for what a die looks like:

1. the dice area, grown by half its size (its felt and print seen around it), in the picture
   the models see; a die is one whose centre lies in the area itself (the round reads the
   dice there and nowhere else);
2. the pixels far from the felt's colour (the Lab distance, lightness counting half; the felt's
   colour is the area's median: most of it is felt);
3. a closing with a disc of ``close_die`` of a die's side (a die's pips are filled), then an
   opening with a disc of ``open_die`` of a die's side: the area's print (rings, letters,
   lines, all thinner than that) goes and a die stays; a blob longer than ``split_dice`` dice
   (a die touching print, or two dice touching) is opened again with ``split_die``;
4. blobs a die's size (``die_side`` of it, a tilted view's visible sides included), filling
   ``min_fill`` of their box (a die turned 45 degrees fills half) and square (``max_aspect``:
   the area's lettering, closed into one blob, is not);
5. each read by the die reader and kept only as a die value (never tipped) read at
   ``min_read`` or more, where no die the detector found already lies, no tile or chip found at
   ``block_confidence`` or more (the detector torn between a die and a chip at one place, both
   near 0.3 on a look it never learnt, has found no chip; a tile centred in the dice area is
   the dice and the print read as one: no tile lies there) and no hand found at
   ``block_confidence`` or more comes within a die of it (a fingertip is no die; a weaker
   "hand" is felt: on red felt the detector boxes empty felt over the dice area as a hand at
   0.3, red_dealer_mpeg4/payout_error_21100, and the three dice lying there went unfound);
6. a blob not read surely that holds a die-like blob of the picture without the area's print
   takes that one's reading where it is sure. The print is what most looks so far saw far
   from the felt (the majority, no threshold: a look's noise or a hand's shadow does not wear
   it away as requiring every look would): dice, down for a few looks of a round, are not in
   it, so a die touching a letter (in the held-out two_rows_wine a 2 beside the "D", its blob
   23 px for a 17-px die, read 2 at 0.84 off-centre, 0.94 alone) is seen alone. Dice down in
   most looks (a recording that starts with dice down) are in the print: their blobs are
   read as in 1-5, nothing taken away.
7. more dice than a throw has centred in the area, exactly three of them holding a die-like
   blob of 4: the others are dropped (the print, a die's shadow or its side seen as a die).
8. fewer dice than a throw has found so far: a die the felt's colour (red dice on red felt)
   shows only its pips far from the felt, and 3 finds no blob a die's size. So the picture
   without the area's print (6) is closed with ``pip_join`` of a die's side, which joins a
   die's pips into one blob, then opened as in 3; each blob is read in a box a die's size
   around its middle, on the terms of 5 (red_dealer_mpeg4/banker_underfunded_21200: a red 4
   on red felt, unfound by the detector and by 3, its throw never read). A lone pip (a 1)
   stays too small: doubt, no die.

A found die is a die detection of ``confidence`` (enough to start a track): from there the
tracker, the round and its rules treat it as any die. Doubt stays doubt: a blob the reader
does not read surely is not a die, and a tipped die is left to the detector.

The blobs also read the detector's own dice again where the reader was unsure of them: the
detector's box on a look it never learnt is loose (the print beside a die, its shadow, a side
seen under a tilted camera), and the die reader, given it, reads a flat 3 at 0.3 or as tipped
at 0.73 where the blob's tight box reads 3 at 0.96 (rendered two_rows_wine). A detected die read
below ``min_read``, or read tipped, whose box holds a blob read as a value at ``min_read`` or
more takes that reading; a tipped reading stands where the blob is not read surely.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from paigow.dice import DICE_COUNT
from vision.faces import DIE_VALUE_CLASSES, crop_square, die_choice
from vision.types import CHIP, DIE, HAND, TILE_DOWN, TILE_UP, Detections

DIE_TO_TILE = 16.0 / 63.5  # a die's side over a tile's long side


@dataclass(frozen=True)
class DiceFinderConfig:
    """Each threshold with the trade-off it makes."""

    # the dice area grown by this share of its size on each side, for the felt's colour and
    # the print around it (a die's centre must lie in the area itself)
    grow: float = 0.5
    # Lab distance from the felt's colour of a die's pixels; lower finds dice nearer the
    # felt's colour, admits more shading and glare
    min_felt_distance: float = 25.0
    # the closing disc, in die sides, that fills a die's pips first (a pip is a fifth of a
    # die): larger fills larger pips, joins a die to print nearer it
    close_die: float = 0.3
    # the opening disc, in die sides: larger removes thicker print, loses dice seen smaller
    open_die: float = 0.6
    split_dice: float = 2.0
    split_die: float = 0.85
    # a blob's box sides, in die sides (long side at most, short side at least)
    die_side: tuple[float, float] = (0.6, 2.0)
    min_fill: float = 0.45
    # a blob's box, long side over short: a die's is square, turned or seen from a tilted
    # camera up to about 1.3; the area's lettering ("DICE", closed into one blob) is twice as
    # long as high or more
    max_aspect: float = 1.5
    # the die reader's probability of the value: lower finds more dice, admits more blobs
    # that are no die (a fingertip, a chip's edge) read as one
    min_read: float = 0.9
    confidence: float = 0.5  # of a found die (the tracker's die_high_confidence starts a track)
    # a tile or chip detected at this confidence or more keeps a die from being found where it
    # lies; lower: a weak chip (a die the detector half takes for a chip) hides a die, higher:
    # a chip's printed middle can be found as a die
    block_confidence: float = 0.5
    # the closing disc, in die sides, of the look for dice the felt's colour (8): a 4's pips
    # lie at the corners of a square 0.56 of a side wide, 0.2 across, so the square's middle
    # lies 0.3 of a side from them: a disc wider than 0.6 fills it (0.75: a disc is a whole
    # number of pixels); then opened with ``open_die``, as any die's blob
    pip_join: float = 0.75


class DiceFinder:
    """Finds dice in one table's dice area. ``area_px``: the area's polygon in the picture the
    finder is given; ``tile_px``: a tile's long side there; ``read``: crops ``(N, S, S, 3)`` ->
    probabilities over the face classes (:meth:`vision.face_reader.FaceReader.die_probs`)."""

    def __init__(self, area_px, tile_px: float, read, config: DiceFinderConfig | None = None):
        self.config = cfg = config or DiceFinderConfig()
        self.read = read
        self.die_px = DIE_TO_TILE * tile_px
        area = np.asarray(area_px, np.float64).reshape(-1, 2)
        self._area = area.astype(np.float32)
        lo, hi = area.min(axis=0), area.max(axis=0)
        grow = cfg.grow * (hi - lo).max()
        self._lo, self._hi = lo - grow, hi + grow
        self._known: dict[tuple[int, ...], tuple[int, float]] = {}  # last frame's readings
        self._last: tuple[list, list] | None = None  # the last look's finds and readings
        # the area's print: how many of the looks so far saw each pixel of the grown area far
        # from the felt, and how many looks (the print: most of them)
        self._far_seen: np.ndarray | None = None
        self._looks = 0

    def __call__(
        self, image: np.ndarray, detections: Detections, changed: tuple | None = None
    ) -> Detections:
        """``detections`` with the dice found added (weaker die detections where one is found
        are dropped: the found die stands for them) and the unsure dice read again.
        ``changed``: boxes ``(x1, y1, x2, y2)`` where the picture changed since the last call
        (the motion gate's regions; ``()``: nowhere), None: anywhere. Where no change touches
        the area looked at, the last call's finds and readings stand (nothing is looked at)."""
        cfg = self.config
        dice = (detections.class_id == DIE) & (detections.confidence >= cfg.confidence)
        taken = dice | (
            np.isin(detections.class_id, (TILE_DOWN, TILE_UP, CHIP))
            & (detections.confidence >= cfg.block_confidence)
            & ~self._tiles_in_area(detections)
        )
        unsure = dice & (
            (detections.face_confidence < cfg.min_read)
            | ~np.isin(detections.face, DIE_VALUE_CLASSES)
        )
        if self._last is None or changed is None or self._touched(changed):
            self._last = self._look(image, detections, taken, unsure)
        found, again, blobs = self._last
        detections = self._reread(detections, unsure, again)
        if not found:
            return self._uncrowded(detections, blobs)
        weak = (detections.class_id == DIE) & ~taken
        under = np.zeros(len(detections), bool)  # weaker dice where a die is found
        for box, _, _ in found:
            under |= weak & _covers(detections.xyxy, box)
        kept, n = detections[~under], len(found)
        xyxy = np.array([b for b, _, _ in found], np.float32).reshape(n, 4)
        corners = xyxy[:, [[0, 1], [2, 1], [2, 3], [0, 3]]]
        added = Detections(
            xyxy,
            np.full(n, DIE, np.int32),
            np.full(n, self.config.confidence, np.float32),
            np.array([f for _, f, _ in found], np.int32),
            np.array([p for _, _, p in found], np.float32),
            None if kept.obb is None else corners,
        )
        return self._uncrowded(Detections.concat([kept, added]), blobs)

    def _look(self, image, detections, taken, unsure) -> tuple[list, list, list]:
        """The dice found where nothing was detected, and the sure readings of blobs in
        unsure dice's boxes: ``(box, face, probability)`` each; and every die-like blob."""
        hands = detections.xyxy[
            (detections.class_id == HAND) & (detections.confidence >= self.config.block_confidence)
        ]
        boxes, bare = self._blobs_seen(image)
        blobs = list(boxes)
        boxes = [b for b in boxes if not _touch(hands, b, self.die_px)]
        again = [b for b in boxes if _covers(detections.xyxy[unsure], b).any()]
        boxes = [b for b in boxes if not _covers(detections.xyxy[taken], b).any()]
        looked = boxes + again
        known = dict(zip(looked, self._read(image, looked), strict=True))
        sure = {b: (b, *known[b]) for b in looked if self._sure(known[b])}
        # an unsure blob holding a blob of the picture without the print: that one's reading
        doubted = [b for b in looked if b not in sure]
        bare_boxes = self._die_boxes(*bare) if doubted and bare is not None else []
        instead = {
            b: a
            for b in doubted
            for a in bare_boxes
            if a != b and _covers(np.array([b]), a)[0] and not _touch(hands, a, self.die_px)
        }
        more = list(dict.fromkeys(instead.values()))
        known |= dict(zip(more, self._read(image, more), strict=True))
        sure |= {b: (a, *known[a]) for b, a in instead.items() if self._sure(known[a])}
        found = [sure[b] for b in boxes if b in sure]
        dice = self._centred_in_area(detections, taken & (detections.class_id == DIE)).sum()
        if bare is not None and dice + len(found) < DICE_COUNT:
            held = [*detections.xyxy[taken], *(box for box, _, _ in found)]
            pips = [
                b
                for b in self._pip_boxes(*bare)
                if not _touch(hands, b, self.die_px) and not _covers(held, b).any()
            ]
            known |= dict(zip(pips, self._read(image, pips), strict=True))
            found += [(b, *known[b]) for b in pips if self._sure(known[b])]
        self._known = known
        return found, [sure[b] for b in again if b in sure], blobs

    def _uncrowded(self, detections: Detections, blobs: list) -> Detections:
        """``detections`` without the dice centred in the area that hold no die-like blob, when
        more dice than a throw has lie there and exactly a throw's dice hold one: the others
        are the area's print or a die's shadow or side taken for a die (two_rows_wine, a look
        never learnt: a stroke of the ring beside a die, read as a die at 0.54, made four dice
        and the throw was never read). Otherwise which dice are the throw is left unknown."""
        inside = self._centred_in_area(detections, detections.class_id == DIE)
        if inside.sum() <= DICE_COUNT:
            return detections
        held = np.zeros(len(detections), bool)
        for blob in blobs:
            held |= inside & _covers(detections.xyxy, blob)
        return detections if held.sum() != DICE_COUNT else detections[~inside | held]

    def _tiles_in_area(self, detections: Detections) -> np.ndarray:
        """Which detections are tiles centred in the dice area: no tile lies there in a round
        (dice are thrown into it, tiles are dealt to the boxes), so a tile read there is dice
        and the area's print seen as one; it hides no die (red_dealer_mpeg4/clean_10000: dark
        dice beside the upturned "DICE" lettering read as a face-up tile at 0.85)."""
        return self._centred_in_area(detections, np.isin(detections.class_id, (TILE_DOWN, TILE_UP)))

    def _centred_in_area(self, detections: Detections, which: np.ndarray) -> np.ndarray:
        """Which of the detections ``which`` (a mask) are centred in the dice area."""
        inside = which.copy()
        for i in np.flatnonzero(which):
            x1, y1, x2, y2 = detections.xyxy[i]
            inside[i] = self._inside((x1 + x2) / 2, (y1 + y2) / 2)
        return inside

    def _sure(self, reading: tuple[int, float]) -> bool:
        face, p = reading
        return face in DIE_VALUE_CLASSES and p >= self.config.min_read

    def _touched(self, changed) -> bool:
        """Whether any changed box touches the area looked at."""
        return any(
            x1 < self._hi[0] and self._lo[0] < x2 and y1 < self._hi[1] and self._lo[1] < y2
            for x1, y1, x2, y2 in changed
        )

    @staticmethod
    def _reread(detections: Detections, unsure: np.ndarray, reads: list) -> Detections:
        """``detections`` with each unsure die whose box holds a surely read blob given the
        surest such reading."""
        if not reads:
            return detections
        face, face_p = detections.face.copy(), detections.face_confidence.copy()
        best = np.zeros(len(detections), np.float32)
        for box, value, p in reads:
            at = unsure & _covers(detections.xyxy, box) & (best < p)
            face[at], face_p[at], best[at] = value, p, p
        return replace(detections, face=face, face_confidence=face_p)

    def _blobs_seen(self, image: np.ndarray) -> tuple[list, tuple | None]:
        """Boxes ``(x1, y1, x2, y2)`` of die-like blobs whose centre lies in the dice area
        (looked for in the grown area: the felt's colour and the print are seen around it), and
        the picture without the area's print, ``(mask, x0, y0)`` for :meth:`_die_boxes` (None
        at the first look); the print learns this picture."""
        far, x0, y0 = self._far(image)
        if far is None:
            return [], None
        if self._far_seen is None or self._far_seen.shape != far.shape:
            self._far_seen, self._looks = np.zeros(far.shape, np.int32), 0
        bare = far * (2 * self._far_seen <= self._looks)  # far now, not in most looks before
        known = self._looks > 0
        self._far_seen += far
        self._looks += 1
        return self._die_boxes(far, x0, y0), (bare, x0, y0) if known else None

    def _far(self, image: np.ndarray) -> tuple[np.ndarray | None, int, int]:
        """The grown area's pixels far from the felt's colour (1), and the area's corner."""
        h, w = image.shape[:2]
        x0, y0 = (max(0, int(v)) for v in self._lo)
        x1, y1 = min(w, int(np.ceil(self._hi[0]))), min(h, int(np.ceil(self._hi[1])))
        if x1 - x0 < self.die_px or y1 - y0 < self.die_px:
            return None, x0, y0
        lab = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2LAB).astype(np.float32)
        felt = np.median(lab.reshape(-1, 3), axis=0)
        off = (lab - felt) * np.array([0.5**0.5, 1.0, 1.0], np.float32)
        far = np.sqrt((off**2).sum(axis=2)) > self.config.min_felt_distance
        return far.astype(np.uint8), x0, y0

    def _pip_boxes(self, bare: np.ndarray, x0: int, y0: int) -> list[tuple[int, int, int, int]]:
        """Boxes a die's size around each die-like blob of a die's pips joined in ``bare`` (the
        picture without the print) whose centre lies in the dice area (8)."""
        half = self.die_px / 2
        centres = [
            ((x1 + x2) / 2, (y1 + y2) / 2)
            for x1, y1, x2, y2 in self._die_boxes(bare, x0, y0, self.config.pip_join)
        ]
        return [
            (round(x - half), round(y - half), round(x + half), round(y + half)) for x, y in centres
        ]

    def _die_boxes(
        self, far: np.ndarray, x0: int, y0: int, close: float | None = None
    ) -> list[tuple[int, int, int, int]]:
        """Boxes of the die-like blobs of ``far`` whose centre lies in the dice area (closed with
        ``close`` of a die's side, the config's ``close_die`` by default)."""
        cfg, die = self.config, self.die_px
        close = cfg.close_die if close is None else close
        mask = _opened(_closed(far, close * die), cfg.open_die * die)
        labels, blobs = _blobs(mask)
        long = [i + 1 for i, b in enumerate(blobs) if max(b[2], b[3]) > cfg.split_dice * die]
        if long:
            again = np.isin(labels, long).astype(np.uint8)
            blobs += _blobs(_opened(again, cfg.split_die * die))[1]
        lo, hi = cfg.die_side[0] * die, cfg.die_side[1] * die
        boxes = [
            (x0 + x, y0 + y, x0 + x + bw, y0 + y + bh)
            for x, y, bw, bh, area in blobs
            if max(bw, bh) <= hi
            and min(bw, bh) >= lo
            and area >= cfg.min_fill * bw * bh
            and max(bw, bh) <= cfg.max_aspect * min(bw, bh)
        ]
        return [b for b in boxes if self._inside((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)]

    def _inside(self, x: float, y: float) -> bool:
        return cv2.pointPolygonTest(self._area, (float(x), float(y)), False) >= 0

    def _read(self, image, boxes) -> list[tuple[int, float]]:
        """(class, probability) per box: the last frame's reading for a box found again where
        it was, else the die reader's."""
        new = [b for b in boxes if tuple(b) not in self._known]
        read = {}
        if new:
            faces, probs = die_choice(self.read(np.stack([crop_square(image, b) for b in new])))
            read = {tuple(b): (int(f), float(p)) for b, f, p in zip(new, faces, probs, strict=True)}
        return [self._known.get(tuple(b)) or read[tuple(b)] for b in boxes]


def _opened(mask: np.ndarray, disc_px: float) -> np.ndarray:
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, _disc(disc_px))


def _closed(mask: np.ndarray, disc_px: float) -> np.ndarray:
    return cv2.morphologyEx(mask, cv2.MORPH_CLOSE, _disc(disc_px))


def _disc(px: float) -> np.ndarray:
    k = max(3, round(px) | 1)
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))


def _blobs(mask: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int, int, int, int]]]:
    """The blobs' labels (0: none, ``i + 1``: the ``i``-th blob) and ``(x, y, w, h, area)`` of
    each connected blob."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
    return labels, [tuple(int(v) for v in stats[i]) for i in range(1, n)]


def _covers(xyxy: np.ndarray, box) -> np.ndarray:
    """Which of the boxes ``xyxy`` hold the centre of ``box``."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    x1, y1, x2, y2 = np.asarray(xyxy, np.float64).reshape(-1, 4).T
    return (x1 <= cx) & (cx <= x2) & (y1 <= cy) & (cy <= y2)


def _touch(xyxy: np.ndarray, box, reach: float) -> bool:
    """Whether any of the boxes ``xyxy`` comes within ``reach`` of ``box``."""
    x1, y1, x2, y2 = np.asarray(xyxy, np.float64).reshape(-1, 4).T
    apart_x = np.maximum(x1 - box[2], box[0] - x2)
    apart_y = np.maximum(y1 - box[3], box[1] - y2)
    return bool((np.maximum(apart_x, apart_y) < reach).any())
