"""The common base of the temperature-type calibrators of the LasCal code base (Head2Tail, CPCS,
TransCal, LasCal: one module each), for any number of classes.

Each returns softmax(logits_test / T) of the matrix its ``logits`` argument names (docs/methods.md
§0.3; each paper table's convention: docs/methods.md §5); the labelled source is
``setting.validation``. This module imports nothing above :mod:`unishift.methods.calibration.shared`.
"""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.methods.base import Calibrator, SampleContext
from unishift.methods.calibration.shared import as_logits, scaled_softmax


class TemperatureCalibrator(Calibrator):
    """Stores the setting and the validation 'logits'; subclasses pick the temperature."""

    logits: str

    def _logits(self, data) -> np.ndarray:
        return as_logits(self.logits, data)

    def fit(self, setting: Setting):
        self.fit_notes = []
        self.setting_ = setting
        self.source_logits_ = self._logits(setting.validation)
        return self

    def temperature(self, sample: Sample, context: SampleContext) -> float:
        raise NotImplementedError

    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        return scaled_softmax(self._logits(sample), self.temperature(sample, context))
