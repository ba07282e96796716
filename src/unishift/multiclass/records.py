"""The columns of a multiclass per-sample record (:mod:`unishift.multiclass.evaluation` writes them,
:mod:`unishift.multiclass.report` reads them); a module of its own so that the report jobs import no
method."""

MULTICLASS_RECORD_COLUMNS = (
    "shift",
    "task",
    "method",
    "classifier",
    "dataset",
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
)

__all__ = ["MULTICLASS_RECORD_COLUMNS"]
