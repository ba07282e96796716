"""Critical-difference analysis: which methods are statistically indistinguishable (docs/reporting.md §3.2).

A re-implementation of the algorithm of the ``critdd`` package (not on PyPI): Friedman gate, pairwise
Wilcoxon signed-rank tests (Pratt zero handling), Holm adjustment, maximal cliques of the
"not significantly different" graph, each extended to every method whose average rank lies inside the
clique's rank interval, containment pruning and singleton removal. critdd asks SciPy for the exact
Wilcoxon null distribution; with thousands of paired observations we use the asymptotic normal
approximation instead (docs/reporting.md §3.2), which agrees to many digits at these sample sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import stats

from unishift.stats.ranks import (
    RANK_DECIMALS,
    FriedmanResult,
    failure_penalised,
    friedman_iman_davenport,
    rank_matrix,
)

ALPHA = 0.05


def pairwise_wilcoxon(errors: np.ndarray) -> np.ndarray:
    """(k, k) symmetric matrix of two-sided Wilcoxon p-values between every pair of columns.

    zero_method='pratt', asymptotic null. A pair with all-zero differences is identical: p = 1.
    """
    errors = np.asarray(errors, dtype=float)
    k = errors.shape[1]
    p = np.ones((k, k))
    for i, j in combinations(range(k), 2):
        d = errors[:, i] - errors[:, j]
        if np.all(d == 0):
            value = 1.0
        else:
            value = float(
                stats.wilcoxon(
                    errors[:, i], errors[:, j], zero_method="pratt", method="asymptotic"
                ).pvalue
            )
            if np.isnan(value):
                value = 1.0
        p[i, j] = p[j, i] = value
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
    """Groups of indistinguishable methods from the graph of non-significant pairs.

    Each maximal clique is widened to every method whose average rank lies in the clique's rank
    interval; a group whose interval is strictly inside another group's interval is dropped, then
    duplicates and singletons. Groups come sorted by (lowest rank, highest rank).
    """
    avg_ranks = np.asarray(avg_ranks, dtype=float)
    intervals = []
    for clique in maximal_cliques(adjacency):
        ranks = avg_ranks[list(clique)]
        intervals.append((float(ranks.min()), float(ranks.max())))
    kept = []
    for lo_g, hi_g in intervals:
        contained = any(
            not ((lo_h > lo_g or hi_h <= hi_g) and (lo_h >= lo_g or hi_h < hi_g))
            for lo_h, hi_h in intervals
        )
        if not contained:
            kept.append((lo_g, hi_g))
    groups = set()
    for lo, hi in kept:
        members = tuple(int(i) for i in np.flatnonzero((avg_ranks >= lo) & (avg_ranks <= hi)))
        if len(members) > 1:
            groups.add(members)
    return sorted(groups, key=lambda g: (min(avg_ranks[list(g)]), max(avg_ranks[list(g)]), g))


@dataclass(frozen=True)
class CDResult:
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
    """Full CD analysis of an (N experiments, k methods) error matrix (lower is better).

    Ranks and paired tests both use the errors rounded to ``decimals`` (the same matrix as the tables'
    "Ave Rank" row); NaN errors are failures ranked last.
    """
    methods = tuple(methods)
    errors = failure_penalised(errors)
    if decimals is not None:
        errors = np.round(errors, decimals)
    n, k = errors.shape
    if k != len(methods):
        raise ValueError(f"{k} error columns for {len(methods)} methods")
    avg = rank_matrix(errors, None).mean(axis=0)
    friedman = friedman_iman_davenport(avg, n)
    if friedman.pvalue >= alpha:
        ones = np.ones((k, k))
        groups = (tuple(range(k)),) if k > 1 else ()
        return CDResult(methods, avg, n, friedman, ones, ones, _named(groups, methods, avg), alpha)
    raw = pairwise_wilcoxon(errors)
    iu = np.triu_indices(k, 1)
    adjusted = np.ones((k, k))
    adjusted[iu] = holm(raw[iu])
    adjusted.T[iu] = adjusted[iu]
    adjacency = adjusted >= alpha
    np.fill_diagonal(adjacency, False)
    groups = groups_from_graph(avg, adjacency)
    return CDResult(methods, avg, n, friedman, raw, adjusted, _named(groups, methods, avg), alpha)


def _named(groups, methods, avg) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(methods[i] for i in sorted(g, key=lambda i: (avg[i], i))) for g in groups)
