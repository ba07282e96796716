"""A per-sample method selector (leave-one-group-out), and the Oracle and BestSingle references it is
judged against (input, model, why it does not leak: docs/regimes.md §4).

Ties (equal predicted errors, equal errors, equal means) go to the method listed first in
``methods`` (default: sorted names).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from unishift.classifiers import one_thread
from unishift.regimes.descriptors import TRUE_DESCRIPTORS, UNSUPERVISED_DESCRIPTORS

SAMPLE_KEY = ["task", "classifier", "dataset", "sample_id"]
REQUIRED = ("task", "method", "classifier", "dataset", "sample_id", "error", "group")
# Record columns that are known only with the sample's labels (or are the answer itself).
LABEL_COLUMNS = frozenset(
    {
        "error",
        "true_value",
        "estimate",
        "shift_intensity",
        "ece",
        "ece_positive",
        "ece_classwise",
        "brier",
        "ae",
        "rae",
        "true_prevalence",
        "estimated_prevalence",
        "status",
        "reason",
        "method",
        "group",
    }
)


def group_of(shift: str, dataset: str) -> str:
    """The held-out unit of a setup: the data set under label shift, the target domain (the part
    after ``->`` of ``source->target``) under covariate and compound shift."""
    if shift == "label":
        return dataset
    if shift in ("covariate", "compound"):
        if "->" not in dataset:
            raise ValueError(
                f"expected a 'source->target' data set under {shift} shift, got {dataset!r}"
            )
        return dataset.split("->", 1)[1]
    raise ValueError(f"unknown shift {shift!r} (label, covariate or compound)")


def add_groups(records: pd.DataFrame) -> pd.DataFrame:
    """``records`` with a ``group`` column from their ``shift`` and ``dataset`` columns."""
    out = records.copy()
    out["group"] = [group_of(s, d) for s, d in zip(out["shift"], out["dataset"], strict=True)]
    return out


def check_features(features) -> list[str]:
    """The features as a list; refuses true intensities and label-derived columns."""
    features = list(features)
    if not features:
        raise ValueError("the selector needs at least one descriptor column")
    bad = [
        f for f in features if f in LABEL_COLUMNS or f in TRUE_DESCRIPTORS or f.startswith("true_")
    ]
    if bad:
        raise ValueError(
            f"{bad} need the sample's labels (or are the answer): a selector may use unsupervised "
            f"descriptors only, e.g. {list(UNSUPERVISED_DESCRIPTORS)}"
        )
    return features


def training_mask(groups: np.ndarray, held_out) -> np.ndarray:
    """The samples the models for group ``held_out`` are trained on: those of every other group."""
    return np.asarray(groups) != held_out


def default_model(seed: int):
    """Gradient-boosted trees: no scaling needed, NaN descriptors allowed, deterministic given the
    seed (no early-stopping split, no feature subsampling)."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(
        max_iter=200,
        learning_rate=0.05,
        min_samples_leaf=20,
        l2_regularization=1.0,
        early_stopping=False,
        random_state=seed,
    )


def checked_methods(records: pd.DataFrame, methods) -> list[str]:
    """``methods`` (default: every method of ``records``, sorted), distinct and each with records."""
    methods = sorted(records["method"].unique()) if methods is None else list(methods)
    if not methods or len(set(methods)) != len(methods):
        raise ValueError(f"methods must be distinct and non-empty, got {methods}")
    absent = sorted(set(methods) - set(records["method"]))
    if absent:
        raise ValueError(f"no records for the methods {absent}")
    return methods


def _wide(records: pd.DataFrame, methods: list[str], features: list[str] = ()):
    """Per sample (sorted by key): the group, the features and each method's error."""
    missing = [c for c in (*REQUIRED, *features) if c not in records.columns]
    if missing:
        raise ValueError(f"records lack the columns {missing}")
    tasks = records["task"].unique()
    if len(tasks) != 1:
        raise ValueError(f"the selector works on one task at a time; got {sorted(map(str, tasks))}")
    frame = records[records["method"].isin(methods)]
    if frame.duplicated([*SAMPLE_KEY, "method"]).any():
        raise ValueError("more than one record per (classifier, dataset, sample_id, method)")
    errors = frame.pivot(index=SAMPLE_KEY, columns="method", values="error").reindex(
        columns=methods
    )
    rows_per_sample = frame.groupby(SAMPLE_KEY).size().reindex(errors.index)
    if (rows_per_sample != len(methods)).any():
        raise ValueError(
            f"{int((rows_per_sample != len(methods)).sum())} samples lack some method's record; "
            "every method needs a row per sample (NaN error where it failed)"
        )
    per_sample = frame.groupby(SAMPLE_KEY, sort=True)
    shared = ["group", *features]
    for column in shared:
        if (per_sample[column].nunique(dropna=False) > 1).any():
            raise ValueError(
                f"{column!r} differs between the methods' rows of one sample; it must belong to "
                "the sample"
            )
    info = per_sample[shared].first().reindex(errors.index)
    return info, errors


def _pick(records: pd.DataFrame, key_index: pd.MultiIndex, chosen: list, name: str, extra: dict):
    """The chosen method's row of each sample, renamed ``name``, with the ``extra`` columns."""
    lookup = records[records["method"].isin(set(chosen))].set_index([*SAMPLE_KEY, "method"])
    keys = [(*k, m) for k, m in zip(key_index, chosen, strict=True)]
    out = lookup.loc[keys].reset_index()
    out["chosen_method"] = out["method"]
    out["method"] = name
    for column, values in extra.items():
        out[column] = values
    return out


