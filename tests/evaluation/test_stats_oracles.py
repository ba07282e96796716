"""The statistics of the tables and CD diagrams against maintained libraries as oracles:
statsmodels (Holm), scikit-posthocs (pairwise Wilcoxon + Holm), networkx (maximal cliques) and
scipy.stats (Friedman, binomial tests, ranks), on inputs where the variants disagree: a pair that
Holm makes non-significant, a Friedman gate that decides, ties, near-ties and failures."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scikit_posthocs as sp
from scipy import stats
from statsmodels.stats.multitest import multipletests

from unishift.evaluation.stats import (
    bold_row,
    cd_analysis,
    friedman_iman_davenport,
    holm,
    pairwise_wilcoxon,
    rank_matrix,
    row_colours,
    wilcoxon_pvalue,
    win_rates,
)

ALPHA = 0.05


@pytest.mark.parametrize("seed", range(4))
def test_holm_equals_statsmodels(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.2, 15) ** 2
    p[3] = p[7]  # a tie
    np.testing.assert_allclose(np.minimum(holm(p), 1.0), multipletests(p, method="holm")[1])


def holm_adjusted_matrix(errors):
    """scikit-posthocs: Pratt-Wilcoxon between every pair (asymptotic), Holm-adjusted."""
    return sp.posthoc_wilcoxon(
        list(errors.T), method="asymptotic", zero_method="pratt", p_adjust="holm"
    ).to_numpy()


def groups_oracle(avg_ranks, adjacency):
    """Maximal cliques by networkx, each widened to every method inside its rank interval, groups
    strictly inside another group's interval dropped, singletons and duplicates dropped."""
    graph = nx.from_numpy_array(adjacency.astype(int))
    graph.remove_edges_from(nx.selfloop_edges(graph))
    intervals = {(min(avg_ranks[list(c)]), max(avg_ranks[list(c)])) for c in nx.find_cliques(graph)}
    kept = [
        (lo, hi)
        for lo, hi in intervals
        if not any(a <= lo and hi <= b and (a, b) != (lo, hi) for a, b in intervals)
    ]
    groups = set()
    for lo, hi in kept:
        members = frozenset(np.flatnonzero((avg_ranks >= lo) & (avg_ranks <= hi)).tolist())
        if len(members) > 1:
            groups.add(members)
    return groups


def holm_changes_the_graph():
    """Five methods over 30 experiments: Friedman rejects, and Holm turns two raw rejections
    into non-significant pairs."""
    rng = np.random.default_rng(0)
    errors = rng.uniform(size=(30, 5))
    errors[:, 0] -= 0.25
    errors[:, 4] += 0.25
    return errors


def test_cd_groups_use_holm_adjusted_pvalues():
    errors = holm_changes_the_graph()
    result = cd_analysis(errors, list("ABCDE"), decimals=None)
    assert result.friedman.pvalue < ALPHA
    raw, adjusted = pairwise_wilcoxon(errors), holm_adjusted_matrix(errors)
    iu = np.triu_indices(5, 1)
    assert np.sum((raw[iu] < ALPHA) & (adjusted[iu] >= ALPHA)) == 2  # Holm changes the graph
    np.testing.assert_allclose(np.minimum(result.adjusted, 1.0), adjusted, rtol=1e-10)
    np.testing.assert_allclose(result.pvalues, raw, rtol=1e-12)
    expected = groups_oracle(result.avg_ranks, adjusted >= ALPHA)
    with_raw = groups_oracle(result.avg_ranks, raw >= ALPHA)
    assert expected != with_raw
    named = {frozenset("ABCDE"[i] for i in g) for g in expected}
    assert {frozenset(g) for g in result.groups} == named


def test_the_friedman_gate_decides():
    # eight methods of random errors, one of them always 0.001 above another: that pair differs
    # significantly even after Holm, but the Friedman test does not reject, so no pair is tested
    rng = np.random.default_rng(0)
    errors = rng.uniform(size=(40, 8))
    errors[:, 1] = errors[:, 0] + 0.001
    friedman = friedman_iman_davenport(rank_matrix(errors, None).mean(axis=0), 40)
    assert friedman.pvalue >= ALPHA
    assert holm_adjusted_matrix(errors)[0, 1] < 1e-6
    result = cd_analysis(errors, list("ABCDEFGH"))
    assert len(result.groups) == 1 and set(result.groups[0]) == set("ABCDEFGH")
    assert np.all(result.adjusted == 1.0)


def test_friedman_equals_scipy_with_ties_broken_by_rounding():
    rng = np.random.default_rng(3)
    errors = rng.uniform(size=(60, 4)) + np.array([0.0, 0.05, 0.1, 0.3])
    result = friedman_iman_davenport(rank_matrix(errors).mean(axis=0), 60)
    chi2 = stats.friedmanchisquare(*errors.T).statistic
    assert result.chi2 == pytest.approx(chi2, rel=1e-12)
    f = 59 * chi2 / (60 * 3 - chi2)
    assert result.pvalue == pytest.approx(stats.f.sf(f, 3, 3 * 59), rel=1e-10)


