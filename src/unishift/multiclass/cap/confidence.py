"""Naive, ATC and DoC for k classes: validation accuracy and max-confidence based predictors.

The binary implementations score items by their maximum posterior (docs/methods.md §4.1), which is the
top-label confidence for any number of classes, and read the crisp predictions from the data they
are given, which for multiclass containers are the argmax. They are therefore reused unchanged
(wrapped to the multiclass interface); only DoC's validation samples change, UPP over the k classes.
For two classes each gives the binary method's numbers by construction.
"""

from __future__ import annotations

import numpy as np

from unishift.methods.cap.atc import ATC as BinaryATC
from unishift.methods.cap.doc import DoC as BinaryDoC
from unishift.methods.cap.naive import Naive as BinaryNaive
from unishift.multiclass.base import MulticlassAccuracyPredictor
from unishift.protocols.sampling import npp_indices, upp_indices


class _Wrapped(MulticlassAccuracyPredictor):
    def _inner(self):
        raise NotImplementedError

    def fit(self, setting):
        self.inner_ = self._inner()
        self.inner_.n_classes_ = setting.n_classes
        self.inner_.fit(setting)
        self.fit_notes = list(getattr(self.inner_, "fit_notes", []) or [])
        return self

    def predict_accuracy(self, sample, context):
        return self.inner_.predict_accuracy(sample, context)


class Naive(_Wrapped):
    name, display, group, binary_name = "Naive", "Naive", "baseline", "Naive"
    description = "validation accuracy"

    def _inner(self):
        return BinaryNaive()


class ATC(_Wrapped):
    name, display, binary_name = "ATC", "ATC", "ATC"
    assumption = "covariate"
    description = "ATC with the max-confidence score"

    def _inner(self):
        return BinaryATC()


class _KClassDoC(BinaryDoC):
    """The binary DoC with its validation samples drawn by UPP over ``n_classes_`` classes; a
    validation set lacking a class (a prediction part of α2ρ) gets NPP samples, recorded, as in the
    binary method."""

    n_classes_ = 2

    def _sample_indices(self, labels: np.ndarray) -> np.ndarray:
        k = self.n_classes_
        if self.protocol == "upp" and len(np.unique(labels)) == k:
            return upp_indices(labels, self.sample_size, self.repeats, self.seed, n_classes=k)
        if self.protocol == "upp":
            self.fit_notes.append(
                ("fallback", "DoC: validation set lacks a class; NPP samples used instead of UPP")
            )
        return npp_indices(len(labels), self.sample_size, self.repeats, self.seed)


class DoC(_Wrapped):
    name, display, binary_name = "DoC", "DoC", "DoC"
    defaults = {"protocol": "upp", "sample_size": 250, "repeats": 100, "seed": 0, "clip": True}
    description = "difference of confidences, 100 x 250 validation samples"
    # validation samples by UPP under label shift, NPP under covariate shift, also inside the
    # adapters (the binary tables' rule, docs/protocols.md §4)
    shift_defaults = {"label": {"protocol": "upp"}, "covariate": {"protocol": "npp"}}

    def __init__(self, protocol="upp", sample_size=250, repeats=100, seed=0, clip=True):
        self.protocol = protocol
        self.sample_size = sample_size
        self.repeats = repeats
        self.seed = seed
        self.clip = clip
        self._inner()  # validate now

    def _inner(self):
        return _KClassDoC(self.protocol, self.sample_size, self.repeats, self.seed, self.clip)


__all__ = ["ATC", "DoC", "Naive"]
