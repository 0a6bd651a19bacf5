"""Teach the face reader a 29th class, ``tile_down``, on CPU: the shipped reader fine-tuned.

The detector sometimes calls a face-up tile face down (a face-up woodpile top, seen from above
among face-down tiles). A reader that knows what a face-down tile looks like can overrule it
(``vision.faces.turned_up``); the 28-class reader could not (it read 70% of face-down crops as
some face at 0.9 or more). Four steps, each resumable, everything under ``--work``:

    python scripts/train_faces_down.py cut      # crops from .cache/train_clips/r_* (40 rounds)
    python scripts/train_faces_down.py data     # train / val / test folders
    python scripts/train_faces_down.py start    # 29-class start weights from the shipped ones
    python scripts/train_faces_down.py train --minutes 25
    python scripts/export.py faces_down WORK/runs/faces_down/weights/best.pt
    python scripts/train_faces_down.py measure  # -> models/metrics_faces_down.json

Crops: face-down tiles at least 70% visible (woodpile stack tops included), and the face
classes as ``vision.synth.datasets.face_crops`` cuts them, one crop per object per 36 frames,
the box jittered like a detector's (``vision.synth.labels.jitter_box``), cut by ``crop_square``
from the full-resolution frame. Rounds ``VAL_ROUNDS`` choose the best epoch, ``TEST_ROUNDS``
are only measured; the standard suite is never used. The face classes also get the still crops
of ``.cache/datasets/faces/train`` (``build_datasets.py``). Training: ultralytics classify at
96 px from ``--source`` (the weights ``models/faces.onnx`` was exported from) with a 29th
output row, the augmentation of ``train_gpu.py faces``; offline (``YOLO_OFFLINE``, no plots,
no AMP check, only our own ``.pt``). The result ships as the monitor's face-down check
(``models/faces_down.onnx``), beside the unchanged face reader: it unlearned die_tipped, which
has few crops (109; 17 of 19 tipped dice on rendered video read as a value). Tried: 4 more
epochs with each tipped crop 8 times (``data --tipped-copies 8 --name data2``, ``train --data
data2 --weights runs/faces_down/weights/best.pt --epochs 4 --minutes 0 --warmup 0 --lr0
0.0003``): 1 of 19, but flat dice then read as tipped. Bad input: one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gzip
import json
import os
import random
import shutil
import sys
import time
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np

from vision.faces import FACE_CLASSES, FACE_UP_MIN_PROBABILITY, TILE_DOWN, crop_square, turned_up
from vision.synth.datasets import FACE_TRAINING, face_crops
from vision.synth.labels import FACE_MIN_VISIBILITY, jitter_box

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".cache" / "faces_down"
CLIPS = ROOT / ".cache" / "train_clips"
STILLS = ROOT / ".cache" / "datasets" / "faces"
SOURCE = ROOT / ".cache" / "runs" / "faces_gpu" / "weights" / "best.pt"
VAL_ROUNDS = ("r_60000", "r_60001", "r_60002")
TEST_ROUNDS = ("r_60041",)
DOWN_KEPT = {"train": 2700, "val": 450}  # face-down crops kept per split (about 4x a face's)
GAP_FRAMES = 36  # one crop of an object per this many frames


class InputError(Exception):
    """Bad input: one line, exit 2."""


def _seed(text: str) -> int:
    return zlib.crc32(text.encode())


def down_crops(image, objects, index: int, last: dict, rng, out: Path, clip: str) -> int:
    """Crops of this frame's face-down tiles into ``out/tile_down``; how many."""
    n = 0
    for o in objects:
        if o["class"] != "tile" or o["face_up"] or o["visibility"] < FACE_MIN_VISIBILITY:
            continue
        if index - last.get(o["id"], -GAP_FRAMES) < GAP_FRAMES:
            continue
        last[o["id"]] = index
        crop = crop_square(image, jitter_box(o["xyxy"], rng))
        name = out / TILE_DOWN / f"{clip}_{index:05d}_{o['id']}.jpg"
        cv2.imwrite(str(name), crop, [cv2.IMWRITE_JPEG_QUALITY, 85])
        n += 1
    return n


def _truth(clip: Path) -> list[dict]:
    """The truth rows of a round; a round whose rendering stopped: the rows written so far."""
    rows = []
    with (
        gzip.open(clip / "truth.jsonl.gz", "rt", encoding="utf-8") as f,
        contextlib.suppress(EOFError, ValueError, OSError),
    ):
        rows.extend(json.loads(line) for line in f)
    return rows


