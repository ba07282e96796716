"""What the registry knows of a method: :class:`MethodSpec`, from a method class's attributes or
from the adaptation table (:mod:`unishift.methods.adapt.table`). The order of a method's
parameters: docs/methods.md, "Adding a method"; the derived compound shift: docs/regimes.md §5.2.1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from unishift.methods.base import DERIVED_SHIFTS, SHIFTS, Method
from unishift.methods.paper_settings import settings_of


def constructor_defaults(method_class: type[Method]) -> dict[str, Any]:
    """The hyper-parameters of a method class with their defaults: ``get_params`` of an instance
    built without arguments (scikit-learn's convention: every parameter has a default)."""
    try:
        method = method_class()
    except TypeError as err:
        raise TypeError(
            f"{method_class.__qualname__}() cannot be built without arguments ({err}): give every "
            "constructor parameter a default, as scikit-learn's estimators do"
        ) from None
    return method.get_params(deep=False)


def with_derived_shifts(shifts) -> tuple[str, ...]:
    """``shifts`` plus the derived shifts of those among them, in :data:`SHIFTS` order."""
    shifts = set(shifts)
    shifts |= {derived for derived, base in DERIVED_SHIFTS.items() if base in shifts}
    return tuple(s for s in SHIFTS if s in shifts) + tuple(sorted(shifts - set(SHIFTS)))


def shift_chain(shift: str) -> tuple[str, ...]:
    """The shifts whose parameters apply under ``shift``, base first (covariate, compound)."""
    base = DERIVED_SHIFTS.get(shift)
    return (*shift_chain(base), shift) if base else (shift,)


def _check_n_classes(n_classes) -> None:
    if isinstance(n_classes, bool) or not isinstance(n_classes, int) or n_classes < 2:
        raise TypeError(
            f"n_classes={n_classes!r} is not a number of classes (an integer >= 2); "
            "call params(shift, n_classes, overrides) / build(shift, n_classes, overrides)"
        )


@dataclass(frozen=True)
class MethodSpec:
    """One registered method: ``defaults`` are the factory's arguments before any shift, ``inner``
    the spec of an adaptation's inner method, which :meth:`build` hands the adapter as a factory
    (an adapter never looks a method up by name)."""

    name: str
    task: str
    group: str
    factory: Callable[..., Method]
    display: str
    shifts: tuple[str, ...] = SHIFTS
    defaults: dict[str, Any] = field(default_factory=dict)
    shift_defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    binary_defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    description: str = ""
    binary_only: str = ""
    assumption: str = "none"
    calibration_notion: str | None = None
    inner: MethodSpec | None = None

    def __post_init__(self):
        # one place for the derived shifts (compound runs what covariate runs), so that neither a
        # method class nor the adaptation table lists them
        object.__setattr__(self, "shifts", with_derived_shifts(self.shifts))

    def params(
        self, shift: str, n_classes: int | None = None, overrides: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The factory's arguments under ``shift`` for ``n_classes`` classes (``None``: the
        parameters of any number of classes, without the binary tables' ones)."""
        if n_classes is not None:
            _check_n_classes(n_classes)
        if overrides is not None and not isinstance(overrides, dict):
            raise TypeError(f"overrides must be a mapping of parameters, got {overrides!r}")
        params = dict(self.defaults)
        for level in shift_chain(shift):
            params.update(self.shift_defaults.get(level, {}))
            if n_classes == 2:
                params.update(self.binary_defaults.get(level, {}))
        params.update(overrides or {})
        return params

    def skip(self, n_classes: int) -> str | None:
        """Why the method cannot run on data with ``n_classes`` classes (None when it can)."""
        if self.binary_only and n_classes != 2:
            return (
                f"{self.task} method {self.name!r} is binary-only in unishift: "
                f"{self.binary_only} (the data have {n_classes} classes)"
            )
        return None

    def build(self, shift: str, n_classes: int, overrides: dict[str, Any] | None = None) -> Method:
        """A fresh, unfitted method for data with ``n_classes`` classes under ``shift``, its
        hyper-parameters checked (``Method.check_params``)."""
        _check_n_classes(n_classes)
        reason = self.skip(n_classes)
        if reason:
            raise ValueError(reason)
        params = self.params(shift, n_classes, overrides)
        if self.inner is not None:
            named = params.get("inner", self.inner.name)
            if named != self.inner.name:
                raise ValueError(
                    f"{self.name}: inner={named!r} cannot be overridden (it adapts "
                    f"{self.inner.name!r}); use the adaptation of {named!r} instead"
                )
            inner_params = params.get("inner_params") or {}
            params["inner"] = self.inner.build(shift, n_classes, inner_params)
            params["inner_params"] = None
        method = self.factory(**params)
        method.check_params()
        return method

    @classmethod
    def of(cls, method_class: type[Method]) -> MethodSpec:
        """The entry a method class describes in its attributes, with its per-shift arguments:
        the paper's table's for the paper's methods, else the class's own (a plugin's)."""
        settings = settings_of(method_class)
        same = ("name", "task", "group", "description", "binary_only", "assumption")
        return cls(
            **{attribute: getattr(method_class, attribute) for attribute in same},
            factory=method_class,
            display=method_class.display or method_class.name,
            shifts=tuple(method_class.shifts),
            defaults=constructor_defaults(method_class),
            shift_defaults={s: dict(d) for s, d in settings.shift_defaults.items()},
            binary_defaults={s: dict(d) for s, d in settings.binary_defaults.items()},
            calibration_notion=getattr(method_class, "calibration_notion", None),
        )


__all__ = ["MethodSpec", "constructor_defaults", "shift_chain", "with_derived_shifts"]
