"""Platt scaling on the positive posterior (the IID calibration baseline, docs/methods.md §2.1)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.calibration import CalibratedClassifierCV
from sklearn.frozen import FrozenEstimator

from unishift.data.containers import Sample, Setting
from unishift.methods.base import Calibrator, SampleContext, as_posteriors


class _GivenPosteriors(ClassifierMixin, BaseEstimator):
    """A fitted binary classifier whose input is already its posteriors (n x 2)."""

    def fit(self, X, y=None):
        self.classes_ = np.array([0, 1])
        return self

    def predict_proba(self, X):
        return np.asarray(X)

    def predict(self, X):
        return self.classes_[np.argmax(np.asarray(X), axis=1)]


class Platt(Calibrator):
    """scikit-learn's sigmoid calibration of the positive posterior, fitted on every validation
    item at once (one split whose test part is the whole set); ignores the test sample."""

    name, group, description = "Platt", "baseline", "Platt scaling"
    adaptations = ()
    binary_only = (
        "Platt scaling is a one-dimensional sigmoid on p_1; its multiclass analogues are TS, "
        "BCTS and VS"
    )

    def _fit(self, setting: Setting) -> None:
        validation = setting.validation
        everything = np.arange(len(validation.labels))
        self.calibrated_ = CalibratedClassifierCV(
            FrozenEstimator(_GivenPosteriors().fit(None)),
            method="sigmoid",
            cv=[(everything, everything)],
        ).fit(validation.posteriors, validation.labels)

    def calibrate(self, sample: Sample, context: SampleContext | None = None):
        return as_posteriors(self.calibrated_.predict_proba(sample.posteriors)[:, 1])
