"""Per-sample error measures (docs/reporting.md §1)."""

from unishift.metrics.errors import absolute_error, brier, ece_positive_class, ece_top_label

__all__ = ["absolute_error", "brier", "ece_positive_class", "ece_top_label"]
