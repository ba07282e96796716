"""CBPE, confidence-based performance estimation (NannyML): the expected accuracy of the
classifier's own argmax predictions under posteriors recalibrated on the validation set by
isotonic regression (one-vs-rest and renormalised for k classes, the Isotonic calibrator):
the mean calibrated probability of each item's predicted class (docs/methods.md §6.3)."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.methods.base import AccuracyPredictor, SampleContext
from unishift.methods.calibration.isotonic import Isotonic


class CBPE(AccuracyPredictor):
    name, group, description = "CBPE", "field", "expected accuracy under isotonic posteriors"
    assumption = "covariate"

    def _fit(self, setting: Setting) -> None:
        self.calibrator_ = Isotonic().fit(setting)

    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        calibrated = self.calibrator_.calibrate(sample, context)
        predicted = sample.predictions
        return float(np.mean(calibrated[np.arange(len(predicted)), predicted]))
