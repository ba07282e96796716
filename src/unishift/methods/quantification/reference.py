"""CC, PCC, PACC, EMQ, EMQ-BCTS and KDEy: QuaPy's own quantifiers on cached posteriors (docs/methods.md §3.1)."""

from __future__ import annotations

import numpy as np

from unishift.methods.base import (
    PREVALENCE_SOURCES,
    Quantifier,
    Sample,
    SampleContext,
    Setting,
    check_choice,
)
from unishift.methods.quantification.qp_bridge import PosteriorPassthrough, em, positive, quiet


class _QuaPyQuantifier(Quantifier):
    """Fits a QuaPy aggregative quantifier on validation posteriors and applies it to each sample."""

    fit_notes: list

    def _make(self):
        raise NotImplementedError

    def fit(self, setting: Setting):
        self.fit_notes = []
        self.quantifier_ = self._make()
        validation = setting.validation
        quiet(self.quantifier_.fit, validation.posteriors, validation.labels)
        return self

    def quantify(self, sample: Sample, context: SampleContext) -> float:
        return positive(quiet(self.quantifier_.predict, sample.posteriors))


class CC(_QuaPyQuantifier):
    name, group, description = "CC", "baseline", "classify and count"
    adaptations = ()

    def _make(self):
        from quapy.method.aggregative import CC as QuaPyCC

        return QuaPyCC(PosteriorPassthrough(), fit_classifier=False)


class PCC(_QuaPyQuantifier):
    name, description = "PCC", "probabilistic CC"
    adaptations = ("q2c", "q2a")

    def _make(self):
        from quapy.method.aggregative import PCC as QuaPyPCC

        return QuaPyPCC(PosteriorPassthrough(), fit_classifier=False, val_split=None)


class PACC(_QuaPyQuantifier):
    name, description = "PACC", "probabilistic adjusted CC"
    adaptations = ("q2c", "q2a")

    def _make(self):
        from quapy.method.aggregative import PACC as QuaPyPACC

        return QuaPyPACC(PosteriorPassthrough(), fit_classifier=False, val_split=None)


class KDEy(_QuaPyQuantifier):
    """KDEyML with bandwidth 0.1.

    QuaPy 0.2.3 refuses a class without validation items; 0.1.9 (which produced the tables) used a single
    kernel at the uniform posterior for it. With ``empty_class="uniform_kernel"`` (default) that point is
    added to the fitting data of the missing class, which reproduces 0.1.9 exactly.
    """

    name, description = "KDEy", "KDEy-ML, bandwidth 0.1"
    adaptations = ("q2c", "q2a")

    EMPTY_CLASS_RULES = ("uniform_kernel", "raise")

    def __init__(self, bandwidth: float = 0.1, empty_class: str = "uniform_kernel"):
        check_choice("empty_class", empty_class, self.EMPTY_CLASS_RULES)
        self.bandwidth = bandwidth
        self.empty_class = empty_class

    def _make(self):
        from quapy.method.aggregative import KDEyML

        return KDEyML(
            PosteriorPassthrough(), fit_classifier=False, val_split=None, bandwidth=self.bandwidth
        )

    def fit(self, setting: Setting):
        self.fit_notes = []
        P, y = setting.validation.posteriors, setting.validation.labels
        missing = [c for c in (0, 1) if not np.any(y == c)]
        if missing and self.empty_class == "uniform_kernel":
            P = np.vstack([P, np.full((len(missing), 2), 0.5)])
            y = np.concatenate([y, missing])
            self.fit_notes.append(
                (
                    "fallback",
                    f"KDEy: class {missing} absent from validation; uniform-point kernel used",
                )
            )
        self.quantifier_ = self._make()
        quiet(self.quantifier_.fit, P, y)
        return self


class EMQ(_QuaPyQuantifier):
    """EM of Saerens et al. started from the training prevalence of ``train_prevalence`` (§3.1)."""

    name, description = "EMQ", "EM of Saerens et al."
    shift_defaults = {
        "label": {"train_prevalence": "training"},
        "covariate": {"train_prevalence": "validation"},
    }
    adaptations = ("q2c", "q2a")

    def __init__(self, train_prevalence: str = "training"):
        check_choice("train_prevalence", train_prevalence, PREVALENCE_SOURCES)
        self.train_prevalence = train_prevalence

    def fit(self, setting: Setting):
        self.fit_notes = []
        self.prior_ = setting.prevalence_of(self.train_prevalence)
        return self

    def quantify(self, sample, context):
        return em(self.prior_, sample.posteriors)[0]


class EMQBCTS(_QuaPyQuantifier):
    """EMQ on BCTS-recalibrated posteriors, prior = mean calibrated validation posterior.

    BCTS fails whenever a validation posterior is exactly 0 or 1 (always for kNN). REF then silently
    ran plain EMQ with the exact prevalence of ``fallback_prevalence``; we do the same and record it.
    """

    name, display = "EMQ_BCTS", r"EMQ$^{\text{BCTS}}$"
    description = "EMQ on BCTS-recalibrated posteriors"
    shift_defaults = {
        "label": {"fallback_prevalence": "training"},
        "covariate": {"fallback_prevalence": "validation"},
    }
    adaptations = ("q2a",)

    def __init__(self, fallback_prevalence: str = "training"):
        check_choice("fallback_prevalence", fallback_prevalence, PREVALENCE_SOURCES)
        self.fallback_prevalence = fallback_prevalence

    def fit(self, setting: Setting):
        from quapy.method.aggregative import EMQ as QuaPyEMQ

        self.fit_notes = []
        self.fallback_prior_ = None
        self.quantifier_ = QuaPyEMQ(
            PosteriorPassthrough(),
            fit_classifier=False,
            val_split=(setting.validation.posteriors, setting.validation.labels),
            exact_train_prev=False,
            calib="bcts",
            on_calib_error="raise",
        )
        try:
            quiet(
                self.quantifier_.aggregation_fit,
                setting.validation.posteriors,
                setting.validation.labels,
            )
        except Exception as err:  # abstention raises AssertionError; QuaPy wraps it in RuntimeError
            from unishift.io import one_line

            self.fallback_prior_ = setting.prevalence_of(self.fallback_prevalence)
            reason = one_line(str(err), limit=120)
            self.fit_notes.append(
                ("fallback", f"BCTS failed at fit time ({reason}); plain EMQ used")
            )
        return self

    def quantify(self, sample, context):
        if self.fallback_prior_ is not None:
            return em(self.fallback_prior_, sample.posteriors)[0]
        return positive(quiet(self.quantifier_.predict, sample.posteriors))
