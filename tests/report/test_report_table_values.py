"""Every number of a result table against a literal recomputation, on setups with different winners,
different bold patterns and a near-tie (a table whose rows all look alike hides row-mixing bugs)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from tests.evaluation.test_stats_oracles import win_rates_oracle
from tests.report.test_report_tables import INFO, N, _records
from unishift.report.tables import compute_table, render_table_tex, table_frame

SETUPS = [("LR", "cmc.3"), ("LR", "yeast"), ("NB", "cmc.3"), ("NB", "yeast")]
METHODS = ["B", "R1", "R2", "A1", "A2"]  # table order: baseline, references, adapted


def different_winners():
    rng = np.random.default_rng(11)
    base = {s: rng.uniform(0, 0.1, N) for s in SETUPS}
    offsets = {
        ("LR", "cmc.3"): {"A1": 0.0, "R1": 0.1, "R2": 0.2, "B": 0.3, "A2": 0.4},
        ("LR", "yeast"): {"R1": 0.0, "A1": 0.0, "R2": 0.3, "B": 0.2, "A2": 0.1},
        ("NB", "cmc.3"): {"B": 0.0, "A2": 0.05, "R1": 0.3, "R2": 0.2, "A1": 0.4},
        ("NB", "yeast"): {"A2": 0.0, "R2": 0.0, "A1": 0.1, "B": 0.2, "R1": 0.3},
    }
    values = {}
    for setup, row in offsets.items():
        for m, off in row.items():
            values[(m, *setup)] = base[setup] + off + rng.normal(0, 0.01, N)
    # LR/yeast: A1 is R1 plus noise (indistinguishable); NB/yeast: R2 equals A2 up to float noise
    values[("A1", "LR", "yeast")] = values[("R1", "LR", "yeast")] + rng.normal(0, 1e-3, N)
    values[("R2", "NB", "yeast")] = values[("A2", "NB", "yeast")] + 1e-12
    return values


@pytest.fixture(scope="module")
def table():
    values = different_winners()
    result = compute_table(
        _records(values), "cap", "label", METHODS, method_info=INFO, classifiers=["NB", "LR"]
    )
    return values, result


def test_rows_follow_the_configured_classifier_order(table):
    _, result = table
    assert result.setups == [SETUPS[2], SETUPS[3], SETUPS[0], SETUPS[1]]
    assert result.names == METHODS


def test_each_row_has_its_own_means_and_bold_cells(table):
    values, result = table
    patterns = []
    for s, setup in enumerate(result.setups):
        matrix = np.column_stack([values[(m, *setup)] for m in METHODS])
        means = matrix.mean(axis=0)
        np.testing.assert_allclose(result.means[s], means, rtol=1e-12)
        best = int(np.argmin(means))
        expected = []
        for j in range(len(METHODS)):
            if means[j] == means[best]:
                expected.append(True)
                continue
            diff = matrix[:, j] - matrix[:, best]
            p = (
                np.nan
                if np.all(diff == 0)
                else stats.wilcoxon(matrix[:, j], matrix[:, best]).pvalue
            )
            expected.append(bool(np.isnan(p) or p >= 0.05))
        assert result.bold[s].tolist() == expected, setup
        patterns.append(tuple(expected))
    assert len(set(patterns)) == 4  # four different bold patterns


def test_wins_and_ranks_pool_every_setup(table):
    values, result = table
    experiments = np.vstack(
        [np.column_stack([values[(m, *setup)] for m in METHODS]) for setup in result.setups]
    )
    assert result.wins.n_experiments == 4 * N
    for name, (counts, pvalues, daggers) in win_rates_oracle(
        experiments, ["R1", "R2"], METHODS
    ).items():
        j = METHODS.index(name)
        assert result.wins.counts[:, j].tolist() == counts
        assert result.wins.dagger[:, j].tolist() == daggers
        np.testing.assert_allclose(result.wins.pvalues[:, j], pvalues, rtol=1e-9)
    ranks = stats.rankdata(np.round(experiments, 8), axis=1).mean(axis=0)
    np.testing.assert_allclose(result.avg_ranks, ranks, rtol=1e-12)
    # the NB/yeast near-tie is a tie after rounding: R2 and A2 share their ranks there
    unrounded = stats.rankdata(experiments, axis=1).mean(axis=0)
    assert not np.allclose(result.avg_ranks, unrounded)
    two_best = np.argsort(ranks, kind="stable")[:2]
    assert np.flatnonzero(result.rank_bold).tolist() == sorted(two_best.tolist())


def test_csv_and_tex_cells(table):
    values, result = table
    frame = table_frame(result)
    cell = frame[(frame.classifier == "LR") & (frame.dataset == "cmc.3") & (frame.method == "A1")]
    mean = values[("A1", "LR", "cmc.3")].mean()
    assert cell["mean_error"].item() == pytest.approx(mean)
    assert bool(cell["bold"].item()) and cell["colour"].item() == "green!40"
    tex = render_table_tex(result)
    assert rf"$\textbf{{{mean:.3f}}}$\cellcolor{{green!40}}" in tex
