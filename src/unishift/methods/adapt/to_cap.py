"""ζ2α and ρ2α: accuracy predictors built from a calibrator or a quantifier (docs/methods.md §4.2, §4.3).

Both fit one inner method per predicted class on that part of the validation set and combine the
answers on the two parts of the test sample; an empty test part contributes 0.
"""

from __future__ import annotations

import numpy as np

from unishift.methods.adapt.common import PartitionedFit
from unishift.methods.base import AccuracyPredictor, Sample, SampleContext


class CalibrationToCAP(PartitionedFit, AccuracyPredictor):
    """ζ2α (Lemma 2): acc = (Σ_{T+} p̃ + Σ_{T-} (1 - p̃)) / n, each part calibrated by its own model."""

    inner_task = "calibration"

    def __init__(self, inner="CPCS", inner_params: dict | None = None):
        self.inner = inner
        self.inner_params = inner_params

    def predict_accuracy(self, sample: Sample, context: SampleContext) -> float:
        correct = 0.0
        for cls, part, part_ctx in self._parts(sample, context):
            calibrated = np.asarray(self.inner_[cls].calibrate(part, part_ctx), dtype=float)
            correct += float(np.sum(calibrated[:, cls]))
        return correct / len(sample)


class QuantificationToCAP(PartitionedFit, AccuracyPredictor):
    """ρ2α (Lemma 4): acc = (p̂+ n+ + (1 - p̂-) n-) / n, one quantifier per predicted class."""

    inner_task = "quantification"

    def __init__(self, inner="PCC", inner_params: dict | None = None):
        self.inner = inner
        self.inner_params = inner_params

    def predict_accuracy(self, sample: Sample, context: SampleContext) -> float:
        correct = 0.0
        for cls, part, part_ctx in self._parts(sample, context):
            positive_rate = float(self.inner_[cls].quantify(part, part_ctx))
            correct += len(part) * (positive_rate if cls == 1 else 1.0 - positive_rate)
        return correct / len(sample)
