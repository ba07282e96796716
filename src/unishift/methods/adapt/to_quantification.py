"""ζ2ρ, α2ρ and EMQ on calibrated posteriors: quantifiers built from other tasks (docs/methods.md §3.2-3.4)."""

from __future__ import annotations

import numpy as np

from unishift.methods.adapt.common import (
    PartitionedFit,
    build_inner,
    fit_notes_of,
    inner_domain_weight_plan,
)
from unishift.methods.base import (
    PREVALENCE_SOURCES,
    Quantifier,
    Sample,
    SampleContext,
    Setting,
    check_choice,
)
from unishift.methods.quantification.qp_bridge import em


class CalibrationToQuantification(Quantifier):
    """ζ2ρ (Lemma 1): the mean calibrated positive posterior of the whole sample."""

    def __init__(self, inner="CPCS", inner_params: dict | None = None):
        self.inner = inner
        self.inner_params = inner_params

    inner_task = "calibration"

    def domain_weight_plan(self):
        # the inner calibrator sees the whole sample and setting: its calls are the adapter's
        return inner_domain_weight_plan(self)

    def fit(self, setting: Setting):
        self.inner_ = build_inner("calibration", self.inner, self.inner_params).fit(setting)
        self.fit_notes = fit_notes_of(self.inner_)
        return self

    def quantify(self, sample: Sample, context: SampleContext) -> float:
        return float(np.mean(self.inner_.calibrate(sample, context)[:, 1]))


class CAPToQuantification(PartitionedFit, Quantifier):
    """α2ρ (Lemma 5): p = a+ n+/n + (1 - a-) n-/n with one CAP model per predicted class.

    An empty test partition contributes 0 (its weight is 0; REF sets the missing accuracy to 0).
    """

    inner_task = "cap"

    def __init__(self, inner="ATC", inner_params: dict | None = None):
        self.inner = inner
        self.inner_params = inner_params

    def quantify(self, sample: Sample, context: SampleContext) -> float:
        positives = 0.0
        for cls, part, part_ctx in self._parts(sample, context):
            accuracy = float(self.inner_[cls].predict_accuracy(part, part_ctx))
            # on the predicted positives the accuracy is the positive rate, on the negatives its complement
            positives += len(part) * (accuracy if cls == 1 else 1.0 - accuracy)
        return positives / len(sample)


class CalibratedEMQ(Quantifier):
    """EM (docs/methods.md §0.4, B4) run on the posteriors of an inner calibrator; returns the EM prior (EMQ^LasCal, §3.3).

    ``train_prevalence``: the EM starting prior, the label prevalence of the validation set (REF for the
    quantification table) or of the classifier-training set.
    """

    def __init__(
        self,
        inner="LasCal",
        inner_params: dict | None = None,
        train_prevalence: str = "validation",
    ):
        check_choice("train_prevalence", train_prevalence, PREVALENCE_SOURCES)
        self.inner = inner
        self.inner_params = inner_params
        self.train_prevalence = train_prevalence

    inner_task = "calibration"

    def domain_weight_plan(self):
        # the inner calibrator sees the whole sample and setting: its calls are the adapter's
        return inner_domain_weight_plan(self)

    def fit(self, setting: Setting):
        self.inner_ = build_inner("calibration", self.inner, self.inner_params).fit(setting)
        self.fit_notes = fit_notes_of(self.inner_)
        self.prior_ = setting.prevalence_of(self.train_prevalence)
        return self

    def quantify(self, sample: Sample, context: SampleContext) -> float:
        return em(self.prior_, self.inner_.calibrate(sample, context))[0]
