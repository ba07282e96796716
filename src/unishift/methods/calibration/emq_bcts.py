"""EMQ^BCTS as a calibrator (docs/methods.md §2.7): EM on BCTS-recalibrated posteriors."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import PREVALENCE_SOURCES, Setting
from unishift.methods.base import Calibrator
from unishift.methods.quantification.emq import EMQBCTS
from unishift.option_checks import check_choice


class EMQBCTSCalibrator(Calibrator):
    """The adapted posteriors of the quantifier EMQ^BCTS (QuaPy EMQ with calib='bcts'), whose
    fallback when BCTS fails is kept and recorded in ``fit_notes`` (docs/methods.md §2.7)."""

    name, group, display = "EMQ_BCTS", "adapted", r"EMQ$^{\text{BCTS}}$"
    description = "EM on BCTS-recalibrated posteriors [reference code: EM-BCTS]"
    adaptations = ()
    assumption = "label"

    def __init__(self, fallback_prevalence: str = "validation"):
        self.fallback_prevalence = fallback_prevalence

    def check_params(self):
        check_choice("fallback_prevalence", self.fallback_prevalence, PREVALENCE_SOURCES)

    def _fit(self, setting: Setting) -> None:
        self.quantifier_ = EMQBCTS(fallback_prevalence=self.fallback_prevalence).fit(setting)
        self.fit_notes.extend(self.quantifier_.fit_notes)

    def calibrate(self, sample, context=None):
        posteriors = np.asarray(sample.posteriors, dtype=float)
        if not np.isclose(posteriors.sum(axis=1), 1).all():
            raise ValueError("EMQ_BCTS: the input does not look like posterior probabilities")
        return self.quantifier_.calibrated_posteriors(posteriors)
