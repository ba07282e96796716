"""A per-sample method selector (leave-one-group-out), and the Oracle and BestSingle references it is
judged against (input, model, ties, why it does not leak: docs/regimes.md §4).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from unishift.classifiers import one_thread
from unishift.evaluation.stats import MIN_COVERAGE, covered
from unishift.regimes.descriptors import UNSUPERVISED_DESCRIPTORS

SAMPLE_KEY = ["task", "classifier", "dataset", "sample_id"]
REQUIRED = (*SAMPLE_KEY, "method", "error")


def group_of(shift: str, dataset: str) -> str:
    """The held-out unit of a setup (docs/regimes.md §4)."""
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
    groups = [group_of(s, d) for s, d in zip(records["shift"], records["dataset"], strict=True)]
    return records.assign(group=groups)


def check_features(features) -> list[str]:
    """The features as a list of unsupervised descriptors (docs/regimes.md §4.2)."""
    features = list(features)
    if not features:
        raise ValueError("the selector needs at least one descriptor column")
    bad = [f for f in features if f not in UNSUPERVISED_DESCRIPTORS]
    if bad:
        raise ValueError(
            f"{bad} are not unsupervised descriptors (true intensities and record columns need the "
            f"sample's labels or are the answer): a selector may use unsupervised descriptors only, "
            f"{list(UNSUPERVISED_DESCRIPTORS)}"
        )
    return features


def training_mask(groups: np.ndarray, held_out) -> np.ndarray:
    """The samples the models for group ``held_out`` are trained on: those of every other group."""
    return np.asarray(groups) != held_out


def default_model(seed: int):
    """The default regressor: gradient-boosted trees (why: docs/regimes.md §4.1)."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(
        max_iter=200,
        learning_rate=0.05,
        min_samples_leaf=20,
        l2_regularization=1.0,
        early_stopping=False,
        random_state=seed,
    )


def method_errors(records: pd.DataFrame, methods, columns=(), what: str = "the selector"):
    """(``methods``, their records, their errors: one row per sample sorted by :data:`SAMPLE_KEY`,
    one column per method) of records of one task with :data:`REQUIRED` and ``columns``, at most
    one record per sample and method. ``methods`` (default: every method of ``records``, sorted)
    must be distinct, each with records."""
    missing = [c for c in (*REQUIRED, *columns) if c not in records.columns]
    if missing:
        raise ValueError(f"records lack the columns {missing}")
    tasks = records["task"].unique()
    if len(tasks) != 1:
        raise ValueError(
            f"{what} covers one task (one error measure) at a time; got "
            f"{sorted(map(str, tasks))}: filter the records first"
        )
    methods = sorted(records["method"].unique()) if methods is None else list(methods)
    if not methods or len(set(methods)) != len(methods):
        raise ValueError(f"methods must be distinct and non-empty, got {methods}")
    absent = sorted(set(methods) - set(records["method"]))
    if absent:
        raise ValueError(f"no records for the methods {absent}")
    frame = records[records["method"].isin(methods)]
    if frame.duplicated([*SAMPLE_KEY, "method"]).any():
        raise ValueError("more than one record per (classifier, dataset, sample_id, method)")
    errors = frame.pivot(index=SAMPLE_KEY, columns="method", values="error")
    return methods, frame, errors.reindex(columns=methods)


def complete_errors(records: pd.DataFrame, methods, shared: list[str] = ()):
    """:func:`method_errors` with a record of every method for every sample, and per sample the
    ``shared`` columns, which must be equal in its methods' records."""
    methods, frame, errors = method_errors(records, methods, shared)
    per_sample = frame.groupby(SAMPLE_KEY, sort=True)
    lacking = int((per_sample.size().reindex(errors.index) != len(methods)).sum())
    if lacking:
        raise ValueError(
            f"{lacking} samples lack some method's record; every method needs a row per sample "
            "(NaN error where it failed)"
        )
    for column in shared:
        if (per_sample[column].nunique(dropna=False) > 1).any():
            raise ValueError(
                f"{column!r} differs between the methods' rows of one sample; it must belong to "
                "the sample"
            )
    return methods, per_sample[list(shared)].first().reindex(errors.index), errors


def eligible_methods(
    errors: pd.DataFrame, methods: list[str], min_coverage: float = MIN_COVERAGE, what: str = ""
) -> list[str]:
    """The ``methods`` with a finite error on at least ``min_coverage`` of the rows of ``errors``
    (docs/regimes.md, "Failures"): the only ones that may be chosen, declared best or win a bin;
    a ValueError naming each method's count when none is."""
    mask = covered(errors[methods].to_numpy(dtype=float), min_coverage)
    if not mask.any():
        counts = np.isfinite(errors[methods].to_numpy(dtype=float)).sum(axis=0)
        scored = ", ".join(f"{m} {int(c)}" for m, c in zip(methods, counts, strict=True))
        raise ValueError(
            f"no method has a finite error on {min_coverage:.0%} of the {len(errors)} samples"
            f"{' ' + what if what else ''} (finite errors: {scored}); every method failed too often "
            "to be compared: see the records' reasons"
        )
    return [m for m, keep in zip(methods, mask, strict=True) if keep]


