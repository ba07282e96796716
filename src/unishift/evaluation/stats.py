"""Statistics behind the result tables and CD diagrams: average ranks and the Friedman
(Iman-Davenport) test, per-row Wilcoxon bolding and win rates with the details the paper does not
state but the authors' reference implementation follows (ties are wins, the sequential binomial
gate; docs/reproduction.md), and the critical-difference groups, a re-implementation of the
``critdd`` package with the normal approximation to the Wilcoxon null (docs/reporting.md §2.3-§2.5,
§3.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import stats

ALPHA = 0.05
RANK_DECIMALS = 8
# The share of the samples a method was asked for that it must have scored to be compared as a
# winner (docs/reporting.md §2.1.1): below it a method is shown, counted and flagged, but never
# bold, best-coloured, top-ranked, daggered, chosen, nor a reason to drop other methods' samples.
MIN_COVERAGE = 0.9


def check_share(name: str, value, low_open: bool = True) -> float:
    """A finite number in (0, 1) (``low_open``) or (0, 1], not a bool; else a ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    inside = 0.0 < value < 1.0 if low_open else 0.0 < value <= 1.0
    if not inside:  # NaN included
        bounds = "0 < x < 1" if low_open else "0 < x <= 1"
        raise ValueError(f"{name} must be a finite number with {bounds}, got {value!r}")
    return value


def covered(values: np.ndarray, min_coverage: float = MIN_COVERAGE) -> np.ndarray:
    """(k,) mask of the columns of an (n, k) matrix (NaN where a method failed) with a finite value
    on at least ``min_coverage`` of the n rows; every column is False when n is 0."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise ValueError("values must be (n_samples, n_methods)")
    n = values.shape[0]
    scored = np.isfinite(values).sum(axis=0)
    # integers compared, so that 9 of 10 at 0.9 is not lost to 0.9 * 10 = 9.000000000000002
    return (n > 0) & (scored >= np.ceil(np.round(min_coverage * n, 9)))


def _ranked_errors(errors: np.ndarray, decimals: int | None) -> np.ndarray:
    """NaN errors (failed samples) replaced by one finite value worse than every finite error (so
    that failures lose to every number, tie with each other and keep paired tests defined), then
    rounded to ``decimals`` (None: not rounded)."""
    errors = np.asarray(errors, dtype=float)
    finite = np.isfinite(errors)
    top = float(np.max(np.abs(errors[finite]))) if finite.any() else 0.0
    errors = np.where(finite, errors, 2.0 * top + 1.0)
    return errors if decimals is None else np.round(errors, decimals)


def rank_matrix(errors: np.ndarray, decimals: int | None = RANK_DECIMALS) -> np.ndarray:
    """Per-experiment ranks of an (N, k) error matrix after rounding to ``decimals`` (None: no
    rounding), failures last (docs/reporting.md §2.5)."""
    return stats.rankdata(_ranked_errors(errors, decimals), method="average", axis=1)


def top_ranked(avg_ranks: np.ndarray, r: int, eligible: np.ndarray | None = None) -> np.ndarray:
    """Mask of the r lowest average ranks among the ``eligible`` columns (default: every one); ties
    at the cut-off go to the earlier column."""
    avg_ranks = np.asarray(avg_ranks, dtype=float)
    candidates = np.arange(len(avg_ranks))
    if eligible is not None:
        candidates = candidates[np.asarray(eligible, dtype=bool)]
    mask = np.zeros(len(avg_ranks), dtype=bool)
    mask[candidates[np.argsort(avg_ranks[candidates], kind="stable")[:r]]] = True
    return mask


@dataclass(frozen=True)
class FriedmanResult:
    chi2: float
    statistic: float  # Iman-Davenport F
    df1: int
    df2: int
    pvalue: float


def friedman_iman_davenport(avg_ranks: np.ndarray, n: int) -> FriedmanResult:
    """The Friedman chi2 (no tie correction, as critdd) and its right-tailed Iman-Davenport F test
    from the average ranks of k methods over n experiments."""
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


def wilcoxon_pvalue(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value with SciPy's defaults (docs/reporting.md §2.3); pairs
    with a NaN are dropped, and NaN (no pair, or no difference) must be read as "not different"."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in shape: {x.shape} vs {y.shape}")
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size == 0 or np.all(x == y):
        # SciPy answers this case inconsistently across versions (NaN, 1.0 or an exception).
        return float("nan")
    return float(stats.wilcoxon(x, y).pvalue)


@dataclass(frozen=True)
class RowBold:
    bold: np.ndarray  # (k,) bool
    best: int  # column index of the Wilcoxon reference cell, -1 if every cell is n/a
    pvalues: np.ndarray  # (k,) p-value of each cell against the best one (NaN for best and n/a)


def bold_row(
    values: np.ndarray, alpha: float = ALPHA, min_coverage: float = MIN_COVERAGE
) -> RowBold:
    """Bold flags of one table row (docs/reporting.md §2.3) from its (n_samples, k) errors, aligned by
    sample id (NaN where a method errored); a cell scored on fewer than ``min_coverage`` of the
    samples is never bold nor the best cell (docs/reporting.md §2.1.1)."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise ValueError("values must be (n_samples, n_methods)")
    means = cell_means(values)
    pvalues = np.full(values.shape[1], np.nan)
    available = np.isfinite(means) & covered(values, min_coverage)
    if not available.any():
        return RowBold(available, -1, pvalues)
    bold = available & (means == np.min(means[available]))
    best = int(np.flatnonzero(bold)[0])
    for j in np.flatnonzero(available & ~bold):
        pvalues[j] = wilcoxon_pvalue(values[:, j], values[:, best])
        # a NaN p-value (identical columns) counts as "not different", as in the reference
        # implementation
        bold[j] = bool(np.isnan(pvalues[j]) or pvalues[j] >= alpha)
    return RowBold(bold, best, pvalues)


