"""Training crops for the die reader (``models/dice.onnx``: die_1 .. die_6, die_tipped), a
classifier of its own, so that reading a die never trades against reading a tile.

    python scripts/make_die_crops.py --out /tmp/paigow_dice --stills 3000
    python scripts/weights_from_onnx.py faces --out /tmp/paigow_dice/faces_start.pt \\
        --calibrate /tmp/paigow_dice/faces/train
    python scripts/train.py datasets/recipes/train_dice.yaml
    python scripts/export.py dice .cache/runs/dice/weights/best.pt

Data: stills of the training look and the six training families (never a held-out
one; ``datasets/recipes/looks/families.yaml``), each scene's dice of a design drawn for it
(dice style ``varied``), turned into the table view the monitor fits (``scripts/view_stills.py``)
and cut as the monitor cuts a die (``vision.faces.crop_square`` around a jittered box); plus the
real dice photographs' train part (``scripts/real_dice.py --training-crops``; the check part is
never trained on). Seeds: train range from seed index ``--stills-seed`` (one per job), val range
seed indices 0-6. Training: ``datasets/recipes/train_dice.yaml`` (the face reader's features,
a new 7-class head).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import time
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np

from vision.faces import DIE_CLASSES
from vision.synth.datasets import face_split

ROOT = Path(__file__).resolve().parents[1]
LOOKS = (
    "training",
    "arc_green",
    "row_blue_720p",
    "dealer_side_slate",
    "compact_close_petrol",
    "purple_spots",
    "black_gold_row_dealer",
)
REAL_SIZES = ("9", "12", "16", "20", "24")  # px of a real die's top face (scripts/real_dice.py)
# --close-cameras: nearer than any look's camera (2200-4200 mm) and tilted up to 20 degrees, so
# flat dice show a side with pips (issue 19 asks for cameras low and steep; two_rows_wine, held
# out, films from 1500-2000 mm)
CLOSE_CAMERA = {"distance_mm": [1400.0, 2200.0], "max_tilt_deg": 20.0}
# --steep-cameras (stage 3): nearer still and always steep, tilted 14-26 degrees: the flat
# dice show a large side beside their top face
STEEP_CAMERA = {"distance_mm": [1300.0, 2000.0], "min_tilt_deg": 14.0, "max_tilt_deg": 26.0}
CAMERAS = {"close": CLOSE_CAMERA, "steep": STEEP_CAMERA}
# --codecs (stage 4): each still, in the picture the crops are cut from, encoded as one frame and
# decoded again, as a table camera's recording would be: the codec drawn per still, its
# quality drawn from these ranges (one frame coded alone is coded better than a video's
# in-between frames, so the ranges reach lower qualities than the renderer's clips use).
# A share of the stills (CLEAN_SHARE) stays as rendered.
CODEC_QUALITY = {"h264": (24, 40), "mpeg4": (3, 16), "mjpeg": (3, 14)}  # crf; q for the others
CLEAN_SHARE = 0.2


def encoded(image: np.ndarray, codec: str, quality: int) -> np.ndarray:
    """``image`` (BGR) after one frame of ``codec`` at ``quality`` and back (even size)."""
    import av

    from vision.synth.clip import ENCODERS

    h, w = image.shape[0] // 2 * 2, image.shape[1] // 2 * 2
    name, pix_fmt = ENCODERS[codec]
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="matroska") as out:
        stream = out.add_stream(name, rate=25)
        stream.width, stream.height, stream.pix_fmt = w, h, pix_fmt
        key = "crf" if codec == "h264" else "qmin"
        stream.options = {key: str(quality)} | ({} if codec == "h264" else {"qmax": str(quality)})
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image[:h, :w]), format="bgr24")
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            out.mux(packet)
    buffer.seek(0)
    with av.open(buffer) as back:
        got = next(back.decode(video=0)).to_ndarray(format="bgr24")
    image = image.copy()
    image[:h, :w] = got
    return image


def encode_stills(folder: Path, split: str, rng: np.random.Generator) -> None:
    """Each still of ``folder/images/split`` encoded in place (``--codecs``), but CLEAN_SHARE."""
    for path in sorted((folder / "images" / split).iterdir()):
        if rng.random() < CLEAN_SHARE:
            continue
        codec = str(rng.choice(list(CODEC_QUALITY)))
        lo, hi = CODEC_QUALITY[codec]
        image = cv2.imread(str(path))
        cv2.imwrite(
            str(path.with_suffix(".png")), encoded(image, codec, int(rng.integers(lo, hi + 1)))
        )
        if path.suffix != ".png":
            path.unlink()


def render_job(job: tuple[int, int, str, str, str, float, str | None, bool]) -> int:
    """``n`` stills of ``look`` (seed index ``seed``) turned into their table view, their die
    crops written under ``out/faces/<split>/``; returns the stills rendered. ``camera``: the
    camera brought closer and steeper (``CAMERAS[camera]``), the crops cut from the still itself
    (``scripts/view_stills.py`` draws a still's camera again from its look, so it cannot turn
    these; a die crop is resized to the reader's input either way)."""
    n, seed, split, out, look, tipped_prob, camera, codecs = job
    from vision.synth.config import override, randomisation, widened
    from vision.synth.stills import make_stills

    work = Path(out) / "work"
    stills, viewed = work / f"stills_{split}_{seed}_{look}", work / f"viewed_{split}_{seed}_{look}"
    dr = widened(randomisation(look), True, tipped_prob)
    if camera:
        near = CAMERAS[camera]
        tilt = [near.get("min_tilt_deg", dr.camera.tilt_deg[0]), near["max_tilt_deg"]]
        dr = override(dr, {"camera": {"distance_mm": near["distance_mm"], "tilt_deg": tilt}})
    make_stills(n, stills, split, seed, dr)
    if camera:
        viewed = stills
    else:
        view = [sys.executable, str(ROOT / "scripts" / "view_stills.py"), "--splits", split]
        subprocess.run([*view, "--stills", str(stills), "--out", str(viewed)], check=True)
    rng = np.random.default_rng(seed)
    if codecs:
        encode_stills(viewed, split, rng)
    face_split(viewed, Path(out), split, rng, prefix="die_")
    shutil.rmtree(stills)
    shutil.rmtree(viewed, ignore_errors=True)
    return n


def clip_crops(clip: Path, faces: Path, gap: int) -> int:
    """Die crops of one rendered round's video (``--clips``), cut as ``train_gpu.py pack`` cuts
    faces (:func:`vision.synth.datasets.face_crops`, in the table view the monitor fits), a
    flat die every ``gap`` frames; returns the crops written."""
    import av

    from pipeline.layout import layout_from_scenario
    from vision.synth.datasets import face_crops, in_view
    from vision.view import TableView

    layout = layout_from_scenario(clip / "scenario.json")
    with gzip.open(clip / "truth.jsonl.gz", "rt", encoding="utf-8") as f:
        truth = [json.loads(line) for line in f]
    rng, last, view, n = np.random.default_rng(zlib.crc32(clip.name.encode())), {}, None, 0
    with av.open(str(clip / "clip.mp4")) as container:
        for index, frame in enumerate(container.decode(video=0)):
            row = truth[index] if index < len(truth) else {"blind": True}
            dice = [] if row["blind"] else [o for o in row["objects"] if o["class"] == "die"]
            if not dice:
                continue
            image = frame.to_ndarray(format="bgr24")
            if view is None:
                view = TableView.fit(layout.zones_px, layout.tile_px, image.shape[1::-1])
            dice = in_view(view, dice)
            n += face_crops(view.warp(image), dice, index, last, rng, faces, clip.name, None, gap)
    return n


def make(args: argparse.Namespace) -> int:
    t0, out = time.perf_counter(), args.out.resolve()
    if out == ROOT or ROOT in out.parents:
        print(f"make_die_crops: {args.out}: must be outside the repository", file=sys.stderr)
        return 2
    per_job = -(-args.stills // (len(args.looks) * args.jobs_per_look))
    jobs = [
        (
            per_job,
            args.stills_seed + k,
            "train",
            str(out),
            look,
            args.tipped_prob,
            args.camera,
            args.codecs,
        )
        for k, look in enumerate(args.looks * args.jobs_per_look)
    ]
    jobs += [
        (args.val_stills, k, "val", str(out), look, args.tipped_prob, args.camera, args.codecs)
        for k, look in enumerate(args.looks)
        if args.val_stills > 0
    ]
    with ProcessPoolExecutor(args.workers) as pool:
        stills = sum(pool.map(render_job, jobs)) if args.stills else 0
    for clip in args.clips:
        print(f"{clip.name}: {clip_crops(clip, out / 'faces' / 'train', args.clip_gap)} crops")
    if not args.no_real:
        real = [sys.executable, str(ROOT / "scripts" / "real_dice.py"), "--part", "train"]
        real += ["--training-crops", str(out / "faces" / "train"), "--jitters", "1"]
        subprocess.run([*real, "--sizes", *REAL_SIZES], check=True)
    shutil.rmtree(out / "work", ignore_errors=True)
    counts = {
        split: {c: len(list((out / "faces" / split / c).glob("*.*"))) for c in DIE_CLASSES}
        for split in ("train", "val")
        if (out / "faces" / split).is_dir()
    }
    print(f"{stills} stills, die crops {counts}, {time.perf_counter() - t0:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="outside the repository")
    p.add_argument("--stills", type=int, default=3000)
    p.add_argument("--stills-seed", type=int, default=60, help="first seed index (train range)")
    p.add_argument("--val-stills", type=int, default=30, help="per look")
    p.add_argument("--looks", nargs="+", default=list(LOOKS))
    p.add_argument("--jobs-per-look", type=int, default=2)
    p.add_argument("--tipped-prob", type=float, default=0.2, help="scenes with a tipped die")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    p.add_argument("--no-real", action="store_true", help="without the real photographs")
    p.add_argument(
        "--close-cameras",
        dest="camera",
        action="store_const",
        const="close",
        help="every look's camera nearer and steeper (CLOSE_CAMERA), crops cut from the still",
    )
    p.add_argument(
        "--steep-cameras",
        dest="camera",
        action="store_const",
        const="steep",
        help="every look's camera nearer and always steep (STEEP_CAMERA), crops from the still",
    )
    p.add_argument(
        "--clips",
        type=Path,
        nargs="+",
        default=[],
        help="rendered rounds of training looks (scripts/train_gpu.py render): their dice too",
    )
    p.add_argument("--clip-gap", type=int, default=2, help="--clips: frames between two crops")
    p.add_argument(
        "--codecs",
        action="store_true",
        help="each still encoded and decoded by a codec drawn for it (CODEC_QUALITY) first",
    )
    return make(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
