"""Detection quality: average precision per class at IoU 0.50 and averaged over 0.50:0.95.

COCO-style: detections sorted by confidence are matched greedily to unmatched ground truth of
the same class with the highest IoU above the threshold; precision is made monotone and
sampled at 101 recall points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.geometry import UNION_EPS, iou_matrix

IOU_THRESHOLDS = np.linspace(0.5, 0.95, 10)
RECALL_POINTS = np.linspace(0.0, 1.0, 101)


@dataclass
class _ClassAccumulator:
    scores: list[np.ndarray]
    hits: list[np.ndarray]  # (n_det, n_thresholds) bool
    n_truth: int = 0


def _match(pred_xyxy, pred_scores, true_xyxy) -> np.ndarray:
    """For one image and class: which predictions are true positives at each IoU threshold."""
    order = np.argsort(-pred_scores)
    hits = np.zeros((len(pred_xyxy), len(IOU_THRESHOLDS)), bool)
    if not len(true_xyxy) or not len(pred_xyxy):
        return hits
    iou = iou_matrix(pred_xyxy[order], true_xyxy, eps=UNION_EPS)
    for t, thr in enumerate(IOU_THRESHOLDS):
        taken = np.zeros(len(true_xyxy), bool)
        for row, det in enumerate(order):
            cand = np.where(~taken & (iou[row] >= thr), iou[row], -1.0)
            j = int(cand.argmax())
            if cand[j] >= 0:
                taken[j] = True
                hits[det, t] = True
    return hits


class DetectionEvaluator:
    """Accumulate images, then :meth:`summary` gives AP50 and AP50-95 per class."""

    def __init__(self, class_names: tuple[str, ...]):
        self.names = class_names
        self.acc = {c: _ClassAccumulator([], []) for c in range(len(class_names))}

    def add(self, pred_xyxy, pred_class, pred_score, true_xyxy, true_class) -> None:
        for c, acc in self.acc.items():
            p, t = pred_class == c, true_class == c
            acc.n_truth += int(t.sum())
            acc.scores.append(pred_score[p])
            acc.hits.append(_match(pred_xyxy[p], pred_score[p], true_xyxy[t]))

    def _ap(self, acc: _ClassAccumulator) -> np.ndarray:
        scores = np.concatenate(acc.scores) if acc.scores else np.zeros(0)
        hits = np.concatenate(acc.hits) if acc.hits else np.zeros((0, len(IOU_THRESHOLDS)))
        if acc.n_truth == 0:
            return np.full(len(IOU_THRESHOLDS), np.nan)
        order = np.argsort(-scores, kind="stable")
        tp = np.cumsum(hits[order], axis=0)
        fp = np.cumsum(~hits[order], axis=0)
        recall = tp / acc.n_truth
        precision = tp / np.maximum(tp + fp, 1e-9)
        aps = []
        if not len(scores):  # truth but no prediction of this class: nothing found
            return np.zeros(len(IOU_THRESHOLDS))
        for t in range(len(IOU_THRESHOLDS)):
            prec = np.maximum.accumulate(precision[::-1, t])[::-1]
            idx = np.searchsorted(recall[:, t], RECALL_POINTS, side="left")
            sampled = np.where(idx < len(prec), prec[np.minimum(idx, len(prec) - 1)], 0.0)
            aps.append(sampled.mean())
        return np.array(aps)

    def summary(self) -> dict[str, dict[str, float]]:
        """``{class: {"ap50", "ap50_95", "instances"}}`` plus ``"all"`` (mean over classes)."""
        out = {}
        for c, acc in self.acc.items():
            ap = self._ap(acc)
            out[self.names[c]] = {
                "ap50": float(ap[0]),
                "ap50_95": float(np.mean(ap)),
                "instances": acc.n_truth,
            }
        valid = [v for v in out.values() if v["instances"]]
        out["all"] = {
            "ap50": float(np.mean([v["ap50"] for v in valid])),
            "ap50_95": float(np.mean([v["ap50_95"] for v in valid])),
            "instances": sum(v["instances"] for v in valid),
        }
        return out
