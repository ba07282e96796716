"""The multiclass branch's tables, CD diagrams, error-by-shift plots and accuracy appendix, drawn by
the binary branch's reporting code (:mod:`unishift.report`), not a copy of it.

What differs is only what the binary code looks up: the per-sample files have the multiclass record
columns (read and validated here), and display names and column groups come from the multiclass
catalogue (passed as ``method_info``). The tables, Wilcoxon bolding, win rates, ranks, CD diagrams
and plots are the binary functions, which read ``error`` (or ``brier``) per (method, classifier,
dataset, sample_id). ``method_info`` (name -> (display, group)) comes from the multiclass catalogue
(:func:`unishift.multiclass.catalogue.method_info`; the workflow passes it as a parameter, so that
the report jobs import no method). There are no paper numbers to compare with, so no reproduction pages.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import pandas as pd

from unishift.multiclass.records import MULTICLASS_RECORD_COLUMNS
from unishift.report.appendix import write_accuracy_tex
from unishift.report.pipeline import TABLE_WIDTH, build_cd, table_name
from unishift.report.plots import plot_error_by_shift
from unishift.report.tables import (
    TableResult,
    check_complete,
    compute_table,
    load_records,
    read_records,
    write_table_csv,
    write_table_tex,
)
from unishift.stats import ALPHA

_STR_COLUMNS = (
    "shift",
    "task",
    "method",
    "classifier",
    "dataset",
    "true_prevalence",
    "estimated_prevalence",
    "status",
    "reason",
)

# Methods of each error-by-shift panel: the binary panels' selection where a multiclass form exists
# (Platt -> TS; BCTS takes Head2Tail's colour), same colours.
PLOT_METHODS = {
    "calibration": [
        ("TS", "black"), ("BCTS", "blueviolet"), ("CPCS", "firebrick"),
        ("TransCal", "lightgreen"), ("LasCal", "gold"), ("PCC_q2c_3B", "gray"),
        ("PACC_q2c_3B", "magenta"),
        ("EMQ_BCTS", "dodgerblue"), ("DoC_a2c_3B", "blue"), ("DMCal", "orangered"),
    ],
    "quantification": [
        ("CC", "black"), ("PCC", "gray"), ("PACC", "magenta"), ("EMQ", "dodgerblue"),
        ("KDEy", "green"), ("DoC_a2q", "blue"), ("TransCal_c2q", "lightgreen"),
        ("LasCal_c2q", "gold"),
    ],
    "cap": [
        ("Naive", "black"), ("ATC", "darkorange"), ("DoC", "blue"), ("LEAP", "cadetblue"),
        ("LEAP_PCC", "red"), ("PCC_q2a", "gray"), ("PACC_q2a", "magenta"),
        ("CPCS_c2a", "firebrick"), ("LasCal_c2a", "gold"),
    ],
}  # fmt: skip


# the multiclass record columns for the binary reader (report/tables.py), which validates both kinds
MULTICLASS_COLUMNS = {
    "columns": MULTICLASS_RECORD_COLUMNS,
    "string_columns": _STR_COLUMNS,
    "calibration_values": ("ece", "ece_classwise", "brier"),
}


def read_multiclass_records(path: str | Path) -> pd.DataFrame:
    """One multiclass per-sample file, validated as the binary ones are."""
    return read_records(path, **MULTICLASS_COLUMNS)


def load_multiclass_records(paths: Iterable[str | Path]) -> pd.DataFrame:
    return load_records(paths, **MULTICLASS_COLUMNS)


def _records(files, methods, classifiers, datasets, n_samples) -> pd.DataFrame:
    files = list(files)
    records = load_multiclass_records(files)
    if classifiers is not None and datasets is not None and n_samples is not None:
        by_method = {Path(path).stem: str(path) for path in files}
        setups = [(c, d) for c in classifiers for d in datasets]
        check_complete(records, methods, setups, n_samples, by_method)
    return records


def build_multiclass_table(
    result_files: Iterable[str | Path],
    task: str,
    shift: str,
    methods: list[str],
    out_dir: str | Path,
    metric: str = "error",
    classifiers: list[str] | None = None,
    datasets: list[str] | None = None,
    n_samples: int | None = None,
    alpha: float = ALPHA,
    method_info: dict[str, tuple[str, str]] | None = None,
) -> TableResult:
    """``<name>.csv``, ``<name>_summary.csv`` and ``<name>.tex`` as :func:`unishift.report.pipeline.
    build_table` writes them, from multiclass per-sample files."""
    records = _records(result_files, methods, classifiers, datasets, n_samples)
    result = compute_table(
        records,
        task,
        shift,
        methods,
        metric,
        classifiers,
        datasets,
        n_samples,
        alpha,
        method_info=method_info,
    )
    out_dir = Path(out_dir)
    name = table_name(task, shift, metric)
    write_table_csv(result, out_dir / f"{name}.csv")
    write_table_tex(
        with_class_counts(result, records),
        out_dir / f"{name}.tex",
        width=TABLE_WIDTH.get((task, shift), r"\textwidth"),
    )
    return result


def with_class_counts(result: TableResult, records: pd.DataFrame) -> TableResult:
    """The result with each row's data set named with its number of classes, ``cmc (k=3)``, for the
    LaTeX table (the CSV keeps the plain names, the keys of the per-sample files)."""
    classes = records.groupby("dataset")["n_classes"].first()
    setups = [
        (clf, f"{dataset} (k={int(classes[dataset])})" if dataset in classes else dataset)
        for clf, dataset in result.setups
    ]
    return replace(result, setups=setups)


def build_multiclass_error_by_shift(
    result_files: Iterable[str | Path],
    task: str,
    shift: str,
    out_dir: str | Path,
    methods: list[str],
    classifiers: list[str] | None = None,
    datasets: list[str] | None = None,
    n_samples: int | None = None,
    method_info: dict[str, tuple[str, str]] | None = None,
) -> pd.DataFrame:
    records = _records(result_files, methods, classifiers, datasets, n_samples)
    chosen = [(m, c) for m, c in PLOT_METHODS[task] if m in methods]
    if not chosen:  # none of the usual selection configured: the first eight configured methods
        palette = ("black", "gray", "magenta", "dodgerblue", "green", "blue", "red", "gold")
        chosen = list(zip(methods, palette))
    out_dir = Path(out_dir)
    stem = f"{task}_{shift}_err_by_shift"
    return plot_error_by_shift(
        records,
        task,
        shift,
        [out_dir / f"{stem}.pdf", out_dir / f"{stem}.png"],
        methods=chosen,
        method_info=method_info,
    )


__all__ = [
    "PLOT_METHODS",
    "build_cd",
    "build_multiclass_error_by_shift",
    "build_multiclass_table",
    "with_class_counts",
    "load_multiclass_records",
    "read_multiclass_records",
    "write_accuracy_tex",
]
