"""Face reader: tile identity (21 faces) and die value (1-6) from full-resolution crops.

The detector runs on a downscaled frame; faces are read from the full-resolution frame, cut
square around the detection's box. One small classifier covers both: 28 classes,
``tile_<face>`` (21), ``die_<value>`` (6) and ``die_tipped`` (a die not lying flat, which shows
two faces and has no value). A second one, the face-down check, has a 29th class,
``tile_down`` (a tile lying face down, no face to read): it is a second opinion on the
detector's tile boxes both ways. A face-up tile the detector took for a face-down one (a
face-up woodpile top, say) is read as its face; a box the detector calls face up and the check
reads as a tile back has no face (the first reader, which has no tile_down class, would read
a back as some face): the two disagree, so the tile is face up with its face unknown, doubt
rather than a face or a back. A face needs reading once per track, not every frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from paigow.tiles import FACES

TILE_FACES = tuple(sorted(FACES))
# Sorted by name: the order ultralytics gives class folders, so the model's output index i is
# FACE_CLASSES[i] (the face reader checks this against the manifest when it loads).
DIE_TIPPED = "die_tipped"  # a die not lying flat: two faces show, no value is read
FACE_CLASSES = tuple(
    sorted([f"tile_{f}" for f in TILE_FACES] + [f"die_{v}" for v in range(1, 7)] + [DIE_TIPPED])
)
# A die reads die_tipped only when that is its most probable class at this probability or
# more; otherwise its most probable value. A flat die near the edge of the view shows its sides
# and can look half tipped: on rendered video (12 rounds of the standard suite) one read
# die_tipped at 0.49-0.56 with its value second (0.43); every tipped die read die_tipped at
# 0.75 or more. Lower: fewer tipped dice read as a value, more flat dice taken for tipped.
TIPPED_MIN_PROBABILITY = 0.7
TILE_DOWN = "tile_down"  # the face-down check's last class: a tile lying face down
DOWN_CHECK_CLASSES = (*FACE_CLASSES, TILE_DOWN)  # the face-down check's outputs, in order
TILE_FACE_CLASSES = np.array([i for i, c in enumerate(FACE_CLASSES) if c.startswith("tile_")])
# A box the detector calls face down counts as face up when the face-down check gives it a tile
# face at this probability or more. On held-out rendered crops (val rounds r_60000-2, test round
# r_60041) it read none of 1,252 face-down tiles as a face at 0.9 (the face reader, without a
# tile_down class, read 68-70% of them so), and turned up 96-98% of face-up tiles, 95-98% with
# their right face (models/metrics_faces_down.json).
FACE_UP_MIN_PROBABILITY = 0.9
# Or where the face reader, shown the same crop, reads a face at ``FACE_UP_MIN_PROBABILITY``
# or more, the check's most probable tile face is that face, and the check is not sure of a
# back (``tile_down`` under ``BACK_MIN_PROBABILITY``): two models agreeing on one face. A tile
# face up in a woodpile of backs is cut with its neighbours' backs beside it (the crop is
# square, the tile narrow): on compressed video of a look neither model learnt (rendered
# two_rows_wine, a 1-4 face up among black backs, in the table view) the check read tile_down
# at 0.62 and the 1-4 at 0.35 where the face reader read the 1-4 at 0.98, and the exposure went
# unseen. Until session 33 the check's own reading had to be that face at 0.5 or more. Set on
# rendered stills of the six training families and the standard look (40 scenes each, every
# tile at least 80% visible cut at its true box, as the monitor cuts it in its table view;
# scripts/face_up_stills.py): no back of 2,891 turned up by it (the face reader reads many
# backs as some face, never the one the check ranks first, and the pips check drops most);
# faces turned up: the navy-faced families 27 -> 33 of 127 and 10 -> 31 of 150, the rest the
# same. Held out, not used to set it: two_rows_wine 0 of 408 backs, faces 149 -> 149; teal_dim
# backs 1 -> 1 of 428, faces 77 -> 82 of 133.
# A box the detector calls face up has no face when the face-down check reads ``tile_down``
# at this probability or more. The face reader has no tile_down class and reads any tile back
# it is shown as some face: a detector that took backs for faces in the wash (a table look it
# never learnt) made laja exposures out of nothing. Not a face-down tile either: the check has
# taken dark tile faces it never learnt for backs, so the two models' disagreement is doubt
# (face unknown). Measured in docs/measurements.md (session 16) on the standard suite and
# training-family rounds, never the held-out ones.
BACK_MIN_PROBABILITY = 0.9
# A tile face shows pips, a back does not: whatever either model reads, a crop whose second
# strongest pip-sized blob (:func:`pip_evidence`) is weaker than this has no face (doubt). Both
# models read tile backs of a colour they never learnt as faces (maroon backs as 4-4). Set on
# rendered stills of the six training families (40 scenes each, tiles at least 80% visible,
# docs/measurements.md session 17), never the held-out ones: 0 of 914 faces came out below
# 10, 62-83% of backs did (the rest: backs beside other tiles, whose corners look like pips).
PIP_MIN_EVIDENCE = 10.0
PIP_SIGMA = 2.0  # blob scale in crop px: a pip is about 4 px across on a 96 px crop
# The die reader's classes (manifest ``dice``): FACE_CLASSES' first seven, in the same order.
DIE_CLASSES = FACE_CLASSES[: FACE_CLASSES.index(DIE_TIPPED) + 1]
DIE_VALUE_CLASSES = np.array([FACE_CLASSES.index(f"die_{v}") for v in range(1, 7)])
FACE_INPUT_PX = 96
CROP_MARGIN = 0.12  # fraction of the box's long side added around it


def crop_square(image: np.ndarray, xyxy, size: int = FACE_INPUT_PX) -> np.ndarray:
    """A ``(size, size, 3)`` crop centred on the box, side = long side x (1 + 2 margin).

    Pixels outside the image are filled by replicating its border.

    >>> crop_square(np.zeros((50, 80, 3), np.uint8), (10, 10, 30, 20), 32).shape
    (32, 32, 3)
    """
    x1, y1, x2, y2 = (float(v) for v in xyxy)
    side = max(x2 - x1, y2 - y1) * (1 + 2 * CROP_MARGIN)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    half = max(side / 2, 1.0)
    ix1, iy1 = int(np.floor(cx - half)), int(np.floor(cy - half))
    ix2, iy2 = int(np.ceil(cx + half)), int(np.ceil(cy + half))
    h, w = image.shape[:2]
    pad = max(0, -ix1, -iy1, ix2 - w, iy2 - h)
    if pad:
        image = cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
        ix1, iy1, ix2, iy2 = ix1 + pad, iy1 + pad, ix2 + pad, iy2 + pad
    crop = image[iy1:iy2, ix1:ix2]
    return cv2.resize(crop, (size, size), interpolation=cv2.INTER_AREA)


@dataclass(frozen=True, slots=True)
class FaceReading:
    """``face`` ("6-6") for a tile or ``die_value`` (1-6) for a die, with the probability."""

    face: str | None
    die_value: int | None
    confidence: float


def reading(class_index: int, confidence: float) -> FaceReading:
    """The class as a reading; a die not lying flat (``die_tipped``) reads no value."""
    name = FACE_CLASSES[class_index]
    kind, _, value = name.partition("_")
    if kind == "tile":
        return FaceReading(value, None, confidence)
    return FaceReading(None, int(value) if value.isdigit() else None, confidence)


def die_choice(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class and probability per die crop from the reader's ``probs (N, classes)``: die_tipped
    when it is the most probable class at ``TIPPED_MIN_PROBABILITY`` or more, else the most
    probable die value (tile classes never: the detector said die)."""
    values, tipped = DIE_VALUE_CLASSES, FACE_CLASSES.index(DIE_TIPPED)
    best_value = values[probs[:, values].argmax(axis=1)]
    is_tipped = (probs.argmax(axis=1) == tipped) & (probs[:, tipped] >= TIPPED_MIN_PROBABILITY)
    face = np.where(is_tipped, tipped, best_value)
    return face, probs[np.arange(len(probs)), face]


