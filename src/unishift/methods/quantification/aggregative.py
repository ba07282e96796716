"""CC, PCC, ACC, PACC and KDEy: QuaPy's aggregative quantifiers on cached posteriors (docs/methods.md §3.1).

Each is fitted on the validation posteriors and labels and applied to each test sample; for two
classes the vector's entry 1 is the binary tables' positive prevalence.
"""

from __future__ import annotations

import numpy as np

from unishift.choices import check_choice
from unishift.data.containers import Sample, Setting
from unishift.methods.base import Quantifier, SampleContext
from unishift.methods.quantification.qp_bridge import PosteriorPassthrough, quiet
from unishift.quapy_loader import load_quapy


class _QuaPyQuantifier(Quantifier):
    """Fits QuaPy's aggregative quantifier ``quapy_class`` on validation posteriors and applies it
    to each sample."""

    assumption = "label"
    quapy_class: str
    quapy_options: dict = {"val_split": None}

    def _make(self, n_classes: int):
        load_quapy()
        from quapy.method import aggregative

        quantifier = getattr(aggregative, self.quapy_class)
        return quantifier(
            PosteriorPassthrough(n_classes), fit_classifier=False, **self.quapy_options
        )

    def _fit_data(self, setting: Setting):
        return setting.validation.posteriors, setting.validation.labels

    def fit(self, setting: Setting):
        self.fit_notes = []
        posteriors, labels = self._fit_data(setting)
        self.quantifier_ = self._make(setting.n_classes)
        quiet(self.quantifier_.fit, posteriors, labels)
        return self

    def quantify(self, sample: Sample, context: SampleContext) -> np.ndarray:
        return np.asarray(quiet(self.quantifier_.predict, sample.posteriors), dtype=float)


class CC(_QuaPyQuantifier):
    name, group, description = "CC", "baseline", "classify and count"
    adaptations = ()
    assumption = "none"
    quapy_class, quapy_options = "CC", {}


class PCC(_QuaPyQuantifier):
    name, description = "PCC", "probabilistic CC (exact when the posteriors are calibrated)"
    adaptations = ("q2c", "q2a")
    assumption = "covariate"
    quapy_class = "PCC"


class ACC(_QuaPyQuantifier):
    name, description = "ACC", "adjusted CC: inverts the validation confusion matrix"
    adaptations = ()
    quapy_class = "ACC"


class PACC(_QuaPyQuantifier):
    name, description = "PACC", "probabilistic adjusted CC"
    adaptations = ("q2c", "q2a")
    quapy_class = "PACC"


class KDEy(_QuaPyQuantifier):
    """KDEyML with bandwidth 0.1 on the k-dimensional posterior vectors.

    QuaPy 0.2.3 refuses a class without validation items; 0.1.9 (which produced the tables) used a
    single kernel at the uniform posterior for it. With ``empty_class="uniform_kernel"`` (default)
    that point (1/k, ..., 1/k) is added to the fitting data of the missing class, which reproduces
    0.1.9 exactly (recorded as a fallback); ``"raise"`` leaves QuaPy 0.2.3's error.
    """

    name, description = "KDEy", "KDEy-ML, bandwidth 0.1"
    adaptations = ("q2c", "q2a")
    quapy_class = "KDEyML"

    EMPTY_CLASS_RULES = ("uniform_kernel", "raise")

    def __init__(self, bandwidth: float = 0.1, empty_class: str = "uniform_kernel"):
        check_choice("empty_class", empty_class, self.EMPTY_CLASS_RULES)
        self.bandwidth = bandwidth
        self.empty_class = empty_class

    @property
    def quapy_options(self):
        return {"val_split": None, "bandwidth": self.bandwidth}

    def _fit_data(self, setting):
        posteriors, labels = setting.validation.posteriors, setting.validation.labels
        k = setting.n_classes
        missing = [c for c in range(k) if not np.any(labels == c)]
        if missing and self.empty_class == "uniform_kernel":
            posteriors = np.vstack([posteriors, np.full((len(missing), k), 1.0 / k)])
            labels = np.concatenate([labels, missing])
            self.fit_notes.append(
                (
                    "fallback",
                    f"KDEy: class {missing} absent from validation; uniform-point kernel used",
                )
            )
        return posteriors, labels
