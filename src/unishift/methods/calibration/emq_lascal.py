"""EMQ^LasCal (docs/methods.md §2.8): LasCal followed by EM."""

from __future__ import annotations

from unishift.methods.calibration.emq import ThenEM
from unishift.methods.calibration.lascal import LasCal


class EMQLasCal(ThenEM, LasCal):
    """LasCal (docs/methods.md §2.5) followed by EM from the training prevalence (docs/methods.md
    §2.8); shares LasCal's per-sample temperature search through the context."""

    name, group, display = "EMQ_LasCal", "adapted", r"EMQ$^{\text{LasCal}}$"
    description = "LasCal then EM [reference code: EMLasCal]"
    shifts = ("label",)
    adaptations = ()
    calibration_notion = "canonical"

    def __init__(
        self,
        logits: str = "S",
        solver: str = "auto",
        arithmetic: str = "reference",
        train_prevalence: str = "training",
    ):
        super().__init__(logits, solver, arithmetic)
        self.train_prevalence = train_prevalence
