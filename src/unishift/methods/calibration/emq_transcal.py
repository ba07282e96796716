"""EMQ^TransCal (docs/methods.md §2.8): TransCal followed by EM."""

from __future__ import annotations

from unishift.methods.calibration.emq import ThenEM
from unishift.methods.calibration.transcal import TransCal


class EMQTransCal(ThenEM, TransCal):
    """TransCal (docs/methods.md §2.4) followed by EM from the training prevalence
    (docs/methods.md §2.8; covariate-shift table: logits "L")."""

    name, group, display = "EMQ_TransCal", "adapted", r"EMQ$^{\text{TransCal}}$"
    description = "TransCal then EM [reference code: EM-TransCal]"
    shifts = ("covariate",)
    adaptations = ()
    assumption = "label"
    calibration_notion = "canonical"

    def __init__(
        self,
        logits: str = "L",
        weights: str = "domain_classifier",
        zero_posteriors: str = "faithful",
        variance_term: bool = True,
        train_prevalence: str = "training",
    ):
        super().__init__(logits, weights, zero_posteriors, variance_term)
        self.train_prevalence = train_prevalence
