"""CC, PCC, ACC, PACC and KDEy: QuaPy's multiclass aggregative quantifiers on cached posteriors.

Each is fitted on the validation posteriors and labels and applied to each test sample; for two
classes each returns the binary method's vector (docs/methods.md §3.1), so CC, PCC, PACC and KDEy
reproduce the binary tables' numbers.
"""

from __future__ import annotations

import numpy as np

from unishift.methods.base import check_choice
from unishift.multiclass.base import MulticlassQuantifier, MulticlassSetting
from unishift.multiclass.quantification.quapy_bridge import PosteriorPassthroughK, quiet


class _QuaPyQuantifier(MulticlassQuantifier):
    assumption = "label"

    def _make(self, n_classes: int):
        raise NotImplementedError

    def _fit_data(self, setting: MulticlassSetting):
        return setting.validation.posteriors, setting.validation.labels

    def fit(self, setting: MulticlassSetting):
        self.fit_notes = []
        self.n_classes_ = setting.n_classes
        posteriors, labels = self._fit_data(setting)
        self.quantifier_ = self._make(setting.n_classes)
        quiet(self.quantifier_.fit, posteriors, labels)
        return self

    def quantify(self, sample, context) -> np.ndarray:
        return np.asarray(quiet(self.quantifier_.predict, sample.posteriors), dtype=float)


class CC(_QuaPyQuantifier):
    name, display, group, binary_name = "CC", "CC", "baseline", "CC"
    assumption = "none"
    description = "classify and count: share of argmax predictions per class"

    def _make(self, n_classes):
        from quapy.method.aggregative import CC as QuaPyCC

        return QuaPyCC(PosteriorPassthroughK(n_classes), fit_classifier=False)


class PCC(_QuaPyQuantifier):
    name, display, binary_name = "PCC", "PCC", "PCC"
    assumption = "covariate"
    description = (
        "probabilistic CC: mean posterior vector (exact when the posteriors are calibrated)"
    )

    def _make(self, n_classes):
        from quapy.method.aggregative import PCC as QuaPyPCC

        return QuaPyPCC(PosteriorPassthroughK(n_classes), fit_classifier=False, val_split=None)


class ACC(_QuaPyQuantifier):
    name, display, binary_name = "ACC", "ACC", None
    description = "adjusted CC: inverts the validation confusion matrix (QuaPy's default solver)"

    def _make(self, n_classes):
        from quapy.method.aggregative import ACC as QuaPyACC

        return QuaPyACC(PosteriorPassthroughK(n_classes), fit_classifier=False, val_split=None)


class PACC(_QuaPyQuantifier):
    name, display, binary_name = "PACC", "PACC", "PACC"
    description = "probabilistic adjusted CC: inverts the validation mean-posterior matrix"

    def _make(self, n_classes):
        from quapy.method.aggregative import PACC as QuaPyPACC

        return QuaPyPACC(PosteriorPassthroughK(n_classes), fit_classifier=False, val_split=None)


class KDEy(_QuaPyQuantifier):
    """KDEyML with bandwidth 0.1 on the k-dimensional posterior vectors.

    ``empty_class="uniform_kernel"`` gives a class without validation items a single kernel at the
    uniform posterior (1/k, ..., 1/k), which for two classes is the binary rule (QuaPy 0.1.9's
    behaviour, recorded as a fallback); ``"raise"`` leaves QuaPy 0.2.3's error.
    """

    name, display, binary_name = "KDEy", "KDEy", "KDEy"
    defaults = {"bandwidth": 0.1, "empty_class": "uniform_kernel"}
    description = "KDEy-ML, bandwidth 0.1"
    EMPTY_CLASS_RULES = ("uniform_kernel", "raise")

    def __init__(self, bandwidth: float = 0.1, empty_class: str = "uniform_kernel"):
        check_choice("empty_class", empty_class, self.EMPTY_CLASS_RULES)
        self.bandwidth = bandwidth
        self.empty_class = empty_class

    def _make(self, n_classes):
        from quapy.method.aggregative import KDEyML

        return KDEyML(
            PosteriorPassthroughK(n_classes),
            fit_classifier=False,
            val_split=None,
            bandwidth=self.bandwidth,
        )

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


__all__ = ["ACC", "CC", "KDEy", "PACC", "PCC"]
