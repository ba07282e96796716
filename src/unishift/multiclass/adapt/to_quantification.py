"""ζ2ρ, α2ρ and EMQ on calibrated posteriors for k classes (docs/multiclass.md §2.1, §2.5).

* ζ2ρ (Lemma 1): the mean calibrated posterior vector. Exact when the calibrator is class-wise
  calibrated on the sample (a fortiori canonically).
* α2ρ (Lemma 5): one CAP model per predicted class j gives the share α_j of class j among the items
  predicted j. For k = 2 the remaining share 1 - α_j belongs to the other class and Lemma 5 is exact;
  for k >= 3 it must be split over k - 1 classes, which one accuracy per part cannot say. ``split``
  chooses the well-posed completion: ``"validation"`` (default) splits it like the validation errors
  of that predicted class (the validation confusion matrix's off-diagonal column j; exact when the
  test errors of each predicted class have the validation composition; for k = 2 it is Lemma 5);
  ``"recall"`` uses label shift instead: the correct items of part j are q_j r_j n with r_j the
  validation recall, so q_j = α_j n_j / (n r_j), renormalised (population-exact under label shift,
  not Lemma 5 for k = 2).
* EMQ^ζ: EM run on the calibrated posteriors (the binary EMQ^LasCal construction, any calibrator).
"""

from __future__ import annotations

import numpy as np

from unishift.methods.base import check_choice
from unishift.multiclass.adapt.common import PartitionedFit, build_inner, fit_notes_of
from unishift.multiclass.base import MulticlassQuantifier
from unishift.multiclass.quantification.emq import PREVALENCE_SOURCES, prior_of
from unishift.multiclass.quantification.quapy_bridge import em

SPLITS = ("validation", "recall")


class CalibrationToQuantification(MulticlassQuantifier):
    name, display, group, binary_name = "c2q", r"$\zeta 2 \rho$", "adapted", None
    assumption = "none"
    description = "zeta2rho: mean calibrated posterior vector"

    def __init__(self, inner="CPCS", inner_params: dict | None = None):
        self.inner = inner
        self.inner_params = inner_params

    def fit(self, setting):
        self.inner_ = build_inner("calibration", self.inner, self.inner_params).fit(setting)
        self.fit_notes = fit_notes_of(self.inner_)
        return self

    def quantify(self, sample, context):
        calibrated = np.asarray(self.inner_.calibrate(sample, context), dtype=float)
        return calibrated.mean(axis=0)


class CAPToQuantification(PartitionedFit, MulticlassQuantifier):
    name, display, group, binary_name = "a2q", r"$\alpha 2 \rho$", "adapted", None
    assumption = "none"
    defaults = {"split": "validation"}
    description = "alpha2rho: per-predicted-class accuracies, errors split like validation's"
    inner_task = "cap"

    def __init__(self, inner="ATC", inner_params: dict | None = None, split: str = "validation"):
        check_choice("split", split, SPLITS)
        self.inner = inner
        self.inner_params = inner_params
        self.split = split

    def _fit_extra(self, setting):
        confusion = setting.validation.confusion  # rows true class, columns predicted class
        k = setting.n_classes
        errors = confusion * (1.0 - np.eye(k))
        totals = errors.sum(axis=0)
        uniform = (1.0 - np.eye(k)) / (k - 1)
        without = [j for j in range(k) if totals[j] == 0]
        if without and k > 2:
            self.fit_notes.append(
                (
                    "fallback",
                    f"alpha2rho: no validation errors among the items predicted {without}; "
                    "their errors are split uniformly",
                )
            )
        with np.errstate(invalid="ignore", divide="ignore"):
            self.error_split_ = np.where(
                totals > 0, errors / np.where(totals > 0, totals, 1), uniform
            )
        recall_totals = confusion.sum(axis=1)
        self.recall_ = np.where(
            recall_totals > 0, np.diag(confusion) / np.where(recall_totals > 0, recall_totals, 1), 0
        )

    def quantify(self, sample, context):
        k = self.n_classes_
        counts = np.zeros(k)
        for cls, inner, part, part_ctx in self._parts(sample, context):
            accuracy = float(inner.predict_accuracy(part, part_ctx))
            if self.split == "validation":
                share = (1.0 - accuracy) * self.error_split_[:, cls]
                share[cls] = accuracy
                counts += len(part) * share
            else:
                counts[cls] += len(part) * accuracy
        if self.split == "validation":
            return counts / len(sample)
        with np.errstate(invalid="ignore", divide="ignore"):
            estimate = np.where(
                self.recall_ > 0, counts / np.where(self.recall_ > 0, self.recall_, 1), 0
            )
        if estimate.sum() <= 0:
            context.note("fallback", "alpha2rho(recall): every estimate is 0; uniform prevalence")
            return np.full(k, 1.0 / k)
        return estimate / estimate.sum()


class CalibratedEMQ(MulticlassQuantifier):
    """EM (docs/methods.md §0.4, B4) on the inner calibrator's posteriors, from the ``train_prevalence`` prior."""

    name, display, group, binary_name = "EMQ_c", r"EMQ$^{\zeta}$", "adapted", None
    assumption = "label"
    defaults = {"train_prevalence": "validation"}
    description = "EM on calibrated posteriors"

    def __init__(self, inner="BCTS", inner_params=None, train_prevalence: str = "validation"):
        check_choice("train_prevalence", train_prevalence, PREVALENCE_SOURCES)
        self.inner = inner
        self.inner_params = inner_params
        self.train_prevalence = train_prevalence

    def fit(self, setting):
        self.inner_ = build_inner("calibration", self.inner, self.inner_params).fit(setting)
        self.fit_notes = fit_notes_of(self.inner_)
        self.prior_ = prior_of(setting, self.train_prevalence)
        return self

    def quantify(self, sample, context):
        return em(self.prior_, self.inner_.calibrate(sample, context))[0]


__all__ = ["CAPToQuantification", "CalibratedEMQ", "CalibrationToQuantification"]