def chosen_records(
    records: pd.DataFrame, key_index, chosen: list, name: str, is_method: bool, **extra
):
    """The chosen method's row of each sample, renamed ``name``, with ``is_method`` and ``extra``."""
    lookup = records[records["method"].isin(set(chosen))].set_index([*SAMPLE_KEY, "method"])
    keys = [(*k, m) for k, m in zip(key_index, chosen, strict=True)]
    out = lookup.loc[keys].reset_index()
    return out.assign(chosen_method=out["method"], method=name, **extra, is_method=is_method)


def select_methods(
    records: pd.DataFrame,
    features=None,
    methods: list[str] | None = None,
    seed: int = 0,
    model: Callable[[int], object] = default_model,
    min_coverage: float = MIN_COVERAGE,
) -> pd.DataFrame:
    """The Selector's records, leave-one-group-out (docs/regimes.md §4.1): per sample the chosen
    method's record with ``chosen_method``, ``predicted_error`` and ``is_method`` True, sorted by
    :data:`SAMPLE_KEY`. ``model(seed)`` returns an unfitted scikit-learn regressor."""
    if features is None:
        features = [f for f in UNSUPERVISED_DESCRIPTORS if f in records.columns]
    features = check_features(features)
    methods, info, errors = complete_errors(records, methods, ["group", *features])
    groups = info["group"].to_numpy()
    unique_groups = sorted(pd.unique(groups), key=str)
    if len(unique_groups) < 2:
        raise ValueError(f"leave-one-group-out needs at least two groups, got {unique_groups}")
    X = info[features].to_numpy(dtype=float)
    E = errors.to_numpy(dtype=float)
    predicted = np.full(E.shape, np.inf)
    # one BLAS / OpenMP thread: the same numbers on any machine, and no oversubscription when jobs
    # run side by side (gradient boosting's OpenMP threads made a fit several times slower)
    with one_thread():
        for g in unique_groups:
            test, train = groups == g, training_mask(groups, g)
            # a method that failed on too many training samples is never a candidate
            candidates = eligible_methods(
                errors[train], methods, min_coverage, f"outside group {g!r}"
            )
            for j in (methods.index(m) for m in candidates):
                usable = train & np.isfinite(E[:, j])
                regressor = model(seed).fit(X[usable], E[usable, j])
                predicted[test, j] = regressor.predict(X[test])
    choice = np.argmin(predicted, axis=1)  # first minimum: the earlier-listed method wins ties
    lowest = predicted[np.arange(len(choice)), choice]
    chosen = [methods[c] for c in choice]
    return chosen_records(records, errors.index, chosen, "Selector", True, predicted_error=lowest)


def oracle_records(
    records: pd.DataFrame, methods: list[str] | None = None, min_coverage: float = MIN_COVERAGE
) -> pd.DataFrame:
    """Per sample, the row of the method with the lowest finite error among those scored on
    ``min_coverage`` of the samples (NaN error if none has one), flagged ``is_method`` False: an
    upper bound, not a method."""
    methods, _, errors = complete_errors(records, methods)
    candidates = [methods.index(m) for m in eligible_methods(errors, methods, min_coverage)]
    E = errors.to_numpy(dtype=float)[:, candidates]
    choice = np.argmin(np.where(np.isfinite(E), E, np.inf), axis=1)
    return chosen_records(
        records, errors.index, [methods[candidates[c]] for c in choice], "Oracle", False
    )


def best_single_method(
    records: pd.DataFrame, methods: list[str] | None = None, min_coverage: float = MIN_COVERAGE
) -> str:
    """The method with the lowest mean error over the samples on which every method scored on
    ``min_coverage`` of the samples has a finite error (paired); means rounded to 12 places, ties
    to the earlier-listed method. A method below the share is never the best, and its failures
    drop no other method's samples."""
    methods, _, errors = complete_errors(records, methods)
    return best_method(errors, methods, min_coverage)


def best_method(
    errors: pd.DataFrame, methods: list[str], min_coverage: float, what: str = ""
) -> str:
    """The method of lowest mean error over the samples where every eligible method (scored on at
    least ``min_coverage`` of its samples) has an error; ``what`` names the samples in errors."""
    methods = eligible_methods(errors, methods, min_coverage, what)
    errors = errors[methods]
    complete = errors[np.isfinite(errors.to_numpy(dtype=float)).all(axis=1)]
    if complete.empty:
        raise ValueError(
            f"no sample{' ' + what if what else ''} has a finite error for every one of {methods}"
        )
    means = complete.mean(axis=0).round(12)
    return min(methods, key=lambda m: (means[m], methods.index(m)))


def best_single_records(
    records: pd.DataFrame, methods: list[str] | None = None, min_coverage: float = MIN_COVERAGE
) -> pd.DataFrame:
    """For each group, :func:`best_single_method` of the other groups' samples applied to the
    group's samples (leave-one-group-out, as the Selector); ``is_method`` True."""
    methods, info, errors = complete_errors(records, methods, ["group"])
    groups = info["group"].to_numpy()
    chosen = np.empty(len(groups), dtype=object)
    for g in sorted(pd.unique(groups), key=str):
        train = training_mask(groups, g)
        if not train.any():
            raise ValueError(f"no training samples outside group {g!r}")
        chosen[groups == g] = best_method(
            errors[train], methods, min_coverage, f"outside group {g!r}"
        )
    return chosen_records(records, errors.index, list(chosen), "BestSingle", True)