def cut_round(job: tuple[str, str]) -> str:
    clip, out = Path(job[0]), Path(job[1]) / Path(job[0]).name
    (out / TILE_DOWN).mkdir(parents=True, exist_ok=True)
    down_rng, face_rng = (np.random.default_rng(_seed(clip.name + s)) for s in ("down", ""))
    truth, last_down, last_face, n = _truth(clip), {}, {}, 0
    video = cv2.VideoCapture(str(clip / "clip.mp4"))
    for index, row in enumerate(truth):
        ok, image = video.read()
        if not ok:
            break
        if row["blind"]:
            continue
        n += down_crops(image, row["objects"], index, last_down, down_rng, out, clip.name)
        face_crops(image, row["objects"], index, last_face, face_rng, out, clip.name)
    video.release()
    return f"{clip.name}: {len(truth)} frames, {n} face-down crops"


def cmd_cut(args: argparse.Namespace) -> int:
    rounds = sorted(p for p in args.clips.glob("r_*") if (p / "truth.jsonl.gz").is_file())
    if not rounds:
        raise InputError(f"{args.clips}: no rendered rounds (python scripts/train_gpu.py render)")
    jobs = [(str(r), str(args.work / "crops")) for r in rounds]
    with ProcessPoolExecutor(args.workers) as pool:
        for line in pool.map(cut_round, jobs):
            print(line, flush=True)
    return 0


