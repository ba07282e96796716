"""The six adaptations between tasks (paper §4) and every adapted column of the paper's tables.

Inner methods are named through the registry and built only when an adapted method is fitted, so
this package imports before (and independently of) the modules that provide them. Each entry states the
inner parameters it needs (logit convention, EMQ prior, DoC protocol per shift) instead of inheriting the
inner method's own per-shift defaults, which belong to the inner method's own table.
"""

from unishift.methods.adapt.to_calibration import CAPToCalibration, QuantificationToCalibration
from unishift.methods.adapt.to_cap import CalibrationToCAP, QuantificationToCAP
from unishift.methods.adapt.to_quantification import (
    CalibratedEMQ,
    CalibrationToQuantification,
    CAPToQuantification,
)
from unishift.registry import MethodSpec, register

BOTH = ("label", "covariate")
CS = ("covariate",)
LS = ("label",)

# DoC inside an adapter draws its validation samples like the DoC column (protocols.md §4).
DOC_INNER = {
    "label": {"inner_params": {"protocol": "upp"}},
    "covariate": {"inner_params": {"protocol": "npp"}},
}


def _adapted(name, task, factory, display, shifts, description, shift_defaults=None, **defaults):
    register(
        MethodSpec(
            name,
            task,
            "adapted",
            factory,
            display,
            shifts=shifts,
            defaults=defaults,
            shift_defaults=shift_defaults or {},
            description=description,
        )
    )


# ---- calibration: ρ2ζ with 5 isometric bins (methods.md §2.11), α2ζ with 6 (§2.12)
_Q2C = {"bins": 5, "binning": "isometric", "abscissa": "bin_mean"}
_adapted(
    "PCC_q2c_5B",
    "calibration",
    QuantificationToCalibration,
    r"$\text{PCC}^{5\text{B}}_{\rho 2\zeta}$",
    CS,
    "rho2zeta with PCC",
    inner="PCC",
    **_Q2C,
)
_adapted(
    "PACC_q2c_5B",
    "calibration",
    QuantificationToCalibration,
    r"PACC$_{\rho 2\zeta}^{5\text{B}}$",
    BOTH,
    "rho2zeta with PACC",
    inner="PACC",
    **_Q2C,
)
_adapted(
    "EMQ_q2c_5B",
    "calibration",
    QuantificationToCalibration,
    r"EMQ$_{\rho 2\zeta}^{5\text{B}}$",
    BOTH,
    "rho2zeta with EMQ (validation prior)",
    inner="EMQ",
    inner_params={"train_prevalence": "validation"},
    **_Q2C,
)
_adapted(
    "KDEy_q2c_5B",
    "calibration",
    QuantificationToCalibration,
    r"KDEy$_{\rho 2\zeta}^{5\text{B}}$",
    BOTH,
    "rho2zeta with KDEy",
    inner="KDEy",
    **_Q2C,
)

_A2C = {"bins": 6, "binning": "isometric"}
_adapted(
    "ATC_a2c_6B",
    "calibration",
    CAPToCalibration,
    r"ATC$_{\alpha 2\zeta}^{6\text{B}}$",
    BOTH,
    "alpha2zeta with ATC",
    inner="ATC",
    **_A2C,
)
_adapted(
    "DoC_a2c_6B",
    "calibration",
    CAPToCalibration,
    r"DoC$_{\alpha 2\zeta}^{6\text{B}}$",
    BOTH,
    "alpha2zeta with DoC",
    shift_defaults=DOC_INNER,
    inner="DoC",
    **_A2C,
)
_adapted(
    "LEAP_a2c_6B",
    "calibration",
    CAPToCalibration,
    r"LEAP$_{\alpha 2\zeta}^{6\text{B}}$",
    BOTH,
    "alpha2zeta with LEAP (KDEy)",
    inner="LEAP",
    **_A2C,
)
_adapted(
    "LEAP_PCC_a2c_6B",
    "calibration",
    CAPToCalibration,
    r"LEAP$_{\alpha 2\zeta}^{\text{PCC}-6\text{B}}$",
    CS,
    "alpha2zeta with LEAP (PCC)",
    inner="LEAP_PCC",
    **_A2C,
)

# ---- quantification: α2ρ (§3.4), ζ2ρ with the P convention in both shifts (§3.2), EMQ^LasCal (§3.3)
_adapted(
    "ATC_a2q",
    "quantification",
    CAPToQuantification,
    r"ATC$_{\alpha 2 \rho}$",
    BOTH,
    "alpha2rho with ATC",
    inner="ATC",
)
_adapted(
    "DoC_a2q",
    "quantification",
    CAPToQuantification,
    r"DoC$_{\alpha 2 \rho}$",
    BOTH,
    "alpha2rho with DoC",
    shift_defaults=DOC_INNER,
    inner="DoC",
)
_adapted(
    "LEAP_a2q",
    "quantification",
    CAPToQuantification,
    r"LEAP$_{\alpha 2 \rho}$",
    BOTH,
    "alpha2rho with LEAP (KDEy)",
    inner="LEAP",
)
_adapted(
    "LEAP_PCC_a2q",
    "quantification",
    CAPToQuantification,
    r"LEAP$_{\alpha 2 \rho}^{\text{PCC}}$",
    CS,
    "alpha2rho with LEAP (PCC)",
    inner="LEAP_PCC",
)

