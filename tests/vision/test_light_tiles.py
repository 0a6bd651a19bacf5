"""Light tiles (vision.light_tiles): a table of ivory tiles is shown to the models as the dark
tiles with light pips they learnt, once its woodpile shows the tiles are light."""

import dataclasses

import cv2
import numpy as np
import pytest

from vision.light_tiles import LightTileConfig, LightTiles

OLIVE, IVORY, BACK = (30, 80, 78), (196, 222, 234), (18, 18, 20)
DARK_TILE, SKIN, SLEEVE = (22, 22, 24), (150, 180, 225), (235, 235, 235)
TILE_PX = 40.0  # a tile's long side; its short side is half that
WOODPILE = np.array([[100, 20], [300, 20], [300, 70], [100, 70]])


def felt(size=(240, 400)) -> np.ndarray:
    image = np.empty((*size, 3), np.uint8)
    image[:] = OLIVE
    cv2.line(image, (100, 20), (300, 20), (215, 225, 230), 2)  # the area's printed edge
    return image


def woodpile(colour, image=None) -> np.ndarray:
    """Eight stacks side by side in the woodpile area."""
    image = felt() if image is None else image
    for k in range(8):
        x = 108 + 24 * k
        image[25:65, x : x + 20] = colour
    return image


def learnt(frames, seconds: float = 4.0, step_s: float = 0.04) -> LightTiles:
    """A check that watched ``frames(t)`` for ``seconds`` of 25 fps video."""
    tiles = LightTiles(WOODPILE, TILE_PX, BACK)
    for t in np.arange(0.0, seconds, step_s):
        tiles.observe(frames(t), float(t))
    return tiles


def test_a_still_light_woodpile_teaches_the_tiles_colour():
    tiles = learnt(lambda t: woodpile(IVORY))
    assert tiles.colour_bgr is not None
    assert np.abs(tiles.colour_bgr - IVORY).max() <= 3


def test_dark_tiles_sleeves_passing_and_hands_resting_teach_nothing():
    assert learnt(lambda t: woodpile(DARK_TILE)).colour_bgr is None

    def sleeve_passing(t):  # a white sleeve sweeps across the woodpile area and back
        image = woodpile(DARK_TILE)
        x = int(100 + 150 * abs(np.sin(t * 2.0)))
        image[10:80, x : x + 60] = SLEEVE
        return image

    assert learnt(sleeve_passing, seconds=8.0).colour_bgr is None

    def hand_resting(t):  # a still, light-skinned hand over the woodpile
        image = woodpile(DARK_TILE)
        image[20:70, 120:220] = SKIN
        return image

    assert learnt(hand_resting).colour_bgr is None


def test_a_light_patch_must_stay_still_for_a_while():
    cfg = LightTileConfig()
    briefly = learnt(lambda t: woodpile(IVORY if t < cfg.still_s * 0.8 else DARK_TILE))
    assert briefly.colour_bgr is None
    assert learnt(lambda t: woodpile(IVORY), seconds=cfg.still_s * 1.5).colour_bgr is not None


def stacks_xyxy(n: int, dy: float = 0.0) -> np.ndarray:
    """Boxes of the first ``n`` of :func:`woodpile`'s stacks, moved down ``dy`` pixels."""
    return np.array([[108 + 24 * k, 25 + dy, 128 + 24 * k, 65 + dy] for k in range(n)], float)


def test_a_woodpile_of_dark_tiles_found_by_the_detector_ends_the_watch():
    """Once the detector has found a woodpile of the dark tiles it learnt, a white sleeve
    resting over the woodpile area for long teaches nothing; fewer tiles there, or tiles
    elsewhere, end nothing."""
    for found, ends in (
        (stacks_xyxy(8), True),
        (stacks_xyxy(7), False),
        (stacks_xyxy(8, 100), False),
    ):
        tiles = LightTiles(WOODPILE, TILE_PX, BACK)
        tiles.tiles_found(found)
        assert tiles.dark is ends
        for t in np.arange(0.0, 4.0, 0.04):
            tiles.observe(woodpile(SLEEVE), float(t))
        assert (tiles.colour_bgr is None) is ends


def test_nothing_changes_until_the_tiles_are_learnt_light():
    tiles = learnt(lambda t: woodpile(DARK_TILE))
    image = woodpile(IVORY)
    assert tiles.apply(image) is image


def test_a_light_tile_is_turned_over_and_the_rest_of_the_picture_keeps_its_pixels():
    tiles = learnt(lambda t: woodpile(IVORY))
    image = felt()
    image[120:160, 50:70] = IVORY  # a face-up tile: a black pip on top, a red one below
    cv2.circle(image, (60, 130), 3, (34, 32, 32), -1)
    cv2.circle(image, (60, 150), 3, (45, 40, 205), -1)
    image[130:139, 200:209] = (235, 238, 240)  # a white die, a third of a tile wide
    out = tiles.apply(image)
    assert np.abs(out[125, 53].astype(int) - BACK).max() <= 4  # the tile's body: the back
    assert out[130, 60].min() > 180  # the black pip: white
    b, g, r = out[150, 60].astype(int)
    assert r > max(b, g) + 60  # the red pip: red
    assert (out[130:139, 200:209] == image[130:139, 200:209]).all()  # the die as it was
    assert (out[200:, :] == image[200:, :]).all() and (out[:, 300:] == image[:, 300:]).all()


