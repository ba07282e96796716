"""Checks of option values shared by every layer (QuaPy style: the error names the valid options)."""

from __future__ import annotations

from typing import Any


def check_choice(name: str, value: Any, valid) -> None:
    """Raise naming the valid options when ``value`` is not one of them."""
    if value not in valid:
        raise ValueError(f"{name}={value!r} is not valid; choose one of {sorted(map(str, valid))}")


def check_positive_int(name: str, value: Any, none: bool = False) -> None:
    """Raise unless ``value`` is an integer >= 1 (a bool or a float such as 3.0 is not one), or
    None when ``none`` allows it."""
    if none and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        either = " or None" if none else ""
        raise ValueError(f"{name}={value!r} is not valid; choose a positive integer{either}")


# numpy.random.RandomState and scikit-learn take seeds in [0, 2**32)
SEED_LIMIT = 2**32


def check_seed(name: str, value: Any) -> None:
    """Raise unless ``value`` is an integer seed in [0, 2**32) (a bool or a float is not one)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < SEED_LIMIT:
        raise ValueError(
            f"{name}={value!r} is not valid; choose an integer seed from 0 to {SEED_LIMIT - 1}"
        )


def check_like_default(name: str, value: Any, default: Any) -> None:
    """Raise when ``value`` is not of the kind of a constructor's ``default``: a bool for a bool, an
    integer (not a bool) for an integer, a finite number (not a bool) for a float; any value where
    the default is of another kind (None, a string, a mapping) is left to the constructor."""
    import math

    if isinstance(default, bool):
        ok, kind = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok, kind = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        kind = "a finite number"
    else:
        return
    if not ok:
        raise ValueError(f"{name}={value!r} is not valid; it takes {kind} (default {default!r})")
