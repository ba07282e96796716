"""EMQ and EMQ-BCTS for k classes: Saerens et al.'s EM, plain or on BCTS-recalibrated posteriors."""

from __future__ import annotations

import numpy as np

from unishift.methods.base import check_choice
from unishift.multiclass.base import MulticlassQuantifier, MulticlassSetting
from unishift.multiclass.quantification.quapy_bridge import PosteriorPassthroughK, em, quiet

PREVALENCE_SOURCES = ("training", "validation")


def prior_of(setting: MulticlassSetting, source: str) -> np.ndarray:
    """The label prevalence vector of the classifier-training or the validation set."""
    check_choice("train_prevalence", source, PREVALENCE_SOURCES)
    return setting.train_prevalence if source == "training" else setting.validation.prevalence


class EMQ(MulticlassQuantifier):
    """EM started from the prevalence vector of ``train_prevalence``; returns the EM priors."""

    name, display, binary_name = "EMQ", "EMQ", "EMQ"
    assumption = "label"
    defaults = {"train_prevalence": "training"}
    description = "EM of Saerens et al."

    def __init__(self, train_prevalence: str = "training"):
        check_choice("train_prevalence", train_prevalence, PREVALENCE_SOURCES)
        self.train_prevalence = train_prevalence

    def fit(self, setting):
        self.fit_notes = []
        self.prior_ = prior_of(setting, self.train_prevalence)
        return self

    def quantify(self, sample, context):
        return em(self.prior_, sample.posteriors)[0]


class EMQBCTS(MulticlassQuantifier):
    """EM on BCTS-recalibrated posteriors (QuaPy's EMQ with calib='bcts'), prior = mean calibrated
    validation posterior. BCTS fails when a validation posterior is exactly 0 (abstention takes logs);
    then plain EM from ``fallback_prevalence`` runs, as in the binary tables, and the fallback is
    recorded.
    """

    name, display, binary_name = "EMQ_BCTS", r"EMQ$^{\text{BCTS}}$", "EMQ_BCTS"
    assumption = "label"
    defaults = {"fallback_prevalence": "training"}
    description = "EMQ on BCTS-recalibrated posteriors"

    def __init__(self, fallback_prevalence: str = "training"):
        check_choice("fallback_prevalence", fallback_prevalence, PREVALENCE_SOURCES)
        self.fallback_prevalence = fallback_prevalence

    def fit(self, setting):
        from quapy.method.aggregative import EMQ as QuaPyEMQ

        self.fit_notes = []
        self.fallback_prior_ = None
        validation = setting.validation
        self.quantifier_ = QuaPyEMQ(
            PosteriorPassthroughK(setting.n_classes),
            fit_classifier=False,
            val_split=(validation.posteriors, validation.labels),
            exact_train_prev=False,
            calib="bcts",
            on_calib_error="raise",
        )
        try:
            quiet(self.quantifier_.aggregation_fit, validation.posteriors, validation.labels)
        except Exception as err:  # abstention's assertion, wrapped by QuaPy in a RuntimeError
            self.fallback_prior_ = prior_of(setting, self.fallback_prevalence)
            self.fit_notes.append(("fallback", f"BCTS failed at fit time ({err}); plain EMQ used"))
        return self

    def quantify(self, sample, context):
        if self.fallback_prior_ is not None:
            return em(self.fallback_prior_, sample.posteriors)[0]
        return np.asarray(quiet(self.quantifier_.predict, sample.posteriors), dtype=float)

    def calibrated_posteriors(self, posteriors: np.ndarray) -> np.ndarray:
        """The EM-adapted posteriors (the EMQ-BCTS calibrator's output)."""
        if self.fallback_prior_ is not None:
            return em(self.fallback_prior_, posteriors)[1]
        return quiet(self.quantifier_.predict_proba, np.asarray(posteriors, dtype=float))


__all__ = ["EMQ", "EMQBCTS", "PREVALENCE_SOURCES", "prior_of"]