@pytest.fixture(scope="module")
def detector():
    from vision.detector import Detector

    return Detector()


def _tiles_found(detector, image, scene) -> tuple[int, int]:
    from vision.geometry import iou_matrix

    tiles = [o for o in scene.objects if o.kind == "tile" and o.visibility >= 0.5]
    truth = np.array([o.xyxy for o in tiles]).reshape(-1, 4)
    found = detector.detect(image)
    boxes = found.xyxy[np.isin(found.class_id, (0, 1))]  # tile_down, tile_up
    hits = (iou_matrix(truth, boxes).max(axis=1) >= 0.5).sum() if len(boxes) else 0
    return int(hits), len(tiles)


def test_the_detector_finds_ivory_tiles_it_never_saw_once_they_are_turned_over(detector):
    """Rendered stills of the training look with ivory tiles and black pips (every trained
    tile is dark): plain, the detector finds hardly any; turned over, most."""
    from vision.synth.config import TRAINING
    from vision.synth.render import Renderer
    from vision.synth.stills import random_scene

    objects = dataclasses.replace(
        TRAINING.objects,
        tile_body_bgr=(IVORY,),
        tile_side_bgr=((150, 178, 196),),
        white_pip_bgr=((34, 32, 32),),
    )
    look = dataclasses.replace(TRAINING, objects=objects)
    renderer = Renderer()
    plain, turned, total = 0, 0, 0
    for seed in range(3):
        scene = renderer.render(
            random_scene(np.random.default_rng(seed), look, renderer.layout, renderer.settings)
        )
        colour = scene_back(scene)  # as this camera sees the woodpile
        tiles = learnt(lambda t, colour=colour: woodpile(colour))
        tiles.tile_px = scene_tile_px(scene)
        got, n = _tiles_found(detector, scene.image, scene)
        plain, total = plain + got, total + n
        turned += _tiles_found(detector, tiles.apply(scene.image), scene)[0]
    assert total >= 20
    assert plain <= 0.2 * total and turned >= 0.8 * total, (plain, turned, total)


def scene_tile_px(scene) -> float:
    """A tile's long side in the still's pixels: the longest side of its tiles' boxes."""
    sides = [
        max(x2 - x1, y2 - y1)
        for x1, y1, x2, y2 in (o.xyxy for o in scene.objects if o.kind == "tile")
    ]
    return float(np.median(sides))


def scene_back(scene) -> tuple[int, int, int]:
    """The colour of a still's face-down tiles as its camera sees them (the median of their
    middles), as the woodpile would show it."""
    middles = []
    for o in scene.objects:
        if o.kind == "tile" and o.face_up is False and o.visibility >= 0.9:
            x1, y1, x2, y2 = (int(v) for v in o.xyxy)
            cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
            middles.append(scene.image[cy - 2 : cy + 3, cx - 2 : cx + 3].reshape(-1, 3))
    return tuple(int(v) for v in np.median(np.concatenate(middles), axis=0))


def test_a_light_hand_on_a_dimly_lit_ivory_tile_keeps_its_colour():
    """Measured on a held-out round (a player's hand over a tile, the table dim): the hand is
    as near the tiles' colour as their shade, but redder."""
    dim_ivory, hand = (164, 179, 189), (133, 152, 187)
    tiles = learnt(lambda t: woodpile(dim_ivory))
    image = felt()
    image[120:160, 50:70] = dim_ivory
    image[110:170, 70:130] = hand
    out = tiles.apply(image)
    assert max(out[140, 60]) < 60  # the tile
    assert (out[115:165, 80:125] == image[115:165, 80:125]).all()  # the hand


def test_a_clock_that_goes_back_starts_the_watch_afresh():
    """A stream started again gives times from 0: the watch goes on, the old stillness is
    forgotten."""
    tiles = LightTiles(WOODPILE, TILE_PX, BACK)
    for t in np.arange(0.0, 2.0, 0.04):
        tiles.observe(woodpile(IVORY), 100.0 + float(t))  # still for 2 s, not yet enough
    for t in np.arange(0.0, 2.0, 0.04):
        tiles.observe(woodpile(IVORY), float(t))  # 2 s more, the clock from 0
    assert tiles.colour_bgr is None  # 2 s and 2 s are not 3 s still
    for t in np.arange(2.0, 3.5, 0.04):
        tiles.observe(woodpile(IVORY), float(t))
    assert tiles.colour_bgr is not None
