"""The Naive accuracy predictor (docs/methods.md §4.1)."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.methods.base import AccuracyPredictor, SampleContext


class Naive(AccuracyPredictor):
    """The validation accuracy, whatever the sample."""

    name, group, description = "Naive", "baseline", "validation accuracy"
    adaptations = ()

    def _fit(self, setting: Setting) -> None:
        validation = setting.validation
        self.accuracy_ = float(np.mean(validation.predictions == validation.labels))

    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        return self.accuracy_
