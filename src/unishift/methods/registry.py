"""One registry mapping each method name, spelled as in the paper's table columns, to its entry, for
any number of classes; a method is identified by ``(task, name)`` (``EMQ`` is a calibrator and a
quantifier). Which modules are scanned (the packages, entry points and ``UNISHIFT_PLUGINS``) and how
a method is registered, adapted and built: docs/methods.md, "Adding a method".
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points, packages_distributions, version
from types import ModuleType
from typing import Any

from unishift.methods.adapt.table import derived_adaptations
from unishift.methods.base import ASSUMPTIONS, CALIBRATION_NOTIONS, GROUPS, SHIFTS, TASKS, Method
from unishift.methods.paper_settings import PAPER_SETTINGS
from unishift.methods.spec import MethodSpec

# Every module of these packages is scanned for method classes; adding a method is adding a file.
METHOD_PACKAGES = (
    "unishift.methods.calibration",
    "unishift.methods.quantification",
    "unishift.methods.cap",
)
# Plus the package whose table derives the adaptations (it registers no class of its own).
METHOD_MODULES = (*METHOD_PACKAGES, "unishift.methods.adapt")
ENTRY_POINT_GROUP = "unishift.methods"
PLUGINS_VARIABLE = "UNISHIFT_PLUGINS"


def _check(spec: MethodSpec) -> None:
    where = f"{spec.task} method {spec.name!r}"
    valid = {"task": TASKS, "group": GROUPS, "assumption": ASSUMPTIONS}
    if spec.task == "calibration":
        valid["calibration_notion"] = CALIBRATION_NOTIONS
    for attribute, values in valid.items():
        if getattr(spec, attribute) not in values:
            raise ValueError(
                f"{attribute} {getattr(spec, attribute)!r} of {where} is not one of {values}"
            )
    unknown = set(spec.shifts) - set(SHIFTS)
    if unknown:
        raise ValueError(f"shifts {sorted(unknown)} of {where} are not among {SHIFTS}")
    for attribute in ("shift_defaults", "binary_defaults"):
        for shift, params in getattr(spec, attribute).items():
            if shift not in spec.shifts:
                raise ValueError(
                    f"{where} has {attribute} for {shift} shift, which it does not run"
                )
            typos = set(params) - set(spec.defaults)
            if typos:
                raise ValueError(
                    f"{where}: {attribute}[{shift!r}] sets {sorted(typos)}, which its "
                    f"constructor does not take (it takes {sorted(spec.defaults)})"
                )


_REGISTRY: dict[tuple[str, str], MethodSpec] = {}
_loaded = False


def register(spec: MethodSpec) -> MethodSpec:
    _check(spec)
    key = (spec.task, spec.name)
    if key in _REGISTRY and _REGISTRY[key] != spec:
        first, second = _REGISTRY[key].factory, spec.factory
        raise ValueError(
            f"{spec.task} method {spec.name!r} is registered twice: by "
            f"{first.__module__}.{first.__qualname__} and by {second.__module__}."
            f"{second.__qualname__}; rename one of them (its class's name attribute)"
        )
    _REGISTRY[key] = spec
    return spec


def declared_methods(module: ModuleType) -> list[type[Method]]:
    """The method classes a module defines that set their own ``name``, in definition order."""
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, Method)
        and value.__module__ == module.__name__
        and "name" in vars(value)
        and value.name
    ]


def register_class(method_class: type[Method]) -> MethodSpec:
    if not (inspect.isclass(method_class) and issubclass(method_class, Method)):
        raise TypeError(f"{method_class!r} is not a unishift Method class")
    if not method_class.name:
        raise ValueError(f"method class {method_class.__qualname__} sets no name")
    if "defaults" in vars(method_class):
        raise ValueError(
            f"{method_class.__qualname__} sets a 'defaults' attribute, which is not read: a "
            "method's defaults are its constructor's (the paper's per-shift values are in "
            "unishift.methods.paper_settings.PAPER_SETTINGS; a plugin puts its own in shift_defaults, "
            "the binary tables' in binary_defaults)"
        )
    return register(MethodSpec.of(method_class))


def plugin_modules() -> list[str]:
    """Plugin modules named in the ``UNISHIFT_PLUGINS`` environment variable (comma separated)."""
    return [
        name.strip() for name in os.environ.get(PLUGINS_VARIABLE, "").split(",") if name.strip()
    ]


@dataclass(frozen=True)
class Plugin:
    """One source of plugin methods: an entry point of an installed package, or a module named by
    the ``plugins:`` config key; ``error`` says why it could not be imported ("" when it could)."""

    origin: str
    module: str
    package: str | None = None
    version: str | None = None
    error: str = ""


_PLUGINS: list[Plugin] = []


def _register_plugins() -> None:
    """Register what each entry point of the ``unishift.methods`` group (a module, a method class or
    a list of them) and each module named in ``UNISHIFT_PLUGINS`` provides. An entry point that
    cannot be imported is left out with a warning naming it and its package (:func:`plugins` lists
    it), so that configs that do not use it still run; a module the config names must import."""
    _PLUGINS.clear()
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        dist, error = entry_point.dist, ""
        origin = f"entry point {entry_point.name!r} ({entry_point.value})"
        if dist is not None:
            origin += f" of package {dist.name}"
        try:
            loaded = entry_point.load()
        except Exception as err:  # any error of a third-party import: report, do not stop
            error = f"{type(err).__name__}: {err}"
            warnings.warn(
                f"unishift plugin {origin} cannot be imported ({error}); its methods are not "
                f"available. Fix or reinstall {dist.name if dist else 'its package'}, or "
                "uninstall it",
                stacklevel=2,
            )
        module = entry_point.value.split(":")[0]
        _PLUGINS.append(Plugin(origin, module, dist and dist.name, dist and dist.version, error))
        if not error:
            _register_object(loaded, origin)
    for module in plugin_modules():
        try:
            loaded = importlib.import_module(module)
        except ImportError as err:
            raise ImportError(
                f"plugin module {module!r} (from {PLUGINS_VARIABLE} / the plugins: config key) "
                f"cannot be imported: {err}; install the package that provides it"
            ) from err
        package = (packages_distributions().get(module.split(".")[0]) or [None])[0]
        origin = f"module {module!r} (plugins: config key)"
        _PLUGINS.append(Plugin(origin, module, package, package and version(package)))
        _register_object(loaded, origin)


def plugins() -> list[Plugin]:
    """The plugin sources of the last scan, those that failed to import included."""
    _load_all()
    return list(_PLUGINS)


def _register_object(loaded: Any, origin: str) -> None:
    if isinstance(loaded, ModuleType):
        for method_class in declared_methods(loaded):
            register_class(method_class)
    elif inspect.isclass(loaded):
        register_class(loaded)
    elif isinstance(loaded, Iterable):
        for item in loaded:
            _register_object(item, origin)
    else:
        raise TypeError(f"plugin {origin} gave {loaded!r}: expected a module or a Method class")


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for package in METHOD_PACKAGES:
        path = importlib.import_module(package).__path__
        for info in sorted(pkgutil.iter_modules(path, f"{package}."), key=lambda i: i.name):
            if not info.ispkg:
                _register_object(importlib.import_module(info.name), info.name)
    _register_plugins()
    unused = sorted(set(PAPER_SETTINGS) - set(_REGISTRY))
    if unused:
        raise ValueError(f"the paper's settings of {unused} match no registered method")
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
    """Scan again (after installing a plugin or changing ``UNISHIFT_PLUGINS`` in this process)."""
    global _loaded
    _REGISTRY.clear()
    _loaded = False
    _load_all()


def all_methods() -> dict[tuple[str, str], MethodSpec]:
    _load_all()
    return dict(_REGISTRY)


def method_names(task: str, shift: str | None = None, n_classes: int | None = None) -> list[str]:
    """The names of ``task`` (running under ``shift``; buildable for ``n_classes`` classes)."""
    return sorted(
        spec.name
        for (t, _), spec in all_methods().items()
        if t == task
        and (shift is None or shift in spec.shifts)
        and (n_classes is None or not spec.skip(n_classes))
    )


def get_method(task: str, name: str, shift: str | None = None) -> MethodSpec:
    specs = all_methods()
    if (task, name) not in specs:
        hint = "".join(
            f"; the plugin {p.origin} could not be imported ({p.error}) and may provide it"
            for p in _PLUGINS
            if p.error
        )
        raise KeyError(
            f"unknown {task} method {name!r}; valid {task} methods are "
            f"{method_names(task, shift)}{hint}"
        )
    spec = specs[(task, name)]
    if shift is not None and shift not in spec.shifts:
        raise KeyError(
            f"{task} method {name!r} does not run under {shift} shift; "
            f"valid ones are {method_names(task, shift)}"
        )
    return spec


def method_info(task: str, names: Iterable[str]) -> dict[str, tuple[str, str]]:
    """name -> (LaTeX display, group): what the reports need to draw a method's column."""
    specs = {name: get_method(task, name) for name in names}
    return {name: (spec.display, spec.group) for name, spec in specs.items()}
