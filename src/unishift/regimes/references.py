"""The references a selection is judged against and the uncertainty of its figures
(docs/regimes.md §4.4, §4.5): the best single method in hindsight, the best method per setup in
hindsight, the degenerate rule, and cluster-bootstrap intervals (setups, then samples within them).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from unishift.evaluation.stats import MIN_COVERAGE

# The trivial answers' record columns (written by unishift.evaluation.trivial, one file per setup; read
# by the selection files without importing the methods): the keys of a sample, each task's error of
# its trivial answer, and the setup facts known at deployment (inputs of the Hybrid, docs/regimes.md)
KEYS = ("shift", "classifier", "dataset", "sample_id")
TASK_COLUMNS = {
    "calibration": "trivial_calibration",
    "quantification": "trivial_quantification",
    "cap": "trivial_cap",
}
# a setup fact known at deployment, an input of the Hybrid (docs/regimes.md §4.6)
FACTS = ("validation_accuracy",)
COLUMNS = (*KEYS, *TASK_COLUMNS.values(), *FACTS)
# what each task's trivial answer is, for the selection files' notes
ANSWERS = {
    "calibration": "the uncalibrated posteriors",
    "quantification": "the training prevalence",
    "cap": "the validation accuracy",
}

SETUP = ["classifier", "dataset"]  # one setup of a task and shift: the bootstrap's cluster
# the number of resamples when the config gives none (config key regimes.n_bootstrap)
N_BOOTSTRAP = 1000


def cluster_draws(clusters, n_resamples: int, seed: int) -> list[np.ndarray]:
    """The row indices of each of ``n_resamples`` two-stage resamples of rows grouped by
    ``clusters``: the clusters drawn with replacement, then each drawn cluster's rows drawn with
    replacement from its own rows (a cluster drawn twice gets two independent draws). The draws
    follow one ``numpy.random.default_rng(seed)`` stream: per resample the clusters, then per drawn
    cluster its rows, in draw order."""
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    clusters = np.asarray(clusters)
    if clusters.ndim != 1 or len(clusters) == 0:
        raise ValueError("cluster_draws needs a non-empty 1-d array of cluster labels")
    _, codes = np.unique(clusters, return_inverse=True)
    members = [np.flatnonzero(codes == c) for c in range(codes.max() + 1)]
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_resamples):
        picked = rng.integers(0, len(members), size=len(members))
        draws.append(
            np.concatenate(
                [members[c][rng.integers(0, len(members[c]), len(members[c]))] for c in picked]
            )
        )
    return draws


def bootstrap_interval(
    values,
    clusters,
    statistic: Callable[[np.ndarray], float] | None = None,
    n_resamples: int = N_BOOTSTRAP,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[float, float]:
    """The percentile interval (``alpha`` / 2, 1 - ``alpha`` / 2) of ``statistic`` over cluster
    resamples (:func:`cluster_draws`) of the rows of ``values`` ((n,) or (n, m); NaN: a failure,
    left out by the default statistic, the mean of the finite values of a 1-d ``values``)."""
    values = np.asarray(values, dtype=float)
    if len(values) != len(np.asarray(clusters)):
        raise ValueError(f"{len(values)} values but {len(np.asarray(clusters))} cluster labels")
    if statistic is None:
        if values.ndim != 1:
            raise ValueError("a 2-d values array needs its statistic")
        statistic = _finite_mean
    stats = np.array(
        [statistic(values[rows]) for rows in cluster_draws(clusters, n_resamples, seed)]
    )
    stats = stats[np.isfinite(stats)]
    if len(stats) == 0:
        return float("nan"), float("nan")
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def resample_weights(clusters, n_resamples: int, seed: int) -> np.ndarray:
    """(``n_resamples``, n) how many times each row is drawn in each of :func:`cluster_draws`'s
    resamples (the same stream, so the same resamples)."""
    n = len(np.asarray(clusters))
    weights = np.zeros((n_resamples, n))
    for b, rows in enumerate(cluster_draws(clusters, n_resamples, seed)):
        weights[b] = np.bincount(rows, minlength=n)
    return weights


def bootstrap_mean_intervals(
    values,
    clusters,
    n_resamples: int = N_BOOTSTRAP,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[np.ndarray, np.ndarray]:
    """(low, high), each (k,): the interval :func:`bootstrap_interval` gives each column of the (n, k)
    ``values`` (NaN: a failure, left out of its column's mean) with the same seed, computed at once:
    one set of resamples shared by every column (paired), each resample's means as a weighted sum.
    NaN where a column has no finite resampled mean."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or len(values) != len(np.asarray(clusters)):
        raise ValueError(
            f"values must be (n, k) with one cluster label per row, got {values.shape} and "
            f"{len(np.asarray(clusters))} labels"
        )
    weights = resample_weights(clusters, n_resamples, seed)
    finite = np.isfinite(values)
    # einsum, not a BLAS product: the same sums in the same order whatever the thread count, so the
    # table job writes the same bytes in the job server, a plain process or a test
    sums = np.einsum("bn,nk->bk", weights, np.where(finite, values, 0.0))
    counts = np.einsum("bn,nk->bk", weights, finite.astype(float))
    means = np.full(sums.shape, np.nan)
    np.divide(sums, counts, out=means, where=counts > 0)
    low, high = np.full(values.shape[1], np.nan), np.full(values.shape[1], np.nan)
    some = np.isfinite(means).any(axis=0)
    if some.any():
        bounds = np.nanquantile(means[:, some], [alpha / 2, 1 - alpha / 2], axis=0)
        low[some], high[some] = bounds
    return low, high


def _finite_mean(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if len(finite) else float("nan")


def relative_gain(pairs: np.ndarray) -> float:
    """1 - mean(candidate) / mean(reference) over the rows of an (n, 2) array (candidate,
    reference) where both are finite: the share of the reference's error the candidate removes."""
    both = pairs[np.isfinite(pairs).all(axis=1)]
    if len(both) == 0 or both[:, 1].mean() == 0:
        return float("nan")
    return float(1.0 - both[:, 0].mean() / both[:, 1].mean())


def best_per_setup(errors: pd.DataFrame, methods: list[str], best: Callable) -> list[str]:
    """Per row of ``errors`` (indexed by a MultiIndex with the :data:`SETUP` levels), the method
    ``best(setup_errors, methods)`` picks on the rows of its setup: the best method per setup in
    hindsight (an upper bound that cannot exploit per-sample noise, unlike the per-sample oracle)."""
    setups = errors.index.to_frame(index=False)[SETUP].astype(str).agg("\x00".join, axis=1)
    setups = setups.to_numpy()
    chosen = np.empty(len(errors), dtype=object)
    for setup in pd.unique(setups):
        rows = setups == setup
        chosen[rows] = best(errors[rows], methods)
    return list(chosen)


DECIMALS = 12  # the means' comparison in degenerate()


def degenerate(trivial_mean: float, method_means: dict[str, float]) -> tuple[bool, int]:
    """Whether a task and shift is degenerate (docs/regimes.md §4.4): the trivial answer's overall
    mean error is strictly below the overall mean error of more than half of ``method_means`` (the
    methods scored on at least the coverage share); and the number of methods it beats."""
    means = [m for m in method_means.values() if np.isfinite(m)]
    if not means or not np.isfinite(trivial_mean):
        return False, 0
    # compared at 12 decimals: a method that answers the trivial answer (Naive for CAP) ties with
    # it, and two summation orders of the same errors must not make the tie a win
    trivial = round(float(trivial_mean), DECIMALS)
    beaten = sum(trivial < round(float(m), DECIMALS) for m in means)
    return beaten > len(means) / 2, beaten


__all__ = [
    "MIN_COVERAGE",
    "N_BOOTSTRAP",
    "best_per_setup",
    "bootstrap_interval",
    "bootstrap_mean_intervals",
    "cluster_draws",
    "degenerate",
    "relative_gain",
    "resample_weights",
]
