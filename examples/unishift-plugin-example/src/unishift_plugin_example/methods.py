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

    # a scikit-learn estimator: the constructor stores its hyper-parameters as given, fit checks them
    def __init__(self, n_bins: int = 10):
        self.n_bins = n_bins

    def check_params(self):
        if isinstance(self.n_bins, bool) or int(self.n_bins) != self.n_bins or self.n_bins < 1:
            raise ValueError(f"n_bins={self.n_bins!r} must be a positive integer")

    def _bins(self, positive: np.ndarray) -> np.ndarray:
        n_bins = int(self.n_bins)
        return np.minimum((positive * n_bins).astype(int), n_bins - 1)

    def _fit(self, setting: Setting) -> None:
        # Method.fit has checked n_bins and refused a setting of more than two classes
        validation = setting.validation
        n_bins = int(self.n_bins)
        bins = self._bins(validation.posteriors[:, 1])
        counts = np.bincount(bins, minlength=n_bins)
        positives = np.bincount(bins, weights=validation.labels, minlength=n_bins)
        centres = (np.arange(n_bins) + 0.5) / n_bins
        with np.errstate(invalid="ignore", divide="ignore"):
            self.rates_ = np.where(counts > 0, positives / counts, centres)

    def calibrate(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        return as_posteriors(self.rates_[self._bins(sample.posteriors[:, 1])])
