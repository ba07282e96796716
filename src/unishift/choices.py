"""Checks of option values shared by every layer (QuaPy style: the error names the valid options)."""

from __future__ import annotations

from typing import Any


def check_choice(name: str, value: Any, valid) -> None:
    """Raise naming the valid options when ``value`` is not one of them."""
    if value not in valid:
        raise ValueError(f"{name}={value!r} is not valid; choose one of {sorted(map(str, valid))}")


__all__ = ["check_choice"]
