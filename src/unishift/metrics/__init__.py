"""Per-sample error measures for any number of classes (docs/reporting.md §1)."""

from unishift.metrics.errors import (
    PROBABILITY_TOLERANCE,
    absolute_error,
    accuracy,
    brier,
    check_posteriors,
    check_prevalence,
    ece_classwise,
    ece_positive_class,
    ece_top_label,
    prevalence_vector,
    quantification_ae,
    quantification_rae,
    top_label_confidence,
)

__all__ = [
    "PROBABILITY_TOLERANCE",
    "absolute_error",
    "accuracy",
    "brier",
    "check_posteriors",
    "check_prevalence",
    "ece_classwise",
    "ece_positive_class",
    "ece_top_label",
    "prevalence_vector",
    "quantification_ae",
    "quantification_rae",
    "top_label_confidence",
]
