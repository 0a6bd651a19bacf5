"""The detector: frame -> detections (tiles up/down, chips, dice, hands), a YOLO model run on
onnxruntime through :mod:`vision.onnx` (which checks it against the sha256 in
``models/manifest.json`` when it is loaded).

Pre- and post-processing are plain numpy: :func:`letterbox`, :func:`decode` (YOLO head output
``(1, 4 + C, N)``: centre x, centre y, width, height in input pixels, then C class scores) and
:func:`nms`. The face reader, run on the detector's boxes, is :mod:`vision.face_reader`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vision.felt import BackConfig, FeltBalance, FeltConfig, TileBacks, felt_colour, shifted
from vision.geometry import UNION_EPS, iou_matrix
from vision.onnx import MODELS_DIR, ModelError, OnnxModel
from vision.refine import refine_bright_box
from vision.types import DETECTOR_CLASSES, DIE, TILE_DOWN, Detections, Frame

PAD_VALUE = 114
MODEL_STRIDE = 32  # YOLO's largest feature stride: a free input size is a multiple of it
MIN_IMAGE_SIDE_PX = MODEL_STRIDE  # a smaller picture is no table frame: the network would see
# less than one cell of its coarsest grid blown up to the whole input
MIN_FITTED_SIDE_PX = MODEL_STRIDE  # an image's short side once letterboxed: a thinner strip
# is under one cell of the coarsest grid (caps the aspect ratio at 30:1 wide, 17:1 tall in
# 960x544); lower: stranger crops pass and find nothing


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
    # tile backs of a colour it never learnt are shown to the network as the nearest it did
    # (vision.felt.TileBacks, learnt from the face-down tiles it finds; the trained backs are
    # the manifest entry's backs_bgr); None: never
    backs: BackConfig | None = field(default_factory=BackConfig)


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


class Detector:
    """Frame -> detections (tiles up/down, chips, dice, hands) in full-frame pixels."""

    def __init__(self, config: DetectorConfig | None = None, models_dir: Path = MODELS_DIR):
        self.config = config or DetectorConfig()
        self.model = OnnxModel(self.config.model, self.config.threads, models_dir)
        if tuple(self.model.entry["classes"]) != DETECTOR_CLASSES:
            raise ModelError(
                f"detector classes {self.model.entry['classes']} are not {list(DETECTOR_CLASSES)}"
            )
        felts, backs = self.model.entry.get("felts_bgr"), self.model.entry.get("backs_bgr")
        try:
            cfg = self.config
            self.felt = FeltBalance(felts, cfg.felt) if felts and cfg.felt else None
            self.backs = TileBacks(backs, cfg.backs) if backs and cfg.backs else None
        except (TypeError, ValueError) as exc:
            raise ModelError(
                f"{models_dir / 'manifest.json'}: {self.config.model} felts_bgr or backs_bgr is "
                f"not a list of BGR colours ({exc})"
            ) from None

    @property
    def trained_back_bgr(self) -> tuple[int, int, int] | None:
        """The first tile back the network learnt (the manifest's ``backs_bgr``), if listed."""
        backs = self.model.entry.get("backs_bgr")
        return tuple(backs[0]) if backs else None

    def __call__(self, frame: Frame) -> Detections:
        return self.detect(frame.image)

    def detect(self, image: np.ndarray, min_confidence: float | None = None) -> Detections:
        """Detections in pixels of the full-resolution ``image (H, W, 3)`` BGR."""
        canvas, lb = letterbox_canvas(image, self.model.input_wh)  # a 1080p frame is halved
        tensor = to_tensor(self._balanced(image, canvas))
        conf = self.config.min_confidence if min_confidence is None else min_confidence
        h, w = image.shape[:2]
        det = decode(self.model.run(tensor), lb, conf, self.config.iou_threshold, (w, h))
        return self._finish(image, det)

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
        return self._finish(image, det)

    def _finish(self, image: np.ndarray, det: Detections) -> Detections:
        """Dice boxes re-measured; the face-down tiles found teach the backs' colour."""
        if self.backs is not None:
            sure = det.confidence >= self.backs.config.min_confidence
            self.backs.observe(image, det.xyxy[(det.class_id == TILE_DOWN) & sure])
        return self._refine_dice(image, det) if self.config.refine_dice else det

    def _balanced(self, image: np.ndarray, part: np.ndarray) -> np.ndarray:
        """``part`` of the network input made from ``image``, its felt and its tile backs
        balanced (vision.felt)."""
        if self.felt is None and self.backs is None:
            return part
        felt_bgr = felt_colour(image, self.config.felt or FeltConfig())
        felt = self.felt.shift_for(image, felt_bgr) if self.felt is not None else None
        backs = self.backs.shift(felt_bgr) if self.backs is not None else None
        return shifted(part, (felt, backs))

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
