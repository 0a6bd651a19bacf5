"""The pipeline shows the models a table of light tiles as dark ones once its woodpile has
shown the tiles are light (vision.light_tiles), and a table of dark tiles as it is."""

import numpy as np

from pipeline.layout import load_default_layout
from pipeline.runner import PipelineConfig, TablePipeline
from vision.types import TILE_DOWN, Detections, Frame

OLIVE, IVORY, DARK = (30, 80, 78), (196, 222, 234), (22, 22, 24)
FPS = 25


class Looking:
    """A detector that keeps the pictures it is shown and finds nothing, or the tiles of a
    woodpile in its first picture (``woodpile``)."""

    trained_back_bgr = (18, 18, 20)

    def __init__(self, woodpile: bool = False) -> None:
        self.shown: list[np.ndarray] = []
        self.woodpile = woodpile

    def __call__(self, frame: Frame) -> Detections:
        self.shown.append(frame.image)
        if not (self.woodpile and len(self.shown) == 1):
            return Detections()
        xyxy = np.array([[812 + 38 * k, 195, 844 + 38 * k, 262] for k in range(8)], np.float32)
        n = len(xyxy)
        return Detections(
            xyxy,
            np.full(n, TILE_DOWN, np.int32),
            np.full(n, 0.9, np.float32),
            np.full(n, -1, np.int32),
            np.zeros(n, np.float32),
        )


def table(tiles) -> np.ndarray:
    """A 1080p felt with eight stacks of ``tiles`` in the default layout's woodpile area."""
    image = np.empty((1080, 1920, 3), np.uint8)
    image[:] = OLIVE
    for k in range(8):
        x = 812 + 38 * k
        image[195:262, x : x + 32] = tiles
    return image


def shown(
    tiles, seconds: float = 4.0, config: PipelineConfig | None = None, woodpile: bool = False
) -> list:
    detector = Looking(woodpile)
    config = config or PipelineConfig(gating=None, face_cache=None, dice_finder=None)
    pipe = TablePipeline(
        "T1", load_default_layout(), config, detector=detector, reader=lambda im, det: det
    )
    image = table(tiles)
    for index in range(int(seconds * FPS)):
        pipe.process(Frame("T1", index, index / FPS, image))
    return detector.shown


def test_ivory_tiles_are_shown_dark_once_the_woodpile_stood_still_for_a_while():
    pictures = shown(IVORY)
    assert pictures[0][220, 826].tolist() == list(IVORY)  # not learnt yet: as it is
    assert max(pictures[-1][220, 826]) < 40  # learnt: a dark tile
    assert pictures[-1][600, 300].tolist() == list(OLIVE)  # the felt as it is


def test_dark_tiles_and_a_switched_off_check_show_the_picture_as_it_is():
    assert all(p[220, 826].tolist() == list(DARK) for p in shown(DARK))
    off = PipelineConfig(gating=None, face_cache=None, dice_finder=None, light_tiles=None)
    assert all(p[220, 826].tolist() == list(IVORY) for p in shown(IVORY, config=off))


def test_after_a_woodpile_of_dark_tiles_nothing_light_is_learnt():
    """The detector found the woodpile's dark tiles in the first frame: a light patch lying
    still there afterwards (a white sleeve resting) is shown as it is."""
    assert all(p[220, 826].tolist() == list(IVORY) for p in shown(IVORY, woodpile=True))
