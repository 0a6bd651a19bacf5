"""Render throughput on one core: ``python -m vision.synth.bench [--frames 60]``.

A typical video scene (32 tiles, about 30 chip stacks, 3 dice, 2 moving hands, full effects)
is rendered frame after frame with the hands moving, as a scenario engine would; stills
(a new table look every image) are timed too.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import cv2
import numpy as np

from vision.synth.config import TRAINING, override
from vision.synth.render import Renderer
from vision.synth.scene import Scene
from vision.synth.stills_content import random_scene

HAND_STEP_MM = 4.0
BENCH_SEED = 7


def typical_scene(seed: int = BENCH_SEED) -> Scene:
    """32 tiles, 4 chip stacks per box, 3 dice, 2 hands; effects on, no motion blur."""
    dr = override(
        TRAINING,
        {"content": {"hands": [2, 2], "chip_stacks_per_box": [4, 4], "woodpile_stacks": [4, 4]}},
    )
    scene = random_scene(np.random.default_rng(seed), dr)
    return dataclasses.replace(
        scene, effects=dataclasses.replace(scene.effects, motion_blur_px=0.0)
    )


def video_fps(frames: int) -> float:
    """Frames per second rendering one scene with the hands moving each frame."""
    renderer = Renderer()
    scene = typical_scene()
    renderer.render(scene)
    start = time.perf_counter()
    for k in range(frames):
        hands = tuple(
            dataclasses.replace(h, xy_mm=(h.xy_mm[0] + HAND_STEP_MM * k, h.xy_mm[1]))
            for h in scene.hands
        )
        effects = dataclasses.replace(scene.effects, noise_seed=k)
        renderer.render(dataclasses.replace(scene, hands=hands, effects=effects))
    return frames / (time.perf_counter() - start)


def stills_fps(images: int) -> float:
    """Images per second for still scenes (new look, new sprites each image)."""
    renderer = Renderer()
    scenes = [random_scene(np.random.default_rng(i), TRAINING) for i in range(images + 1)]
    renderer.render(scenes[0])
    start = time.perf_counter()
    for scene in scenes[1:]:
        renderer.render(scene)
    return images / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Measure render throughput on one core.")
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--stills", type=int, default=10)
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    scene = typical_scene()
    counts = (len(scene.tiles), len(scene.chips), len(scene.dice), len(scene.hands))
    print("scene: {} tiles, {} chip stacks, {} dice, {} hands".format(*counts))
    print(f"video frames (1920x1080, one core): {video_fps(args.frames):.1f} fps")
    print(f"stills (new table look each):        {stills_fps(args.stills):.1f} img/s")


if __name__ == "__main__":
    main()
