"""EMQ^BCTS as a calibrator (docs/methods.md §2.7): EM on BCTS-recalibrated posteriors."""

from __future__ import annotations

import numpy as np

from unishift.methods.base import PREVALENCE_SOURCES, Calibrator, Setting, check_choice
from unishift.methods.quantification.qp_bridge import em, quiet
from unishift.methods.quantification.reference import EMQBCTS


def _check_rows_sum_to_one(posteriors: np.ndarray, method: str) -> None:
    if not np.isclose(np.asarray(posteriors).sum(axis=1), 1).all():
        raise ValueError(f"{method}: the input does not look like posterior probabilities")


class EMQBCTSCalibrator(Calibrator):
    """EMQ on BCTS-recalibrated posteriors; returns the adapted posteriors (§2.7).

    Uses the quantification package's EMQ^BCTS (QuaPy EMQ with calib='bcts'). When BCTS fails at fit
    time REF silently used the identity map and the exact ``fallback_prevalence`` (validation labels
    in both calibration tables); the fallback is kept and recorded in ``fit_notes``.
    """

    name, group, display = "EMQ_BCTS", "adapted", r"EMQ$^{\text{BCTS}}$"
    description = "EM on BCTS-recalibrated posteriors [REF EM-BCTS]"
    defaults = {"fallback_prevalence": "validation"}
    adaptations = ()

    def __init__(self, fallback_prevalence: str = "validation"):
        check_choice("fallback_prevalence", fallback_prevalence, PREVALENCE_SOURCES)
        self.fallback_prevalence = fallback_prevalence

    def fit(self, setting: Setting):
        self.quantifier_ = EMQBCTS(fallback_prevalence=self.fallback_prevalence).fit(setting)
        self.fit_notes = list(self.quantifier_.fit_notes)
        return self

    def calibrate(self, sample, context):
        posteriors = np.asarray(sample.posteriors, dtype=float)
        _check_rows_sum_to_one(posteriors, "EMQ_BCTS")
        if self.quantifier_.fallback_prior_ is not None:
            return em(self.quantifier_.fallback_prior_, posteriors)[1]
        return quiet(self.quantifier_.quantifier_.predict_proba, posteriors)


__all__ = ["EMQBCTSCalibrator"]
