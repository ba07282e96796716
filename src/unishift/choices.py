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
