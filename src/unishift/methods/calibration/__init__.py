"""Calibrators: return calibrated posteriors for every item of an unlabelled test sample.

Per-shift defaults reproduce the configuration of each paper table (methods.md §1.1, §1.2, §5):
``label`` = the label-shift calibration table, ``covariate`` = the covariate-shift one.
"""

from unishift.methods.calibration.adapted import (
    DMCal,
    EMQBCTSCalibrator,
    EMQCalibrator,
    EMQLasCal,
    EMQTransCal,
    PacCalSigma,
)
from unishift.methods.calibration.platt import Platt
from unishift.methods.calibration.temperature import CPCS, Head2Tail, LasCal, TransCal
from unishift.registry import MethodSpec, register

_TASK = "calibration"


def _logits(label: str, covariate: str) -> dict:
    return {"label": {"logits": label}, "covariate": {"logits": covariate}}


register(MethodSpec("Platt", _TASK, "baseline", Platt, "Platt", description="Platt scaling"))

register(
    MethodSpec(
        "Head2Tail",
        _TASK,
        "reference",
        Head2Tail,
        "Head2Tail",
        defaults={"pca_components": 50},
        shift_defaults=_logits("P", "S"),
        description="Head2Tail (Chen & Su 2023) [REF Head2Tail-P / Head2Tail]",
    )
)
register(
    MethodSpec(
        "CPCS",
        _TASK,
        "reference",
        CPCS,
        "CPCS",
        shift_defaults=_logits("P", "L"),
        description="CPCS (Park et al. 2020) [REF CPCS-P / CPCS]",
    )
)
register(
    MethodSpec(
        "TransCal",
        _TASK,
        "reference",
        TransCal,
        "TransCal",
        shift_defaults=_logits("S", "L"),
        description="TransCal (Wang et al. 2020) [REF TransCal-S / TransCal]",
    )
)
register(
    MethodSpec(
        "LasCal",
        _TASK,
        "reference",
        LasCal,
        "LasCal",
        shift_defaults=_logits("P", "L"),
        description="LasCal (Popordanoska et al. 2024) [REF LasCal-P / LasCal]",
    )
)
register(
    MethodSpec(
        "EMQ",
        _TASK,
        "adapted",
        EMQCalibrator,
        "EMQ",
        defaults={"train_prevalence": "training"},
        description="EM-adapted posteriors from the classifier-training prevalence [REF EM]",
    )
)
register(
    MethodSpec(
        "EMQ_BCTS",
        _TASK,
        "adapted",
        EMQBCTSCalibrator,
        r"EMQ$^{\text{BCTS}}$",
        defaults={"fallback_prevalence": "validation"},
        description="EM on BCTS-recalibrated posteriors [REF EM-BCTS]",
    )
)
register(
    MethodSpec(
        "EMQ_TransCal",
        _TASK,
        "adapted",
        EMQTransCal,
        r"EMQ$^{\text{TransCal}}$",
        shifts=("covariate",),
        defaults={"train_prevalence": "training"},
        shift_defaults={"covariate": {"logits": "L"}},
        description="TransCal then EM [REF EM-TransCal]",
    )
)
register(
    MethodSpec(
        "EMQ_LasCal",
        _TASK,
        "adapted",
        EMQLasCal,
        r"EMQ$^{\text{LasCal}}$",
        shifts=("label",),
        defaults={"train_prevalence": "training"},
        shift_defaults={"label": {"logits": "S"}},
        description="LasCal then EM [REF EMLasCal]",
    )
)
register(
    MethodSpec(
        "PacCal_sigma",
        _TASK,
        "adapted",
        PacCalSigma,
        r"PacCal$^{\sigma}$",
        defaults={"post_processing": "sigma"},
        description="PACC-adjusted posteriors with the sigma post-processing [REF PACC-cal(soft)]",
    )
)
register(
    MethodSpec(
        "DMCal",
        _TASK,
        "adapted",
        DMCal,
        "DMCal",
        defaults={"n_bins": 8, "monotone": "running_max", "smooth": True},
        description="DMy(8 bins) mixture map, running max + smoothing [REF HDcal8-sm-mono]",
    )
)

__all__ = [
    "Platt",
    "Head2Tail",
    "CPCS",
    "TransCal",
    "LasCal",
    "EMQCalibrator",
    "EMQBCTSCalibrator",
    "EMQTransCal",
    "EMQLasCal",
    "PacCalSigma",
    "DMCal",
]
