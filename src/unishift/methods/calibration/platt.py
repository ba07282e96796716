"""Platt scaling on the positive posterior (the IID calibration baseline, methods.md §2.1)."""

from __future__ import annotations

from sklearn.calibration import _SigmoidCalibration

from unishift.methods.base import Calibrator, Sample, SampleContext, Setting, as_posteriors


class Platt(Calibrator):
    """sklearn's sigmoid calibrator fitted on validation positive posteriors; ignores the test sample."""

    def fit(self, setting: Setting):
        validation = setting.validation
        self.sigmoid_ = _SigmoidCalibration().fit(validation.posteriors[:, 1], validation.labels)
        return self

    def calibrate(self, sample: Sample, context: SampleContext):
        return as_posteriors(self.sigmoid_.predict(sample.posteriors[:, 1]))