def select_methods(
    records: pd.DataFrame,
    features=None,
    methods: list[str] | None = None,
    seed: int = 0,
    model: Callable[[int], object] = default_model,
    name: str = "Selector",
) -> pd.DataFrame:
    """The Selector's per-sample records (docs/regimes.md §4.1), leave-one-group-out.

    ``features``: default the :data:`UNSUPERVISED_DESCRIPTORS` present in ``records``. ``model(seed)``
    returns an unfitted scikit-learn regressor. A method whose error is NaN on every training sample
    of a group cannot be predicted there and is not chosen for that group. Columns: those of
    ``records`` plus ``chosen_method``, ``predicted_error`` and ``is_method`` (True), rows sorted by
    (task, classifier, dataset, sample_id).
    """
    if features is None:
        features = [f for f in UNSUPERVISED_DESCRIPTORS if f in records.columns]
    features = check_features(features)
    methods = checked_methods(records, methods)
    info, errors = _wide(records, methods, features)
    groups = info["group"].to_numpy()
    unique_groups = sorted(pd.unique(groups), key=str)
    if len(unique_groups) < 2:
        raise ValueError(
            f"leave-one-group-out needs at least two groups, got {list(unique_groups)}"
        )
    X = info[features].to_numpy(dtype=float)
    E = errors.to_numpy(dtype=float)
    predicted = np.full(E.shape, np.inf)
    # one BLAS / OpenMP thread: the same numbers on any machine, and no oversubscription when jobs
    # run side by side (gradient boosting's OpenMP threads made a fit several times slower)
    with one_thread():
        for g in unique_groups:
            test = groups == g
            train = training_mask(groups, g)
            if not train.any():
                raise ValueError(f"no training samples outside group {g!r}")
            for j in range(len(methods)):
                usable = train & np.isfinite(E[:, j])
                if not usable.any():
                    continue
                regressor = model(seed)
                regressor.fit(X[usable], E[usable, j])
                predicted[test, j] = regressor.predict(X[test])
    if np.isinf(predicted.min(axis=1)).any():
        raise ValueError("some group has no method with a finite training error")
    choice = np.argmin(predicted, axis=1)  # first minimum: the earlier-listed method wins ties
    return _pick(
        records,
        errors.index,
        [methods[c] for c in choice],
        name,
        {
            "predicted_error": predicted[np.arange(len(choice)), choice],
            "is_method": True,
        },
    )


def oracle_records(
    records: pd.DataFrame, methods: list[str] | None = None, name: str = "Oracle"
) -> pd.DataFrame:
    """Per sample, the row of the method with the lowest finite error (NaN error if none has one),
    flagged ``is_method`` False: an upper bound, not a method."""
    methods = checked_methods(records, methods)
    scratch = records if "group" in records.columns else records.assign(group="")
    info, errors = _wide(scratch, methods)
    E = errors.to_numpy(dtype=float)
    E_filled = np.where(np.isfinite(E), E, np.inf)
    choice = np.argmin(E_filled, axis=1)
    return _pick(records, errors.index, [methods[c] for c in choice], name, {"is_method": False})


def best_single_method(
    records: pd.DataFrame, methods: list[str] | None = None, decimals: int = 12
) -> str:
    """The method with the lowest mean error over the samples on which every method has a finite
    error (paired); means rounded to ``decimals`` places, ties to the earlier-listed method."""
    methods = checked_methods(records, methods)
    scratch = records if "group" in records.columns else records.assign(group="")
    _, errors = _wide(scratch, methods)
    complete = errors[np.isfinite(errors.to_numpy(dtype=float)).all(axis=1)]
    if complete.empty:
        raise ValueError("no sample has a finite error for every method")
    means = complete.mean(axis=0).round(decimals)
    return min(methods, key=lambda m: (means[m], methods.index(m)))


def best_single_records(
    records: pd.DataFrame, methods: list[str] | None = None, name: str = "BestSingle"
) -> pd.DataFrame:
    """For each group, :func:`best_single_method` of the other groups' samples applied to the
    group's samples (leave-one-group-out, as the Selector); ``is_method`` True."""
    methods = checked_methods(records, methods)
    info, errors = _wide(records, methods)
    groups = info["group"].to_numpy()
    chosen = np.empty(len(groups), dtype=object)
    sample_groups = records.set_index(SAMPLE_KEY).index
    for g in sorted(pd.unique(groups), key=str):
        train_keys = errors.index[training_mask(groups, g)]
        if len(train_keys) == 0:
            raise ValueError(f"no training samples outside group {g!r}")
        train_rows = records[sample_groups.isin(train_keys)]
        chosen[groups == g] = best_single_method(train_rows, methods)
    return _pick(records, errors.index, list(chosen), name, {"is_method": True})


def selection_summary(*frames: pd.DataFrame) -> pd.DataFrame:
    """Mean error (NaN errors left out) and the number of finite errors per (pseudo-)method."""
    rows = pd.concat(frames, ignore_index=True)
    return (
        rows.groupby("method", sort=True)["error"]
        .agg(mean_error="mean", n_finite="count")
        .reset_index()
    )
