"""Histogram binning (Zadrozny & Elkan 2001) as a unishift calibrator."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.methods.base import Calibrator, SampleContext, as_posteriors


class HistogramBinning(Calibrator):
    """The positive rate of the validation items in each of ``n_bins`` equal-width bins of the
    positive posterior; an empty bin keeps its centre. Ignores the test sample (an IID method)."""

    name = "HistBin"
    group = "baseline"
    display = r"HistBin"
    description = "histogram binning (Zadrozny & Elkan 2001)"
    binary_only = "bins the positive posterior p_1"
    # adaptations = None (the default): HistBin_c2q and HistBin_c2a are registered with it (binary-
    # only too, for the same reason)

    def __init__(self, n_bins: int = 10):
        if int(n_bins) != n_bins or n_bins < 1:
            raise ValueError(f"n_bins={n_bins!r} must be a positive integer")
        self.n_bins = int(n_bins)

    def _bins(self, positive: np.ndarray) -> np.ndarray:
        return np.minimum((positive * self.n_bins).astype(int), self.n_bins - 1)

    def fit(self, setting: Setting):
        self.check_classes(setting)
        validation = setting.validation
        bins = self._bins(validation.posteriors[:, 1])
        counts = np.bincount(bins, minlength=self.n_bins)
        positives = np.bincount(bins, weights=validation.labels, minlength=self.n_bins)
        centres = (np.arange(self.n_bins) + 0.5) / self.n_bins
        with np.errstate(invalid="ignore", divide="ignore"):
            self.rates_ = np.where(counts > 0, positives / counts, centres)
        return self

    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        return as_posteriors(self.rates_[self._bins(sample.posteriors[:, 1])])
