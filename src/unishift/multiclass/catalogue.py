"""Every multiclass method by (task, name), with what a registry needs to list it.

This is the groundwork for the one-file-method registry (docs/multiclass.md §6 and the design note):
a :class:`MulticlassMethodSpec` carries the same fields as the binary registry's ``MethodSpec`` plus
the regime, the assumption the method's guarantee needs, the calibration notion it targets and the
binary method it reproduces for two classes. Adapted methods are named like the binary tables'
columns (``<inner>_<q2a|c2q|...>``); the binned ρ2ζ / α2ζ use 3 confidence bins per predicted class
(suffix ``_3B``).

``BINARY_ONLY`` lists the binary table columns that have no multiclass form here, with the reason; a
config asking for one of them in the multiclass branch must be rejected before any job runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from unishift.multiclass import adapt, calibration, cap, quantification
from unishift.multiclass.base import describe


@dataclass(frozen=True)
class MulticlassMethodSpec:
    name: str
    task: str
    group: str
    factory: Callable[..., Any]
    display: str
    shifts: tuple[str, ...] = ("label", "covariate")
    defaults: dict[str, Any] = field(default_factory=dict)
    shift_defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    assumption: str = "none"
    calibration_notion: str | None = None
    binary_name: str | None = None
    description: str = ""
    regime: str = "multiclass"

    def params(self, shift: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        return {**self.defaults, **self.shift_defaults.get(shift, {}), **(overrides or {})}

    def build(self, shift: str, overrides: dict[str, Any] | None = None):
        return self.factory(**self.params(shift, overrides))


_CATALOGUE: dict[tuple[str, str], MulticlassMethodSpec] = {}


def _add(spec: MulticlassMethodSpec) -> None:
    key = (spec.task, spec.name)
    if key in _CATALOGUE:
        raise ValueError(f"multiclass method {spec.name!r} listed twice for task {spec.task!r}")
    _CATALOGUE[key] = spec


def _from_class(method_class, **overrides) -> None:
    info = describe(method_class)
    info.pop("regime")
    info.update(overrides)
    _add(MulticlassMethodSpec(factory=method_class, **info))


BOTH, LS, CS = ("label", "covariate"), ("label",), ("covariate",)

for _cls in (
    calibration.TemperatureScaling,
    calibration.BiasCorrectedTemperatureScaling,
    calibration.VectorScaling,
    calibration.CPCS,
    calibration.TransCal,
    calibration.EMQCalibrator,
    calibration.EMQBCTSCalibrator,
    calibration.PacCalSigma,
    calibration.DMCal,
    quantification.CC,
    quantification.PCC,
    quantification.ACC,
    quantification.PACC,
    quantification.EMQ,
    quantification.EMQBCTS,
    quantification.KDEy,
    cap.Naive,
    cap.ATC,
    cap.LEAP,
    cap.LEAPPCC,
):
    _from_class(_cls)

# DoC draws its validation samples by UPP under label shift and NPP under covariate shift, also
# inside the adapters (the binary tables' rule, protocols.md §4).
DOC_PROTOCOL = {"label": {"protocol": "upp"}, "covariate": {"protocol": "npp"}}
DOC_INNER = {shift: {"inner_params": params} for shift, params in DOC_PROTOCOL.items()}
_from_class(cap.DoC, shift_defaults=DOC_PROTOCOL)


def _adapted(
    name,
    task,
    factory,
    display,
    description,
    shifts=BOTH,
    notion=None,
    shift_defaults=None,
    **defaults,
):
    _add(
        MulticlassMethodSpec(
            name=name,
            task=task,
            group="adapted",
            factory=factory,
            display=display,
            shifts=shifts,
            defaults=defaults,
            shift_defaults=shift_defaults or {},
            assumption="none",
            calibration_notion=notion,
            binary_name=name if name in ADAPTED_WITH_BINARY_TWIN else None,
            description=description,
        )
    )


# adapted names whose k = 2 numbers are the binary column's (tests/test_multiclass_binary_invariant.py)
ADAPTED_WITH_BINARY_TWIN = {
    "CPCS_c2q",
    "TransCal_c2q",
    "ATC_a2q",
    "DoC_a2q",
    "LEAP_a2q",
    "PCC_q2a",
    "PACC_q2a",
    "EMQ_q2a",
    "EMQ_BCTS_q2a",
    "KDEy_q2a",
    "CPCS_c2a",
    "TransCal_c2a",
}

# ---- calibration: ρ2ζ and α2ζ on 3 top-label confidence bins per predicted class
for _inner in ("PCC", "PACC", "EMQ", "KDEy"):
    _adapted(
        f"{_inner}_q2c_3B",
        "calibration",
        adapt.QuantificationToCalibration,
        rf"{_inner}$_{{\rho 2\zeta}}^{{3\text{{B}}}}$",
        f"rho2zeta with {_inner}, 3 top-label bins per predicted class",
        shifts=CS if _inner == "PCC" else BOTH,
        notion="top-label",
        inner=_inner,
        inner_params={"train_prevalence": "validation"} if _inner == "EMQ" else None,
        bins=3,
    )
for _inner in ("ATC", "DoC", "LEAP"):
    _adapted(
        f"{_inner}_a2c_3B",
        "calibration",
        adapt.CAPToCalibration,
        rf"{_inner}$_{{\alpha 2\zeta}}^{{3\text{{B}}}}$",
        f"alpha2zeta with {_inner}, 3 top-label bins per predicted class",
        notion="top-label",
        shift_defaults=DOC_INNER if _inner == "DoC" else None,
        inner=_inner,
        bins=3,
    )

# ---- quantification: α2ρ, ζ2ρ, EM on calibrated posteriors
for _inner in ("ATC", "DoC", "LEAP"):
    _adapted(
        f"{_inner}_a2q",
        "quantification",
        adapt.CAPToQuantification,
        rf"{_inner}$_{{\alpha 2 \rho}}$",
        f"alpha2rho with {_inner}, errors split like validation's",
        shift_defaults=DOC_INNER if _inner == "DoC" else None,
        inner=_inner,
    )
for _inner in ("CPCS", "TransCal", "BCTS"):
    _adapted(
        f"{_inner}_c2q",
        "quantification",
        adapt.CalibrationToQuantification,
        rf"{_inner}$_{{\zeta 2 \rho}}$",
        f"zeta2rho with {_inner}",
        inner=_inner,
        inner_params={"logits": "P"} if _inner in ("CPCS", "TransCal") else None,
    )
_adapted(
    "EMQ_BCTS_c",
    "quantification",
    adapt.CalibratedEMQ,
    r"EMQ$^{\text{BCTS}}_{\zeta}$",
    "EM on BCTS posteriors from the validation prior",
    shifts=LS,
    inner="BCTS",
    train_prevalence="validation",
)

# ---- CAP: ρ2α, ζ2α
for _inner in ("PCC", "PACC", "EMQ", "EMQ_BCTS", "KDEy"):
    params = {"train_prevalence": "validation"} if _inner == "EMQ" else None
    if _inner == "EMQ_BCTS":
        params = {"fallback_prevalence": "validation"}
    _adapted(
        f"{_inner}_q2a",
        "cap",
        adapt.QuantificationToCAP,
        rf"{_inner}$_{{\rho 2 \alpha}}$",
        f"rho2alpha with {_inner}",
        shifts=CS if _inner in ("PCC", "EMQ_BCTS") else BOTH,
        inner=_inner,
        inner_params=params,
    )
for _inner in ("CPCS", "TransCal", "BCTS"):
    _adapted(
        f"{_inner}_c2a",
        "cap",
        adapt.CalibrationToCAP,
        rf"{_inner}$_{{\zeta 2 \alpha}}$",
        f"zeta2alpha with {_inner}",
        inner=_inner,
        inner_params={"logits": "S"} if _inner in ("CPCS", "TransCal") else None,
    )

# ---- added columns (each self-contained: its class file, its catalogue line)
from unishift.multiclass.calibration.emq_transcal import EMQTransCal  # noqa: E402

_from_class(EMQTransCal)
_adapted(
    "DMCal_c2a",
    "cap",
    adapt.CalibrationToCAP,
    r"DMCal$_{\zeta 2 \alpha}$",
    "zeta2alpha with DMCal (10 bins, the binary column's)",
    inner="DMCal",
    inner_params={"n_bins": 10},
)
ADAPTED_WITH_BINARY_TWIN.add("LEAP_PCC_a2q")
_adapted(
    "LEAP_PCC_a2q",
    "quantification",
    adapt.CAPToQuantification,
    r"LEAP$_{\alpha 2 \rho}^{\text{PCC}}$",
    "alpha2rho with LEAP_PCC, errors split like validation's",
    shifts=CS,
    inner="LEAP_PCC",
)

from unishift.multiclass.calibration.lascal import EMQLasCal, LasCal  # noqa: E402

_from_class(LasCal, shift_defaults={"covariate": {"logits": "L"}})
_from_class(EMQLasCal)
ADAPTED_WITH_BINARY_TWIN.update({"LasCal_c2q", "LasCal_c2a", "EMQ_LasCal"})
_adapted(
    "LasCal_c2q",
    "quantification",
    adapt.CalibrationToQuantification,
    r"LasCal$_{\zeta 2 \rho}$",
    "zeta2rho with LasCal (S-logits)",
    inner="LasCal",
)
_adapted(
    "LasCal_c2a",
    "cap",
    adapt.CalibrationToCAP,
    r"LasCal$_{\zeta 2 \alpha}$",
    "zeta2alpha with LasCal (S-logits)",
    inner="LasCal",
)
_adapted(
    "EMQ_LasCal",
    "quantification",
    adapt.CalibratedEMQ,
    r"EMQ$^{\text{LasCal}}$",
    "EM on LasCal posteriors (S-logits) from the validation prior",
    shifts=LS,
    inner="LasCal",
    train_prevalence="validation",
)

from unishift.multiclass.calibration.head2tail import Head2Tail  # noqa: E402

_from_class(Head2Tail)
ADAPTED_WITH_BINARY_TWIN.add("Head2Tail_c2q")
_adapted(
    "Head2Tail_c2q",
    "quantification",
    adapt.CalibrationToQuantification,
    r"Head2Tail$_{\zeta 2 \rho}$",
    "zeta2rho with Head2Tail (S-logits)",
    shifts=LS,
    inner="Head2Tail",
)

# The binary tables' columns without a multiclass form here (docs/multiclass.md §4).
BINARY_ONLY: dict[str, str] = {
    "Platt": "Platt scaling is a one-dimensional sigmoid on p_1; its multiclass analogues are TS, "
    "BCTS and VS",
    "PCC_q2c_5B": "5 bins on p_1 straddle the decision threshold; the multiclass form bins the "
    "top-label confidence per predicted class (PCC_q2c_3B)",
    "PACC_q2c_5B": "see PCC_q2c_5B (PACC_q2c_3B)",
    "EMQ_q2c_5B": "see PCC_q2c_5B (EMQ_q2c_3B)",
    "KDEy_q2c_5B": "see PCC_q2c_5B (KDEy_q2c_3B)",
    "ATC_a2c_6B": "6 bins on p_1 are 3 confidence bins per predicted class: ATC_a2c_3B",
    "DoC_a2c_6B": "see ATC_a2c_6B (DoC_a2c_3B)",
    "LEAP_a2c_6B": "see ATC_a2c_6B (LEAP_a2c_3B)",
    "LEAP_PCC_a2c_6B": "see ATC_a2c_6B",
}


def get_method(task: str, name: str) -> MulticlassMethodSpec:
    key = (task, name)
    if key in _CATALOGUE:
        return _CATALOGUE[key]
    if name in BINARY_ONLY:
        raise ValueError(f"{task} method {name!r} is binary-only in unishift: {BINARY_ONLY[name]}")
    valid = sorted(n for t, n in _CATALOGUE if t == task)
    raise ValueError(f"unknown multiclass {task} method {name!r}; valid ones are {valid}")


def method_info(task: str, names) -> dict[str, tuple[str, str]]:
    """name -> (display, group): what the binary reporting code needs to draw a multiclass column."""
    return {name: (get_method(task, name).display, get_method(task, name).group) for name in names}


def method_names(task: str) -> list[str]:
    return [name for t, name in _CATALOGUE if t == task]


def all_methods() -> list[MulticlassMethodSpec]:
    return list(_CATALOGUE.values())


__all__ = [
    "ADAPTED_WITH_BINARY_TWIN",
    "BINARY_ONLY",
    "MulticlassMethodSpec",
    "all_methods",
    "get_method",
    "method_info",
    "method_names",
]
