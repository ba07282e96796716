"""Naive, ATC and DoC for k classes: validation accuracy and max-confidence based predictors.

The binary implementations already score items by their maximum posterior (methods.md §4.1), which
is the top-label confidence for any number of classes; only the crisp predictions (argmax) and DoC's
validation samples (UPP over k classes) change. For two classes each reproduces the binary method.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LinearRegression

from unishift.methods.base import check_choice
from unishift.methods.cap.atc import atc_threshold, max_confidence
from unishift.multiclass.base import MulticlassAccuracyPredictor
from unishift.protocols.multiclass import upp_indices_k
from unishift.protocols.sampling import npp_indices

PROTOCOLS = ("upp", "npp")


class Naive(MulticlassAccuracyPredictor):
    name, display, group, binary_name = "Naive", "Naive", "baseline", "Naive"
    description = "validation accuracy"

    def fit(self, setting):
        validation = setting.validation
        self.accuracy_ = float(np.mean(validation.predictions == validation.labels))
        return self

    def predict_accuracy(self, sample, context):
        return self.accuracy_


class ATC(MulticlassAccuracyPredictor):
    name, display, binary_name = "ATC", "ATC", "ATC"
    assumption = "covariate"
    description = "ATC with the max-confidence score"

    def fit(self, setting):
        validation = setting.validation
        correct = validation.predictions == validation.labels
        self.threshold_ = atc_threshold(max_confidence(validation.posteriors), correct)
        return self

    def predict_accuracy(self, sample, context):
        return float(np.mean(max_confidence(sample.posteriors) >= self.threshold_))


class DoC(MulticlassAccuracyPredictor):
    """Linear regression from the shift in mean max-confidence to the drop in accuracy, trained on
    ``repeats`` validation samples drawn by ``protocol``. UPP needs every class: on a validation set
    lacking one (a prediction partition of α2ρ) NPP runs instead and is recorded, as in the binary
    method.
    """

    name, display, binary_name = "DoC", "DoC", "DoC"
    defaults = {"protocol": "upp", "sample_size": 250, "repeats": 100, "seed": 0, "clip": True}
    description = "difference of confidences, 100 x 250 validation samples"

    def __init__(self, protocol="upp", sample_size=250, repeats=100, seed=0, clip=True):
        check_choice("protocol", protocol, PROTOCOLS)
        self.protocol = protocol
        self.sample_size = sample_size
        self.repeats = repeats
        self.seed = seed
        self.clip = clip

    def _indices(self, labels, n_classes):
        protocol = self.protocol
        if protocol == "upp" and len(np.unique(labels)) < n_classes:
            self.fit_notes.append(
                ("fallback", "DoC: validation set lacks a class; NPP samples used instead of UPP")
            )
            protocol = "npp"
        if protocol == "upp":
            return upp_indices_k(labels, n_classes, self.sample_size, self.repeats, self.seed)
        return npp_indices(len(labels), self.sample_size, self.repeats, self.seed)

    def fit(self, setting):
        self.fit_notes = []
        validation = setting.validation
        if len(validation) == 0:
            raise ValueError("DoC cannot be fitted on an empty validation set")
        confidence = max_confidence(validation.posteriors)
        correct = (validation.predictions == validation.labels).astype(float)
        self.val_confidence_ = float(confidence.mean())
        self.val_accuracy_ = float(correct.mean())
        indices = self._indices(validation.labels, setting.n_classes)
        shifts = confidence[indices].mean(axis=1) - self.val_confidence_
        drops = self.val_accuracy_ - correct[indices].mean(axis=1)
        self.regressor_ = LinearRegression().fit(shifts.reshape(-1, 1), drops)
        return self

    def predict_accuracy(self, sample, context):
        shift = max_confidence(sample.posteriors).mean() - self.val_confidence_
        estimate = self.val_accuracy_ - float(self.regressor_.predict([[shift]])[0])
        return float(np.clip(estimate, 0.0, 1.0)) if self.clip else estimate


__all__ = ["ATC", "DoC", "Naive", "upp_indices_k"]
