"""Quantize the shipped detector to int8 for the CPU (onnxruntime static quantization, QDQ).

    python scripts/quantize.py --clips .cache/train_clips

Reads ``models/detector.onnx`` (the float export, ``scripts/export.py``), writes
``models/detector_int8.onnx`` and its ``detector_int8`` entry in ``models/manifest.json``
(which float file it came from, by sha256, and how it was calibrated). The monitor runs the
entry named by ``DetectorConfig.model``.

Calibration: whole frames of rendered training rounds (``scripts/train_gpu.py render``; never
the standard suite's seeds), one in 97, letterboxed as ``Detector.detect`` does. Weights are
int8 per channel, activations uint8 (min-max). Kept in float: the box decoding of the detection
head and the three last convolutions of each head branch (boxes in pixels and class
probabilities come out in one tensor: an int8 scale for both would flatten the probabilities).
Needs the ``onnx`` package (``train`` extra).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from vision.detector import letterbox
from vision.onnx import MODELS_DIR, load_manifest

HEAD = "/model.23/"  # the detection head of the exported YOLO graph
BRANCHES = (HEAD + "cv2.", HEAD + "cv3.")  # its box and class convolutions


def calibration_frames(clips: Path, every: int, limit: int) -> list[np.ndarray]:
    """Whole BGR frames, one in ``every`` of each ``clips/*/clip.mp4``, at most ``limit``."""
    import av

    videos = sorted(clips.glob("*/clip.mp4"))
    if not videos:
        raise ValueError(f"{clips}: no */clip.mp4 to calibrate on")
    per_clip = max(1, -(-limit // len(videos)))
    out: list[np.ndarray] = []
    for video in videos:
        try:
            with av.open(str(video)) as container:
                taken = 0
                for i, frame in enumerate(container.decode(container.streams.video[0])):
                    if i % every == every // 7 and taken < per_clip:
                        out.append(frame.to_ndarray(format="bgr24"))
                        taken += 1
        except av.error.FFmpegError as exc:
            print(f"quantize: skipping {video}: {exc}", file=sys.stderr)
        if len(out) >= limit:
            break
    if not out:
        raise ValueError(f"{clips}: no readable frames")
    return out[:limit]


def calibration_stills(folders: list[Path], limit: int) -> list[np.ndarray]:
    """Whole still images (``images/train/*.jpg`` of each folder, e.g. stills already put in
    their table view by ``scripts/view_stills.py``), spread evenly, at most ``limit``."""
    import cv2

    paths = sorted(p for folder in folders for p in (folder / "images" / "train").glob("*.jpg"))
    if not paths:
        raise ValueError(f"no images/train/*.jpg under {', '.join(map(str, folders))}")
    step = max(1, len(paths) // limit)
    return [cv2.imread(str(p)) for p in paths[::step][:limit]]


def kept_in_float(graph) -> list[str]:
    """Head nodes left in float: the decoding, and each branch's last convolution."""
    last = [n.name for n in graph.node if n.op_type == "Conv" and n.name.startswith(BRANCHES)]
    last = [name for name in last if name.split("/")[-2].count(".") == 2]  # cv2.0.2, cv3.1.2
    decoding = [
        n.name for n in graph.node if n.name.startswith(HEAD) and not n.name.startswith(BRANCHES)
    ]
    return sorted(set(last + decoding))


def quantize(source: Path, target: Path, frames: list[np.ndarray], input_wh) -> None:
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    graph = onnx.load(str(source)).graph
    if any(n.op_type == "QuantizeLinear" for n in graph.node):
        raise ValueError(f"{source}: already quantized")
    name = graph.input[0].name

    class Frames(CalibrationDataReader):
        def __init__(self) -> None:
            self.left = iter(frames)

        def get_next(self):
            image = next(self.left, None)
            return None if image is None else {name: letterbox(image, input_wh)[0]}

    with tempfile.TemporaryDirectory(prefix="quantize-") as work:
        prepared = Path(work) / "prepared.onnx"
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        quantize_static(
            str(prepared),
            str(target),
            Frames(),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            nodes_to_exclude=kept_in_float(graph),
            calibrate_method=CalibrationMethod.MinMax,
        )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clips", type=Path, default=Path(".cache/train_clips"))
    p.add_argument(
        "--stills",
        type=Path,
        nargs="+",
        help="calibrate on still images instead (folders with images/train/*.jpg)",
    )
    p.add_argument("--every", type=int, default=97, help="one calibration frame in N")
    p.add_argument("--frames", type=int, default=80, help="calibration frames")
    p.add_argument("--models", type=Path, default=MODELS_DIR)
    args = p.parse_args(argv)
    try:
        manifest = load_manifest(args.models)
        entry = manifest["detector"]
        source, target = args.models / entry["file"], args.models / "detector_int8.onnx"
        if args.stills:
            frames = calibration_stills(args.stills, args.frames)
            source_name = f"{len(frames)} stills of " + ", ".join(p.name for p in args.stills)
        else:
            frames = calibration_frames(args.clips, args.every, args.frames)
            source_name = f"{len(frames)} frames, one in {args.every}, of {args.clips.name}/*"
        print(f"calibrating on {source_name}")
        quantize(source, target, frames, tuple(entry["input_wh"]))
    except (OSError, ValueError, KeyError) as exc:
        print(f"quantize: {exc}", file=sys.stderr)
        return 2
    manifest["detector_int8"] = {
        key: entry[key]
        for key in ("task", "input_wh", "free_input_size", "classes", "felts_bgr", "backs_bgr")
        if key in entry
    } | {
        "file": target.name,
        "sha256": sha256(target),
        "quantized_from": {"file": entry["file"], "sha256": entry["sha256"]},
        "calibration": source_name,
    }
    (args.models / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
