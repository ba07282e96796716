"""The columns of a per-sample result file (``results/eval/...``): one row per (setup, sample).

Two layouts, one per kind of run (docs/reporting.md §1.7). A shift whose data sets all have two
classes writes the ``two_class`` layout, the reference's view: a calibrator's ``true_value`` and
``estimate`` are the positive class's prevalence and mean calibrated probability, ``ece_positive``
the paper's positive-class ECE. A shift with a data set of more classes writes the ``k_class``
layout, which adds the number of classes, the prevalence vectors (JSON lists), QuaPy's AE and RAE and
the class-wise ECE; there a calibrator's ``true_value`` and ``estimate`` are the accuracy and the mean
top-label confidence, and a quantifier's stay empty (a vector has no scalar). ``error`` is what the
tables rank in both.

Kept apart from the evaluation driver so that the readers of the files (tables, figures) need none
of the methods' code.
"""

TWO_CLASS = "two_class"
K_CLASS = "k_class"
LAYOUTS = (TWO_CLASS, K_CLASS)

_KEYS = ("shift", "task", "method", "classifier", "dataset")
COLUMNS = {
    TWO_CLASS: (
        *_KEYS,
        "sample_id",
        "shift_intensity",
        "true_value",
        "estimate",
        "error",
        "ece",
        "ece_positive",
        "brier",
        "status",
        "reason",
    ),
    K_CLASS: (
        *_KEYS,
        "n_classes",
        "sample_id",
        "shift_intensity",
        "true_value",
        "estimate",
        "error",
        "true_prevalence",
        "estimated_prevalence",
        "ae",
        "rae",
        "ece",
        "ece_classwise",
        "brier",
        "status",
        "reason",
    ),
}
# Columns read as text; the others must parse as numbers.
STRING_COLUMNS = {
    TWO_CLASS: (*_KEYS, "status", "reason"),
    K_CLASS: (*_KEYS, "true_prevalence", "estimated_prevalence", "status", "reason"),
}
# Columns every scored calibration record must hold a finite number in.
CALIBRATION_VALUES = {
    TWO_CLASS: ("ece", "ece_positive", "brier"),
    K_CLASS: ("ece", "ece_classwise", "brier"),
}
# The ECE each layout can rank (config key `ece`).
ECE_CHOICES = {
    TWO_CLASS: ("top_label", "positive_class"),
    K_CLASS: ("top_label", "classwise"),
}
STATUSES = ("ok", "fallback", "error")


def layout_of(n_classes) -> str:
    """The layout of a run whose data sets have these numbers of classes."""
    return TWO_CLASS if all(int(k) == 2 for k in n_classes) else K_CLASS


def layout_of_columns(columns) -> str | None:
    """The layout whose columns these are, or None."""
    for layout, expected in COLUMNS.items():
        if tuple(columns) == expected:
            return layout
    return None


def check_not_all_failed(records, method: str, where: str) -> None:
    """Raise when every record of a method is an error, naming the method and the first reason
    (config key ``allow_failed_methods`` keeps such a method as an empty column instead)."""
    statuses = list(records["status"])
    if statuses and all(status == "error" for status in statuses):
        reason = records["reason"].iloc[0]
        raise RuntimeError(
            f"{method} failed on every one of its {len(statuses)} samples ({where}); the first "
            f"reason: {reason}. Fix the method or its method_params, remove it from the config, or "
            "set allow_failed_methods: true to keep it as an empty column"
        )


__all__ = [
    "check_not_all_failed",
    "CALIBRATION_VALUES",
    "COLUMNS",
    "ECE_CHOICES",
    "K_CLASS",
    "LAYOUTS",
    "STATUSES",
    "STRING_COLUMNS",
    "TWO_CLASS",
    "layout_of",
    "layout_of_columns",
]