def _link(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def cmd_data(args: argparse.Namespace) -> int:
    crops, data = args.work / "crops", args.work / args.name
    if not crops.is_dir():
        raise InputError(f"{crops}: no crops (run the cut step first)")
    shutil.rmtree(data, ignore_errors=True)
    rounds = sorted(p.name for p in crops.iterdir() if p.is_dir())
    split_of = {r: "val" if r in VAL_ROUNDS else "train" for r in rounds}
    split_of |= {r: "test" for r in rounds if r in TEST_ROUNDS}
    rng = random.Random(0)
    for split in ("train", "val", "test"):
        mine = [r for r in rounds if split_of[r] == split]
        counts = {}
        for cls in (*FACE_CLASSES, TILE_DOWN):
            files = sorted(f for r in mine for f in (crops / r / cls).glob("*.jpg"))
            if cls == TILE_DOWN and len(files) > DOWN_KEPT.get(split, len(files)):
                files = sorted(rng.sample(files, DOWN_KEPT[split]))
            if split == "train" and (STILLS / "train" / cls).is_dir():
                files += sorted((STILLS / "train" / cls).iterdir())
            (data / split / cls).mkdir(parents=True, exist_ok=True)
            copies = args.tipped_copies if split == "train" and cls == "die_tipped" else 1
            for copy_index, f in ((k, f) for k in range(copies) for f in files):
                prefix = f"copy{copy_index}_" if copy_index else ""
                _link(f, data / split / cls / f"{prefix}{f.name}")
                counts[cls] = counts.get(cls, 0) + 1
        faces = sum(v for c, v in counts.items() if c != TILE_DOWN)
        print(f"{split}: {faces} face crops, {counts.get(TILE_DOWN, 0)} face-down; rounds {mine}")
    return 0


def cmd_start(args: argparse.Namespace) -> int:
    """29-class start weights: the shipped reader's, with a 29th output row."""
    import torch

    if not args.source.is_file():
        raise InputError(f"{args.source}: no such weights")
    ckpt = torch.load(args.source, map_location="cpu", weights_only=False)
    model = copy.deepcopy(ckpt["model"]).float()
    if [model.names[i] for i in range(len(model.names))] != list(FACE_CLASSES):
        raise InputError(f"{args.source}: not a reader of the 28 vision.faces.FACE_CLASSES")
    head = model.model[-1]
    old = head.linear
    new = torch.nn.Linear(old.in_features, old.out_features + 1)
    with torch.no_grad():
        new.weight[:-1], new.bias[:-1] = old.weight, old.bias
        new.weight[-1].normal_(0, float(old.weight.std()))
        new.bias[-1] = old.bias.mean()
    head.linear = new
    model.names = dict(enumerate((*FACE_CLASSES, TILE_DOWN)))  # tile_down sorts last as well
    model.nc = len(model.names)
    model.yaml = dict(model.yaml, nc=model.nc)
    keep = {k: ckpt[k] for k in ("date", "version", "license", "docs", "train_args") if k in ckpt}
    keep |= {"model": model.half(), "ema": None, "optimizer": None, "epoch": -1}
    keep |= {"best_fitness": None, "updates": None}
    torch.save(keep, args.work / "start29.pt")
    print(f"wrote {args.work / 'start29.pt'}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    start, data = args.work / args.weights, args.work / args.data
    if not start.is_file() or not data.is_dir():
        raise InputError(f"{start} or {data} missing: run the data and start steps first")
    os.environ["YOLO_OFFLINE"] = "1"
    import torch
    from ultralytics import YOLO

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    YOLO(str(start), task="classify").train(
        data=str(data),
        imgsz=96,
        time=args.minutes / 60 if args.minutes else None,
        epochs=args.epochs,
        batch=64,
        workers=2,
        cache="ram",
        device="cpu",
        amp=False,
        plots=False,
        pretrained=True,
        project=str(args.work / "runs"),
        name=args.name,
        exist_ok=True,
        verbose=False,
        save_period=1,
        warmup_epochs=args.warmup,
        **({"lr0": args.lr0, "optimizer": "AdamW"} if args.lr0 else {}),
        **FACE_TRAINING,
    )
    print(f"trained in {(time.perf_counter() - t0) / 60:.1f} min: {args.work / 'runs'}")
    return 0


def _crops(folder: Path, classes: tuple[str, ...]) -> tuple[np.ndarray, list[str]]:
    crops, labels = [], []
    for cls in classes:
        for path in sorted((folder / cls).glob("*.*")) if (folder / cls).is_dir() else []:
            crops.append(cv2.imread(str(path)))
            labels.append(cls)
    return np.stack(crops), labels


def check_figures(reader, crops: np.ndarray, labels: list[str]) -> dict:
    """How the face-down check serves the monitor on labelled crops: face-down ones turned
    face up (wrongly), face-up tiles turned face up, and with their right face."""
    up, best, _ = turned_up(reader.probs(crops, reader.down_check))
    down = np.array([lab == TILE_DOWN for lab in labels])
    tile = np.array([lab.startswith("tile_") and lab != TILE_DOWN for lab in labels])
    right = np.array([FACE_CLASSES[b] == lab if b < len(FACE_CLASSES) else False
                      for b, lab in zip(best, labels, strict=True)])  # fmt: skip
    return {
        "face_down_n": int(down.sum()),
        "face_down_turned_up": round(float(up[down].mean()), 4) if down.any() else None,
        "face_up_tiles_n": int(tile.sum()),
        "face_up_turned_up": round(float(up[tile].mean()), 4) if tile.any() else None,
        "face_up_turned_up_right": round(float((up & right)[tile].mean()), 4)
        if tile.any()
        else None,
    }


def cmd_measure(args: argparse.Namespace) -> int:
    """The shipped face-down check on the held-out crops -> ``--out`` (JSON)."""
    from vision.face_reader import FaceReader

    reader, out = FaceReader(), {"threshold": FACE_UP_MIN_PROBABILITY}
    classes = (*FACE_CLASSES, TILE_DOWN)
    for split in ("test", "val"):
        folder = args.work / "data" / split
        if not folder.is_dir():
            raise InputError(f"{folder}: no crops (run the cut and data steps first)")
        out[split] = check_figures(reader, *_crops(folder, classes))
        print(split, out[split])
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", type=Path, default=WORK, help=f"working folder (default {WORK})")
    sub = p.add_subparsers(dest="command", required=True)
    cut = sub.add_parser("cut", help="crops from the rendered training rounds")
    cut.add_argument("--clips", type=Path, default=CLIPS)
    cut.add_argument("--workers", type=int, default=2)
    data = sub.add_parser("data", help="train/val/test folders of the crops")
    data.add_argument("--name", default="data", help="folder under --work")
    data.add_argument("--tipped-copies", type=int, default=1, help="die_tipped train crops x N")
    start = sub.add_parser("start", help="29-class start weights")
    start.add_argument("--source", type=Path, default=SOURCE)
    train = sub.add_parser("train", help="fine-tune on CPU")
    train.add_argument("--data", default="data", help="data folder under --work")
    train.add_argument("--weights", default="start29.pt", help="start weights under --work")
    train.add_argument("--name", default="faces_down", help="run name under --work/runs")
    train.add_argument("--minutes", type=float, default=25.0, help="time budget (0: none)")
    train.add_argument("--warmup", type=float, default=1.0, help="warm-up epochs")
    train.add_argument("--lr0", type=float, help="initial learning rate (AdamW); default: auto")
    train.add_argument("--epochs", type=int, default=12, help="schedule length")
    train.add_argument("--threads", type=int, default=2)
    measure = sub.add_parser("measure", help="the shipped check on the held-out crops")
    measure.add_argument("--out", type=Path, default=ROOT / "models" / "metrics_faces_down.json")
    args = p.parse_args(argv)
    steps = {"cut": cmd_cut, "data": cmd_data, "start": cmd_start, "train": cmd_train}
    steps["measure"] = cmd_measure
    try:
        args.work.mkdir(parents=True, exist_ok=True)
        return steps[args.command](args)
    except InputError as err:
        print(f"train_faces_down: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
