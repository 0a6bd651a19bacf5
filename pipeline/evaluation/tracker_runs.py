"""The tile tracker run on a rendered clip, its frames paired with the truth for scoring
(:mod:`pipeline.evaluation.tracking`).

Input to the tracker: ground-truth boxes degraded into detections (:class:`NoiseConfig`:
jitter, dropouts, confidence from visibility, misread faces, clutter), or the ONNX detector and
face reader on the decoded clip (needs ``models/manifest.json``). Scored: tiles at least
``min_visibility`` visible against the tile tracks matched on that frame (coasting tracks are
hidden, not reported), outside the wash and blind frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.evaluation.tracking import Segments
from pipeline.evaluation.truth import Frames, class_id_of, read_clip, reported_tiles, truth_tiles
from pipeline.layout import layout_from_scenario
from vision.faces import FACE_CLASSES
from vision.tracking.config import TrackerConfig
from vision.tracking.tracker import Tracker
from vision.types import TILE_DOWN, TILE_UP, Detections, Track

FACE_INDEX = {name: i for i, name in enumerate(FACE_CLASSES)}


@dataclass(frozen=True)
class NoiseConfig:
    """How ground truth is degraded into detections."""

    min_visibility: float = 0.3  # less visible objects are neither detected nor scored
    jitter_frac: float = 0.04  # sigma of each box edge, as a fraction of the box side
    dropout_prob: float = 0.05  # a visible object is missed on a frame
    confidence_sigma: float = 0.1  # confidence = visibility + N(0, sigma), clipped
    face_error_prob: float = 0.02  # a face-up tile or die is read as a random other face
    clutter_per_frame: float = 0.2  # mean false tile detections per frame (Poisson)
    clutter_confidence: float = 0.4  # their confidence (below the tracker's high threshold)


def _face(obj: dict, rng: np.random.Generator, noise: NoiseConfig) -> int:
    if obj["class"] == "tile" and obj["face_up"]:
        face = FACE_INDEX[f"tile_{obj['face']}"]
    elif obj["class"] == "die" and obj.get("die_value"):
        face = FACE_INDEX[f"die_{obj['die_value']}"]
    else:
        return -1
    return int(rng.integers(len(FACE_CLASSES))) if rng.random() < noise.face_error_prob else face


def noisy_detections(
    objects: list[dict], rng: np.random.Generator, noise: NoiseConfig
) -> Detections:
    """Detections ``(N, ...)`` from one frame's truth objects, degraded per ``noise``."""
    kept = [
        o
        for o in objects
        if o["visibility"] >= noise.min_visibility and rng.random() >= noise.dropout_prob
    ]
    xyxy = np.array([o["xyxy"] for o in kept], np.float64).reshape(-1, 4)
    side = np.repeat(xyxy[:, 2:] - xyxy[:, :2], 2, axis=0).reshape(-1, 4)
    xyxy = xyxy + rng.normal(0.0, noise.jitter_frac, xyxy.shape) * side
    vis = np.array([o["visibility"] for o in kept], np.float64)
    conf = np.clip(vis + rng.normal(0.0, noise.confidence_sigma, len(kept)), 0.05, 1.0)
    cls = [class_id_of(o) for o in kept]
    faces = [_face(o, rng, noise) for o in kept]
    clutter = _clutter(xyxy[np.isin(cls, (TILE_DOWN, TILE_UP))], rng, noise)
    xyxy = np.vstack([xyxy, clutter])
    n_extra = len(clutter)
    dets = Detections.from_arrays(
        xyxy,
        cls + [TILE_DOWN] * n_extra,
        np.concatenate([conf, np.full(n_extra, noise.clutter_confidence)]),
    )
    face = np.array(faces + [-1] * n_extra, np.int32)
    return dets.with_faces(face, np.where(face >= 0, 0.9, 0.0))


def _clutter(tiles_xyxy: np.ndarray, rng: np.random.Generator, noise: NoiseConfig) -> np.ndarray:
    """False tile boxes ``(K, 4)``: copies of real tile boxes shifted by one to three sides."""
    k = rng.poisson(noise.clutter_per_frame) if len(tiles_xyxy) else 0
    src = tiles_xyxy[rng.integers(len(tiles_xyxy), size=k)] if k else np.zeros((0, 4))
    side = np.repeat(src[:, 2:] - src[:, :2], 2, axis=0).reshape(-1, 4)[:, :2]
    shift = rng.uniform(1.0, 3.0, (k, 2)) * side * rng.choice((-1, 1), (k, 2))
    return src + np.hstack([shift, shift])


def track_noisy_truth(
    folder: Path, noise: NoiseConfig, seed: int, config: TrackerConfig | None = None
) -> Segments:
    """Run the tracker on noisy ground truth of a rendered clip; scored frame pairs."""
    scenario, frames = read_clip(folder)
    tracker = Tracker(config, layout_from_scenario(scenario).zone_of)
    rng = np.random.default_rng(seed)
    segments: Segments = [[] for _ in frames.segments]
    for t in frames.truth:
        tracks = tracker.update(noisy_detections(t["objects"], rng, noise), t["frame"])
        _score_frame(segments, frames, t, tracks, noise.min_visibility)
    return segments


def _score_frame(
    segments: Segments, frames: Frames, truth: dict, tracks: list[Track], min_visibility: float
) -> None:
    k = frames.segment_of(truth["frame"])
    if k is not None:
        segments[k].append(
            (
                *truth_tiles(truth["objects"], min_visibility),
                *reported_tiles(tracks, truth["frame"]),
            )
        )


def load_models() -> tuple:
    """The ONNX detector and face reader from ``models/`` (``--detector`` mode only)."""
    from vision.detector import Detector  # onnxruntime only in this mode
    from vision.face_reader import FaceReader

    return Detector(), FaceReader()


def track_detector(
    folder: Path, min_visibility: float, models: tuple, config: TrackerConfig | None = None
) -> Segments:
    """Run the detector + face reader (``models``) and the tracker on the clip's video."""
    import av  # decode only in this mode

    from vision.types import Frame

    scenario, frames = read_clip(folder)
    detector, reader = models
    tracker = Tracker(config, layout_from_scenario(scenario).zone_of)
    segments: Segments = [[] for _ in frames.segments]
    with av.open(str(folder / "clip.mp4")) as container:
        for t, vf in zip(frames.truth, container.decode(video=0), strict=False):
            image = vf.to_ndarray(format="bgr24")
            frame = Frame("scenario", t["frame"], t["time_s"], image)
            tracks = tracker.update(reader(image, detector(frame)), t["frame"])
            _score_frame(segments, frames, t, tracks, min_visibility)
    return segments
