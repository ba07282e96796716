"""Isotonic regression (Zadrozny & Elkan 2002) as scikit-learn's ``CalibratedClassifierCV(method=
"isotonic")`` computes it on the validation posteriors: p_1 for two classes, one-vs-rest per class
and renormalised for more (docs/methods.md §6.2). Ignores the test sample (an IID method)."""

from __future__ import annotations

import numpy as np
from sklearn.isotonic import IsotonicRegression

from unishift.data.containers import Sample, Setting
from unishift.methods.base import Calibrator, SampleContext
from unishift.methods.calibration.shared import one_vs_rest, one_vs_rest_columns


class Isotonic(Calibrator):
    name, group, description = "Isotonic", "field", "isotonic regression, one-vs-rest"
    calibration_notion = "class-wise"

    def _fit(self, setting: Setting) -> None:
        validation = setting.validation
        k = setting.n_classes
        self.maps_ = {
            c: IsotonicRegression(out_of_bounds="clip").fit(
                validation.posteriors[:, c], (validation.labels == c).astype(float)
            )
            for c in one_vs_rest_columns(k)
        }

    def calibrate(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        columns = np.zeros_like(np.asarray(sample.posteriors, dtype=float))
        for c, regression in self.maps_.items():
            columns[:, c] = regression.predict(sample.posteriors[:, c])
        return one_vs_rest(columns)
