"""DoE, difference of entropies (Guillory et al. 2021's DoC with the average entropy in place of
the average confidence): the validation accuracy minus the rise of the sample's mean normalised
entropy over the validation set's, clipped to [0, 1] (docs/methods.md §6.3)."""

from __future__ import annotations

import numpy as np
from scipy.special import entr

from unishift.data.containers import Sample, Setting
from unishift.methods.base import AccuracyPredictor, SampleContext


def mean_normalised_entropy(posteriors: np.ndarray) -> float:
    """Mean Shannon entropy of the rows divided by ln k (so in [0, 1]); 0 ln 0 = 0."""
    posteriors = np.asarray(posteriors, dtype=float)
    return float(np.mean(entr(posteriors).sum(axis=1)) / np.log(posteriors.shape[1]))


class DoE(AccuracyPredictor):
    name, group, description = "DoE", "field", "difference of (normalised) entropies"
    assumption = "covariate"

    def _fit(self, setting: Setting) -> None:
        validation = setting.validation
        if len(validation) == 0:
            raise ValueError("DoE cannot be fitted on an empty validation set")
        self.val_accuracy_ = float(np.mean(validation.predictions == validation.labels))
        self.val_entropy_ = mean_normalised_entropy(validation.posteriors)

    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        drop = mean_normalised_entropy(sample.posteriors) - self.val_entropy_
        return float(np.clip(self.val_accuracy_ - drop, 0.0, 1.0))
