"""Contact sheet of rendered stills: ``python -m vision.synth.contact_sheet [--out PNG]``.

Top: a grid of downscaled stills (the last one from the ``shifted`` set). Bottom: zoomed
full-resolution regions (face-up tiles, dice, a hand over tiles) so pips can be checked.

``--families`` writes one still per look family instead (``docs/looks.png``): the train
families first, then the held-out ones.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np

from vision.synth.config import SHIFTED, TRAINING, families, look_family
from vision.synth.render import Renderer, RenderResult
from vision.synth.stills import scene_seed
from vision.synth.stills_content import random_scene

PANEL_WH = (640, 360)
FAMILY_PANEL_WH = (480, 270)
FAMILY_COLUMNS = 4
# grey levels of the family sheet rounded to this step: sensor noise does not compress, and the
# sheet should stay a few hundred kB (larger: smaller file, visible banding)
FAMILY_LEVEL_STEP = 6
ZOOM = 3
GRID_COLUMNS = 3
LABEL_BGR = (255, 255, 255)


def _label(img: np.ndarray, text: str) -> np.ndarray:
    cv2.rectangle(img, (0, 0), (len(text) * 11 + 8, 24), (0, 0, 0), -1)
    cv2.putText(img, text, (4, 17), cv2.FONT_HERSHEY_SIMPLEX, 0.5, LABEL_BGR, 1, cv2.LINE_AA)
    return img


def _zoom(result: RenderResult, centre_xy: tuple[float, float], text: str) -> np.ndarray:
    """A full-resolution region around ``centre_xy`` enlarged ``ZOOM`` times."""
    h, w = result.image.shape[:2]
    cw, ch = PANEL_WH[0] // ZOOM, PANEL_WH[1] // ZOOM
    x0 = int(np.clip(centre_xy[0] - cw / 2, 0, w - cw))
    y0 = int(np.clip(centre_xy[1] - ch / 2, 0, h - ch))
    region = result.image[y0 : y0 + ch, x0 : x0 + cw]
    return _label(cv2.resize(region, PANEL_WH, interpolation=cv2.INTER_NEAREST), text)


def _centre(result: RenderResult, pick) -> tuple[float, float] | None:
    """Centre of the best object for ``pick(obj) -> score or None`` (highest score wins)."""
    scored = [(score, o) for o in result.objects if (score := pick(o, result)) is not None]
    if not scored:
        return None
    x0, y0, x1, y1 = max(scored, key=lambda so: so[0])[1].xyxy
    return ((x0 + x1) / 2, (y0 + y1) / 2)


def _face_up(obj, _result) -> float | None:
    return obj.visibility if obj.kind == "tile" and obj.face_up else None


def _die(obj, _result) -> float | None:
    return obj.visibility if obj.kind == "die" else None


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _covered(obj, result: RenderResult) -> float | None:
    """A tile partly covered by a hand."""
    hands = [o.xyxy for o in result.objects if o.kind == "hand"]
    if (
        obj.kind == "tile"
        and 0.1 < obj.visibility < 0.9
        and any(_overlap(obj.xyxy, h) for h in hands)
    ):
        return -abs(obj.visibility - 0.5)
    return None


def contact_sheet(n_training: int = 8, seed: int = 0) -> np.ndarray:
    """The sheet image ``(H, W, 3)`` uint8."""
    renderer = Renderer()
    panels, results, sharp = [], [], []
    for i in range(n_training + 1):
        split, dr = ("shifted", SHIFTED) if i == n_training else ("train", TRAINING)
        s = scene_seed(split, seed, i)
        scene = random_scene(np.random.default_rng(s), dr)
        result = renderer.render(scene)
        results.append(result)
        sharp.append(scene.effects.motion_blur_px == 0)
        small = cv2.resize(result.image, PANEL_WH, interpolation=cv2.INTER_AREA)
        panels.append(_label(small, f"{split} seed {s}"))
    rows = [np.hstack(panels[k : k + GRID_COLUMNS]) for k in range(0, len(panels), GRID_COLUMNS)]
    zooms = []
    for pick, text in (
        (_face_up, "face-up tile (x3)"),
        (_die, "dice (x3)"),
        (_covered, "tile under a hand (x3)"),
    ):
        candidates = [r for r, ok in zip(results, sharp, strict=True) if ok] or results
        found = [(r, c) for r in candidates if (c := _centre(r, pick)) is not None]
        result, centre = found[0] if found else (results[0], (PANEL_WH[0], PANEL_WH[1]))
        zooms.append(_zoom(result, centre, text))
    return np.vstack([*rows, np.hstack(zooms)])


def families_sheet(seed: int = 0) -> np.ndarray:
    """One still ``FAMILY_PANEL_WH`` per look family, ``FAMILY_COLUMNS`` a row, ``(H, W, 3)``."""
    renderer, listed = Renderer(), families()
    names = [*listed.train, *listed.held_out]
    panels = []
    for i, name in enumerate(names):
        scene = random_scene(np.random.default_rng(scene_seed("val", seed, i)), look_family(name))
        small = cv2.resize(
            renderer.render(scene).image, FAMILY_PANEL_WH, interpolation=cv2.INTER_AREA
        )
        panels.append(_label(small, name + (" (held out)" if name in listed.held_out else "")))
    panels += [np.zeros_like(panels[0])] * (-len(panels) % FAMILY_COLUMNS)
    sheet = np.vstack(
        [np.hstack(panels[k : k + FAMILY_COLUMNS]) for k in range(0, len(panels), FAMILY_COLUMNS)]
    )
    return sheet // FAMILY_LEVEL_STEP * FAMILY_LEVEL_STEP + FAMILY_LEVEL_STEP // 2


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write a contact sheet of rendered stills.")
    parser.add_argument("--out", type=Path, help="default docs/renders.png, or docs/looks.png")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--families", action="store_true", help="one still per look family")
    args = parser.parse_args(argv)
    out = args.out or Path("docs/looks.png" if args.families else "docs/renders.png")
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet = families_sheet(args.seed) if args.families else contact_sheet(seed=args.seed)
    cv2.imwrite(str(out), sheet, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
