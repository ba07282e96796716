"""PacCal^σ for k classes: PACC's linear correction applied to each item (docs/multiclass.md §4).

PACC estimates the test prevalence q from the mean test posterior p̄ through the validation matrix M
(M[i, j] = mean posterior of class i among the validation items of class j): M q = p̄. The binary
PacCal applies the same linear correction to every item. For k classes the correction of an item is
p'(x) = M^{-1} p(x): its rows sum to 1 (the columns of M do), the mean of p' over the sample is PACC's
unconstrained estimate (linearity: the one property the binary derivation gives), and for k = 2 it is
exactly [1 - p', p'] with p' = (p - fpr) / (tpr - fpr). Like the binary method, it carries no
calibration guarantee: under label shift the true test posterior is the Bayes re-weighting of the
training posterior, not a linear map of it.

``post_processing``: ``"sigma"`` (the binary table's method): when any entry of any row is outside
[0, 1], every row becomes softmax(p'(x)) (for k = 2, softmax([1 - p', p']), the binary rule); when
all are inside, p' is returned unchanged and recorded. ``"clip"``: clip to [0, 1] and renormalise.
A singular M, or det(M) <= 0 (for k = 2: tpr <= fpr), leaves the posteriors unadjusted (recorded), as
the binary method does.
"""

from __future__ import annotations

import numpy as np

from unishift.methods.base import check_choice
from unishift.methods.calibration.shared import softmax
from unishift.multiclass.base import MulticlassCalibrator


class PacCalSigma(MulticlassCalibrator):
    name, display, group = "PacCal_sigma", r"PacCal$^{\sigma}$", "adapted"
    binary_name = "PacCal_sigma"
    assumption = "label"
    calibration_notion = "canonical"
    defaults = {"post_processing": "sigma"}
    description = "PACC's validation matrix inverted on each item, softmax when out of range"
    POST_PROCESSING = ("sigma", "clip")

    def __init__(self, post_processing: str = "sigma"):
        check_choice("post_processing", post_processing, self.POST_PROCESSING)
        self.post_processing = post_processing

    def fit(self, setting):
        from quapy.method.aggregative import PACC

        self.fit_notes = []
        k = setting.n_classes
        validation = setting.validation
        self.matrix_ = PACC.getPteCondEstim(
            list(range(k)), validation.labels, validation.posteriors
        )
        determinant = float(np.linalg.det(self.matrix_))
        self.adjust_ = determinant > 0 and np.linalg.cond(self.matrix_) < 1e12
        if not self.adjust_:
            self.fit_notes.append(
                (
                    "fallback",
                    f"PacCal: det(M)={determinant:.4g} (singular or <= 0); posteriors kept",
                )
            )
        return self

    def adjusted(self, posteriors: np.ndarray) -> np.ndarray:
        posteriors = np.asarray(posteriors, dtype=float)
        if not self.adjust_:
            return posteriors
        if posteriors.shape[1] == 2:
            # the binary method's own arithmetic, so that k = 2 gives its numbers to the last bit
            tpr, fpr = self.matrix_[1, 1], self.matrix_[1, 0]
            positive = (posteriors[:, 1] - fpr) / (tpr - fpr)
            return np.column_stack([1.0 - positive, positive])
        return np.linalg.solve(self.matrix_, posteriors.T).T

    def calibrate(self, sample, context):
        adjusted = self.adjusted(sample.posteriors)
        if self.post_processing == "clip":
            clipped = np.clip(adjusted, 0.0, 1.0)
            return clipped / clipped.sum(axis=1, keepdims=True)
        if np.any(adjusted > 1) or np.any(adjusted < 0):
            return softmax(adjusted)
        context.note("fallback", "PacCal: all adjusted posteriors in [0, 1]; returned unchanged")
        return adjusted


__all__ = ["PacCalSigma"]