def turned_up(
    probs: np.ndarray, reader: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For crops of boxes the detector calls face down, from the face-down check's ``probs (N,
    DOWN_CHECK_CLASSES)``:
    which are face up (a tile face is the most probable class, at ``FACE_UP_MIN_PROBABILITY``
    or more; or, where the check is not sure of a back, the face reader's ``reader (N,
    FACE_CLASSES)`` reads the check's most probable face at ``FACE_UP_MIN_PROBABILITY`` or
    more), and the face and probability of each: the check's, or where the two agreed the face
    reader's (its probability is a face-up tile's face confidence everywhere else).

    >>> p = np.zeros((3, len(DOWN_CHECK_CLASSES)))
    >>> p[0, FACE_CLASSES.index("tile_3-4")], p[0, -1] = 0.95, 0.05
    >>> p[1, FACE_CLASSES.index("tile_3-4")], p[1, -1] = 0.35, 0.65
    >>> p[2, FACE_CLASSES.index("tile_3-4")], p[2, -1] = 0.05, 0.95
    >>> up, face, conf = turned_up(p)
    >>> up.tolist(), FACE_CLASSES[face[0]], float(conf[0])
    ([True, False, False], 'tile_3-4', 0.95)
    >>> reader = np.zeros((3, len(FACE_CLASSES)))
    >>> reader[:, FACE_CLASSES.index("tile_3-4")] = 0.98
    >>> up, face, conf = turned_up(p, reader)
    >>> up.tolist(), FACE_CLASSES[face[1]], conf[:2].round(2).tolist()
    ([True, True, False], 'tile_3-4', [0.95, 0.98])
    """
    best, conf = probs.argmax(axis=1), probs.max(axis=1)
    up = np.isin(best, TILE_FACE_CLASSES) & (conf >= FACE_UP_MIN_PROBABILITY)
    face = np.where(up, best, TILE_FACE_CLASSES[probs[:, TILE_FACE_CLASSES].argmax(axis=1)])
    if reader is not None:
        agreed = (reader.argmax(axis=1) == face) & (reader.max(axis=1) >= FACE_UP_MIN_PROBABILITY)
        agreed &= unsure_face(probs)
        up, conf = up | agreed, np.where(agreed, reader.max(axis=1), conf)
    return up, face, conf


def unsure_face(probs: np.ndarray) -> np.ndarray:
    """For crops of boxes the detector calls face down, from the face-down check's ``probs``:
    which it reads neither as a tile face at ``FACE_UP_MIN_PROBABILITY`` or more nor as a back
    at ``BACK_MIN_PROBABILITY`` or more (the face reader's word decides those,
    :func:`turned_up`)."""
    best, conf = probs.argmax(axis=1), probs.max(axis=1)
    sure_face = np.isin(best, TILE_FACE_CLASSES) & (conf >= FACE_UP_MIN_PROBABILITY)
    return ~sure_face & ~read_as_back(probs)


def read_as_back(probs: np.ndarray) -> np.ndarray:
    """For crops of boxes the detector calls face up, from the face-down check's ``probs (N,
    DOWN_CHECK_CLASSES)``: which it reads as a tile back (``tile_down`` the most probable
    class, at ``BACK_MIN_PROBABILITY`` or more).

    >>> p = np.zeros((2, len(DOWN_CHECK_CLASSES)))
    >>> p[0, -1], p[1, -1], p[1, FACE_CLASSES.index("tile_1-1")] = 0.95, 0.6, 0.4
    >>> read_as_back(p).tolist()
    [True, False]
    """
    down = len(DOWN_CHECK_CLASSES) - 1
    return (probs.argmax(axis=1) == down) & (probs[:, down] >= BACK_MIN_PROBABILITY)


def pip_evidence(crop: np.ndarray) -> float:
    """How clearly the centre of a tile crop (``crop_square``) shows pips: the second strongest
    blob (a peak of the Hessian determinant at ``PIP_SIGMA``, strongest colour channel) within
    0.3 of the crop's side from its centre, in units of the crop's own pixel noise squared.
    Pips are blobs of either polarity (white or red on a dark tile, dark on a light one); a
    tile's edges and a plain back give little. Faces have at least two pips.

    >>> back = np.full((96, 96, 3), 60, np.uint8)
    >>> face = back.copy()
    >>> for y in (30, 66):
    ...     _ = cv2.circle(face, (48, y), 4, (230, 230, 230), -1)
    >>> pip_evidence(back) < PIP_MIN_EVIDENCE <= pip_evidence(face)
    True
    """
    f = crop.astype(np.float32)
    fine = np.abs(f - cv2.GaussianBlur(f, (0, 0), 1.0)).reshape(-1, 3)[::4]
    noise = np.median(fine, axis=0) * 1.4826 + 1.0  # robust sigma of the finest detail
    g = cv2.GaussianBlur(f, (0, 0), PIP_SIGMA)
    dxx = cv2.Sobel(g, cv2.CV_32F, 2, 0, ksize=3)
    dyy = cv2.Sobel(g, cv2.CV_32F, 0, 2, ksize=3)
    dxy = cv2.Sobel(g, cv2.CV_32F, 1, 1, ksize=3)
    det = ((dxx * dyy - dxy**2) / noise**2).max(axis=2) * _centre_disc(f.shape[:2])
    peaks = det[(det == cv2.dilate(det, _PEAK_KERNEL)) & (det > 0)]
    return float(np.partition(peaks, -2)[-2]) if len(peaks) > 1 else 0.0


_PEAK_KERNEL = np.ones((5, 5), np.uint8)


@lru_cache(maxsize=4)
def _centre_disc(shape: tuple[int, int]) -> np.ndarray:
    """1 within 0.3 of the width from the centre of an image of ``shape``, else 0."""
    h, w = shape
    yy, xx = np.mgrid[:h, :w]
    return ((yy - h / 2) ** 2 + (xx - w / 2) ** 2 <= (0.3 * w) ** 2).astype(np.float32)


def is_die_value(class_index: int) -> bool:
    """Whether the class is a die showing one value (not a tile, not a tipped die)."""
    return class_index >= 0 and reading(class_index, 0.0).die_value is not None
