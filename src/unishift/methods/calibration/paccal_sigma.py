"""PacCal^σ (docs/methods.md §2.9; docs/multiclass.md §4, PacCal^σ)."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Setting
from unishift.data.quapy_loader import load_quapy
from unishift.methods.base import Calibrator, as_posteriors
from unishift.methods.calibration.shared import softmax
from unishift.option_checks import check_choice


class PacCalSigma(Calibrator):
    """PacCal^σ: p' = M^{-1} p with PACC's validation matrix M ((p - fpr) / (tpr - fpr) for two
    classes), then ``post_processing`` (docs/multiclass.md §4, PacCal^σ)."""

    name, group, display = "PacCal_sigma", "adapted", r"PacCal$^{\sigma}$"
    description = (
        "PACC-adjusted posteriors with the sigma post-processing [reference code: PACC-cal(soft)]"
    )
    adaptations = ()
    assumption = "label"

    POST_PROCESSING = ("sigma", "clip")

    def __init__(self, post_processing: str = "sigma"):
        self.post_processing = post_processing

    def check_params(self):
        check_choice("post_processing", self.post_processing, self.POST_PROCESSING)

    def _fit(self, setting: Setting) -> None:
        load_quapy()
        from quapy.method.aggregative import PACC

        validation = setting.validation
        k = setting.n_classes
        self.matrix_ = PACC.getPteCondEstim(
            list(range(k)), validation.labels, validation.posteriors
        )
        if k == 2:
            self.tpr_, self.fpr_ = float(self.matrix_[1, 1]), float(self.matrix_[1, 0])
            self.adjust_ = self.tpr_ - self.fpr_ > 0
            reason = f"tpr={self.tpr_:.4g} <= fpr={self.fpr_:.4g}"
        else:
            determinant = float(np.linalg.det(self.matrix_))
            self.adjust_ = determinant > 0 and np.linalg.cond(self.matrix_) < 1e12
            reason = f"det(M)={determinant:.4g} (singular or <= 0)"
        if not self.adjust_:
            self.fit_fallback(f"PacCal: {reason}; posteriors kept")

    def adjusted(self, posteriors: np.ndarray) -> np.ndarray:
        posteriors = np.asarray(posteriors, dtype=float)
        if posteriors.shape[1] == 2:
            positive = posteriors[:, 1]
            if self.adjust_:
                positive = (positive - self.fpr_) / (self.tpr_ - self.fpr_)
            return as_posteriors(positive)
        if not self.adjust_:
            return posteriors
        return np.linalg.solve(self.matrix_, posteriors.T).T

    def calibrate(self, sample, context=None):
        adjusted = self.adjusted(sample.posteriors)
        if self.post_processing == "clip":
            if adjusted.shape[1] == 2:
                return as_posteriors(np.clip(adjusted[:, 1], 0.0, 1.0))
            clipped = np.clip(adjusted, 0.0, 1.0)
            return clipped / clipped.sum(axis=1, keepdims=True)
        if np.any(adjusted > 1) or np.any(adjusted < 0):
            return softmax(adjusted)
        self.context_for(context).note(
            "fallback", "PacCal: all adjusted posteriors in [0, 1]; returned unchanged"
        )
        return adjusted
