"""EMQ^TransCal (docs/methods.md §2.8): TransCal followed by EM."""

from __future__ import annotations

from dataclasses import dataclass

from unishift.methods.calibration.emq import ThenEM
from unishift.methods.calibration.transcal import TransCal


@dataclass(eq=False)
class EMQTransCal(ThenEM, TransCal):
    """TransCal (§2.4) followed by EM from the training prevalence (§2.8; CS table: logits "L")."""

    name, group, display = "EMQ_TransCal", "adapted", r"EMQ$^{\text{TransCal}}$"
    description = "TransCal then EM [REF EM-TransCal]"
    shifts = ("covariate",)
    binary_defaults = {}
    adaptations = ()
    assumption = "label"
    calibration_notion = "canonical"

    logits: str = "L"
    train_prevalence: str = "training"
