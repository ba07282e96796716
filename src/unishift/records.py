"""The columns of a per-sample result file (results/eval/...): one row per (setup, sample).

Kept apart from the evaluation driver so that the readers of the files (tables, figures) need none
of the methods' code.
"""

RECORD_COLUMNS = (
    "shift",
    "task",
    "method",
    "classifier",
    "dataset",
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
)
