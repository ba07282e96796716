"""PacCal^σ (docs/methods.md §2.9): posteriors rescaled with PACC's validation tpr and fpr."""

from __future__ import annotations

import numpy as np

from unishift.methods.base import Calibrator, Setting, as_posteriors, check_choice
from unishift.methods.calibration.shared import softmax


class PacCalSigma(Calibrator):
    """PacCal^σ (§2.9): p' = (p - fpr) / (tpr - fpr) with PACC's validation tpr/fpr.

    Args:
        post_processing: "sigma" (REF 'softmax', the table's method): when any p' of the sample is
            outside [0, 1], every item becomes softmax([1 - p', p']); when all are inside, p' is
            returned unchanged (REF has no output there; recorded as a note). "clip": clip p' to
            [0, 1] (REF's unused 'clip' variant).
    When tpr <= fpr REF leaves the posteriors unadjusted; recorded in ``fit_notes``.
    """

    name, group, display = "PacCal_sigma", "adapted", r"PacCal$^{\sigma}$"
    description = "PACC-adjusted posteriors with the sigma post-processing [REF PACC-cal(soft)]"
    defaults = {"post_processing": "sigma"}
    adaptations = ()

    POST_PROCESSING = ("sigma", "clip")

    def __init__(self, post_processing: str = "sigma"):
        check_choice("post_processing", post_processing, self.POST_PROCESSING)
        self.post_processing = post_processing

    def fit(self, setting: Setting):
        from quapy.method.aggregative import PACC

        self.fit_notes = []
        conditional = PACC.getPteCondEstim(
            [0, 1], setting.validation.labels, setting.validation.posteriors
        )
        self.tpr_, self.fpr_ = float(conditional[1, 1]), float(conditional[1, 0])
        if not self.tpr_ - self.fpr_ > 0:
            self.fit_notes.append(
                ("fallback", f"PacCal: tpr={self.tpr_:.4g} <= fpr={self.fpr_:.4g}; posteriors kept")
            )
        return self

    def adjusted(self, positive: np.ndarray) -> np.ndarray:
        denominator = self.tpr_ - self.fpr_
        if denominator > 0:
            return (positive - self.fpr_) / denominator
        return positive

    def calibrate(self, sample, context):
        adjusted = self.adjusted(np.asarray(sample.posteriors, dtype=float)[:, 1])
        if self.post_processing == "clip":
            return as_posteriors(np.clip(adjusted, 0.0, 1.0))
        if np.any(adjusted > 1) or np.any(adjusted < 0):
            return softmax(np.column_stack([1 - adjusted, adjusted]))
        context.note("fallback", "PacCal: all adjusted posteriors in [0, 1]; returned unchanged")
        return as_posteriors(adjusted)


__all__ = ["PacCalSigma"]
