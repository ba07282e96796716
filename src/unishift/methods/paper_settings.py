"""The paper's settings of its methods in one table, beside the adaptations' table
(:mod:`unishift.methods.adapt.table`): the arguments the paper's tables give a method under each
shift (``shift_defaults``, any number of classes) and for the binary tables (``binary_defaults``,
two classes), keyed by (task, method name); docs/methods.md, "Adding a method". Imports no method
module."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Settings:
    """A method's arguments in the paper's tables: ``shift_defaults[shift]`` for any number of
    classes, ``binary_defaults[shift]`` over them for the binary tables (two classes)."""

    shift_defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    binary_defaults: dict[str, dict[str, Any]] = field(default_factory=dict)


_L_LOGITS, _P_LOGITS = {"logits": "L"}, {"logits": "P"}
_POSITIVE_CELLS = {"cells": "positive_class"}

# (task, method) -> what the paper's tables set beyond the constructor's defaults (docs/methods.md
# §2-§4; docs/multiclass.md §4 has the binary tables' choices in its table).
PAPER_SETTINGS = {
    ("calibration", "CPCS"): Settings(binary_defaults={"label": _P_LOGITS, "covariate": _L_LOGITS}),
    ("calibration", "DMCal"): Settings(
        binary_defaults={"label": _POSITIVE_CELLS, "covariate": _POSITIVE_CELLS}
    ),
    ("calibration", "Head2Tail"): Settings(
        binary_defaults={"label": {"logits": "P", "head": "index"}, "covariate": {"head": "index"}}
    ),
    ("calibration", "LasCal"): Settings(
        shift_defaults={"covariate": _L_LOGITS}, binary_defaults={"label": _P_LOGITS}
    ),
    ("calibration", "TransCal"): Settings(binary_defaults={"covariate": _L_LOGITS}),
    ("quantification", "EMQ"): Settings(
        binary_defaults={"covariate": {"train_prevalence": "validation"}}
    ),
    ("quantification", "EMQ_BCTS"): Settings(
        binary_defaults={"covariate": {"fallback_prevalence": "validation"}}
    ),
    ("cap", "DoC"): Settings(
        shift_defaults={"label": {"protocol": "upp"}, "covariate": {"protocol": "npp"}}
    ),
}


def settings_of(method_class: type) -> Settings:
    """The per-shift arguments of a method class: the paper's (:data:`PAPER_SETTINGS`) for the
    paper's methods, else those a plugin class declares in ``shift_defaults`` and
    ``binary_defaults``; both for one class is refused (one place per fact)."""
    paper = PAPER_SETTINGS.get((method_class.task, method_class.name))
    own = Settings(dict(method_class.shift_defaults), dict(method_class.binary_defaults))
    if paper is not None and own != Settings():
        raise ValueError(
            f"{method_class.__qualname__} declares shift_defaults / binary_defaults, and the "
            f"paper's table (unishift.methods.paper_settings.PAPER_SETTINGS) has the settings of "
            f"{method_class.task} method {method_class.name!r}: keep them in one place"
        )
    return paper or own
