"""EMQ as a calibrator (docs/methods.md §2.6) and EM after another calibrator (docs/methods.md
§2.8): the posteriors that Saerens et al.'s EM (QuaPy's, docs/methods.md §0.4) adapts, canonical
under label shift from calibrated input."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import PREVALENCE_SOURCES, Sample
from unishift.methods.base import Calibrator, SampleContext
from unishift.methods.quantification.emq import EMFromPrior, em
from unishift.option_checks import check_choice


class EMQCalibrator(EMFromPrior, Calibrator):
    """EMQ as a calibrator: the EM-adapted posteriors of the test sample (docs/methods.md §2.6);
    both calibration tables start EM from the training prevalence."""

    name, group, display = "EMQ", "adapted", "EMQ"
    description = (
        "EM-adapted posteriors from the classifier-training prevalence [reference code: EM]"
    )
    adaptations = ()

    def calibrate(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        return em(self.prior_, sample.posteriors)[1]


class ThenEM:
    """Mixin for a calibrator followed by Saerens et al.'s EM from the prior of its
    hyper-parameter ``train_prevalence`` (docs/methods.md §2.8)."""

    train_prevalence: str

    def check_params(self):
        super().check_params()
        check_choice("train_prevalence", self.train_prevalence, PREVALENCE_SOURCES)

    def _fit(self, setting):
        super()._fit(setting)
        self.prior_ = setting.prevalence_of(self.train_prevalence)

    def calibrate(self, sample, context=None):
        return em(self.prior_, super().calibrate(sample, context))[1]