_P = {"logits": "P"}
_adapted(
    "CPCS_c2q",
    "quantification",
    CalibrationToQuantification,
    r"CPCS$_{\zeta 2 \rho}$",
    BOTH,
    "zeta2rho with CPCS (P)",
    inner="CPCS",
    inner_params=_P,
)
_adapted(
    "TransCal_c2q",
    "quantification",
    CalibrationToQuantification,
    r"TransCal$_{\zeta 2 \rho}$",
    BOTH,
    "zeta2rho with TransCal (P)",
    inner="TransCal",
    inner_params=_P,
)
_adapted(
    "LasCal_c2q",
    "quantification",
    CalibrationToQuantification,
    r"LasCal$_{\zeta 2 \rho}$",
    BOTH,
    "zeta2rho with LasCal (P)",
    inner="LasCal",
    inner_params=_P,
)
_adapted(
    "Head2Tail_c2q",
    "quantification",
    CalibrationToQuantification,
    r"Head2Tail$_{\zeta 2 \rho}$",
    LS,
    "zeta2rho with Head2Tail (P)",
    inner="Head2Tail",
    inner_params=_P,
)
_adapted(
    "EMQ_LasCal",
    "quantification",
    CalibratedEMQ,
    r"EMQ$^{\text{LasCal}}$",
    LS,
    "EM on LasCal (S) posteriors, validation prior",
    inner="LasCal",
    inner_params={"logits": "S"},
    train_prevalence="validation",
)

# ---- CAP: ρ2α (§4.3; EMQ's prior = its partition's label prevalence), ζ2α (§4.2)
_VAL_PRIOR = {"train_prevalence": "validation"}
_adapted(
    "PCC_q2a",
    "cap",
    QuantificationToCAP,
    r"PCC$_{\rho 2 \alpha}$",
    CS,
    "rho2alpha with PCC",
    inner="PCC",
)
_adapted(
    "PACC_q2a",
    "cap",
    QuantificationToCAP,
    r"PACC$_{\rho 2 \alpha}$",
    BOTH,
    "rho2alpha with PACC",
    inner="PACC",
)
_adapted(
    "EMQ_q2a",
    "cap",
    QuantificationToCAP,
    r"EMQ$_{\rho 2 \alpha}$",
    BOTH,
    "rho2alpha with EMQ (partition prior)",
    inner="EMQ",
    inner_params=_VAL_PRIOR,
)
_adapted(
    "EMQ_BCTS_q2a",
    "cap",
    QuantificationToCAP,
    r"EMQ$_{\rho 2 \alpha}^{\text{BCTS}}$",
    CS,
    "rho2alpha with EMQ-BCTS",
    inner="EMQ_BCTS",
    inner_params={"fallback_prevalence": "validation"},
)
_adapted(
    "KDEy_q2a",
    "cap",
    QuantificationToCAP,
    r"KDEy$_{\rho 2 \alpha}$",
    BOTH,
    "rho2alpha with KDEy",
    inner="KDEy",
)

_adapted(
    "CPCS_c2a",
    "cap",
    CalibrationToCAP,
    r"CPCS$_{\zeta 2 \alpha}$",
    BOTH,
    "zeta2alpha with CPCS (S)",
    inner="CPCS",
    inner_params={"logits": "S"},
)
_adapted(
    "TransCal_c2a",
    "cap",
    CalibrationToCAP,
    r"TransCal$_{\zeta 2 \alpha}$",
    BOTH,
    "zeta2alpha with TransCal (S)",
    inner="TransCal",
    inner_params={"logits": "S"},
)
_adapted(
    "LasCal_c2a",
    "cap",
    CalibrationToCAP,
    r"LasCal$_{\zeta 2 \alpha}$",
    BOTH,
    "zeta2alpha with LasCal (P)",
    inner="LasCal",
    inner_params={"logits": "P"},
)
_adapted(
    "DMCal_c2a",
    "cap",
    CalibrationToCAP,
    r"DMCal$_{\zeta 2 \alpha}$",
    BOTH,
    "zeta2alpha with DMCal (10 bins)",
    inner="DMCal",
    inner_params={"n_bins": 10},
)

__all__ = [
    "CAPToCalibration",
    "CAPToQuantification",
    "CalibratedEMQ",
    "CalibrationToCAP",
    "CalibrationToQuantification",
    "QuantificationToCAP",
    "QuantificationToCalibration",
]
