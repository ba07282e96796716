"""Classifier accuracy predictors: estimate the accuracy of the classifier on an unlabelled sample."""

from unishift.methods.cap.atc import ATC
from unishift.methods.cap.doc import DoC
from unishift.methods.cap.leap import LEAP
from unishift.methods.cap.naive import Naive
from unishift.registry import MethodSpec, register

_TASK = "cap"

# Validation samples of DoC: UPP under label shift, NPP under covariate shift (protocols.md §4).
DOC_PROTOCOL = {"label": {"protocol": "upp"}, "covariate": {"protocol": "npp"}}

register(MethodSpec("Naive", _TASK, "baseline", Naive, "Naive", description="validation accuracy"))
register(MethodSpec("ATC", _TASK, "reference", ATC, "ATC", description="ATC with max-confidence"))
register(
    MethodSpec(
        "DoC",
        _TASK,
        "reference",
        DoC,
        "DoC",
        shift_defaults=DOC_PROTOCOL,
        description="difference of confidences, 100 x 250 validation samples",
    )
)
register(
    MethodSpec(
        "LEAP",
        _TASK,
        "reference",
        LEAP,
        "LEAP",
        defaults={"quantifier": "KDEy"},
        description="LEAP with KDEy",
    )
)
register(
    MethodSpec(
        "LEAP_PCC",
        _TASK,
        "reference",
        LEAP,
        r"LEAP$^{\text{PCC}}$",
        shifts=("covariate",),
        defaults={"quantifier": "PCC"},
        description="LEAP with PCC",
    )
)

__all__ = ["ATC", "LEAP", "DoC", "Naive"]
