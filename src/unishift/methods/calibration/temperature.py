"""The common base of the temperature-type calibrators of the LasCal code base (Head2Tail, CPCS,
TransCal, LasCal: one module each).

Each treats a matrix as logits and returns softmax(logits_test / T); which matrix is chosen by the
``logits`` argument (docs/methods.md §0.3): ``"L"`` true logits (language models only), ``"S"``
log-posteriors, ``"P"`` posteriors used as logits. The registry sets the convention of each paper
table (docs/methods.md §5); the calibration->quantification / ->CAP adaptations build them with their
own convention (e.g. ``CPCS(logits="P")`` for ζ2ρ, ``TransCal(logits="S")`` for ζ2α).

The labelled source of every calibrator is ``setting.validation``; CPCS and TransCal also use
``setting.training.features`` and the sample's features for the domain classifier (docs/methods.md §0.4, B5), which is
fitted once per sample and shared through the :class:`SampleContext`
(:mod:`unishift.methods.domain_weights`). They compute with k-column softmaxes and arg-maxes, so they
work for any number of classes.

This module imports nothing above :mod:`unishift.methods.calibration.shared`.
"""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.methods.base import Calibrator, SampleContext
from unishift.methods.calibration.shared import as_logits, scaled_softmax


class TemperatureCalibrator(Calibrator):
    """Stores the setting and the validation 'logits'; subclasses pick the temperature."""

    logits: str
    fit_notes: list

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


__all__ = ["TemperatureCalibrator"]
