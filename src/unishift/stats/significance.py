"""Per-row bolding (Wilcoxon against the row's best cell) and win rates against the reference methods.

Everything follows docs/reporting.md §2.3-§2.4, i.e. what the authors' table generator did to produce the
published tables, including two details the paper does not state: ties count as wins, and the binomial
test for ``i`` reference methods is only run if the test for ``i - 1`` rejected.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

ALPHA = 0.05


def wilcoxon_pvalue(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value with SciPy's defaults (zero_method='wilcox', no
    continuity correction, method='auto').

    Pairs where either value is NaN are dropped (a sample on which a method errored has no paired
    value). All-zero differences or fewer than one usable pair give NaN, which callers must read as
    "not significantly different".
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in shape: {x.shape} vs {y.shape}")
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size == 0 or np.all(x == y):
        # SciPy answers this case inconsistently across versions (NaN, 1.0 or an exception).
        return float("nan")
    return float(stats.wilcoxon(x, y).pvalue)


def not_significant(p: float, alpha: float = ALPHA) -> bool:
    """A NaN p-value (identical columns) counts as "not different" (docs/reporting.md §2.3, REF behaviour)."""
    return bool(np.isnan(p) or p >= alpha)


@dataclass(frozen=True)
class RowBold:
    bold: np.ndarray  # (k,) bool
    best: int  # column index of the Wilcoxon reference cell, -1 if every cell is n/a
    pvalues: np.ndarray  # (k,) p-value of each cell against the best one (NaN for best and n/a)


def bold_row(values: np.ndarray, alpha: float = ALPHA) -> RowBold:
    """Bold flags of one table row.

    ``values`` is (n_samples, k): the per-sample errors of the k methods of the row, aligned by sample
    id (NaN where a method errored). Cells with the minimum mean are bold; every other cell is bold if
    its paired Wilcoxon test against the first minimum cell does not reject at ``alpha``. A cell whose
    samples all errored is never bold.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise ValueError("values must be (n_samples, n_methods)")
    k = values.shape[1]
    means = cell_means(values)
    bold = np.zeros(k, dtype=bool)
    pvalues = np.full(k, np.nan)
    available = np.isfinite(means)
    if not available.any():
        return RowBold(bold, -1, pvalues)
    best_value = np.min(means[available])
    minimum = available & (means == best_value)
    best = int(np.flatnonzero(minimum)[0])
    bold |= minimum
    for j in np.flatnonzero(available & ~minimum):
        pvalues[j] = wilcoxon_pvalue(values[:, j], values[:, best])
        bold[j] = not_significant(pvalues[j], alpha)
    return RowBold(bold, best, pvalues)


def cell_means(values: np.ndarray) -> np.ndarray:
    """Column means over the samples that did not error; NaN for a column with no usable sample."""
    values = np.asarray(values, dtype=float)
    finite = np.isfinite(values)
    counts = finite.sum(axis=0)
    sums = np.where(finite, values, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def row_colours(means: np.ndarray, max_tone: int = 40) -> list[str | None]:
    """``green!N`` / ``red!N`` per cell (docs/reporting.md §2.2); None for an n/a cell.

    The row's [min, max] is mapped linearly onto [-1, 1] with numpy's ``interp`` (so a row whose
    means all coincide maps to +1, i.e. red, as in REF); the tone is the truncated |v| * max_tone.
    """
    means = np.asarray(means, dtype=float)
    available = np.isfinite(means)
    out: list[str | None] = [None] * means.size
    if not available.any():
        return out
    lo, hi = float(np.min(means[available])), float(np.max(means[available]))
    for j in np.flatnonzero(available):
        v = float(np.interp(means[j], [lo, hi], [-1.0, 1.0]))
        tone = int(abs(v) * max_tone)
        out[j] = f"{'green' if v <= 0 else 'red'}!{tone}"
    return out


def binomial_greater_pvalue(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p): the one-sided test of "more successes than chance"."""
    if k <= 0:
        return 1.0
    return float(stats.binom.sf(k - 1, n, p))


@dataclass(frozen=True)
class WinRates:
    methods: tuple[str, ...]
    references: tuple[str, ...]
    n_experiments: int
    counts: (
        np.ndarray
    )  # (r, k) int: k_i = #experiments where M beats >= i references; -1 for references
    rates: np.ndarray  # (r, k) float in [0, 1]; NaN for reference columns
    pvalues: np.ndarray  # (r, k) binomial p-value; NaN where the test was not run
    dagger: np.ndarray  # (r, k) bool


def win_rates(
    errors: np.ndarray,
    methods: list[str] | tuple[str, ...],
    references: list[str] | tuple[str, ...],
    alpha: float = ALPHA,
) -> WinRates:
    """Win rates of every non-reference method against the reference methods (docs/reporting.md §2.4).

    ``errors`` is (N experiments, k methods). M beats reference R on experiment e iff
    err_M(e) <= err_R(e) (ties are wins). NaN errors are failures: a NaN never beats anything, and
    anything finite beats a NaN reference. The dagger for i needs a one-sided binomial test against
    H0 p = 1 - i/(r+1) to reject, and is only attempted if it rejected for i - 1.
    """
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
    ref_idx = [methods.index(m) for m in references]
    counts = np.full((r, k), -1, dtype=int)
    rates = np.full((r, k), np.nan)
    pvalues = np.full((r, k), np.nan)
    dagger = np.zeros((r, k), dtype=bool)
    for j, name in enumerate(methods):
        if name in references:
            continue
        mine = errors[:, j][:, None]
        theirs = errors[:, ref_idx]
        beats = (np.isfinite(mine) & ~np.isfinite(theirs)) | (mine <= theirs)
        s = beats.sum(axis=1)
        gate_open = True
        for i in range(1, r + 1):
            k_i = int(np.sum(s >= i))
            counts[i - 1, j] = k_i
            rates[i - 1, j] = k_i / n if n else np.nan
            if gate_open and n:
                p = binomial_greater_pvalue(k_i, n, 1.0 - i / (r + 1))
                pvalues[i - 1, j] = p
                dagger[i - 1, j] = p < alpha
                gate_open = bool(dagger[i - 1, j])
    return WinRates(methods, references, n, counts, rates, pvalues, dagger)
