"""Quantifiers: estimate the positive-class prevalence of an unlabelled sample."""

from unishift.methods.quantification.reference import CC, EMQ, EMQBCTS, PACC, PCC, KDEy
from unishift.registry import MethodSpec, register

_TASK = "quantification"

register(MethodSpec("CC", _TASK, "baseline", CC, "CC", description="classify and count"))
register(MethodSpec("PCC", _TASK, "reference", PCC, "PCC", description="probabilistic CC"))
register(
    MethodSpec("PACC", _TASK, "reference", PACC, "PACC", description="probabilistic adjusted CC")
)
register(
    MethodSpec(
        "EMQ",
        _TASK,
        "reference",
        EMQ,
        "EMQ",
        shift_defaults={
            "label": {"train_prevalence": "training"},
            "covariate": {"train_prevalence": "validation"},
        },
        description="EM of Saerens et al.",
    )
)
register(
    MethodSpec(
        "EMQ_BCTS",
        _TASK,
        "reference",
        EMQBCTS,
        r"EMQ$^{\text{BCTS}}$",
        shift_defaults={
            "label": {"fallback_prevalence": "training"},
            "covariate": {"fallback_prevalence": "validation"},
        },
        description="EMQ on BCTS-recalibrated posteriors",
    )
)
register(MethodSpec("KDEy", _TASK, "reference", KDEy, "KDEy", description="KDEy-ML, bandwidth 0.1"))

__all__ = ["CC", "PCC", "PACC", "EMQ", "EMQBCTS", "KDEy"]
