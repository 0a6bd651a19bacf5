"""A small fixed set of rendered test stills for the golden-metric test (seconds to render).

Seeds come from the ``test`` split's range at a seed index no dataset recipe uses, so these
scenes are never trained on. Frames are returned at full resolution with ground truth, and
full-resolution face crops with their class names.
"""

from __future__ import annotations

import numpy as np

from vision.evaluation import LabelledImage
from vision.faces import crop_square
from vision.synth.config import randomisation
from vision.synth.render import Renderer
from vision.synth.stills import StillsConfig, class_id, scene_seed
from vision.synth.stills_content import random_scene

FIXED_SEED_INDEX = 900
FACE_MIN_VISIBILITY = 0.7


def fixed_set(n: int, split_set: str = "training"):
    """``(images, crops, labels)``: full-resolution labelled frames and face crops."""
    renderer, dr = Renderer(), randomisation(split_set)
    min_vis = StillsConfig().min_label_visibility
    images, crops, labels = [], [], []
    for i in range(n):
        rng = np.random.default_rng(scene_seed("test", FIXED_SEED_INDEX, i))
        result = renderer.render(random_scene(rng, dr, settings=renderer.settings))
        objs = [o for o in result.objects if o.visibility >= min_vis]
        boxes = np.array([o.xyxy for o in objs], float).reshape(-1, 4)
        classes = np.array([class_id(o) for o in objs], int)
        images.append(LabelledImage(result.image, boxes, classes))
        for o in result.objects:
            if o.visibility < FACE_MIN_VISIBILITY:
                continue
            if o.kind == "tile" and o.face_up:
                labels.append(f"tile_{o.face}")
            elif o.kind == "die" and o.die_flat:
                labels.append(f"die_{o.die_value}")
            else:
                continue
            crops.append(crop_square(result.image, o.xyxy))
    return images, np.stack(crops), labels
