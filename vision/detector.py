"""ONNX models on onnxruntime (the only module that imports it): the detector and the face reader.

Pre- and post-processing are plain numpy: :func:`letterbox`, :func:`decode` (YOLO head output
``(1, 4 + C, N)``: centre x, centre y, width, height in input pixels, then C class scores) and
:func:`nms`. Models are checked against the sha256 in ``models/manifest.json`` when loaded.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vision.faces import (
    DOWN_CHECK_CLASSES,
    FACE_CLASSES,
    FACE_INPUT_PX,
    crop_square,
    die_choice,
    turned_up,
)
from vision.felt import FeltBalance, FeltConfig
from vision.geometry import UNION_EPS, iou_matrix
from vision.refine import refine_bright_box
from vision.types import DETECTOR_CLASSES, DIE, TILE_DOWN, TILE_UP, Detections, Frame

MODELS_DIR = Path(__file__).resolve().parents[1] / "models"
PAD_VALUE = 114
MODEL_STRIDE = 32  # YOLO's largest feature stride: a free input size is a multiple of it
MIN_IMAGE_SIDE_PX = MODEL_STRIDE  # a smaller picture is no table frame: the network would see
# less than one cell of its coarsest grid blown up to the whole input
MIN_FITTED_SIDE_PX = MODEL_STRIDE  # an image's short side once letterboxed: a thinner strip
# is under one cell of the coarsest grid (caps the aspect ratio at 30:1 wide, 17:1 tall in
# 960x544); lower: stranger crops pass and find nothing


class ModelError(ValueError):
    """A model file that is missing, corrupt or does not match its manifest entry."""


@dataclass(frozen=True)
class DetectorConfig:
    """Thresholds of the detector; the trade-offs are in the comments."""

    min_confidence: float = 0.25  # lower: more recall on small or occluded objects, more noise
    iou_threshold: float = 0.4  # higher: keeps tiles overlapping in a fanned row, but also
    # the duplicate boxes the detector puts between them (0.6 -> 0.4 fixed the tile counts of
    # spread hands; AP50 of tiles 0.994 -> 0.990)
    threads: int = 2
    # The manifest entry run: detector_int8 (scripts/quantize.py, from the float detector
    # export) is 1.6-2x faster on 2 cores at the same AP50 on rendered video (int8 vs float,
    # 6 suite rounds: mAP50 0.955 vs 0.962, die 0.901 vs 0.937 of 20 dice); "detector" is the
    # float export ultralytics' weights are checked against (tests/vision/test_parity.py).
    model: str = "detector_int8"
    refine_dice: bool = True  # re-measure die boxes on the full-resolution frame (vision.refine)
    # an unknown felt is shown to the network as the nearest felt it was trained on
    # (vision.felt; the trained felts are the manifest entry's felts_bgr); None: never
    felt: FeltConfig | None = field(default_factory=FeltConfig)


@dataclass(frozen=True)
class Letterbox:
    """How an image was fitted into the network input: ``input = image * ratio + pad``."""

    ratio: float
    pad_xy: tuple[float, float]


def letterbox(image: np.ndarray, input_wh: tuple[int, int]) -> tuple[np.ndarray, Letterbox]:
    """Resize keeping aspect and pad (centred, grey 114) to ``input_wh``.

    Returns the NCHW float32 tensor in [0, 1] (RGB) and the transform.

    >>> t, lb = letterbox(np.zeros((540, 960, 3), np.uint8), (960, 544))
    >>> t.shape, lb.ratio, lb.pad_xy
    ((1, 3, 544, 960), 1.0, (0.0, 2.0))
    """
    canvas, lb = letterbox_canvas(image, input_wh)
    return to_tensor(canvas), lb


def check_fits(image_wh: tuple[int, int], input_wh: tuple[int, int]) -> None:
    """Raise ValueError (one line) for an image size the detector cannot use: a side under
    ``MIN_IMAGE_SIDE_PX``, or so far from the input's aspect that the letterboxed short side is
    under ``MIN_FITTED_SIDE_PX``.

    >>> check_fits((1920, 1080), (960, 544))
    >>> check_fits((5000, 100), (960, 544))
    Traceback (most recent call last):
    ...
    ValueError: a 5000x100 image is too thin for the detector's 960x544 input (aspect ratio 50:1)
    """
    w, h = image_wh
    if min(w, h) < MIN_IMAGE_SIDE_PX:
        raise ValueError(
            f"a {w}x{h} image is too small for the detector (a side under {MIN_IMAGE_SIDE_PX} px)"
        )
    in_w, in_h = input_wh
    r = min(in_w / w, in_h / h)
    if min(w, h) * r < MIN_FITTED_SIDE_PX:
        raise ValueError(
            f"a {w}x{h} image is too thin for the detector's {in_w}x{in_h} input "
            f"(aspect ratio {max(w, h) / min(w, h):.0f}:1)"
        )


def letterbox_canvas(image: np.ndarray, input_wh: tuple[int, int]) -> tuple[np.ndarray, Letterbox]:
    """:func:`letterbox` before the tensor: the ``(in_h, in_w, 3)`` uint8 BGR canvas. Raises
    ValueError for an image size :func:`check_fits` refuses."""
    h, w = image.shape[:2]
    check_fits((w, h), input_wh)
    in_w, in_h = input_wh
    r = min(in_w / w, in_h / h)
    new_w, new_h = round(w * r), round(h * r)
    if (new_w, new_h) != (w, h):
        # shrinking by area averaging, as the training frames were made
        interpolation = cv2.INTER_AREA if r < 1 else cv2.INTER_LINEAR
        image = cv2.resize(image, (new_w, new_h), interpolation=interpolation)
    px, py = (in_w - new_w) / 2, (in_h - new_h) / 2
    top, left = round(py - 0.1), round(px - 0.1)
    canvas = cv2.copyMakeBorder(
        image,
        top,
        in_h - new_h - top,
        left,
        in_w - new_w - left,
        cv2.BORDER_CONSTANT,
        value=(PAD_VALUE,) * 3,
    )
    return canvas, Letterbox(r, (float(left), float(top)))


def to_tensor(canvas: np.ndarray) -> np.ndarray:
    """``(H, W, 3)`` uint8 BGR -> ``(1, 3, H, W)`` float32 RGB in [0, 1] (``x / 255``).

    >>> to_tensor(np.array([[[0, 51, 255]]], np.uint8)).ravel().tolist()
    [1.0, 0.20000000298023224, 0.0]
    """
    h, w = canvas.shape[:2]
    tensor = np.empty((1, 3, h, w), np.float32)
    for c in range(3):  # channel by channel: several times faster than one strided transpose
        tensor[0, c] = canvas[:, :, 2 - c]
    return np.divide(tensor, 255.0, out=tensor)


def snap_to_stride(
    region_xyxy, lb: Letterbox, input_wh: tuple[int, int], stride: int = MODEL_STRIDE
) -> tuple[int, int, int, int]:
    """The network-input window ``(x1, y1, x2, y2)`` that covers a region of the image: the
    region mapped through the letterbox, grown out to multiples of ``stride``, clipped to
    the input. A window on the stride grid sees the same input cells as the whole frame.

    >>> snap_to_stride((100, 100, 300, 200), Letterbox(0.5, (0.0, 2.0)), (960, 544))
    (32, 32, 160, 128)
    """
    x1, y1, x2, y2 = (float(v) for v in region_xyxy)
    (px, py), r = lb.pad_xy, lb.ratio
    in_w, in_h = input_wh
    return (
        max(0, int(np.floor((x1 * r + px) / stride)) * stride),
        max(0, int(np.floor((y1 * r + py) / stride)) * stride),
        min(in_w, int(np.ceil((x2 * r + px) / stride)) * stride),
        min(in_h, int(np.ceil((y2 * r + py) / stride)) * stride),
    )


def nms(xyxy: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    """Greedy non-maximum suppression; returns kept indices, best first.

    >>> nms(np.array([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]], float),
    ...     np.array([0.9, 0.8, 0.7]), 0.5).tolist()
    [0, 2]
    """
    order = np.argsort(-scores)
    keep = []
    while order.size:
        i, rest = order[0], order[1:]
        keep.append(i)
        iou = iou_matrix(xyxy[i][None], xyxy[rest], eps=UNION_EPS)[0]
        order = rest[iou <= iou_threshold]
    return np.array(keep, dtype=np.int64)


def decode(
    raw: np.ndarray,
    lb: Letterbox,
    min_confidence: float,
    iou_threshold: float,
    image_wh: tuple[int, int] | None = None,
) -> Detections:
    """YOLO output ``(1, 4 + C, N)`` -> detections in pixels of the image before the letterbox,
    clipped to it when ``image_wh`` is given."""
    pred = raw[0].T  # (N, 4 + C)
    scores_all = pred[:, 4:]
    class_id = scores_all.argmax(axis=1)
    scores = scores_all[np.arange(len(pred)), class_id]
    keep = scores >= min_confidence
    pred, class_id, scores = pred[keep], class_id[keep], scores[keep]
    cx, cy, w, h = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
    xyxy = np.column_stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])
    offset = class_id[:, None] * 10_000.0  # class-aware NMS in one pass
    kept = nms(xyxy + offset, scores, iou_threshold)
    xyxy = xyxy[kept]
    xyxy[:, [0, 2]] -= lb.pad_xy[0]
    xyxy[:, [1, 3]] -= lb.pad_xy[1]
    xyxy /= lb.ratio
    if image_wh is not None:
        xyxy[:, [0, 2]] = xyxy[:, [0, 2]].clip(0, image_wh[0])
        xyxy[:, [1, 3]] = xyxy[:, [1, 3]].clip(0, image_wh[1])
    return Detections.from_arrays(xyxy, class_id[kept], scores[kept])


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_manifest(models_dir: Path = MODELS_DIR) -> dict:
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


class Detector:
    """Frame -> detections (tiles up/down, chips, dice, hands) in full-frame pixels."""

    def __init__(self, config: DetectorConfig | None = None, models_dir: Path = MODELS_DIR):
        self.config = config or DetectorConfig()
        self.model = OnnxModel(self.config.model, self.config.threads, models_dir)
        if tuple(self.model.entry["classes"]) != DETECTOR_CLASSES:
            raise ModelError(
                f"detector classes {self.model.entry['classes']} are not {list(DETECTOR_CLASSES)}"
            )
        felts = self.model.entry.get("felts_bgr")
        try:
            self.felt = FeltBalance(felts, self.config.felt) if felts and self.config.felt else None
        except (TypeError, ValueError) as exc:
            raise ModelError(
                f"{models_dir / 'manifest.json'}: {self.config.model} felts_bgr is not a list of "
                f"BGR colours ({exc})"
            ) from None

    def __call__(self, frame: Frame) -> Detections:
        return self.detect(frame.image)

    def detect(self, image: np.ndarray, min_confidence: float | None = None) -> Detections:
        """Detections in pixels of the full-resolution ``image (H, W, 3)`` BGR."""
        canvas, lb = letterbox_canvas(image, self.model.input_wh)  # a 1080p frame is halved
        tensor = to_tensor(self._balanced(image, canvas))
        conf = self.config.min_confidence if min_confidence is None else min_confidence
        h, w = image.shape[:2]
        det = decode(self.model.run(tensor), lb, conf, self.config.iou_threshold, (w, h))
        if self.config.refine_dice:
            det = self._refine_dice(image, det)
        return det

    def detect_region(
        self, image: np.ndarray, region_xyxy, min_confidence: float | None = None
    ) -> Detections:
        """Detections in one region of the full-resolution ``image (H, W, 3)`` BGR, in
        full-frame pixels, as :meth:`detect` would see them there.

        The network runs on the window of the full letterboxed input that covers
        ``region_xyxy`` (grown out to the model's stride, :func:`snap_to_stride`), so objects
        inside it meet the same input grid and scale as in a full detection; only context
        beyond the window is missing. Objects cut by the window's edges come back cut: the
        caller decides what to keep. Needs a model exported with a free input size
        (``scripts/export.py``).
        """
        if not self.model.free_input_size:
            raise ModelError(
                "detector model has a fixed input size; re-export it with scripts/export.py "
                "to detect on regions"
            )
        canvas, lb = letterbox_canvas(image, self.model.input_wh)
        x1, y1, x2, y2 = snap_to_stride(region_xyxy, lb, self.model.input_wh)
        if x2 <= x1 or y2 <= y1:
            return Detections()
        window = Letterbox(lb.ratio, (lb.pad_xy[0] - x1, lb.pad_xy[1] - y1))
        conf = self.config.min_confidence if min_confidence is None else min_confidence
        h, w = image.shape[:2]
        raw = self.model.run(to_tensor(self._balanced(image, canvas[y1:y2, x1:x2])))
        det = decode(raw, window, conf, self.config.iou_threshold, (w, h))
        if self.config.refine_dice:
            det = self._refine_dice(image, det)
        return det

    def _balanced(self, image: np.ndarray, part: np.ndarray) -> np.ndarray:
        """``part`` of the network input made from ``image``, its felt balanced (vision.felt)."""
        if self.felt is None:
            return part
        return self.felt.apply(part, self.felt.shift_for(image))

    def _refine_dice(self, image: np.ndarray, det: Detections) -> Detections:
        dice = np.flatnonzero(det.class_id == DIE)
        if not len(dice):
            return det
        xyxy = det.xyxy.copy()
        for i in dice:
            xyxy[i] = refine_bright_box(image, xyxy[i])
        return Detections(
            xyxy, det.class_id, det.confidence, det.face, det.face_confidence, det.obb
        )


class FaceReader:
    """Reads tile faces and die values from full-resolution crops around detections, and
    checks the detector's face-down tiles (the face-down check, a second model)."""

    def __init__(
        self,
        threads: int = 2,
        models_dir: Path = MODELS_DIR,
        batch: int = 32,
        classes: tuple[str, ...] = FACE_CLASSES,
        check_down: bool = True,
    ):
        """``classes``: what the caller reads the output as (the monitor: ``FACE_CLASSES``);
        the manifest must list the same. ``check_down``: also read the detector's face-down
        boxes with the face-down check (``faces_down`` in the manifest)."""
        self.model = _classifier("faces", classes, threads, models_dir)
        self.down_check = (
            _classifier("faces_down", DOWN_CHECK_CLASSES, threads, models_dir)
            if check_down
            else None
        )
        self.batch = batch

    def __call__(self, image: np.ndarray, detections: Detections) -> Detections:
        """Fill ``face``/``face_confidence`` for face-up tiles and dice; a face-down box that
        the face-down check reads as a tile face (:func:`vision.faces.turned_up`) becomes a
        face-up one with that face."""
        kinds = (TILE_UP, DIE, TILE_DOWN) if self.down_check else (TILE_UP, DIE)
        want = np.flatnonzero(np.isin(detections.class_id, kinds))
        face = detections.face.copy()
        conf = detections.face_confidence.copy()
        class_id = detections.class_id.copy()
        if not len(want):
            return detections.with_faces(face, conf)
        crops = np.stack([crop_square(image, detections.xyxy[i], FACE_INPUT_PX) for i in want])
        kind = detections.class_id[want]
        read = np.flatnonzero(kind != TILE_DOWN)
        if len(read):
            probs = self.probs(crops[read])
            face[want[read]], conf[want[read]] = probs.argmax(axis=1), probs.max(axis=1)
            dice = kind[read] == DIE
            if dice.any():  # a die reads a value or die_tipped, never a tile
                face[want[read[dice]]], conf[want[read[dice]]] = die_choice(probs[dice])
        down = np.flatnonzero(kind == TILE_DOWN)
        if len(down):
            turned, best, p = turned_up(self.probs(crops[down], self.down_check))
            rows = want[down[turned]]
            class_id[rows], face[rows], conf[rows] = TILE_UP, best[turned], p[turned]
        return detections.with_faces(face, conf, class_id)

    def probs(self, crops: np.ndarray, model: OnnxModel | None = None) -> np.ndarray:
        """``crops (N, S, S, 3)`` uint8 BGR -> class probabilities ``(N, classes)`` of the face
        reader (or of ``model``)."""
        model, chunks = model or self.model, []
        for i in range(0, len(crops), self.batch):
            chunk = crops[i : i + self.batch][..., ::-1].transpose(0, 3, 1, 2)
            chunks.append(model.run(np.ascontiguousarray(chunk, dtype=np.float32) / 255.0))
        return np.concatenate(chunks)


def _classifier(name: str, classes: tuple[str, ...], threads: int, models_dir: Path) -> OnnxModel:
    """The manifest's model ``name``, checked to output ``classes``."""
    model = OnnxModel(name, threads, models_dir)
    if tuple(model.entry["classes"]) != classes:
        raise ModelError(
            f"{name} classes in {models_dir / 'manifest.json'} are not the {len(classes)} "
            "classes expected (vision.faces)"
        )
    return model
