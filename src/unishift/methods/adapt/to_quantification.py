"""ζ2ρ, α2ρ and EMQ on calibrated posteriors: quantifiers built from other tasks (docs/methods.md
§3.2-3.4; docs/multiclass.md §2.1, §2.5)."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import PREVALENCE_SOURCES, Sample, Setting
from unishift.methods.adapt.common import Adapter, PartitionedFit
from unishift.methods.base import Quantifier, SampleContext
from unishift.methods.quantification.emq import em
from unishift.option_checks import check_choice

SPLITS = ("validation", "recall")


class CalibrationToQuantification(Adapter, Quantifier):
    """ζ2ρ (Lemma 1): the mean calibrated posterior vector of the whole sample (for two classes
    (1 - p, p) with p the mean positive posterior, as the binary tables computed it)."""

    inner_task = "calibration"

    def quantify(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        calibrated = np.asarray(self.inner_.calibrate(sample, context), dtype=float)
        if calibrated.shape[1] == 2:
            positive = float(np.mean(calibrated[:, 1]))
            return np.array([1.0 - positive, positive])
        return calibrated.mean(axis=0)


class CAPToQuantification(PartitionedFit, Quantifier):
    """α2ρ (Lemma 5): one CAP model per predicted class; errors split like validation's (``split``)."""

    inner_task = "cap"

    def __init__(self, inner=None, inner_params: dict | None = None, split: str = "validation"):
        super().__init__(inner, inner_params)
        self.split = split

    def check_params(self):
        super().check_params()
        check_choice("split", self.split, SPLITS)

    def _fit(self, setting: Setting) -> None:
        super()._fit(setting)
        confusion = setting.validation.confusion  # rows true class, columns predicted class
        k = setting.n_classes
        errors = confusion * (1.0 - np.eye(k))
        totals = errors.sum(axis=0)
        uniform = (1.0 - np.eye(k)) / (k - 1)
        without = [j for j in range(k) if totals[j] == 0]
        if without and k > 2:
            self.fit_fallback(
                f"alpha2rho: no validation errors among the items predicted {without}; "
                "their errors are split uniformly"
            )
        self.error_split_ = np.where(totals > 0, errors / np.where(totals > 0, totals, 1), uniform)
        recall_totals = confusion.sum(axis=1)
        self.recall_ = np.where(
            recall_totals > 0, np.diag(confusion) / np.where(recall_totals > 0, recall_totals, 1), 0
        )

    def quantify(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        context = self.context_for(context)
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
        estimate = np.where(
            self.recall_ > 0, counts / np.where(self.recall_ > 0, self.recall_, 1), 0
        )
        if estimate.sum() <= 0:
            context.note("fallback", "alpha2rho(recall): every estimate is 0; uniform prevalence")
            return np.full(k, 1.0 / k)
        return estimate / estimate.sum()


class CalibratedEMQ(Adapter, Quantifier):
    """Saerens et al.'s EM on the posteriors of an inner calibrator, from the prior of
    ``train_prevalence`` (validation: the reference implementation's quantification table); returns
    the EM prior (docs/methods.md §3.3)."""

    inner_task = "calibration"
    assumption = "label"

    def __init__(self, inner=None, inner_params=None, train_prevalence: str = "validation"):
        super().__init__(inner, inner_params)
        self.train_prevalence = train_prevalence

    def check_params(self):
        super().check_params()
        check_choice("train_prevalence", self.train_prevalence, PREVALENCE_SOURCES)

    def _fit(self, setting: Setting) -> None:
        super()._fit(setting)
        self.prior_ = setting.prevalence_of(self.train_prevalence)

    def quantify(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        return em(self.prior_, self.inner_.calibrate(sample, context))[0]
