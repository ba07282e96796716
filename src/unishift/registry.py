"""One registry mapping each method name, spelled as in the paper's table columns, to its class.

A method is identified by ``(task, name)``: the same name can denote a calibrator and a quantifier
(e.g. ``EMQ``). A method describes itself in class attributes (:class:`unishift.methods.base.Method`:
name, group, display name, shifts, per-shift defaults); the registry finds it by importing every
module of the packages in ``METHOD_PACKAGES``, the modules of the ``unishift.methods`` entry-point
group (installed plugins) and those named in ``UNISHIFT_PLUGINS`` (the workflow's ``plugins:`` key),
and registers each class that sets its own ``name``. The cross-task adaptations of every registered
method are then derived from the table in :mod:`unishift.methods.adapt` (docs/methods.md). A plugin
may also define multiclass method classes: :mod:`unishift.multiclass.catalogue` takes them from
the same sources (:func:`plugin_objects`).
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

from unishift.methods.base import SHIFTS, TASKS, Method

GROUPS = ("baseline", "reference", "adapted")

# Every module of these packages is scanned for method classes; adding a method is adding a file.
METHOD_PACKAGES = (
    "unishift.methods.calibration",
    "unishift.methods.quantification",
    "unishift.methods.cap",
)
# The package whose table derives the adaptations (it registers no class of its own).
ADAPTATION_PACKAGE = "unishift.methods.adapt"
METHOD_MODULES = (*METHOD_PACKAGES, ADAPTATION_PACKAGE)
ENTRY_POINT_GROUP = "unishift.methods"
PLUGINS_VARIABLE = "UNISHIFT_PLUGINS"


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

    @classmethod
    def of(cls, method_class: type[Method]) -> MethodSpec:
        """The entry a method class describes in its attributes."""
        return cls(
            name=method_class.name,
            task=method_class.task,
            group=method_class.group,
            factory=method_class,
            display=method_class.display or method_class.name,
            shifts=tuple(method_class.shifts),
            defaults=dict(method_class.defaults),
            shift_defaults={s: dict(d) for s, d in method_class.shift_defaults.items()},
            description=method_class.description,
        )


_REGISTRY: dict[tuple[str, str], MethodSpec] = {}
_loaded = False
# how many times reload() ran: the multiclass catalogue scans again when it changes
scans = 0


def register(spec: MethodSpec) -> MethodSpec:
    if spec.task not in TASKS:
        raise ValueError(f"task {spec.task!r} of method {spec.name!r} is not one of {TASKS}")
    if spec.group not in GROUPS:
        raise ValueError(f"group {spec.group!r} of method {spec.name!r} is not one of {GROUPS}")
    unknown = set(spec.shifts) - set(SHIFTS)
    if unknown:
        raise ValueError(f"shifts {sorted(unknown)} of {spec.name!r} are not among {SHIFTS}")
    for shift in spec.shift_defaults:
        if shift not in spec.shifts:
            raise ValueError(f"{spec.name!r} has defaults for {shift} shift, which it does not run")
    key = (spec.task, spec.name)
    if key in _REGISTRY and _REGISTRY[key] != spec:
        raise ValueError(f"method {spec.name!r} is registered twice for task {spec.task!r}")
    _REGISTRY[key] = spec
    return spec


def declared_classes(module: ModuleType, base: type) -> list[type]:
    """The subclasses of ``base`` a module defines that set their own ``name``, in definition order
    (the multiclass catalogue uses it with its own base class)."""
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, base)
        and value.__module__ == module.__name__
        and "name" in vars(value)
        and value.name
    ]


def declared_methods(module: ModuleType) -> list[type[Method]]:
    """The method classes a module defines that set their own ``name``, in definition order."""
    return declared_classes(module, Method)


def register_module(module: ModuleType | str) -> list[MethodSpec]:
    """Register every method class of a module (a module object or its import name)."""
    if isinstance(module, str):
        module = importlib.import_module(module)
    return [register(MethodSpec.of(cls)) for cls in declared_methods(module)]


def register_class(method_class: type[Method]) -> MethodSpec:
    if not (inspect.isclass(method_class) and issubclass(method_class, Method)):
        raise TypeError(f"{method_class!r} is not a unishift Method class")
    if not method_class.name:
        raise ValueError(f"method class {method_class.__qualname__} sets no name")
    return register(MethodSpec.of(method_class))


def package_modules(package: str) -> list[str]:
    """The modules (not sub-packages) of a package, by name."""
    root = importlib.import_module(package)
    return [
        info.name
        for info in sorted(pkgutil.iter_modules(root.__path__, f"{package}."), key=lambda i: i.name)
        if not info.ispkg
    ]


def plugin_modules() -> list[str]:
    """Plugin modules named in the ``UNISHIFT_PLUGINS`` environment variable (comma separated)."""
    return [
        name.strip() for name in os.environ.get(PLUGINS_VARIABLE, "").split(",") if name.strip()
    ]


def plugin_objects() -> list[tuple[Any, str]]:
    """What the installed plugins provide, as (loaded object, origin) pairs: each entry point of the
    ``unishift.methods`` group (a module, a method class or a list of them) and each module named in
    ``UNISHIFT_PLUGINS``. The binary registry takes the binary method classes from them, the
    multiclass catalogue (:mod:`unishift.multiclass.catalogue`) the multiclass ones."""
    found = [
        (entry_point.load(), f"entry point {entry_point.value!r}")
        for entry_point in entry_points(group=ENTRY_POINT_GROUP)
    ]
    for module in plugin_modules():
        try:
            loaded = importlib.import_module(module)
        except ImportError as err:
            raise ImportError(
                f"plugin module {module!r} (from {PLUGINS_VARIABLE} / the plugins: config key) "
                f"cannot be imported: {err}; install the package that provides it"
            ) from err
        found.append((loaded, f"module {module!r}"))
    return found


def is_multiclass_class(value: Any) -> bool:
    """A multiclass method class (:class:`unishift.multiclass.base.MulticlassMethod`), told by its
    ``regime`` attribute so that this module need not import the multiclass package."""
    return inspect.isclass(value) and getattr(value, "regime", None) == "multiclass"


def _load_plugin(loaded: Any, origin: str) -> None:
    if isinstance(loaded, ModuleType):
        register_module(loaded)
    elif is_multiclass_class(loaded):
        return  # the multiclass catalogue registers it
    elif inspect.isclass(loaded):
        register_class(loaded)
    elif isinstance(loaded, Iterable):
        for item in loaded:
            _load_plugin(item, origin)
    else:
        raise TypeError(f"plugin {origin} gave {loaded!r}: expected a module or a Method class")


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for package in METHOD_PACKAGES:
        for module in package_modules(package):
            register_module(module)
    for loaded, origin in plugin_objects():
        _load_plugin(loaded, origin)
    from unishift.methods.adapt import derived_adaptations

    for spec in derived_adaptations(list(_REGISTRY.values())):
        register(spec)
    _loaded = True


def use_plugins(modules: Iterable[str]) -> None:
    """Add plugin modules to ``UNISHIFT_PLUGINS`` (which processes started from this one inherit)
    and register them now if the registry was already scanned."""
    wanted = [m for m in modules if m not in plugin_modules()]
    if not wanted:
        return
    os.environ[PLUGINS_VARIABLE] = ",".join([*plugin_modules(), *wanted])
    if _loaded:
        reload()


def reload() -> None:
    """Scan again (after installing a plugin or changing ``UNISHIFT_PLUGINS`` in this process); the
    multiclass catalogue scans again on its next use too."""
    global _loaded, scans
    _REGISTRY.clear()
    _loaded = False
    scans += 1
    _load_all()


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
