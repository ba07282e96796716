import numpy as np
import pytest
from scipy import stats

from unishift.evaluation.stats import (
    cd_analysis,
    friedman_iman_davenport,
    groups_from_graph,
    holm,
    maximal_cliques,
    pairwise_wilcoxon,
    rank_matrix,
    top_ranked,
)


def test_average_ranks_hand_computed():
    errors = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 3.0], [0.5, 0.5, 0.1]])
    # ranks: [1,2,3], [2,1,3], [2.5,2.5,1]
    assert rank_matrix(errors).mean(axis=0).tolist() == pytest.approx([5.5 / 3, 5.5 / 3, 7 / 3])


def test_rounding_makes_float_near_ties_exact():
    errors = np.array([[0.1 + 0.2, 0.3, 0.4]])
    assert rank_matrix(errors).tolist() == [[1.5, 1.5, 3.0]]
    assert rank_matrix(errors, decimals=None).tolist() == [[2.0, 1.0, 3.0]]


def test_nan_ranks_last():
    assert rank_matrix(np.array([[np.nan, 5.0, 1.0, np.nan]])).tolist() == [[3.5, 2.0, 1.0, 3.5]]


def test_top_ranked_breaks_ties_by_column_order():
    assert top_ranked(np.array([3.0, 2.0, 2.0, 1.0]), 2).tolist() == [False, True, False, True]


def test_friedman_matches_scipy_chi2_and_iman_davenport():
    rng = np.random.default_rng(0)
    errors = rng.normal(size=(50, 5)) + np.array([0, 0.2, 0.4, 0.1, 0.3])
    avg = rank_matrix(errors).mean(axis=0)
    result = friedman_iman_davenport(avg, 50)
    ref = stats.friedmanchisquare(*errors.T)  # continuous data: no ties, so no tie correction
    assert result.chi2 == pytest.approx(ref.statistic, rel=1e-10)
    f = 49 * ref.statistic / (50 * 4 - ref.statistic)
    assert result.statistic == pytest.approx(f)
    assert result.pvalue == pytest.approx(stats.f.sf(f, 4, 4 * 49))


def test_holm_hand_computed():
    adjusted = holm(np.array([0.01, 0.04, 0.03, 0.005]))
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max 0.06
    assert adjusted.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_pairwise_wilcoxon_is_pratt_asymptotic():
    rng = np.random.default_rng(5)
    errors = np.round(rng.uniform(size=(200, 3)), 1)  # coarse values: many zero differences
    p = pairwise_wilcoxon(errors)
    ref = stats.wilcoxon(errors[:, 0], errors[:, 2], zero_method="pratt", method="asymptotic")
    assert p[0, 2] == p[2, 0] == pytest.approx(ref.pvalue)
    wilcox = stats.wilcoxon(errors[:, 0], errors[:, 2], method="asymptotic").pvalue
    assert p[0, 2] != pytest.approx(wilcox)  # the zero handling matters here


def test_maximal_cliques():
    edges = [(0, 1), (1, 2), (0, 2), (2, 3), (4, 4)]
    adjacency = np.zeros((5, 5), bool)
    for i, j in edges:
        adjacency[i, j] = adjacency[j, i] = True
    assert maximal_cliques(adjacency) == [frozenset({0, 1, 2}), frozenset({2, 3}), frozenset({4})]


# Average ranks of the paper's CD diagram "Quantification under Covariate Shift" (fig:quant:cddiagram).
QUANT_CS_RANKS = {
    "TransCal_c2q": 3.6633333333333336,
    "LEAP_PCC_a2q": 4.6386111111111115,
    "PCC": 4.693611111111111,
    "DoC_a2q": 4.721111111111111,
    "LasCal_c2q": 5.5183333333333335,
    "CPCS_c2q": 5.675833333333333,
    "ATC_a2q": 5.941111111111111,
    "CC": 7.275277777777778,
    "PACC": 8.116111111111111,
    "KDEy": 8.524444444444445,
    "LEAP_a2q": 9.397222222222222,
    "EMQ": 9.835,
}


def _graph(names, pairs):
    adjacency = np.zeros((len(names), len(names)), bool)
    for a, b in pairs:
        i, j = names.index(a), names.index(b)
        adjacency[i, j] = adjacency[j, i] = True
    return adjacency


def test_groups_reproduce_paper_quantification_cs_diagram():
    names = list(QUANT_CS_RANKS)
    ranks = np.array(list(QUANT_CS_RANKS.values()))
    # Non-significant pairs: LEAP^PCC~DoC (a clique that skips PCC, which lies between them and must be
    # added by interval extension), PCC~DoC (its interval is inside the first: pruned), LEAP~EMQ.
    # TransCal is alone (singleton, not drawn).
    adjacency = _graph(
        names, [("LEAP_PCC_a2q", "DoC_a2q"), ("PCC", "DoC_a2q"), ("LEAP_a2q", "EMQ")]
    )
    groups = groups_from_graph(ranks, adjacency)
    named = [[names[i] for i in g] for g in groups]
    # The paper draws exactly two group lines: 4.6386..-4.7211.. and 9.3972..-9.835.
    assert named == [["LEAP_PCC_a2q", "PCC", "DoC_a2q"], ["LEAP_a2q", "EMQ"]]


def test_groups_containment_keeps_overlapping_and_drops_duplicates():
    ranks = np.array([1.0, 2.0, 3.0, 4.0])
    # cliques {0,1},{1,2},{2,3}: overlapping intervals, none contained -> three groups
    groups = groups_from_graph(ranks, _graph([0, 1, 2, 3], [(0, 1), (1, 2), (2, 3)]))
    assert groups == [(0, 1), (1, 2), (2, 3)]
    # cliques {0,2} and {1}: {0,2} extends to {0,1,2}; {1}'s interval [2,2] is inside -> dropped
    groups = groups_from_graph(ranks, _graph([0, 1, 2, 3], [(0, 2)]))
    assert groups == [(0, 1, 2)]


def test_cd_analysis_end_to_end():
    rng = np.random.default_rng(7)
    n = 600
    base = rng.uniform(0, 1, size=n)
    errors = np.column_stack(
        [
            base,  # best, clearly
            base + 0.3 + rng.normal(0, 0.05, n),  # B and C indistinguishable
            base + 0.3 + rng.normal(0, 0.05, n),
            base + 0.8,  # worst, clearly
        ]
    )
    result = cd_analysis(errors, ["A", "B", "C", "D"])
    assert result.friedman.pvalue < 1e-10
    assert result.groups == (
        tuple(sorted(["B", "C"], key=lambda m: result.avg_ranks["ABCD".index(m)])),
    )
    assert result.avg_ranks[0] == 1.0 and result.avg_ranks[3] == 4.0


def test_cd_analysis_friedman_gate_gives_one_group():
    rng = np.random.default_rng(8)
    errors = rng.uniform(size=(30, 3))
    result = cd_analysis(errors, ["A", "B", "C"])
    assert result.friedman.pvalue >= 0.05
    assert len(result.groups) == 1 and set(result.groups[0]) == {"A", "B", "C"}
