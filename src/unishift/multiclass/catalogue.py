"""Every multiclass method by (task, name), with what a registry needs to list it.

Multiclass methods are plugins of the same kind as the binary ones (docs/methods.md, "Adding a
method"): a method is one class in one file of ``unishift.multiclass.{calibration,quantification,cap}``
or of an installed plugin, describing itself in class attributes (:func:`describe`,
docs/multiclass.md §6); the catalogue finds it by scanning those packages and the plugin sources of
the binary registry (the ``unishift.methods`` entry points, ``UNISHIFT_PLUGINS`` / the ``plugins:``
config key). A :class:`MulticlassMethodSpec` carries the same fields as the binary registry's
``MethodSpec`` plus the regime, the assumption the method's guarantee needs, the calibration notion
it targets and the binary method it reproduces for two classes. The adapted methods are listed in
the table below. Adapted methods are named like the binary tables'
columns (``<inner>_<q2a|c2q|...>``); the binned ρ2ζ / α2ζ use 3 confidence bins per predicted class
(suffix ``_3B``).

``BINARY_ONLY`` lists the binary table columns that have no multiclass form here, with the reason; a
config asking for one of them in the multiclass branch must be rejected before any job runs.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from unishift import registry
from unishift.multiclass import adapt
from unishift.multiclass.base import MulticlassMethod, describe

# Every module of these packages is scanned for multiclass method classes (as the binary registry
# scans unishift.methods.*): adding a method is adding a file. Installed plugins (the entry-point
# group unishift.methods, UNISHIFT_PLUGINS / the plugins: config key) are scanned too.
METHOD_PACKAGES = (
    "unishift.multiclass.calibration",
    "unishift.multiclass.quantification",
    "unishift.multiclass.cap",
)


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

    @classmethod
    def of(cls, method_class: type[MulticlassMethod]) -> MulticlassMethodSpec:
        """The entry a multiclass method class describes in its attributes."""
        info = describe(method_class)
        info.pop("regime")
        return cls(factory=method_class, **info)


def declared_methods(module: ModuleType) -> list[type[MulticlassMethod]]:
    """The multiclass method classes a module defines that set their own ``name``, in order."""
    return registry.declared_classes(module, MulticlassMethod)


def _plugin_classes(loaded: Any, origin: str) -> list[type[MulticlassMethod]]:
    """The multiclass method classes a plugin provides (binary ones are the registry's)."""
    if isinstance(loaded, ModuleType):
        return declared_methods(loaded)
    if inspect.isclass(loaded):
        return [loaded] if issubclass(loaded, MulticlassMethod) else []
    if isinstance(loaded, Iterable):
        return [cls for item in loaded for cls in _plugin_classes(item, origin)]
    raise TypeError(f"plugin {origin} gave {loaded!r}: expected a module or a method class")


def scanned_classes() -> list[type[MulticlassMethod]]:
    """The method classes of the multiclass packages, then those of the installed plugins."""
    found = [
        cls
        for package in METHOD_PACKAGES
        for module in registry.package_modules(package)
        for cls in declared_methods(importlib.import_module(module))
    ]
    for loaded, origin in registry.plugin_objects():
        found += [cls for cls in _plugin_classes(loaded, origin) if cls not in found]
    return found


# The adapted methods: built from the table below when this module is imported; the method
# classes join them when the catalogue is first used (and again after a plugin change).
_ADAPTED: dict[tuple[str, str], MulticlassMethodSpec] = {}
_CATALOGUE: dict[tuple[str, str], MulticlassMethodSpec] = {}
_scanned_for: tuple | None = None


def _add(spec: MulticlassMethodSpec, into: dict | None = None) -> None:
    into = _ADAPTED if into is None else into
    key = (spec.task, spec.name)
    if key in into:
        raise ValueError(f"multiclass method {spec.name!r} listed twice for task {spec.task!r}")
    into[key] = spec


def _catalogue() -> dict[tuple[str, str], MulticlassMethodSpec]:
    """Every multiclass method: the scanned classes, then the adapted methods. Scanned again when
    ``UNISHIFT_PLUGINS`` changed or the registry was reloaded (a plugin installed)."""
    global _scanned_for
    state = (tuple(registry.plugin_modules()), registry.scans)
    if _scanned_for != state:
        built: dict[tuple[str, str], MulticlassMethodSpec] = {}
        for cls in scanned_classes():
            _add(MulticlassMethodSpec.of(cls), built)
        for spec in _ADAPTED.values():
            _add(spec, built)
        _CATALOGUE.clear()
        _CATALOGUE.update(built)
        _scanned_for = state
    return _CATALOGUE


BOTH, LS, CS = ("label", "covariate"), ("label",), ("covariate",)

# DoC draws its validation samples by UPP under label shift and NPP under covariate shift, also
# inside the adapters (the binary tables' rule, docs/protocols.md §4; the class says so itself).
DOC_PROTOCOL = {"label": {"protocol": "upp"}, "covariate": {"protocol": "npp"}}
DOC_INNER = {shift: {"inner_params": params} for shift, params in DOC_PROTOCOL.items()}


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

# ---- adaptations of EMQ_TransCal's, DMCal's, LEAP_PCC's, LasCal's and Head2Tail's (their classes are
# found by the scan)
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
    catalogue = _catalogue()
    key = (task, name)
    if key in catalogue:
        return catalogue[key]
    if name in BINARY_ONLY:
        raise ValueError(f"{task} method {name!r} is binary-only in unishift: {BINARY_ONLY[name]}")
    valid = sorted(n for t, n in catalogue if t == task)
    raise ValueError(f"unknown multiclass {task} method {name!r}; valid ones are {valid}")


def method_info(task: str, names) -> dict[str, tuple[str, str]]:
    """name -> (display, group): what the binary reporting code needs to draw a multiclass column."""
    return {name: (get_method(task, name).display, get_method(task, name).group) for name in names}


def method_names(task: str) -> list[str]:
    return [name for t, name in _catalogue() if t == task]


def all_methods() -> list[MulticlassMethodSpec]:
    return list(_catalogue().values())


__all__ = [
    "ADAPTED_WITH_BINARY_TWIN",
    "BINARY_ONLY",
    "METHOD_PACKAGES",
    "MulticlassMethodSpec",
    "all_methods",
    "declared_methods",
    "get_method",
    "method_info",
    "method_names",
]
