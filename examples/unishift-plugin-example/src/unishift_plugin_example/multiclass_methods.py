"""A quantifier for any number of classes from outside the package: MLPE."""

from __future__ import annotations

import numpy as np

from unishift.methods.base import Quantifier


class MaximumLikelihoodPrevalence(Quantifier):
    """MLPE: every sample's prevalence estimate is the class prevalence of the validation set.

    The trivial baseline of the quantification literature (it ignores the test sample, so it is
    exact without shift and blind to any shift); any quantifier should beat it under label shift.
    """

    name = "MLPE"
    group = "baseline"
    display = r"MLPE"
    description = "maximum-likelihood prevalence estimation (the validation prevalence)"
    adaptations = ()

    # an ordinary scikit-learn-style fit (Method.fit's hook _fit is the other way): it keeps no
    # fallback notes, so it has none
    def fit(self, setting):
        labels = np.asarray(setting.validation.labels, dtype=int)
        if not len(labels):
            raise ValueError("MLPE needs a non-empty validation set")
        self.prevalence_ = np.bincount(labels, minlength=setting.n_classes) / len(labels)
        return self

    def quantify(self, sample, context=None):
        return self.prevalence_.copy()
