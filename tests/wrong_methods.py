"""A plugin of deliberately wrong methods (issue 32): outputs on the limits of the tolerance of
docs/reporting.md §1.8, and methods that fail on most or all samples (docs/reporting.md §2.1.1).
Registered through the ``plugins:`` key (``plugins: [tests.wrong_methods]``) or
``registry.use_plugins``; never part of a real run."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.methods.base import AccuracyPredictor, Calibrator, Quantifier, SampleContext

# the entry every row of NegCal's first ten rows carries below 0 (a float rounding of a softmax)
NEGATIVE_ENTRY = -5e-10


class _NoFit:
    group = "adapted"
    adaptations = ()

    def fit(self, setting: Setting):
        self.fit_notes = []
        return self


class NegCal(_NoFit, Calibrator):
    """The classifier's posteriors, with the first ten rows moved to (-5e-10, ..., 1 + 5e-10): within
    the tolerance, so clipped to a one-hot row by the evaluation."""

    name = "NegCal"
    description = "test only: rows with -5e-10 entries"

    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        out = np.array(sample.posteriors, dtype=float)
        rows = min(10, len(out))
        out[:rows] = 0.0
        out[:rows, 0] = NEGATIVE_ENTRY
        out[:rows, -1] = 1.0 - NEGATIVE_ENTRY
        return out


class MostlyFails(_NoFit, Calibrator):
    """Fails on every sample whose id is not a multiple of 10 (36 of 40); elsewhere returns the
    classifier's posteriors as they are."""

    name = "MostlyFails"
    description = "test only: fails on 9 samples of 10"

    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        if context.sample_id % 10:
            raise RuntimeError("MostlyFails fails on purpose")
        return np.array(sample.posteriors, dtype=float)


class AlwaysFails(_NoFit, Calibrator):
    """Fails on every sample."""

    name = "AlwaysFails"
    description = "test only: fails on every sample"

    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        raise RuntimeError("AlwaysFails fails on purpose")


class Unnormalised(_NoFit, Quantifier):
    """A prevalence vector summing to 1.05: beyond the tolerance, every sample fails."""

    name = "Unnormalised"
    description = "test only: a vector summing to 1.05"

    def quantify(self, sample: Sample, context: SampleContext) -> np.ndarray:
        k = sample.posteriors.shape[1]
        return np.full(k, 1.05 / k)


class OverOne(_NoFit, AccuracyPredictor):
    """An accuracy of 1.0000000000000002 (one ulp above 1): within the tolerance, clipped to 1."""

    name = "OverOne"
    description = "test only: 1 + 2e-16"

    def predict_accuracy(self, sample: Sample, context: SampleContext) -> float:
        return 1.0000000000000002
