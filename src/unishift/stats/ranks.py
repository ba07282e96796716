"""Average ranks over experiments and the Friedman (Iman-Davenport) test (docs/reporting.md §2.5, §3.2).

Tables and CD diagrams use the same rank matrix (docs/reporting.md §2.5: computed once, correctly, over all
(setup, sample) blocks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

RANK_DECIMALS = 8


def failure_penalised(errors: np.ndarray) -> np.ndarray:
    """Replace NaN errors (failed samples) by one common value worse than every finite error.

    A failure thus loses to every method that produced a number and ties with other failures; the
    value is finite so that paired tests on differences stay defined.
    """
    errors = np.asarray(errors, dtype=float)
    finite = np.isfinite(errors)
    if finite.all():
        return errors.copy()
    top = float(np.max(np.abs(errors[finite]))) if finite.any() else 0.0
    return np.where(finite, errors, 2.0 * top + 1.0)


def rank_matrix(errors: np.ndarray, decimals: int | None = RANK_DECIMALS) -> np.ndarray:
    """Per-experiment ranks (1 = lowest error, ties averaged) of an (N, k) error matrix.

    Errors are rounded to ``decimals`` first so that float near-ties (e.g. 0.1 + 0.2 vs 0.3) become
    ties; NaN (failed) errors rank last.
    """
    errors = failure_penalised(errors)
    if decimals is not None:
        errors = np.round(errors, decimals)
    return stats.rankdata(errors, method="average", axis=1)


def average_ranks(errors: np.ndarray, decimals: int | None = RANK_DECIMALS) -> np.ndarray:
    return rank_matrix(errors, decimals).mean(axis=0)


def top_ranked(avg_ranks: np.ndarray, r: int) -> np.ndarray:
    """Mask of the r lowest average ranks; ties at the cut-off go to the earlier column."""
    order = np.argsort(np.asarray(avg_ranks), kind="stable")
    mask = np.zeros(len(avg_ranks), dtype=bool)
    mask[order[:r]] = True
    return mask


@dataclass(frozen=True)
class FriedmanResult:
    chi2: float
    statistic: float  # Iman-Davenport F
    df1: int
    df2: int
    pvalue: float


def friedman_iman_davenport(avg_ranks: np.ndarray, n: int) -> FriedmanResult:
    """F-distributed Friedman test from the average ranks of k methods over n experiments.

    chi2 = 12n/(k(k+1)) * sum_j (R_j - (k+1)/2)^2 (no tie correction, as critdd), F = (n-1) chi2 /
    (n(k-1) - chi2) with (k-1, (k-1)(n-1)) degrees of freedom, right-tailed.
    """
    avg_ranks = np.asarray(avg_ranks, dtype=float)
    k = avg_ranks.size
    if k < 2 or n < 2:
        raise ValueError("the Friedman test needs at least 2 methods and 2 experiments")
    chi2 = 12.0 * n / (k * (k + 1)) * float(np.sum((avg_ranks - (k + 1) / 2.0) ** 2))
    df1, df2 = k - 1, (k - 1) * (n - 1)
    denominator = n * (k - 1) - chi2
    if denominator <= 0:
        # Every experiment ranks the methods identically: the F statistic is unbounded.
        return FriedmanResult(chi2, float("inf"), df1, df2, 0.0)
    f = (n - 1) * chi2 / denominator
    return FriedmanResult(chi2, float(f), df1, df2, float(stats.f.sf(f, df1, df2)))
