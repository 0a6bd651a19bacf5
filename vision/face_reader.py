"""The face reader: tile faces and die values read from full-resolution crops around the
detector's boxes, by the classifiers of the models manifest (``faces``, the face-down check
``faces_down``, and the die reader ``dice`` where the manifest lists one: dice are then read by
it alone) run on onnxruntime through :mod:`vision.onnx`. What the classes are, how
crops are cut and how probabilities become a face live in :mod:`vision.faces`; reading a box
once rather than every frame in :mod:`vision.faces_cache`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vision.faces import (
    DIE_CLASSES,
    DOWN_CHECK_CLASSES,
    FACE_CLASSES,
    FACE_INPUT_PX,
    PIP_MIN_EVIDENCE,
    crop_square,
    die_choice,
    pip_evidence,
    read_as_back,
    turned_up,
    unsure_face,
)
from vision.onnx import MODELS_DIR, ModelError, OnnxModel, load_manifest
from vision.types import DIE, TILE_DOWN, TILE_UP, Detections


class FaceReader:
    """Reads tile faces and die values from full-resolution crops around detections, and
    checks the detector's tiles face down and face up (the face-down check, a second model)."""

    def __init__(
        self,
        threads: int = 2,
        models_dir: Path = MODELS_DIR,
        batch: int = 32,
        classes: tuple[str, ...] = FACE_CLASSES,
        check_down: bool = True,
        read_backs: bool = True,
        check_pips: bool = True,
        read_dice: bool = True,
    ):
        """``classes``: what the caller reads the output as (the monitor: ``FACE_CLASSES``);
        the manifest must list the same. ``check_down``: also check the detector's tile
        boxes with the face-down check (``faces_down`` in the manifest); ``read_backs``: its face-up
        boxes too (False: only the face-down ones, as before 2026-12-02; for benchmarks);
        ``check_pips``: a tile crop that shows no pips keeps no face (False: as before
        2026-12-03; for benchmarks); ``read_dice``: dice are read by the die reader (``dice``)
        when the manifest lists one (False: by the face reader, as before 2026-12-05)."""
        self.model = _classifier("faces", classes, threads, models_dir)
        self.dice = (
            _classifier("dice", DIE_CLASSES, threads, models_dir)
            if read_dice and "dice" in load_manifest(models_dir)
            else None
        )
        self.down_check = (
            _classifier("faces_down", DOWN_CHECK_CLASSES, threads, models_dir)
            if check_down
            else None
        )
        self.batch = batch
        self.read_backs = read_backs and self.down_check is not None
        self.check_pips = check_pips

    def __call__(self, image: np.ndarray, detections: Detections) -> Detections:
        """Fill ``face``/``face_confidence`` for face-up tiles and dice. With the face-down
        check, a face-down box it reads as a tile face (:func:`vision.faces.turned_up`) becomes
        a face-up one with that face, and a face-up box it reads as a tile back
        (:func:`vision.faces.read_as_back`) keeps no face (doubt: face up to the detector, a
        back to the check). A tile crop that shows no pips (:func:`vision.faces.pip_evidence`)
        keeps no face and is never turned face up, whatever either model reads."""
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
        tiles, dice = read[kind[read] == TILE_UP], read[kind[read] == DIE]
        if len(dice):  # a die reads a value or die_tipped, never a tile
            face[want[dice]], conf[want[dice]] = die_choice(self.die_probs(crops[dice]))
        if len(tiles):
            probs = self.probs(crops[tiles])
            face[want[tiles]], conf[want[tiles]] = probs.argmax(axis=1), probs.max(axis=1)
            if self.read_backs:
                backs = want[tiles[read_as_back(self.probs(crops[tiles], self.down_check))]]
                face[backs], conf[backs] = -1, 0.0
            faced = tiles[face[want[tiles]] >= 0]  # a back already read so needs no pips
            if self.check_pips and len(faced):
                plain = want[faced[~_shows_pips(crops[faced])]]
                face[plain], conf[plain] = -1, 0.0
        down = np.flatnonzero(kind == TILE_DOWN)
        if len(down):
            check = self.probs(crops[down], self.down_check)
            pips = _shows_pips(crops[down]) if self.check_pips else np.ones(len(down), bool)
            turned, best, p = turned_up(check, self._torn(crops[down], check, pips))
            turned &= pips
            rows = want[down[turned]]
            class_id[rows], face[rows], conf[rows] = TILE_UP, best[turned], p[turned]
        return detections.with_faces(face, conf, class_id)

    def _torn(self, crops: np.ndarray, check: np.ndarray, pips: np.ndarray) -> np.ndarray:
        """The face reader's probabilities for the face-down crops that show pips and that the
        check reads neither as a sure face nor as a sure back (:func:`vision.faces.unsure_face`);
        zero for the rest."""
        reader = np.zeros((len(crops), len(self.model.entry["classes"])), np.float32)
        torn = np.flatnonzero(unsure_face(check) & pips)
        if len(torn):
            reader[torn] = self.probs(crops[torn])
        return reader

    def die_probs(self, crops: np.ndarray) -> np.ndarray:
        """Die crops -> probabilities over ``FACE_CLASSES`` (a die reader's seven classes are
        the first seven; tiles get none)."""
        if self.dice is None:
            return self.probs(crops)
        probs = np.zeros((len(crops), len(self.model.entry["classes"])), np.float32)
        probs[:, : len(DIE_CLASSES)] = self.probs(crops, self.dice)
        return probs

    def crop_probs(self, crops: np.ndarray, is_die: np.ndarray) -> np.ndarray:
        """Probabilities over ``FACE_CLASSES`` of crops of tiles and dice (``is_die``), each
        kind read by the model the monitor reads it with."""
        probs = np.zeros((len(crops), len(self.model.entry["classes"])), np.float32)
        for rows, read in ((is_die, self.die_probs), (~is_die, self.probs)):
            if rows.any():
                probs[rows] = read(crops[rows])
        return probs

    def probs(self, crops: np.ndarray, model: OnnxModel | None = None) -> np.ndarray:
        """``crops (N, S, S, 3)`` uint8 BGR -> class probabilities ``(N, classes)`` of the face
        reader (or of ``model``)."""
        model, chunks = model or self.model, []
        for i in range(0, len(crops), self.batch):
            chunk = crops[i : i + self.batch][..., ::-1].transpose(0, 3, 1, 2)
            chunks.append(model.run(np.ascontiguousarray(chunk, dtype=np.float32) / 255.0))
        return np.concatenate(chunks)


def _shows_pips(crops: np.ndarray) -> np.ndarray:
    """Per tile crop, whether it shows pips (:func:`vision.faces.pip_evidence`): a crop read
    as a face that shows none is a back the models never learnt, not a face."""
    return np.array([pip_evidence(c) >= PIP_MIN_EVIDENCE for c in crops], dtype=bool)


def _classifier(name: str, classes: tuple[str, ...], threads: int, models_dir: Path) -> OnnxModel:
    """The manifest's model ``name``, checked to output ``classes``."""
    model = OnnxModel(name, threads, models_dir)
    if tuple(model.entry["classes"]) != classes:
        raise ModelError(
            f"{name} classes in {models_dir / 'manifest.json'} are not the {len(classes)} "
            "classes expected (vision.faces)"
        )
    return model
