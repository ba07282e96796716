r"""The six adaptations between tasks (paper §4) and EM on calibrated posteriors, as a table.

Every registered method gets the adaptations its class lists in ``adaptations`` (``None``: every kind
its task has, see :data:`KINDS`): a method of another task, named ``<inner>_<suffix>``, that wraps it.
A new method, built in or from a plugin, thereby appears in the other tasks' tables for free, with
the inner method's own defaults and shifts. The paper's adapted columns state their inner parameters
(logit convention, EMQ prior, the shifts of each table) in :data:`PAPER`; each is checked against the
paper's column list in ``docs/methods.md``.

Inner methods are named through the registry and built only when an adapted method is fitted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from unishift.methods.adapt.to_calibration import CAPToCalibration, QuantificationToCalibration
from unishift.methods.adapt.to_cap import CalibrationToCAP, QuantificationToCAP
from unishift.methods.adapt.to_quantification import (
    CalibratedEMQ,
    CalibrationToQuantification,
    CAPToQuantification,
)


@dataclass(frozen=True)
class Kind:
    """One adaptation: from ``source`` task to ``target`` task through ``adapter``."""

    source: str
    target: str
    adapter: type
    suffix: str  # the adapted name is <inner>_<suffix>, except for a "prefix" kind
    subscript: str  # LaTeX subscript of the display name
    superscript: str = ""
    words: str = ""
    defaults: dict[str, Any] = field(default_factory=dict)
    prefix: bool = False  # name EMQ_<inner>, display EMQ$^{inner}$
    automatic: bool = True  # given to a method whose class leaves ``adaptations`` at None


_Q2C = {"bins": 5, "binning": "isometric", "abscissa": "bin_mean"}  # docs/methods.md §2.11
_A2C = {"bins": 6, "binning": "isometric"}  # docs/methods.md §2.12

KINDS = {
    "q2c": Kind("quantification", "calibration", QuantificationToCalibration, "q2c_5B",
                r"\rho 2\zeta", r"5\text{B}", "rho2zeta", _Q2C),
    "a2c": Kind("cap", "calibration", CAPToCalibration, "a2c_6B",
                r"\alpha 2\zeta", r"6\text{B}", "alpha2zeta", _A2C),
    "a2q": Kind("cap", "quantification", CAPToQuantification, "a2q", r"\alpha 2 \rho",
                words="alpha2rho"),
    "c2q": Kind("calibration", "quantification", CalibrationToQuantification, "c2q",
                r"\zeta 2 \rho", words="zeta2rho"),
    "q2a": Kind("quantification", "cap", QuantificationToCAP, "q2a", r"\rho 2 \alpha",
                words="rho2alpha"),
    "c2a": Kind("calibration", "cap", CalibrationToCAP, "c2a", r"\zeta 2 \alpha",
                words="zeta2alpha"),
    "emq": Kind("calibration", "quantification", CalibratedEMQ, "", "", words="EM on",
                defaults={"train_prevalence": "validation"}, prefix=True, automatic=False),
}  # fmt: skip

BOTH, CS, LS = ("label", "covariate"), ("covariate",), ("label",)


@dataclass(frozen=True)
class Row:
    """How one paper column configures its adaptation (what differs from the inner's defaults)."""

    shifts: tuple[str, ...] | None = None  # None: the inner method's shifts
    inner_params: dict[str, Any] | None = None  # None: the inner's own per-shift defaults
    display: str | None = None
    note: str = ""


_P, _S = {"logits": "P"}, {"logits": "S"}
_VALIDATION_PRIOR = {"train_prevalence": "validation"}

# (kind, inner) -> the paper's configuration (docs/methods.md §1.1-1.6, §2.11, §2.12, §3.2-3.4, §4.2, §4.3).
# The paper's other adapted columns (ATC, DoC, LEAP, LEAP_PCC, PACC, KDEy adaptations) use the
# inner method's own defaults and shifts: DoC inside an adapter draws its validation samples like
# the DoC column (UPP / NPP, docs/protocols.md §4).
PAPER = {
    ("q2c", "PCC"): Row(CS, {}, r"$\text{PCC}^{5\text{B}}_{\rho 2\zeta}$"),
    ("q2c", "EMQ"): Row(BOTH, _VALIDATION_PRIOR, note="validation prior"),
    ("q2a", "PCC"): Row(CS, {}),
    ("q2a", "EMQ"): Row(BOTH, _VALIDATION_PRIOR, note="partition prior"),
    ("q2a", "EMQ_BCTS"): Row(CS, {"fallback_prevalence": "validation"}),
    ("c2q", "CPCS"): Row(BOTH, _P, note="P"),
    ("c2q", "TransCal"): Row(BOTH, _P, note="P"),
    ("c2q", "LasCal"): Row(BOTH, _P, note="P"),
    ("c2q", "Head2Tail"): Row(LS, _P, note="P"),
    ("c2a", "CPCS"): Row(BOTH, _S, note="S"),
    ("c2a", "TransCal"): Row(BOTH, _S, note="S"),
    ("c2a", "LasCal"): Row(BOTH, _P, note="P"),
    ("c2a", "DMCal"): Row(BOTH, {"n_bins": 10}, note="10 bins"),
    ("emq", "LasCal"): Row(LS, _S, note="S posteriors, validation prior"),
}


def adapted_name(kind: str, inner: str) -> str:
    spec = KINDS[kind]
    return f"EMQ_{inner}" if spec.prefix else f"{inner}_{spec.suffix}"


def adapted_display(kind: str, inner_display: str) -> str:
    """The inner's display with the adaptation's sub- and superscripts; an inner superscript
    (``LEAP$^{\\text{PCC}}$``) goes first: ``LEAP$_{\\alpha 2\\zeta}^{\\text{PCC}-6\\text{B}}$``."""
    spec = KINDS[kind]
    if spec.prefix:
        return rf"EMQ$^{{\text{{{inner_display}}}}}$"
    match = re.fullmatch(r"([^$]*)\$\^\{(.*)\}\$", inner_display)
    base, inner_sup = (match.group(1), match.group(2)) if match else (inner_display, "")
    superscript = "-".join(s for s in (inner_sup, spec.superscript) if s)
    scripts = f"_{{{spec.subscript}}}" + (f"^{{{superscript}}}" if superscript else "")
    if not match and base.endswith("$"):  # a display that ends in math mode: stay in it
        return f"{base[:-1]}{scripts}$"
    return f"{base}${scripts}$"


def kinds_of(method_class: type, task: str) -> tuple[str, ...]:
    declared = getattr(method_class, "adaptations", None)
    if declared is None:
        return tuple(k for k, spec in KINDS.items() if spec.source == task and spec.automatic)
    unknown = [k for k in declared if k not in KINDS or KINDS[k].source != task]
    if unknown:
        raise ValueError(
            f"{method_class.__qualname__} lists adaptations {unknown}; a {task} method has "
            f"{[k for k, s in KINDS.items() if s.source == task]}"
        )
    return tuple(declared)


def derived_adaptations(specs) -> list:
    """The registry entries of the adaptations of the given (non-adapted) entries."""
    from unishift.registry import MethodSpec

    derived = []
    for inner in specs:
        for kind in kinds_of(inner.factory, inner.task):
            spec = KINDS[kind]
            row = PAPER.get((kind, inner.name), Row())
            defaults = {"inner": inner.name, **spec.defaults}
            shift_defaults = {}
            if row.inner_params is None:
                shift_defaults = {
                    shift: {"inner_params": dict(params)}
                    for shift, params in inner.shift_defaults.items()
                    if shift in (row.shifts or inner.shifts)
                }
            elif row.inner_params:
                defaults["inner_params"] = dict(row.inner_params)
            description = f"{spec.words} with {inner.name}" + (f" ({row.note})" if row.note else "")
            derived.append(
                MethodSpec(
                    adapted_name(kind, inner.name),
                    spec.target,
                    "adapted",
                    spec.adapter,
                    row.display or adapted_display(kind, inner.display),
                    shifts=tuple(row.shifts or inner.shifts),
                    defaults=defaults,
                    shift_defaults=shift_defaults,
                    description=description,
                )
            )
    unused = set(PAPER) - {(k, s.name) for s in specs for k in kinds_of(s.factory, s.task)}
    if unused:
        raise ValueError(f"adaptation table rows {sorted(unused)} match no registered method")
    return derived


__all__ = [
    "KINDS",
    "PAPER",
    "CAPToCalibration",
    "CAPToQuantification",
    "CalibratedEMQ",
    "CalibrationToCAP",
    "CalibrationToQuantification",
    "QuantificationToCAP",
    "QuantificationToCalibration",
    "adapted_display",
    "adapted_name",
    "derived_adaptations",
]
