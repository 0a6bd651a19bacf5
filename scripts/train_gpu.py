"""Train the detector in one run on a lent GPU machine, from data small enough to travel there.

The GPU machine takes a 64 MiB working tree and has no ``av`` or ultralytics, so the data goes
in two compact forms and the rest is made there:

- ``render`` (here): the training rounds of the recipe (``paigow synth scenario``), skipping
  those already rendered.
- ``pack`` (here): frames of rendered training rounds (``paigow synth scenario``, seeds of our
  own, never the standard suite's) taken every ``--every`` frames, scaled to the detector's
  960x540 and encoded as one H.264 clip per round (a few KB a frame), with their YOLO labels
  (objects at least 30% visible, amodal boxes, as ``paigow synth stills`` labels them).
- ``run`` (there): decodes the packed frames, renders fresh stills of every look on every CPU
  core (train range, index ``--stills-seed`` on) and turns them into their table view, trains
  the detector at 960 px on whole scaled frames (a time budget, not an epoch count) from our own
  earlier weights and the face readers beside it, and leaves each one's ``best.pt`` and
  ``results.csv`` in ``--out``.

    python scripts/train_gpu.py render --out .cache/train_clips
    python scripts/train_gpu.py pack --clips .cache/train_clips/r_* --out .gpu/data
    python scripts/real_dice.py --part train --training-crops ../rc --sizes 12 16 20 --jitters 1
    python3 scripts/train_gpu.py run --data .gpu/data --weights .gpu/start.pt --out "$OUT"

The last there, with the repository root on ``PYTHONPATH`` (``PYTHONPATH=.``: the packages are
not installed there). Then here: ``python scripts/export.py detector best.pt``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from fractions import Fraction
from pathlib import Path

import cv2
import numpy as np
import yaml

from pipeline.layout import layout_from_scenario
from vision.synth.datasets import (
    FACE_TRAINING,
    detector_split,
    face_crops,
    face_split,
    in_view,
    unpack_clip,
)
from vision.synth.labels import (
    DETECT_SCALE,
    NAMES,
    frame_labels,
)
from vision.view import TableView

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "datasets" / "recipes" / "train_gpu.yaml"
FINAL_MINUTES = 1.0  # kept from a deadline for the final validation and copying the weights


def pack_clip(clip: Path, out: Path, every: int, crf: int, face_gap: int | None = None) -> int:
    """One round's sampled, scaled frames -> ``out/<name>.mp4`` + ``out/<name>.jsonl.gz``,
    its face crops -> ``out/faces/<class>/``. Both are cut from the table view the monitor
    fits to the round's layout (``vision.view``: the frame itself for the standard look), so a
    family filmed at 720p or over the dealer's shoulder is packed as the models will see it."""
    import av

    rng = np.random.default_rng(abs(hash(clip.name)) % 2**32)
    last_kept: dict = {}
    layout = layout_from_scenario(clip / "scenario.json")
    with gzip.open(clip / "truth.jsonl.gz", "rt", encoding="utf-8") as f:
        truth = [json.loads(line) for line in f]
    view = None
    labels, n = [], 0
    with (
        av.open(str(clip / "clip.mp4")) as src,
        av.open(str(out / f"{clip.name}.mp4"), "w") as dst,
    ):
        stream = None
        for index, frame in enumerate(src.decode(video=0)):
            row = truth[index] if index < len(truth) else None
            if row is None or row["blind"]:
                continue
            image = frame.to_ndarray(format="bgr24")
            if view is None:
                view = TableView.fit(layout.zones_px, layout.tile_px, image.shape[1::-1])
            image, objects = view.warp(image), in_view(view, row["objects"])
            face_crops(image, objects, index, last_kept, rng, out / "faces", clip.name, face_gap)
            if index % every:
                continue
            h, w = image.shape[:2]
            small = cv2.resize(
                image,
                (round(w * DETECT_SCALE), round(h * DETECT_SCALE)),
                interpolation=cv2.INTER_AREA,
            )
            if stream is None:
                stream = dst.add_stream("libx264", rate=Fraction(25))
                stream.width, stream.height = small.shape[1], small.shape[0]
                stream.pix_fmt = "yuv420p"
                stream.options = {"crf": str(crf), "preset": "slow"}
            for packet in stream.encode(av.VideoFrame.from_ndarray(small, format="bgr24")):
                dst.mux(packet)
            labels.append(
                {
                    "frame": index,
                    "wh": [small.shape[1], small.shape[0]],
                    "boxes": frame_labels(objects, DETECT_SCALE),
                }
            )
            n += 1
        if stream is not None:
            for packet in stream.encode(None):
                dst.mux(packet)
    with gzip.open(out / f"{clip.name}.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in labels)
    return n


def cmd_render(args: argparse.Namespace) -> int:
    from vision.synth.clip import ClipConfig, render_scenario

    rounds = yaml.safe_load(RECIPE.read_text())["rounds"]
    looks, kinds = rounds["looks"], rounds["kinds"]
    for i in range(rounds["count"]):
        seed, look, kind = rounds["first_seed"] + i, looks[i % len(looks)], kinds[i % len(kinds)]
        out = args.out / f"r_{look}_{seed}"
        if (out / "scenario.json").exists():  # written last
            continue
        print(f"round {i + 1}/{rounds['count']}: seed {seed}, {look}, {kind}", flush=True)
        render_scenario(
            seed, () if kind == "none" else (kind,), out, ClipConfig(randomisation=look)
        )
    return 0


def cmd_pack(args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    total = 0
    for clip in args.clips:
        if not (clip / "scenario.json").exists():  # written last
            print(f"skipped {clip}: not fully rendered")
            continue
        total += (n := pack_clip(clip, args.out, args.every, args.crf, args.face_gap))
        mb = (args.out / f"{clip.name}.mp4").stat().st_size / 1e6
        print(f"{clip.name}: {n} frames, {mb:.1f} MB")
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file()) / 1e6
    print(f"packed {total} frames into {args.out} ({size:.1f} MB)")
    return 0


def render_stills(job: tuple[int, int, str, str, str, bool, float | None]) -> int:
    """Render ``n`` stills of ``look`` (seed index ``seed``) into the work folder, turned into
    the table view the monitor fits (``scripts/view_stills.py``): whole scaled frames for the
    detector, face crops for the face reader."""
    n, seed, split, work, look, varied_dice, tipped_prob = job
    from vision.synth.config import randomisation, widened
    from vision.synth.stills import make_stills

    stills = Path(work) / f"stills_{split}_{seed}_{look}"
    viewed = Path(work) / f"viewed_{split}_{seed}_{look}"
    try:
        make_stills(n, stills, split, seed, widened(randomisation(look), varied_dice, tipped_prob))
        view = [sys.executable, str(ROOT / "scripts" / "view_stills.py"), "--splits", split]
        subprocess.run([*view, "--stills", str(stills), "--out", str(viewed)], check=True)
    except Exception as e:  # the packed frames still train the detector
        print(f"stills {split} {seed} {look}: {type(e).__name__}: {e}", flush=True)
        return 0
    rng = np.random.default_rng(seed)
    detector_split(viewed, Path(work) / "detect", split, rng, crop=False)
    face_split(viewed, Path(work), split, rng)
    shutil.rmtree(stills)
    shutil.rmtree(viewed)
    return n


def _patch_ultralytics() -> None:
    """results.csv is read back with polars, which the GPU machine lacks; csv does the same."""
    from ultralytics.engine import trainer

    def read_results_csv(self):
        import csv

        with open(self.csv, newline="") as f:
            rows = list(csv.DictReader(f))
        return {k.strip(): [r[k] for r in rows] for k in (rows[0] if rows else {})}

    trainer.BaseTrainer.read_results_csv = read_results_csv


def _keep(run: Path, out: Path, prefix: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in ("weights/best.pt", "results.csv"):
        if (run / name).exists():
            shutil.copyfile(run / name, out / f"{prefix}_{Path(name).name}")


def prepare(args: argparse.Namespace) -> Path:
    """Detector and face data in ``--work``: packed frames and crops, fresh stills."""
    t0 = time.perf_counter()
    work = Path(args.work)
    dataset = work / "detect"
    for split in ("train", "val"):
        for sub in ("images", "labels"):
            (dataset / sub / split).mkdir(parents=True, exist_ok=True)
    videos = sorted(args.data.glob("*.mp4"))
    if not videos:
        raise SystemExit(f"no packed clips in {args.data}")
    spread = videos[:: max(1, len(videos) // max(1, args.val_clips))]  # over the looks (by name)
    val_names = {v.stem for v in spread[: args.val_clips]}
    for crop in (args.data / "faces").rglob("*.jpg"):
        split = "val" if crop.name.rsplit("_", 2)[0] in val_names else "train"
        (work / "faces" / split / crop.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(crop, work / "faces" / split / crop.parent.name / crop.name)
    if args.real and args.real.is_dir():  # real dice photographs' train part (never the check)
        for crop in args.real.rglob("*.*"):
            (work / "faces" / "train" / crop.parent.name).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(crop, work / "faces" / "train" / crop.parent.name / crop.name)
    workers = os.cpu_count() or 4
    looks = args.looks
    n_jobs = len(looks) * -(-2 * workers // len(looks))  # every look, small jobs for the cores
    per = -(-args.stills // n_jobs)
    jobs = [
        (min(per, args.stills - k * per), args.stills_seed + k, "train", str(work),
         looks[k % len(looks)], args.varied_dice, args.tipped_prob)
        for k in range(n_jobs)
    ]  # fmt: skip
    val_per = -(-args.val_stills // len(looks))
    jobs = [j for j in jobs if j[0] > 0] + [
        (val_per, k, "val", str(work), look, args.varied_dice, args.tipped_prob)
        for k, look in enumerate(looks)
    ]
    with ProcessPoolExecutor(workers) as pool:
        stills = pool.map(render_stills, jobs)
        splits = ["val" if v.stem in val_names else "train" for v in videos]
        n_frames = sum(pool.map(unpack_clip, videos, [dataset] * len(videos), splits))
        n_stills = sum(stills)
    for cls_dir in (work / "faces" / "train").iterdir():  # every class in val too
        val_dir = work / "faces" / "val" / cls_dir.name
        if not any(val_dir.glob("*.*")):
            val_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(next(cls_dir.iterdir()), val_dir / "from_train.png")
    n_faces = {s: sum(1 for _ in (work / "faces" / s).rglob("*.*")) for s in ("train", "val")}
    print(
        f"data: {n_frames} video frames ({len(val_names)} clips for val), {n_stills} stills, "
        f"face crops {n_faces}, {time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    data_yaml = dataset / "data.yaml"
    data_yaml.write_text(
        json.dumps(
            {
                "path": str(dataset),
                "train": "images/train",
                "val": "images/val",
                "names": dict(enumerate(NAMES)),
            }
        )
    )
    return data_yaml


def cmd_faces(args: argparse.Namespace) -> int:
    """The face reader (28 classes: tile faces, die values, die_tipped), from scratch or, with
    ``--weights``, from our own (``scripts/weights_from_onnx.py faces``) at a lower rate."""
    os.environ["YOLO_OFFLINE"] = "1"
    _patch_ultralytics()
    from ultralytics import YOLO

    work = Path(args.work)
    tuned = {"optimizer": "AdamW", "lr0": 0.0005} if args.weights else {}
    YOLO(str(args.weights) if args.weights else "yolo11n-cls.yaml", task="classify").train(
        data=str(work / "faces"),
        imgsz=96,
        time=args.minutes / 60,
        epochs=args.epochs,
        batch=256,
        workers=3,
        cache="ram",
        device=args.device,
        amp=False,
        plots=False,
        pretrained=bool(args.weights),
        project=str(work / "runs"),
        name=args.name,
        exist_ok=True,
        verbose=False,
        **FACE_TRAINING,
        **tuned,
    )
    _keep(work / "runs" / args.name, args.out, args.name)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    os.environ["YOLO_OFFLINE"] = "1"
    t0 = time.perf_counter()
    data_yaml = prepare(args)
    if args.prepare_only:  # the data alone (CPU: datasets/recipes/train_faces_wide.yaml)
        return 0
    if args.deadline:  # the whole run must end in time (a lent machine's call has a limit)
        left = max(0.5, args.deadline - (time.perf_counter() - t0) / 60 - FINAL_MINUTES)
        args.minutes, args.face_minutes = min(args.minutes, left), min(args.face_minutes, left)
        print(f"training budget {args.minutes:.1f} min, face readers {args.face_minutes:.1f}")
    readers = {}  # beside the detector, on the same GPU: from scratch, and from our own weights
    for name, weights in (("faces", None), ("faces_ft", args.face_weights)):
        if args.face_minutes <= 0 or (name == "faces_ft" and weights is None):
            continue
        command = [
            sys.executable,
            __file__,
            "faces",
            "--work",
            args.work,
            "--out",
            str(args.out),
            "--minutes",
            str(args.face_minutes),
            "--device",
            args.device,
            "--name",
            name,
        ]
        command += ["--weights", str(weights)] if weights else []  # fmt: skip
        with open(Path(args.work) / f"{name}.log", "w") as log:
            readers[name] = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    _patch_ultralytics()
    from ultralytics import YOLO

    model = YOLO(str(args.weights) if args.weights else "yolo11n.yaml", task="detect")
    model.train(
        data=str(data_yaml),
        imgsz=args.imgsz,
        time=args.minutes / 60,
        epochs=args.epochs,
        batch=args.batch,
        workers=min(os.cpu_count() or 4, 10),
        cache="ram",
        device=args.device,
        amp=False,
        plots=False,
        pretrained=bool(args.weights),
        project=str(Path(args.work) / "runs"),
        name="detector",
        exist_ok=True,
        verbose=False,
        mosaic=1.0,
        close_mosaic=max(1, args.epochs // 6),
        scale=0.25,
        translate=0.1,
        degrees=0.0,
        fliplr=0.5,
        flipud=0.5,
        hsv_h=args.hsv_h,
        hsv_s=0.7,
        hsv_v=0.45,
        optimizer="AdamW",
        lr0=args.lr0,
        patience=1000,
        seed=0,
        deterministic=False,
    )
    _keep(Path(args.work) / "runs" / "detector", args.out, "detector")
    for name, reader in readers.items():
        reader.wait()
        log = (Path(args.work) / f"{name}.log").read_text(errors="replace")
        print(f"{name}:", "\n".join(line for line in log.splitlines()[-15:]), flush=True)
    print(f"done in {(time.perf_counter() - t0) / 60:.1f} min; weights in {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("render", help="here: the recipe's training rounds")
    r.add_argument("--out", type=Path, default=Path(".cache/train_clips"))
    a = sub.add_parser("pack", help="here: training rounds -> compact scaled frames + labels")
    a.add_argument("--clips", type=Path, nargs="+", required=True)
    a.add_argument("--out", type=Path, required=True)
    a.add_argument("--every", type=int, help="keep one frame in this many")
    a.add_argument("--crf", type=int, help="H.264 quality of the packed frames")
    a.add_argument("--face-gap", type=int, help="a tile's face crops N frames apart (def. 36)")
    c = sub.add_parser("faces", help="there: the face reader (started by run)")
    c.add_argument("--work", default="/tmp/paigow_train")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--minutes", type=float, default=4.0)
    c.add_argument("--epochs", type=int, default=60)
    c.add_argument("--device", default="0")
    c.add_argument("--name", default="faces")
    c.add_argument("--weights", type=Path, help="our own face-reader weights to continue from")
    b = sub.add_parser("run", help="there: unpack, render stills, train")
    b.add_argument("--data", type=Path, required=True, help="folder written by pack")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--work", default="/tmp/paigow_train")
    b.add_argument("--weights", type=Path, help="our own weights to continue from (.pt)")
    b.add_argument("--stills", type=int)
    b.add_argument("--stills-seed", type=int, help="first seed index (train range)")
    b.add_argument("--val-stills", type=int)
    b.add_argument("--val-clips", type=int)
    b.add_argument("--minutes", type=float, help="training time budget")
    b.add_argument("--epochs", type=int)
    b.add_argument("--face-minutes", type=float, help="0: no face reader")
    b.add_argument("--batch", type=int)
    b.add_argument("--imgsz", type=int)
    b.add_argument("--device", default="0")
    b.add_argument("--lr0", type=float)
    b.add_argument("--looks", nargs="+", help="randomisations the stills are drawn from, in turn")
    b.add_argument(
        "--varied-dice",
        action=argparse.BooleanOptionalAction,
        help="widen every look's dice by designs drawn per scene",
    )
    b.add_argument(
        "--tipped-prob", type=float, help="stills: chance of a tipped die (else the look's)"
    )
    b.add_argument(
        "--real",
        type=Path,
        help="face-reader crops of real dice (scripts/real_dice.py --training-crops), if any",
    )
    b.add_argument("--hsv-h", type=float, help="detector hue augmentation")
    b.add_argument(
        "--prepare-only", action="store_true", help="write the data in --work and stop there"
    )
    b.add_argument(
        "--deadline", type=float, help="minutes the whole run may take (training budgets shrink)"
    )
    b.add_argument(
        "--face-weights", type=Path, help="also a face reader continued from these weights"
    )
    recipe = yaml.safe_load(RECIPE.read_text())
    a.set_defaults(**recipe["pack"])
    b.set_defaults(**recipe["run"])
    args = p.parse_args(argv)
    commands = {"render": cmd_render, "pack": cmd_pack, "faces": cmd_faces, "run": cmd_run}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
