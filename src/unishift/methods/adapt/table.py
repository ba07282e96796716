"""The adaptations between tasks (the paper's Section 4, docs/multiclass.md §2) and EM on calibrated
posteriors, as one table for any number of classes; which kinds a method gets and what :data:`ROWS`
state: docs/methods.md, "Adding a method". Beside it, :mod:`unishift.methods.paper_settings` holds
the arguments the paper's tables give the methods themselves."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from unishift.methods.adapt.to_calibration import (
    CAPToCalibration,
    PositiveCAPToCalibration,
    PositiveQuantificationToCalibration,
    QuantificationToCalibration,
)
from unishift.methods.adapt.to_cap import CalibrationToCAP, QuantificationToCAP
from unishift.methods.adapt.to_quantification import (
    CalibratedEMQ,
    CalibrationToQuantification,
    CAPToQuantification,
)
from unishift.methods.spec import MethodSpec, constructor_defaults


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
    prefix: bool = False  # name EMQ_<inner>, display EMQ$^{inner}$
    automatic: bool = True  # given to a method whose class leaves ``adaptations`` at None

    @property
    def family(self) -> str:
        return self.suffix.split("_")[0] if self.suffix else "emq"


# The binning of each kind is its adapter's constructor defaults (docs/methods.md §2.11, §2.12;
# docs/multiclass.md §2.3, §2.6).
KINDS = {
    "q2c_5B": Kind("quantification", "calibration", PositiveQuantificationToCalibration,
                   "q2c_5B", r"\rho 2\zeta", r"5\text{B}", "rho2zeta"),
    "q2c_3B": Kind("quantification", "calibration", QuantificationToCalibration, "q2c_3B",
                   r"\rho 2\zeta", r"3\text{B}", "rho2zeta, 3 top-label bins per predicted class"),
    "a2c_6B": Kind("cap", "calibration", PositiveCAPToCalibration, "a2c_6B", r"\alpha 2\zeta",
                   r"6\text{B}", "alpha2zeta"),
    "a2c_3B": Kind("cap", "calibration", CAPToCalibration, "a2c_3B", r"\alpha 2\zeta",
                   r"3\text{B}", "alpha2zeta, 3 top-label bins per predicted class"),
    "a2q": Kind("cap", "quantification", CAPToQuantification, "a2q", r"\alpha 2 \rho",
                words="alpha2rho"),
    "c2q": Kind("calibration", "quantification", CalibrationToQuantification, "c2q",
                r"\zeta 2 \rho", words="zeta2rho"),
    "q2a": Kind("quantification", "cap", QuantificationToCAP, "q2a", r"\rho 2 \alpha",
                words="rho2alpha"),
    "c2a": Kind("calibration", "cap", CalibrationToCAP, "c2a", r"\zeta 2 \alpha",
                words="zeta2alpha"),
    "emq": Kind("calibration", "quantification", CalibratedEMQ, "", "", words="EM on",
                prefix=True, automatic=False),
}  # fmt: skip

BOTH, CS, LS = ("label", "covariate"), ("covariate",), ("label",)


@dataclass(frozen=True)
class Row:
    """How one paper column configures its adaptation (what differs from the inner's own);
    ``binary_inner_params`` replace ``inner_params`` for two classes."""

    shifts: tuple[str, ...] | None = None  # None: the inner method's shifts
    inner_params: dict[str, Any] | None = None
    binary_inner_params: dict[str, Any] | None = None
    display: str | None = None
    name: str | None = None
    note: str = ""


_P, _S = {"logits": "P"}, {"logits": "S"}
_VALIDATION_PRIOR = {"train_prevalence": "validation"}

# (kind or family, inner) -> the paper's configuration (docs/methods.md §1-§4; docs/multiclass.md
# §2, §4); a kind's row replaces its family's; other adapted columns use the inner's own.
ROWS = {
    ("q2c", "PCC"): Row(CS),
    ("q2c_5B", "PCC"): Row(CS, display=r"$\text{PCC}^{5\text{B}}_{\rho 2\zeta}$"),
    ("q2c", "EMQ"): Row(BOTH, _VALIDATION_PRIOR, note="validation prior"),
    ("q2a", "PCC"): Row(CS),
    ("q2a", "EMQ"): Row(BOTH, _VALIDATION_PRIOR, note="partition prior"),
    ("q2a", "EMQ_BCTS"): Row(CS, {"fallback_prevalence": "validation"}),
    ("c2q", "CPCS"): Row(BOTH, _P, note="P"),
    ("c2q", "TransCal"): Row(BOTH, _P, note="P"),
    ("c2q", "LasCal"): Row(BOTH, _S, _P, note="P; k classes S"),
    ("c2q", "Head2Tail"): Row(LS),
    ("c2a", "CPCS"): Row(BOTH, _S, note="S"),
    ("c2a", "TransCal"): Row(BOTH, _S, note="S"),
    ("c2a", "LasCal"): Row(BOTH, _S, _P, note="P; k classes S"),
    ("c2a", "DMCal"): Row(BOTH, {"n_bins": 10}, note="10 bins"),
    ("emq", "LasCal"): Row(LS, _S, note="S posteriors, validation prior"),
    ("emq", "BCTS"): Row(
        LS, name="EMQ_BCTS_c", display=r"EMQ$^{\text{BCTS}}_{\zeta}$", note="validation prior"
    ),
}


def row_of(kind: str, inner: str) -> Row:
    return ROWS.get((kind, inner)) or ROWS.get((KINDS[kind].family, inner)) or Row()


def adapted_name(kind: str, inner: str) -> str:
    spec = KINDS[kind]
    return row_of(kind, inner).name or (f"EMQ_{inner}" if spec.prefix else f"{inner}_{spec.suffix}")


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
    """The kinds a method class's ``adaptations`` name (families expanded, in table order)."""
    declared = getattr(method_class, "adaptations", None)
    of_task = [k for k, spec in KINDS.items() if spec.source == task]
    if declared is None:
        return tuple(k for k in of_task if KINDS[k].automatic)
    families = {KINDS[k].family for k in of_task}
    unknown = [d for d in declared if d not in of_task and d not in families]
    if unknown:
        raise ValueError(
            f"{method_class.__qualname__} lists adaptations {unknown}; a {task} method has the "
            f"kinds {of_task} (families {sorted(families)})"
        )
    return tuple(k for k in of_task if k in declared or KINDS[k].family in declared)


def adaptation_spec(kind: str, inner: MethodSpec) -> MethodSpec:
    """The registry entry of adaptation ``kind`` of the (non-adapted) entry ``inner``."""
    spec = KINDS[kind]
    row = row_of(kind, inner.name)
    shifts = tuple(row.shifts or inner.shifts)
    defaults = {
        **constructor_defaults(spec.adapter),
        "inner": inner.name,
        "inner_params": dict(row.inner_params) if row.inner_params is not None else None,
    }
    binary_defaults = {}
    if row.binary_inner_params is not None:
        binary_defaults = {s: {"inner_params": dict(row.binary_inner_params)} for s in shifts}
    binary_only = spec.adapter.binary_only
    if inner.binary_only and not binary_only:
        binary_only = f"its inner method {inner.name} is binary-only ({inner.binary_only})"
    note = f" ({row.note})" if row.note else ""
    return MethodSpec(
        name=adapted_name(kind, inner.name),
        task=spec.target,
        # a field method's adaptations stay with the field's columns, apart from the paper's
        group="field" if inner.group == "field" else "adapted",
        factory=spec.adapter,
        display=row.display or adapted_display(kind, inner.display),
        shifts=shifts,
        defaults=defaults,
        binary_defaults=binary_defaults,
        description=f"{spec.words} with {inner.name}{note}",
        binary_only=binary_only,
        assumption=spec.adapter.assumption,
        calibration_notion=getattr(spec.adapter, "calibration_notion", None),
        inner=inner,
    )


def derived_adaptations(specs) -> list[MethodSpec]:
    """The registry entries of the adaptations of the given (non-adapted) entries."""
    pairs = [(kind, inner) for inner in specs for kind in kinds_of(inner.factory, inner.task)]
    derived = [adaptation_spec(kind, inner) for kind, inner in pairs]
    used = {(kind, inner.name) for kind, inner in pairs}
    used |= {(KINDS[k].family, name) for k, name in used}
    unused = set(ROWS) - used
    if unused:
        raise ValueError(f"adaptation table rows {sorted(unused)} match no registered method")
    return derived
