"""The columns of a per-sample result file (``results/eval/...``): one row per (setup, sample), in
the ``two_class`` or the ``k_class`` layout (docs/reporting.md §1.7), ending with the sample's shift
descriptors (docs/regimes.md §5.1; empty in the API's records, which compute none). Apart from the
evaluation driver so that the files' readers (tables, figures) need none of the methods' code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from unishift.io import DamagedFileError, csv_problem, one_line
from unishift.regimes.descriptors import DESCRIPTORS

TWO_CLASS = "two_class"
K_CLASS = "k_class"
LAYOUTS = (TWO_CLASS, K_CLASS)

_KEYS = ("shift", "task", "method", "classifier", "dataset")
# One column per shift descriptor, declared once in unishift.regimes.descriptors (a new descriptor
# is its entry there, and the code that computes it).
DESCRIPTOR_COLUMNS = DESCRIPTORS
# Where a descriptor file's rows are matched to the records: one row per sample of one setup.
DESCRIPTOR_KEYS = ("shift", "classifier", "dataset", "sample_id")
DESCRIPTOR_FILE_COLUMNS = (*DESCRIPTOR_KEYS, *DESCRIPTOR_COLUMNS)
# Columns every scored calibration record must hold a finite number in.
CALIBRATION_VALUES = {
    TWO_CLASS: ("ece", "ece_positive", "brier"),
    K_CLASS: ("ece", "ece_classwise", "brier"),
}
_SCORED = ("sample_id", "shift_intensity", "true_value", "estimate", "error")
_K_SCORES = ("true_prevalence", "estimated_prevalence", "ae", "rae")
_STATUS = ("status", "reason")
BASE_COLUMNS = {
    TWO_CLASS: (*_KEYS, *_SCORED, *CALIBRATION_VALUES[TWO_CLASS], *_STATUS),
    K_CLASS: (*_KEYS, "n_classes", *_SCORED, *_K_SCORES, *CALIBRATION_VALUES[K_CLASS], *_STATUS),
}
COLUMNS = {layout: (*columns, *DESCRIPTOR_COLUMNS) for layout, columns in BASE_COLUMNS.items()}
# Columns read as text; the others must parse as numbers.
STRING_COLUMNS = {
    TWO_CLASS: (*_KEYS, *_STATUS),
    K_CLASS: (*_KEYS, "true_prevalence", "estimated_prevalence", *_STATUS),
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
    """The layout whose columns these are (with or without the descriptor columns), or None."""
    for layout, expected in COLUMNS.items():
        if tuple(columns) in (expected, BASE_COLUMNS[layout]):
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


def read_descriptors(path):
    """One setup's descriptor file (rule descriptors): :data:`DESCRIPTOR_FILE_COLUMNS`, keys as text."""
    problem = csv_problem(path)
    if problem:
        raise DamagedFileError(path, problem)
    frame = pd.read_csv(path, dtype={"shift": str, "classifier": str, "dataset": str})
    if tuple(frame.columns) != DESCRIPTOR_FILE_COLUMNS:
        raise DamagedFileError(
            path, f"columns {list(frame.columns)}, expected {list(DESCRIPTOR_FILE_COLUMNS)}"
        )
    return frame


def join_descriptors(records, descriptors):
    """``records`` (a frame in one layout) with the descriptor columns of its sample's row in
    ``descriptors`` (frames of :func:`read_descriptors`, matched on :data:`DESCRIPTOR_KEYS`); a
    record without a row, or a sample with two, is an error naming it."""
    keys = list(DESCRIPTOR_KEYS)
    table = pd.concat(list(descriptors), ignore_index=True)[list(DESCRIPTOR_FILE_COLUMNS)]
    table = table.astype({"sample_id": "int64"})
    if table.duplicated(keys).any():
        first = table[table.duplicated(keys)].iloc[0][keys].to_dict()
        raise ValueError(f"two descriptor rows for one sample, e.g. {first}")
    base = records.drop(columns=[c for c in DESCRIPTOR_COLUMNS if c in records.columns])
    joined = base.merge(table, on=keys, how="left", validate="many_to_one", indicator=True)
    unmatched = joined["_merge"] != "both"
    if unmatched.any():
        first = joined.loc[unmatched, keys].iloc[0].to_dict()
        raise ValueError(
            f"{int(unmatched.sum())} records have no descriptor row, e.g. {first}: the descriptor "
            "files belong to other samples (rerun the descriptors rule)"
        )
    layout = layout_of_columns(base.columns)
    columns = COLUMNS[layout] if layout else (*base.columns, *DESCRIPTOR_COLUMNS)
    return joined[list(columns)]


def read_records(path: str | Path) -> pd.DataFrame:
    """One per-sample result file, validated (complete last line, one layout's columns, every
    required field present and parseable, finite calibration values on scored calibration
    records), or :class:`DamagedFileError` naming the file and its first bad line."""
    problem = csv_problem(path)
    if problem:
        raise DamagedFileError(path, problem)
    texts = {c: str for columns in STRING_COLUMNS.values() for c in columns}
    try:
        frame = pd.read_csv(path, dtype=texts, keep_default_na=False, na_values=[""])
    except ValueError as err:  # pandas' parser errors and a bad encoding included
        raise DamagedFileError(path, f"unreadable CSV ({one_line(str(err))})") from err
    layout = layout_of_columns(frame.columns)
    if layout is None:
        raise DamagedFileError(
            path,
            f"columns {list(frame.columns)} are not those of a record layout "
            f"({' or '.join(str(list(c)) for c in COLUMNS.values())})",
        )
    strings = STRING_COLUMNS[layout]
    numeric = frame.drop(columns=list(strings)).apply(pd.to_numeric, errors="coerce")
    bad = (numeric.isna() & frame.drop(columns=list(strings)).notna()).any(axis=1)
    bad |= frame[[*_KEYS, "status"]].isna().any(axis=1)
    bad |= ~frame["status"].isin(STATUSES) | numeric["sample_id"].isna()
    scored = frame["status"] != "error"
    bad |= scored & ~np.isfinite(numeric["error"])
    calibration = scored & (frame["task"] == "calibration")
    for column in CALIBRATION_VALUES[layout]:
        bad |= calibration & ~np.isfinite(numeric[column])
    bad |= ~scored & frame["reason"].isna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DamagedFileError(
            path, f"line {row + 2} lacks a required field or holds an unparseable value"
        )
    frame[list(numeric.columns)] = numeric
    return frame
