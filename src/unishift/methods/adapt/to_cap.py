"""ζ2α and ρ2α: accuracy predictors built from one calibrator or quantifier per predicted class
(docs/methods.md §4.2, §4.3; docs/multiclass.md §2.2, §2.4); an empty test part contributes 0."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Sample
from unishift.methods.adapt.common import PartitionedFit, class_share
from unishift.methods.base import AccuracyPredictor, SampleContext


class CalibrationToCAP(PartitionedFit, AccuracyPredictor):
    """ζ2α (Lemma 2): acc = sum_j sum_{T_j} p~_j / n, each part calibrated by its own model."""

    inner_task = "calibration"

    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        context = self.context_for(context)
        correct = 0.0
        for cls, inner, part, part_ctx in self._parts(sample, context):
            calibrated = np.asarray(inner.calibrate(part, part_ctx), dtype=float)
            correct += float(np.sum(calibrated[:, cls]))
        return correct / len(sample)


class QuantificationToCAP(PartitionedFit, AccuracyPredictor):
    """ρ2α (Lemma 4): acc = sum_j |T_j| q^(j)_j / n, one quantifier per predicted class (for two
    classes (p̂+ n+ + (1 - p̂-) n-) / n)."""

    inner_task = "quantification"

    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        context = self.context_for(context)
        correct = 0.0
        for cls, inner, part, part_ctx in self._parts(sample, context):
            correct += len(part) * class_share(inner.quantify(part, part_ctx), cls)
        return correct / len(sample)
