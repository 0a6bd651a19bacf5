"""Measure the shipped ONNX models on the held-out (test) and shifted splits; latency on 2 cores.

    python scripts/evaluate_models.py --data .cache/datasets --out models/metrics.json
    python scripts/evaluate_models.py --suite .cache/suite/std --out video.json

``--suite``: on rendered video instead (rounds of ``paigow synth suite``, never trained on):
detection AP on one frame in ``--every``, and how the face reader's readings serve the tracker
on crops cut as the monitor cuts them (tiles and flat dice: accuracy, share read confidently
enough to be used; tipped dice: share taken for a flat die).

Detection: AP50 and AP50-95 per class on the full-resolution frames, the detector run exactly as
the monitor runs it (scaled to 960x540 for the network, die boxes re-measured at full
resolution). Faces: accuracy on full-resolution crops of face-up tiles at least 70% visible
and of flat dice. Latency: medians, onnxruntime with 2 threads, detector per 1080p frame
(resize + letterbox + inference + decode), face reader per crop.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from vision.detector import Detector, DetectorConfig
from vision.evaluation import (
    LabelledImage,
    detection_metrics,
    face_accuracy,
    median_ms,
    video_face_metrics,
)
from vision.face_reader import FaceReader
from vision.faces import FACE_INPUT_PX, crop_square
from vision.onnx import MODELS_DIR, load_manifest
from vision.synth.labels import face_class, frame_labels
from vision.tracking.config import TrackerConfig
from vision.types import Frame

LATENCY_REPEATS = 30


def labelled_images(folder: Path, split: str):
    """Full-resolution rendered stills of a split with their YOLO labels, in pixels."""
    for path in sorted((folder / "images" / split).glob("*.jpg")):
        image = cv2.imread(str(path))
        h, w = image.shape[:2]
        lab = folder / "labels" / split / f"{path.stem}.txt"
        a = np.loadtxt(lab, ndmin=2) if lab.read_text().strip() else np.zeros((0, 5))
        cx, cy, bw, bh = a[:, 1] * w, a[:, 2] * h, a[:, 3] * w, a[:, 4] * h
        boxes = np.column_stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2])
        yield LabelledImage(image, boxes, a[:, 0].astype(int))


def face_crops(folder: Path, split: str) -> tuple[np.ndarray, list[str]]:
    crops, labels = [], []
    for cls_dir in sorted((folder / "faces" / split).iterdir()):
        for path in sorted(cls_dir.glob("*.png")):
            img = cv2.imread(str(path))
            crops.append(cv2.resize(img, (FACE_INPUT_PX, FACE_INPUT_PX)))
            labels.append(cls_dir.name)
    return np.stack(crops), labels


VIDEO_FACE_GAP = {"tile": 25, "die": 2}  # frames between two crops of one object


def suite_video(clips: list[Path], every: int, face_crops_out: list, labels_out: list):
    """Full-resolution frames (one in ``every``) of rendered rounds with their truth boxes;
    fills ``face_crops_out``/``labels_out`` with readable faces from every frame."""
    import av

    for clip in clips:
        with gzip.open(clip / "truth.jsonl.gz", "rt", encoding="utf-8") as f:
            truth = [json.loads(line) for line in f]
        last: dict = {}
        with av.open(str(clip / "clip.mp4")) as container:
            for index, frame in enumerate(container.decode(video=0)):
                row = truth[index] if index < len(truth) else None
                if row is None or row["blind"]:
                    continue
                image = frame.to_ndarray(format="bgr24")
                for o in row["objects"]:
                    cls = face_class(o)
                    gap = VIDEO_FACE_GAP.get(o["class"], 0)
                    if cls is None or index - last.get(o["id"], -gap) < gap:
                        continue
                    last[o["id"]] = index
                    face_crops_out.append(crop_square(image, o["xyxy"]))
                    labels_out.append(cls)
                if index % every == 0:
                    a = np.array(frame_labels(row["objects"], 1.0), np.float64).reshape(-1, 5)
                    yield LabelledImage(image, a[:, 1:], a[:, 0].astype(int))


def video_metrics(args, detector: Detector, models_dir: Path) -> dict:
    names = (
        args.rounds
        or [e["name"] for e in json.loads((args.suite / "suite.json").read_text())][
            : args.suite_clips
        ]
    )
    clips = [args.suite / n for n in names]
    if missing := [c.name for c in clips if not (c / "truth.jsonl.gz").is_file()]:
        raise SystemExit(f"evaluate_models: not rendered in {args.suite}: {', '.join(missing)}")
    crops: list = []
    labels: list[str] = []
    det = detection_metrics(detector, suite_video(clips, args.every, crops, labels))
    classes = tuple(load_manifest(models_dir)["faces"]["classes"])
    reader = FaceReader(threads=2, models_dir=models_dir, classes=classes)
    cfg = TrackerConfig()
    faces = video_face_metrics(
        reader.crop_probs(np.stack(crops), np.array([lab.startswith("die") for lab in labels])),
        classes,
        labels,
        cfg.min_face_confidence,
        cfg.min_die_confidence,
    )
    d = det["all"]
    print(
        f"video ({len(clips)} rounds of {args.suite}, {len(labels)} face crops): "
        f"mAP50 {d['ap50']:.3f} mAP50-95 {d['ap50_95']:.3f} | "
        + " ".join(f"{c} {v['ap50']:.3f}" for c, v in det.items() if c != "all")
    )
    print(f"video faces: {json.dumps(faces)}")
    return {"rounds": names, "detection": det, "faces": faces}


def latency(detector: Detector, reader: FaceReader, sample: Path) -> dict:
    frame = Frame("bench", 0, 0.0, cv2.imread(str(sample)))
    detector(frame)  # warm-up
    crop = np.zeros((1, FACE_INPUT_PX, FACE_INPUT_PX, 3), np.uint8)
    reader.probs(crop)
    return {
        "detector_ms_per_1080p_frame": median_ms(lambda: detector(frame), LATENCY_REPEATS),
        "face_reader_ms_per_crop": median_ms(lambda: reader.probs(crop), LATENCY_REPEATS),
        "threads": detector.config.threads,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=Path(".cache/datasets"), help="face crops")
    p.add_argument(
        "--stills",
        type=Path,
        default=Path(".cache/synth/stills"),
        help="full-resolution rendered stills with labels",
    )
    p.add_argument("--out", type=Path, default=Path("models/metrics.json"))
    p.add_argument("--suite", type=Path, help="rendered rounds: measure on video instead")
    p.add_argument("--suite-clips", type=int, default=8, help="the suite's first N rounds")
    p.add_argument("--rounds", nargs="+", help="video: these rounds of the suite")
    p.add_argument("--every", type=int, default=25, help="video: detect on one frame in N")
    p.add_argument("--models", type=Path, default=MODELS_DIR, help="folder of the models")
    p.add_argument(
        "--detector", default=DetectorConfig().model, help="manifest entry of the detector"
    )
    p.add_argument("--splits", nargs="+", default=["test", "shifted"], help="stills: these splits")
    p.add_argument("--no-faces", action="store_true", help="stills: detection only")
    p.add_argument(
        "--no-felt",
        action="store_true",
        help="no felt balance (vision.felt): the network alone",
    )
    p.add_argument(
        "--felt-spread",
        type=float,
        help="the felt balance's spread_sigmas (vision.felt.FeltConfig), to compare settings",
    )
    args = p.parse_args(argv)
    config = DetectorConfig(threads=2, model=args.detector)
    if args.felt_spread is not None and config.felt is not None:
        config = replace(config, felt=replace(config.felt, spread_sigmas=args.felt_spread))
    if args.no_felt:
        config = replace(config, felt=None)
    detector = Detector(config, models_dir=args.models)
    if args.suite:
        if not (args.suite / "suite.json").is_file():
            raise SystemExit(f"evaluate_models: no suite.json in {args.suite}")
        result = {
            "detector_model": args.detector,
            "video": video_metrics(args, detector, args.models),
        }
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.out}")
        return 0
    reader = FaceReader(threads=2, models_dir=args.models)
    result: dict = {"detector_model": args.detector}
    for split in args.splits:
        det = detection_metrics(detector, labelled_images(args.stills, split))
        result[split] = {"detection": det}
        d = det["all"]
        line = f"{split}: mAP50 {d['ap50']:.3f} mAP50-95 {d['ap50_95']:.3f} | " + " ".join(
            f"{c} {v['ap50']:.3f}/{v['ap50_95']:.3f}" for c, v in det.items() if c != "all"
        )
        if not args.no_faces:
            crops, labels = face_crops(args.data, split)
            f = result[split]["faces"] = face_accuracy(reader, crops, labels)
            line += (
                f" | tiles {f['tile']['accuracy']:.4f} (n={f['tile']['n']}) "
                f"dice {f['die']['accuracy']:.4f} (n={f['die']['n']})"
            )
        print(line)
    sample = next((args.stills / "images" / args.splits[0]).glob("*.jpg"))
    result["latency"] = latency(detector, reader, sample)
    print(f"latency (median, 2 threads): {result['latency']}")
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