def test_ranks_average_ties_and_put_failures_last():
    errors = np.array([[0.2, 0.2, 0.1, np.nan], [0.1 + 0.2, 0.3, np.nan, np.nan]])
    ranks = rank_matrix(errors)
    # rows: a tie shares 2.5; near-tied floats (0.1 + 0.2 vs 0.3) tie after rounding; NaN last
    assert ranks.tolist() == [[2.5, 2.5, 1.0, 4.0], [1.5, 1.5, 3.5, 3.5]]
    finite = np.nan_to_num(errors, nan=99.0)
    np.testing.assert_array_equal(rank_matrix(finite), stats.rankdata(np.round(finite, 8), axis=1))


# ------------------------------------------------------------------------------------------------
# win rates and bold


def win_rates_oracle(errors, references, methods, alpha=ALPHA):
    """A literal loop: M wins experiment e against R if err_M <= err_R (a failure never wins, a
    failed reference always loses); the dagger for i needs the binomial test for i - 1 first."""
    n, r = len(errors), len(references)
    out = {}
    for j, name in enumerate(methods):
        if name in references:
            continue
        counts, pvalues, daggers, gate = [], [], [], True
        for i in range(1, r + 1):
            k = 0
            for e in range(n):
                beaten = 0
                for ref in references:
                    mine, theirs = errors[e, j], errors[e, methods.index(ref)]
                    if np.isfinite(mine) and (not np.isfinite(theirs) or mine <= theirs):
                        beaten += 1
                k += beaten >= i
            counts.append(k)
            if gate:
                p = stats.binomtest(k, n, 1 - i / (r + 1), alternative="greater").pvalue
                pvalues.append(p)
                daggers.append(p < alpha)
                gate = p < alpha
            else:
                pvalues.append(np.nan)
                daggers.append(False)
        out[name] = (counts, pvalues, daggers)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_win_rates_equal_a_literal_loop(seed):
    rng = np.random.default_rng(seed)
    methods = ["R1", "R2", "R3", "M1", "M2", "M3"]
    errors = np.round(rng.uniform(size=(80, 6)), 1)  # coarse: many ties
    errors[:, 3] -= 0.2  # M1 beats most references
    errors[:, 4] -= 0.05
    errors[rng.random((80, 6)) < 0.05] = np.nan  # failures
    result = win_rates(errors, methods, methods[:3])
    oracle = win_rates_oracle(errors, methods[:3], methods)
    for name, (counts, pvalues, daggers) in oracle.items():
        j = methods.index(name)
        assert result.counts[:, j].tolist() == counts
        np.testing.assert_allclose(result.pvalues[:, j], pvalues, rtol=1e-9)
        assert result.dagger[:, j].tolist() == daggers
    assert any(d[0] and not d[1] for _, _, d in oracle.values()) or seed  # gating exercised


def test_bold_row_against_the_first_best_with_wilcoxon():
    rng = np.random.default_rng(4)
    base = rng.uniform(size=40)
    values = np.column_stack(
        [
            base + 0.5,  # clearly worse: not bold
            base,  # best
            base + rng.normal(0, 0.05, 40),  # indistinguishable: bold
            base.copy(),  # identical to the best: the p-value is NaN, read as "not different"
        ]
    )
    row = bold_row(values)
    assert row.best == 1
    assert row.bold.tolist() == [False, True, True, True]
    assert np.isnan(row.pvalues[3])
    assert row.pvalues[2] == pytest.approx(stats.wilcoxon(values[:, 2], values[:, 1]).pvalue)
    # a NaN pair (an errored sample) is dropped from the paired test, not propagated
    values[0, 0] = np.nan
    assert bold_row(values).pvalues[0] == pytest.approx(
        stats.wilcoxon(values[1:, 0], values[1:, 1]).pvalue
    )


def test_row_colours_midpoint_is_green_zero():
    assert row_colours(np.array([0.0, 0.5, 1.0])) == ["green!40", "green!0", "red!40"]


def test_wilcoxon_drops_every_pair_with_a_missing_value():
    rng = np.random.default_rng(6)
    x, y = rng.uniform(size=50), rng.uniform(size=50) + 0.1
    x[[3, 9]], y[[4, 20]] = np.nan, np.nan  # missing on either side
    keep = np.isfinite(x) & np.isfinite(y)
    expected = stats.wilcoxon(x[keep], y[keep]).pvalue
    assert wilcoxon_pvalue(x, y) == pytest.approx(expected)
    assert wilcoxon_pvalue(y, x) == pytest.approx(expected)


def test_a_cell_equal_to_the_best_on_its_paired_samples_is_bold():
    # C equals the best column B on every sample it has, but errored on B's best sample, so its
    # mean is higher: the paired test has nothing to test (p is NaN) and C counts as not different
    best = np.array([0.01, 0.3, 0.4, 0.5, 0.6, 0.7])
    values = np.column_stack([best + 0.5, best, best.copy()])
    values[0, 2] = np.nan
    # 5 of 6 samples: below the 90 % share of docs/reporting.md §2.1.1, so checked at 80 %
    assert not bold_row(values).bold[2]
    row = bold_row(values, min_coverage=0.8)
    assert row.best == 1 and np.isnan(row.pvalues[2])
    assert row.bold.tolist() == [False, True, True]
