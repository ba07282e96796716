"""One registry mapping each method name, spelled as in the paper's table columns, to its constructor.

A method is identified by ``(task, name)``: the same name can denote a calibrator and a quantifier
(e.g. ``EMQ``). Each entry also knows its column group (baseline / reference / adapted), the shifts it
runs under, its LaTeX display name and its per-shift default parameters (e.g. the L / S / P logit
convention that each of the paper's tables uses). Method modules register themselves on import; the
list of modules to import is ``METHOD_MODULES``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from unishift.methods.base import SHIFTS, TASKS, Method

GROUPS = ("baseline", "reference", "adapted")

METHOD_MODULES = (
    "unishift.methods.calibration",
    "unishift.methods.quantification",
    "unishift.methods.cap",
    "unishift.methods.adapt",
)


@dataclass(frozen=True)
class MethodSpec:
    name: str
    task: str
    group: str
    factory: Callable[..., Method]
    display: str
    shifts: tuple[str, ...] = SHIFTS
    defaults: dict[str, Any] = field(default_factory=dict)
    shift_defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    description: str = ""

    def params(self, shift: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        params = dict(self.defaults)
        params.update(self.shift_defaults.get(shift, {}))
        params.update(overrides or {})
        return params

    def build(self, shift: str, overrides: dict[str, Any] | None = None) -> Method:
        return self.factory(**self.params(shift, overrides))


_REGISTRY: dict[tuple[str, str], MethodSpec] = {}
_loaded = False


def register(spec: MethodSpec) -> MethodSpec:
    if spec.task not in TASKS:
        raise ValueError(f"task {spec.task!r} is not one of {TASKS}")
    if spec.group not in GROUPS:
        raise ValueError(f"group {spec.group!r} is not one of {GROUPS}")
    unknown = set(spec.shifts) - set(SHIFTS)
    if unknown:
        raise ValueError(f"shifts {sorted(unknown)} are not among {SHIFTS}")
    key = (spec.task, spec.name)
    if key in _REGISTRY and _REGISTRY[key] != spec:
        raise ValueError(f"method {spec.name!r} is registered twice for task {spec.task!r}")
    _REGISTRY[key] = spec
    return spec


def _load_all() -> None:
    global _loaded
    if not _loaded:
        for module in METHOD_MODULES:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as err:
                # A method package that does not exist yet simply registers nothing; any other
                # import failure inside an existing package is a real error.
                if err.name != module:
                    raise
        _loaded = True


def all_methods() -> dict[tuple[str, str], MethodSpec]:
    _load_all()
    return dict(_REGISTRY)


def method_names(task: str, shift: str | None = None) -> list[str]:
    return sorted(
        spec.name
        for (t, _), spec in all_methods().items()
        if t == task and (shift is None or shift in spec.shifts)
    )


def get_method(task: str, name: str, shift: str | None = None) -> MethodSpec:
    specs = all_methods()
    if (task, name) not in specs:
        raise KeyError(
            f"unknown {task} method {name!r}; valid {task} methods are {method_names(task, shift)}"
        )
    spec = specs[(task, name)]
    if shift is not None and shift not in spec.shifts:
        raise KeyError(
            f"{task} method {name!r} does not run under {shift} shift; "
            f"valid ones are {method_names(task, shift)}"
        )
    return spec
