"""ONNX models on onnxruntime, the only module that imports it: the models manifest
(``models/manifest.json``: each model's file, sha256, classes, input size), every model file
checked against its sha256 when loaded, and the CPU session that runs it. The models
themselves are used by :mod:`vision.detector` (the detector) and :mod:`vision.face_reader`
(the face reader and the face-down check).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

MODELS_DIR = Path(__file__).resolve().parents[1] / "models"


class ModelError(ValueError):
    """A model file that is missing, corrupt or does not match its manifest entry."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_manifest(models_dir: Path = MODELS_DIR) -> dict:
    """``models_dir``'s manifest: model name -> entry (``file``, ``sha256``, ``classes``,
    ``input_wh``, ...); ModelError when it is missing or not JSON."""
    path = models_dir / "manifest.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelError(f"{path}: missing (the shipped models are listed there)") from None
    except json.JSONDecodeError as exc:
        raise ModelError(f"{path}: not valid JSON ({exc})") from None


class OnnxModel:
    """An ONNX model checked against its manifest entry and run on onnxruntime (CPU)."""

    # onnxruntime's worker threads spin-wait for work between runs by default. On 2 cores that
    # takes the CPU the decoding thread and the rest of the pipeline need; sleeping instead,
    # side by side on the demo clip (scripts/bench.py, option spin: True), interleaved: live
    # 36.6-43.9 against 28.2-28.4 frames/s (2 runs each), review 71.4-75.0 against 51.0-59.1 (3).
    spin_wait: bool = False

    def __init__(self, name: str, threads: int = 2, models_dir: Path = MODELS_DIR):
        import onnxruntime as ort

        manifest = load_manifest(models_dir)
        if name not in manifest:
            raise ModelError(f"{models_dir / 'manifest.json'}: no model named {name!r}")
        self.entry = manifest[name]
        path = models_dir / self.entry["file"]
        if not path.is_file():
            raise ModelError(f"{path}: model file missing")
        digest = _sha256(path)
        if digest != self.entry["sha256"]:
            raise ModelError(
                f"{path}: sha256 {digest[:12]}... does not match the manifest's "
                f"{self.entry['sha256'][:12]}... (corrupt or replaced file)"
            )
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        if not self.spin_wait:
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own types for broken graphs
            raise ModelError(f"{path}: cannot be loaded by onnxruntime ({exc})") from None
        self.input_name = self.session.get_inputs()[0].name
        self.input_wh = tuple(self.entry["input_wh"])
        # a symbolic (named) height/width: the model takes other input sizes than input_wh
        self.free_input_size = not all(
            isinstance(d, int) for d in self.session.get_inputs()[0].shape[2:]
        )

    def run(self, tensor: np.ndarray) -> np.ndarray:
        return self.session.run(None, {self.input_name: tensor})[0]
