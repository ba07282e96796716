"""The base of the temperature-type calibrators (Head2Tail, CPCS, TransCal, LasCal): each returns
softmax(logits_test / T) of its ``logits`` convention (docs/methods.md §0.3, §5), the labelled source
being ``setting.validation``."""

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

    def _fit(self, setting: Setting) -> None:
        self.setting_ = setting
        self.source_logits_ = self._logits(setting.validation)

    def temperature(self, sample: Sample, context: SampleContext) -> float:
        raise NotImplementedError

    def calibrate(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        context = self.context_for(context)
        return scaled_softmax(self._logits(sample), self.temperature(sample, context))
