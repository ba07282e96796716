"""Histogram binning (Zadrozny & Elkan 2001): each of ``n_bins`` equal-width bins of a posterior
column maps to the validation frequency of its class among the items in the bin; p_1 for two
classes, one-vs-rest per class and renormalised for more (Guo et al. 2017's multiclass form;
docs/methods.md §6.2). Ignores the test sample."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.methods.base import Calibrator, SampleContext
from unishift.methods.calibration.shared import one_vs_rest, one_vs_rest_columns

EMPTY_BIN_RULES = ("centre",)


def bin_of(scores: np.ndarray, n_bins: int) -> np.ndarray:
    """Bins [i/b, (i+1)/b), the last one closed: a score on an inner edge belongs to the upper bin."""
    return np.minimum((np.asarray(scores, dtype=float) * n_bins).astype(int), n_bins - 1)


class HB(Calibrator):
    """An empty bin maps to its centre (it has no evidence: the identity there)."""

    name, group, description = "HB", "field", "histogram binning, 10 equal-width bins"
    calibration_notion = "class-wise"

    def __init__(self, n_bins: int = 10):
        self.n_bins = n_bins

    def check_params(self):
        if isinstance(self.n_bins, bool) or int(self.n_bins) != self.n_bins or self.n_bins < 1:
            raise ValueError(f"HB: n_bins={self.n_bins!r} must be a positive integer")

    def _fit(self, setting: Setting) -> None:
        n_bins = int(self.n_bins)
        validation = setting.validation
        centres = (np.arange(n_bins) + 0.5) / n_bins
        self.rates_ = {}
        for c in one_vs_rest_columns(setting.n_classes):
            bins = bin_of(validation.posteriors[:, c], n_bins)
            counts = np.bincount(bins, minlength=n_bins)
            hits = np.bincount(bins, weights=validation.labels == c, minlength=n_bins)
            with np.errstate(invalid="ignore", divide="ignore"):
                self.rates_[c] = np.where(counts > 0, hits / counts, centres)

    def calibrate(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        columns = np.zeros_like(np.asarray(sample.posteriors, dtype=float))
        for c, rates in self.rates_.items():
            columns[:, c] = rates[bin_of(sample.posteriors[:, c], len(rates))]
        return one_vs_rest(columns)
