"""Beta calibration (Kull, Silva Filho & Flach 2017), the three-parameter ``abm`` form: a logistic
regression of the label on [ln p, -ln(1 - p)] with a, b >= 0, as the authors' ``betacal`` package
fits it (posteriors clipped to [eps, 1 - eps], C = 99999999999; a negative coefficient drops its
feature and refits). p_1 for two classes, one-vs-rest per class and renormalised for more
(docs/methods.md §6.2). Ignores the test sample."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from unishift.data.containers import Sample, Setting
from unishift.methods.base import Calibrator, SampleContext
from unishift.methods.calibration.shared import one_vs_rest, one_vs_rest_columns

# betacal's inverse regularisation strength: in effect an unpenalised fit
BETACAL_C = 99999999999
EPS = np.finfo(float).eps


def beta_features(scores: np.ndarray) -> np.ndarray:
    scores = np.clip(np.asarray(scores, dtype=float), EPS, 1.0 - EPS)
    return np.column_stack([np.log(scores), -np.log(1.0 - scores)])


class _BetaMap:
    """One fitted beta map: the logistic regression and the features it kept (both, or one)."""

    def __init__(self, scores: np.ndarray, hits: np.ndarray):
        features = beta_features(scores)
        self.kept = [0, 1]
        if len(np.unique(hits)) < 2:
            self.constant, self.regression = float(hits.mean()) if len(hits) else 0.0, None
            return
        self.regression = LogisticRegression(C=BETACAL_C).fit(features, hits)
        a, b = self.regression.coef_[0]
        if a < 0 or b < 0:
            self.kept = [1] if a < 0 else [0]
            self.regression = LogisticRegression(C=BETACAL_C).fit(features[:, self.kept], hits)

    def predict(self, scores: np.ndarray) -> np.ndarray:
        if self.regression is None:
            return np.full(len(scores), self.constant)
        return self.regression.predict_proba(beta_features(scores)[:, self.kept])[:, 1]


class Beta(Calibrator):
    """A class whose validation items are all or none of one class maps to that constant rate
    (no regression can be fitted; recorded in ``fit_notes``)."""

    name, group, description = "Beta", "field", "beta calibration (abm), one-vs-rest"
    calibration_notion = "class-wise"

    def _fit(self, setting: Setting) -> None:
        validation = setting.validation
        self.maps_ = {}
        for c in one_vs_rest_columns(setting.n_classes):
            hits = (validation.labels == c).astype(int)
            self.maps_[c] = _BetaMap(validation.posteriors[:, c], hits)
            if self.maps_[c].regression is None:
                self.fit_fallback(f"Beta: class {c} is all or none of validation; constant map")

    def calibrate(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        columns = np.zeros_like(np.asarray(sample.posteriors, dtype=float))
        for c, beta_map in self.maps_.items():
            columns[:, c] = beta_map.predict(sample.posteriors[:, c])
        return one_vs_rest(columns)
