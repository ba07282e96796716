import numpy as np
import pytest
from scipy import stats

from unishift.evaluation.stats import (
    bold_row,
    cell_means,
    row_colours,
    wilcoxon_pvalue,
    win_rates,
)


def test_wilcoxon_pvalue_matches_scipy_defaults():
    rng = np.random.default_rng(1)
    x = rng.normal(size=100)
    y = x + rng.normal(0.1, 0.5, size=100)
    assert wilcoxon_pvalue(x, y) == pytest.approx(stats.wilcoxon(x, y).pvalue, rel=1e-12)


def test_wilcoxon_pvalue_identical_is_nan_and_nan_pairs_dropped():
    x = np.linspace(0, 1, 30)
    assert np.isnan(wilcoxon_pvalue(x, x))
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=60), rng.normal(size=60)
    a_nan = a.copy()
    a_nan[[3, 7]] = np.nan
    keep = np.ones(60, bool)
    keep[[3, 7]] = False
    assert wilcoxon_pvalue(a_nan, b) == pytest.approx(stats.wilcoxon(a[keep], b[keep]).pvalue)


def test_bold_row_min_ties_significance_and_na():
    rng = np.random.default_rng(3)
    base = rng.uniform(0, 1, size=100)
    values = np.column_stack(
        [
            base + 2.0,  # clearly worse -> not bold
            base,  # the minimum
            base + rng.normal(0, 0.2, size=100) + 1e-3,  # indistinguishable noise -> bold
            base,  # identical to the minimum: tie for the minimum -> bold
            np.full(100, np.nan),  # every sample errored -> n/a, never bold
        ]
    )
    result = bold_row(values)
    assert result.best == 1
    assert stats.wilcoxon(values[:, 2], base).pvalue >= 0.05
    assert result.bold.tolist() == [False, True, True, True, False]
    assert result.pvalues[0] < 1e-10


def test_bold_row_identical_to_best_is_bold_via_nan():
    values = np.column_stack([np.arange(20.0), np.arange(20.0) + 0.5, np.arange(20.0)])
    values[0, 2] = -100  # col 2 is best; col 0 differs from it in one sample only
    result = bold_row(values)
    assert result.best == 2
    assert result.bold[2] and not result.bold[1]


def test_cell_means_ignores_failed_samples():
    values = np.array([[1.0, np.nan], [3.0, np.nan], [np.nan, np.nan]])
    means = cell_means(values)
    assert means[0] == 2.0 and np.isnan(means[1])


@pytest.mark.parametrize(
    "means, expected",
    [
        ([1.0, 2.0, 3.0], ["green!40", "green!0", "red!40"]),
        ([1.0, 1.5, 3.0], ["green!40", "green!20", "red!40"]),
        # v = -1 + 2 * 0.9951 = 0.9902 -> 39.6 truncated to 39
        ([0.0, 0.9951, 1.0], ["green!40", "red!39", "red!40"]),
        ([2.0, 2.0], ["red!40", "red!40"]),  # numpy interp on a degenerate range returns +1
        ([1.0, np.nan, 3.0], ["green!40", None, "red!40"]),
    ],
)
def test_row_colours(means, expected):
    assert row_colours(np.array(means)) == expected


def test_row_colours_against_paper_row():
    # First row of tab:calib:covshift (BERT, imdb->rt): printed means and their colours.
    means = [0.826, 2.450, 2.966, 1.623, 0.893, 0.873, 1.013, 1.682, 2.066, 0.842, 0.584, 1.006,
             0.626, 3.863, 2.507, 14.849, 0.924, 2.251]  # fmt: skip
    tones = [38, 29, 26, 34, 38, 38, 37, 33, 31, 38, 40, 37, 39, 21, 29, -40, 38, 30]
    expected = [f"green!{t}" if t >= 0 else f"red!{-t}" for t in tones]
    assert row_colours(np.array(means)) == expected


def _errors_for_win_counts(s: np.ndarray, r: int) -> np.ndarray:
    """Columns [M, R1..Rr]: on experiment e, M ties the first s_e references and loses to the rest."""
    n = s.size
    errors = np.zeros((n, r + 1))
    errors[:, 0] = 1.0
    for e in range(n):
        errors[e, 1:] = [1.0] * s[e] + [0.5] * (r - s[e])
    return errors


def _threshold(n: int, p: float) -> int:
    """Smallest number of successes whose one-sided binomial p-value is below 0.05."""
    return next(k for k in range(n + 1) if stats.binom.sf(k - 1, n, p) < 0.05)


@pytest.mark.parametrize("wins", [88, 0])
def test_win_rate_pvalue_is_the_one_sided_binomial_test(wins):
    s = np.zeros(100, dtype=int)
    s[:wins] = 1
    errors = _errors_for_win_counts(s, 4)
    result = win_rates(errors, ["M", "R1", "R2", "R3", "R4"], ["R1", "R2", "R3", "R4"])
    assert result.pvalues[0, 0] == pytest.approx(
        stats.binomtest(wins, 100, 0.8, alternative="greater").pvalue
    )


@pytest.mark.parametrize("above", [True, False])
def test_win_rate_dagger_on_both_sides_of_threshold(above):
    n, r = 400, 4
    k_star = _threshold(n, 0.8)
    k1 = k_star if above else k_star - 1
    s = np.zeros(n, dtype=int)
    s[:k1] = 1  # beats exactly one reference on k1 experiments (ties count as wins)
    errors = _errors_for_win_counts(s, r)
    result = win_rates(errors, ["M", "R1", "R2", "R3", "R4"], ["R1", "R2", "R3", "R4"])
    assert result.counts[0, 0] == k1
    assert result.rates[0, 0] == pytest.approx(k1 / n)
    assert result.dagger[0, 0] == above
    assert np.isnan(result.rates[:, 1:]).all()


def test_win_rate_sequential_gating():
    n, r = 400, 4
    # i = 1 misses its threshold (H0 p = 0.8) but i = 2 alone would pass its own (H0 p = 0.6).
    k1 = _threshold(n, 0.8) - 1
    k2 = _threshold(n, 0.6) + 10
    assert k2 <= k1
    s = np.zeros(n, dtype=int)
    s[:k2] = 2
    s[k2:k1] = 1
    errors = _errors_for_win_counts(s, r)
    result = win_rates(errors, ["M", "R1", "R2", "R3", "R4"], ["R1", "R2", "R3", "R4"])
    assert result.counts[:2, 0].tolist() == [k1, k2]
    assert not result.dagger[:, 0].any()
    assert np.isnan(result.pvalues[1:, 0]).all()
    assert (
        stats.binomtest(k2, n, 0.6, alternative="greater").pvalue < 0.05
    )  # it would have passed without the gate


def test_win_rates_nan_is_a_loss():
    errors = np.array([[np.nan, 1.0], [0.5, np.nan], [np.nan, np.nan], [2.0, 1.0]])
    result = win_rates(errors, ["M", "R"], ["R"])
    assert result.counts[0, 0] == 1  # only experiment 1 (finite vs failed reference)
