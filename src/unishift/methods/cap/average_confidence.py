"""AC, average confidence (Hendrycks & Gimpel 2017): the predicted accuracy is the mean top-label
posterior of the sample; AC_TS takes it after temperature scaling fitted on the validation set
(Guo et al. 2017), the calibrated variant ODP-Bench and Garg et al. 2022 report (docs/methods.md
§6.3)."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.methods.base import AccuracyPredictor, SampleContext
from unishift.methods.calibration.scaling import TemperatureScaling


def average_confidence(posteriors: np.ndarray) -> float:
    return float(np.mean(np.max(np.asarray(posteriors, dtype=float), axis=1)))


class AC(AccuracyPredictor):
    name, group, description = "AC", "field", "average confidence (mean max posterior)"
    assumption = "covariate"

    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        return average_confidence(sample.posteriors)


class AC_TS(AccuracyPredictor):
    """TS's own defaults (log-posteriors as logits); its fit fallbacks are AC_TS's."""

    name, group, description = "AC_TS", "field", "average confidence after temperature scaling"
    display = r"AC$^{\text{TS}}$"
    assumption = "covariate"

    def _fit(self, setting: Setting) -> None:
        self.calibrator_ = TemperatureScaling().fit(setting)
        self.fit_notes.extend(self.calibrator_.fit_notes)

    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        return average_confidence(self.calibrator_.calibrate(sample, context))
