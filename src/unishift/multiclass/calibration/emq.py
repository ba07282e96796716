"""EMQ and EMQ-BCTS as calibrators: the EM-adapted posterior vectors of the test sample.

Under label shift, if the input posteriors are calibrated on the training distribution, Bayes' rule
with the EM prior gives calibrated posteriors for the test distribution (Saerens et al. 2002): the
adaptation is canonical (the whole vector is re-weighted). For two classes both reproduce the binary
calibrators EMQ and EMQ_BCTS.
"""

from __future__ import annotations

import numpy as np

from unishift.methods.base import check_choice
from unishift.multiclass.base import MulticlassCalibrator
from unishift.multiclass.quantification.emq import EMQBCTS, PREVALENCE_SOURCES, prior_of
from unishift.multiclass.quantification.quapy_bridge import em


class ThenEM:
    """Mixin: the calibrator after it in the MRO, then EM from the prior of ``train_prevalence``
    (the binary ``ThenEM``, docs/methods.md §2.8)."""

    def _set_prior_source(self, train_prevalence: str) -> None:
        check_choice("train_prevalence", train_prevalence, PREVALENCE_SOURCES)
        self.train_prevalence = train_prevalence

    def fit(self, setting):
        super().fit(setting)
        self.prior_ = prior_of(setting, self.train_prevalence)
        return self

    def calibrate(self, sample, context):
        return em(self.prior_, super().calibrate(sample, context))[1]


class EMQCalibrator(MulticlassCalibrator):
    name, display, group, binary_name = "EMQ", "EMQ", "adapted", "EMQ"
    assumption = "label"
    calibration_notion = "canonical"
    defaults = {"train_prevalence": "training"}
    description = "EM-adapted posteriors from the classifier-training prevalence"

    def __init__(self, train_prevalence: str = "training"):
        check_choice("train_prevalence", train_prevalence, PREVALENCE_SOURCES)
        self.train_prevalence = train_prevalence

    def fit(self, setting):
        self.fit_notes = []
        self.prior_ = prior_of(setting, self.train_prevalence)
        return self

    def calibrate(self, sample, context):
        return em(self.prior_, sample.posteriors)[1]


class EMQBCTSCalibrator(MulticlassCalibrator):
    name, display, group = "EMQ_BCTS", r"EMQ$^{\text{BCTS}}$", "adapted"
    binary_name = "EMQ_BCTS"
    assumption = "label"
    calibration_notion = "canonical"
    defaults = {"fallback_prevalence": "validation"}
    description = "EM on BCTS-recalibrated posteriors (plain EM when BCTS fails, recorded)"

    def __init__(self, fallback_prevalence: str = "validation"):
        check_choice("fallback_prevalence", fallback_prevalence, PREVALENCE_SOURCES)
        self.fallback_prevalence = fallback_prevalence

    def fit(self, setting):
        self.quantifier_ = EMQBCTS(fallback_prevalence=self.fallback_prevalence).fit(setting)
        self.fit_notes = list(self.quantifier_.fit_notes)
        return self

    def calibrate(self, sample, context):
        posteriors = np.asarray(sample.posteriors, dtype=float)
        if not np.isclose(posteriors.sum(axis=1), 1).all():
            raise ValueError("EMQ_BCTS: the input does not look like posterior probabilities")
        return self.quantifier_.calibrated_posteriors(posteriors)


__all__ = ["EMQBCTSCalibrator", "EMQCalibrator", "prior_of"]