def cell_means(values: np.ndarray) -> np.ndarray:
    """Column means over the samples that did not error; NaN for a column with no usable sample."""
    values = np.asarray(values, dtype=float)
    finite = np.isfinite(values)
    counts = finite.sum(axis=0)
    sums = np.where(finite, values, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def row_colours(
    means: np.ndarray, max_tone: int = 40, eligible: np.ndarray | None = None
) -> list[str | None]:
    """``green!N`` / ``red!N`` per cell (docs/reporting.md §2.2), the scale spanned by the
    ``eligible`` cells (default: every one); None for an n/a cell and a cell not eligible (scored on
    too few samples: docs/reporting.md §2.1.1)."""
    means = np.asarray(means, dtype=float)
    available = np.isfinite(means)
    if eligible is not None:
        available &= np.asarray(eligible, dtype=bool)
    out: list[str | None] = [None] * means.size
    if not available.any():
        return out
    lo, hi = float(np.min(means[available])), float(np.max(means[available]))
    for j in np.flatnonzero(available):
        v = float(np.interp(means[j], [lo, hi], [-1.0, 1.0]))
        tone = int(abs(v) * max_tone)
        out[j] = f"{'green' if v <= 0 else 'red'}!{tone}"
    return out


@dataclass(frozen=True)
class WinRates:
    methods: tuple[str, ...]
    references: tuple[str, ...]
    n_experiments: int
    counts: np.ndarray  # (r, k) int: #experiments where M beats >= i references; -1 for references
    rates: np.ndarray  # (r, k) float in [0, 1]; NaN for reference columns
    pvalues: np.ndarray  # (r, k) binomial p-value; NaN where the test was not run
    dagger: np.ndarray  # (r, k) bool


def win_rates(
    errors: np.ndarray,
    methods: list[str] | tuple[str, ...],
    references: list[str] | tuple[str, ...],
    alpha: float = ALPHA,
    min_coverage: float = MIN_COVERAGE,
) -> WinRates:
    """Win rates and daggers of every non-reference method against the reference methods from an
    (N experiments, k methods) error matrix, NaN for a failure (docs/reporting.md §2.4); a failure
    loses, and a method scored on fewer than ``min_coverage`` of the experiments gets no dagger."""
    errors = np.asarray(errors, dtype=float)
    methods = tuple(methods)
    references = tuple(references)
    n, k = errors.shape
    if k != len(methods):
        raise ValueError(f"{k} error columns for {len(methods)} methods")
    missing = [m for m in references if m not in methods]
    if missing:
        raise ValueError(f"reference methods {missing} are not among the table's methods")
    r = len(references)
    counts = np.full((r, k), -1, dtype=int)
    rates = np.full((r, k), np.nan)
    pvalues = np.full((r, k), np.nan)
    dagger = np.zeros((r, k), dtype=bool)
    theirs = errors[:, [methods.index(m) for m in references]]
    eligible = covered(errors, min_coverage) if n else np.zeros(k, dtype=bool)
    for j in (j for j, name in enumerate(methods) if name not in references):
        mine = errors[:, j][:, None]
        beats = (np.isfinite(mine) & ~np.isfinite(theirs)) | (mine <= theirs)
        s = beats.sum(axis=1)
        gate_open = True
        for i in range(1, r + 1):
            k_i = int(np.sum(s >= i))
            counts[i - 1, j] = k_i
            rates[i - 1, j] = k_i / n if n else np.nan
            if gate_open and n:
                # P(X >= k_i), X ~ Binomial(n, 1 - i / (r + 1)): more wins than chance
                p = float(stats.binom.sf(k_i - 1, n, 1.0 - i / (r + 1)))
                pvalues[i - 1, j] = p
                dagger[i - 1, j] = p < alpha and eligible[j]
                gate_open = bool(dagger[i - 1, j])
    return WinRates(methods, references, n, counts, rates, pvalues, dagger)


def pairwise_wilcoxon(errors: np.ndarray) -> np.ndarray:
    """(k, k) symmetric matrix of two-sided Wilcoxon p-values (Pratt, asymptotic) between every
    pair of columns; a pair with all-zero differences is identical: p = 1."""
    errors = np.asarray(errors, dtype=float)
    k = errors.shape[1]
    p = np.ones((k, k))
    for i, j in combinations(range(k), 2):
        if np.any(errors[:, i] - errors[:, j] != 0):
            test = stats.wilcoxon(
                errors[:, i], errors[:, j], zero_method="pratt", method="asymptotic"
            )
            p[i, j] = p[j, i] = 1.0 if np.isnan(test.pvalue) else float(test.pvalue)
    return p


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm step-down adjustment: the j-th smallest of m p-values times (m - j + 1), then a running
    maximum so that adjusted values keep the order of the raw ones. Not capped at 1 (only the
    comparison with alpha matters); ties keep their input order."""
    pvalues = np.asarray(pvalues, dtype=float)
    m = pvalues.size
    order = np.argsort(pvalues, kind="stable")
    scaled = pvalues[order] * (m - np.arange(m))
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def maximal_cliques(adjacency: np.ndarray) -> list[frozenset[int]]:
    """All maximal cliques of an undirected graph (Bron-Kerbosch with pivoting), sorted."""
    adjacency = np.asarray(adjacency, dtype=bool)
    k = adjacency.shape[0]
    neighbours = [set(np.flatnonzero(adjacency[i])) - {i} for i in range(k)]
    found: list[frozenset[int]] = []

    def expand(clique: set[int], candidates: set[int], excluded: set[int]) -> None:
        if not candidates and not excluded:
            found.append(frozenset(clique))
            return
        pivot = max(candidates | excluded, key=lambda u: len(neighbours[u] & candidates))
        for v in sorted(candidates - neighbours[pivot]):
            expand(clique | {v}, candidates & neighbours[v], excluded & neighbours[v])
            candidates = candidates - {v}
            excluded = excluded | {v}

    expand(set(), set(range(k)), set())
    return sorted(found, key=lambda c: sorted(c))


def groups_from_graph(avg_ranks: np.ndarray, adjacency: np.ndarray) -> list[tuple[int, ...]]:
    """Groups of indistinguishable methods from the graph of non-significant pairs (docs/reporting.md
    §3.2, step 5), sorted by (lowest rank, highest rank)."""
    avg_ranks = np.asarray(avg_ranks, dtype=float)
    ranks = [avg_ranks[list(clique)] for clique in maximal_cliques(adjacency)]
    intervals = [(float(r.min()), float(r.max())) for r in ranks]
    # the intervals not contained in another one
    kept = [
        (lo_g, hi_g)
        for lo_g, hi_g in intervals
        if all(
            (lo_h > lo_g or hi_h <= hi_g) and (lo_h >= lo_g or hi_h < hi_g)
            for lo_h, hi_h in intervals
        )
    ]
    members = [
        tuple(int(i) for i in np.flatnonzero((avg_ranks >= lo) & (avg_ranks <= hi)))
        for lo, hi in kept
    ]
    groups = {group for group in members if len(group) > 1}
    return sorted(groups, key=lambda g: (min(avg_ranks[list(g)]), max(avg_ranks[list(g)]), g))


@dataclass(frozen=True)
class CDResult:
    """A critical-difference analysis (docs/reporting.md §3.2): the methods' average ranks over
    ``n_experiments`` experiments, the Friedman (Iman-Davenport) test, the pairwise Wilcoxon
    p-values raw and Holm-adjusted, and the groups of methods not told apart at ``alpha``."""

    methods: tuple[str, ...]
    avg_ranks: np.ndarray  # (k,)
    n_experiments: int
    friedman: FriedmanResult
    pvalues: np.ndarray  # (k, k) raw pairwise p-values (ones when the Friedman gate did not open)
    adjusted: np.ndarray  # (k, k) Holm-adjusted
    groups: tuple[tuple[str, ...], ...]  # members of each drawn group (>= 2 methods), by rank
    alpha: float


def cd_analysis(
    errors: np.ndarray,
    methods: list[str] | tuple[str, ...],
    alpha: float = ALPHA,
    decimals: int | None = RANK_DECIMALS,
) -> CDResult:
    """Full CD analysis of an (N experiments, k methods) error matrix (lower is better): ranks and
    paired tests both on the errors rounded to ``decimals`` (the tables' "Ave Rank" matrix), NaN
    errors ranked last."""
    methods = tuple(methods)
    errors = _ranked_errors(errors, decimals)
    n, k = errors.shape
    if k != len(methods):
        raise ValueError(f"{k} error columns for {len(methods)} methods")
    avg = rank_matrix(errors, None).mean(axis=0)
    friedman = friedman_iman_davenport(avg, n)
    raw, adjusted = np.ones((k, k)), np.ones((k, k))
    groups = [tuple(range(k))] if k > 1 else []
    if friedman.pvalue < alpha:
        raw = pairwise_wilcoxon(errors)
        iu = np.triu_indices(k, 1)
        adjusted[iu] = holm(raw[iu])
        adjusted.T[iu] = adjusted[iu]
        adjacency = adjusted >= alpha
        np.fill_diagonal(adjacency, False)
        groups = groups_from_graph(avg, adjacency)
    named = tuple(tuple(methods[i] for i in sorted(g, key=lambda i: (avg[i], i))) for g in groups)
    return CDResult(methods, avg, n, friedman, raw, adjusted, named, alpha)
