"""ATC, Average Thresholded Confidence of Garg et al. 2022, with the max-confidence (top-label
confidence) score (docs/methods.md §4.1)."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.methods.base import AccuracyPredictor, SampleContext


def max_confidence(posteriors: np.ndarray) -> np.ndarray:
    return np.asarray(posteriors, dtype=float).max(axis=1)


def atc_threshold(scores: np.ndarray, correct: np.ndarray) -> float:
    """The first ascending score with the smallest |FP - FN| if below #incorrect (the gap before any
    item), else 0; each step lowers FP - FN by one, so tie order does not matter."""
    order = np.argsort(scores, kind="stable")
    thresholds = np.concatenate([[0.0], np.asarray(scores, dtype=float)[order]])
    sorted_correct = np.asarray(correct, dtype=bool)[order]
    fp = np.sum(~sorted_correct) - np.cumsum(~sorted_correct)
    gaps = np.abs(np.concatenate([[np.sum(~sorted_correct)], fp - np.cumsum(sorted_correct)]))
    return float(thresholds[np.argmin(gaps)])


class ATC(AccuracyPredictor):
    """Predicted accuracy = fraction of test items whose max-confidence reaches the validation threshold."""

    name, description = "ATC", "ATC with max-confidence"
    adaptations = ("a2c", "a2q")
    assumption = "covariate"

    def _fit(self, setting: Setting) -> None:
        validation = setting.validation
        scores = max_confidence(validation.posteriors)
        correct = validation.predictions == validation.labels
        self.threshold_ = atc_threshold(scores, correct)

    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        return float(np.mean(max_confidence(sample.posteriors) >= self.threshold_))
