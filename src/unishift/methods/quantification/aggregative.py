"""CC, PCC, ACC, PACC and KDEy: QuaPy's aggregative quantifiers fitted on the validation posteriors
and labels (docs/methods.md §3.1, §0.5)."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.data.quapy_loader import load_quapy
from unishift.methods.base import Quantifier, SampleContext
from unishift.methods.quapy_adapter import PosteriorPassthrough, quiet
from unishift.option_checks import check_choice


class _QuaPyQuantifier(Quantifier):
    assumption = "label"
    quapy_class: str
    quapy_options: dict = {"val_split": None}

    def _fit_data(self, setting: Setting):
        return setting.validation.posteriors, setting.validation.labels

    def fit(self, setting: Setting):
        load_quapy()
        from quapy.method import aggregative

        self.fit_notes = []
        posteriors, labels = self._fit_data(setting)
        self.quantifier_ = getattr(aggregative, self.quapy_class)(
            PosteriorPassthrough(setting.n_classes), fit_classifier=False, **self.quapy_options
        )
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
    """KDEyML on the posterior vectors. A class without validation items gets one kernel at the
    uniform posterior (``empty_class="uniform_kernel"``: QuaPy 0.1.9, which produced the tables,
    recorded) or QuaPy 0.2.3's error (``"raise"``)."""

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
            self.fit_fallback(
                f"KDEy: class {missing} absent from validation; uniform-point kernel used"
            )
        return posteriors, labels
