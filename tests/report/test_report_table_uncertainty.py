"""The tables' intervals, coverage flags, Holm-corrected winner tests and degenerate flag
(docs/reporting.md §2.7), each against an independent computation: literal loops over the same
random stream, a literal Holm, SciPy's Wilcoxon."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tests.report.test_report_tables import INFO, SETUPS, N, _records, _values
from unishift.data.containers import derive_seed
from unishift.evaluation.stats import holm, rank_matrix
from unishift.regimes.references import bootstrap_interval, bootstrap_mean_intervals
from unishift.report.tables import (
    compute_table,
    render_table_tex,
    summary_frame,
    table_frame,
    write_table_csv,
)

METHODS = ["A1", "R1", "B", "R2", "A2"]
B = 200  # resamples: enough to tell draws apart, cheap


def _failing(values, method="A2", setup=("LR", "yeast"), n_failed=4):
    """``method`` fails on the first ``n_failed`` samples of ``setup``."""
    return {(method, *setup, s): "error" for s in range(n_failed)}


def _table(values, status=None, **kwargs):
    kwargs.setdefault("n_bootstrap", B)
    return compute_table(
        _records(values, status), "cap", "label", METHODS, method_info=INFO, **kwargs
    )


def _literal_holm(p):
    """Holm's step-down adjustment written out: sort ascending, multiply the j-th smallest (from 0)
    by m - j, running maximum, capped at 1."""
    p = list(map(float, p))
    m = len(p)
    order = sorted(range(m), key=lambda i: (p[i], i))
    out, running = [0.0] * m, 0.0
    for j, i in enumerate(order):
        running = max(running, (m - j) * p[i])
        out[i] = min(1.0, running)
    return out


def _finite_mean(x):
    x = [v for v in x if np.isfinite(v)]
    return sum(x) / len(x) if x else float("nan")


def _literal_cell_interval(column, seed, alpha=0.05):
    """One setup's samples resampled with replacement, one draw of the (single) cluster first: the
    stream of regimes.references.cluster_draws, written as a loop."""
    rng = np.random.default_rng(seed)
    n, means = len(column), []
    for _ in range(B):
        rng.integers(0, 1, size=1)  # the one cluster is picked
        rows = rng.integers(0, n, n)
        means.append(_finite_mean([column[r] for r in rows]))
    means = [m for m in means if np.isfinite(m)]
    return tuple(np.quantile(means, [alpha / 2, 1 - alpha / 2]))


def _literal_overall_interval(blocks, seed, alpha=0.05):
    """Setups drawn with replacement, then each drawn setup's samples, as a loop."""
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(B):
        picked = rng.integers(0, len(blocks), size=len(blocks))
        drawn = []
        for c in picked:
            rows = rng.integers(0, len(blocks[c]), len(blocks[c]))
            drawn += [blocks[c][r] for r in rows]
        means.append(_finite_mean(drawn))
    return tuple(np.quantile(means, [alpha / 2, 1 - alpha / 2]))


def test_intervals_equal_literal_bootstrap_loops_with_the_same_seed():
    # failures (NaN) in one cell: a loop that counted them as 0 or dropped the rows before
    # resampling would move the interval
    status = _failing(_values(), n_failed=2)
    result = _table(_values(), status, seed=7)
    cells = table_frame(result).set_index(["classifier", "dataset", "method"])
    for s, (clf, ds) in enumerate(result.setups):
        for j, method in enumerate(result.names):
            low, high = _literal_cell_interval(
                result.values[s][:, j], derive_seed(7, "table cell", clf, ds)
            )
            assert cells.loc[(clf, ds, method), "ci_low"] == pytest.approx(low, rel=1e-12)
            assert cells.loc[(clf, ds, method), "ci_high"] == pytest.approx(high, rel=1e-12)
    summary = summary_frame(result).set_index("method")
    for j, method in enumerate(result.names):
        low, high = _literal_overall_interval([v[:, j] for v in result.values], seed=7)
        assert summary.loc[method, "ci_low"] == pytest.approx(low, rel=1e-12)
        assert summary.loc[method, "ci_high"] == pytest.approx(high, rel=1e-12)
        assert summary.loc[method, "mean_error"] == pytest.approx(
            _finite_mean(np.concatenate([v[:, j] for v in result.values])), rel=1e-12
        )
    # the seed is used: another one gives other intervals; a wider spread than the resampled one
    # (the setups' levels differ) shows that the setups are resampled, not only the samples
    other = summary_frame(_table(_values(), status, seed=8)).set_index("method")
    assert not np.allclose(other["ci_low"], summary["ci_low"])


def test_vectorised_intervals_equal_the_per_column_bootstrap_interval():
    rng = np.random.default_rng(3)
    values = rng.normal(size=(60, 4))
    values[[1, 5, 9], 2] = np.nan
    values[:, 3] = np.nan  # a column with nothing: NaN bounds, no warning turned into an error
    clusters = np.repeat(["b", "a", "c"], 20)  # labels out of order: np.unique's codes are used
    low, high = bootstrap_mean_intervals(values, clusters, n_resamples=150, seed=11)
    for j in range(3):
        expected = bootstrap_interval(values[:, j], clusters, n_resamples=150, seed=11)
        assert (low[j], high[j]) == pytest.approx(expected, rel=1e-12)
    assert np.isnan(low[3]) and np.isnan(high[3])


def test_holm_equals_a_literal_step_down_loop():
    rng = np.random.default_rng(0)
    for m in (1, 2, 5, 9):
        p = rng.uniform(0, 0.2, m)
        if m > 2:
            p[1] = p[2]  # a tie
        assert np.minimum(holm(p), 1.0) == pytest.approx(_literal_holm(p), rel=1e-15)
    # the running maximum: a larger raw p-value never gets a smaller adjusted one
    assert _literal_holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def _row_with_one_raw_significant_cell():
    """A row whose best cell (A1) beats A2 at p = 0.035 raw, but not after Holm: R1 is not
    different from A1 (p = 0.90), so A2's is the third-smallest of four p-values, doubled."""
    values = _values()
    rng = np.random.default_rng(30)
    base = rng.uniform(0, 0.1, N)
    row = {"A1": base, "R1": base + rng.normal(0, 0.01, N)}
    row["A2"] = base + 0.004 + rng.normal(0, 0.01, N)
    row.update({"B": base + 0.5, "R2": base + 0.3})
    for m, v in row.items():
        values[(m, "LR", "cmc.3")] = v
    return values


def test_row_tests_equal_scipy_wilcoxon_and_a_literal_holm():
    result = _table(_row_with_one_raw_significant_cell())
    cells = table_frame(result)
    for (clf, ds), part in cells.groupby(["classifier", "dataset"], sort=False):
        s = result.setups.index((clf, ds))
        best = int(np.flatnonzero(part["best_cell"].to_numpy())[0])
        assert part["mean_error"].iloc[best] == part["mean_error"].min()
        tested = [j for j in range(len(part)) if j != best]
        raw = []
        for j in tested:
            x, y = result.values[s][:, j], result.values[s][:, best]
            raw.append(1.0 if np.all(x == y) else stats.wilcoxon(x, y).pvalue)
        assert part["pvalue_vs_best"].to_numpy()[tested] == pytest.approx(raw, rel=1e-12)
        adjusted = _literal_holm(raw)
        assert part["holm_pvalue_vs_best"].to_numpy()[tested] == pytest.approx(adjusted, rel=1e-12)
        flags = part["best_significantly_better"].to_numpy()[tested]
        means = part["mean_error"].to_numpy()
        expected = [a < 0.05 and means[j] > means[best] for a, j in zip(adjusted, tested)]
        assert list(flags) == expected
        assert pd.isna(part["best_significantly_better"].iloc[best])
    # the case that tells the two rules apart: not bold (raw p < alpha, the paper's rule), yet not
    # significantly worse than the best once the row's comparisons are corrected
    cell = cells[(cells["dataset"] == "cmc.3") & (cells["classifier"] == "LR")].set_index("method")
    assert cell.loc["A2", "pvalue_vs_best"] < 0.05 <= cell.loc["A2", "holm_pvalue_vs_best"]
    assert not cell.loc["A2", "bold"] and cell.loc["A2", "best_significantly_better"] is False


def test_winner_test_is_over_setups_on_per_setup_average_ranks():
    result = _table(_values())
    summary = summary_frame(result).set_index("method")
    assert summary["winner"].sum() == 1 and summary.loc["A1", "winner"]
    ranks = rank_matrix(np.vstack(result.values))
    per_setup = np.array([ranks[s * N : (s + 1) * N].mean(axis=0) for s in range(len(SETUPS))])
    winner = result.names.index("A1")
    others = [j for j in range(len(METHODS)) if j != winner]
    raw = [stats.wilcoxon(per_setup[:, j], per_setup[:, winner]).pvalue for j in others]
    names = [result.names[j] for j in others]
    assert summary.loc[names, "pvalue_vs_winner"].to_numpy() == pytest.approx(raw, rel=1e-12)
    assert summary.loc[names, "holm_pvalue_vs_winner"].to_numpy() == pytest.approx(
        _literal_holm(raw), rel=1e-12
    )
    # four setups: the exact two-sided Wilcoxon p-value cannot go below 0.125, so A1 ranks first
    # on every sample yet no win over a method is declared significant
    assert (summary.loc[names, "winner_significantly_better"] == False).all()  # noqa: E712
    assert pd.isna(summary.loc["A1", "winner_significantly_better"])


@pytest.mark.parametrize("n_failed, below", [(3, False), (4, True)])
def test_coverage_flags_a_cell_and_a_method_below_the_share(n_failed, below):
    # 27 of 30 is exactly 0.9 (kept); 26 of 30 is below. Over the table A2 is scored on at least
    # 116 of 120 samples either way: the method is not flagged, only the cell
    result = _table(_values(), _failing(_values(), n_failed=n_failed))
    cells = table_frame(result).set_index(["classifier", "dataset", "method"])
    assert cells.loc[("LR", "yeast", "A2"), "coverage"] == pytest.approx((N - n_failed) / N)
    assert cells.loc[("LR", "yeast", "A2"), "below_coverage"] == below
    assert not cells.drop(index=("LR", "yeast", "A2"))["below_coverage"].any()
    if below:  # never the row's best, never tested as if comparable
        assert not cells.loc[("LR", "yeast", "A2"), "best_cell"]
        assert np.isnan(cells.loc[("LR", "yeast", "A2"), "holm_pvalue_vs_best"])
    summary = summary_frame(result).set_index("method")
    assert summary.loc["A2", "coverage"] == pytest.approx(1 - n_failed / (N * len(SETUPS)))
    assert not summary["below_coverage"].any()
    # failing everywhere but 3 samples per setup: the method is flagged over the whole table
    everywhere = {("R2", *setup, s): "error" for setup in SETUPS for s in range(3, N)}
    summary = summary_frame(_table(_values(), everywhere)).set_index("method")
    assert summary.loc["R2", "below_coverage"] and summary.loc["R2", "coverage"] == pytest.approx(
        0.1
    )
    assert not summary.loc["R2", "winner"]


def _trivial(level):
    return pd.DataFrame(
        [(clf, ds, s, level) for clf, ds in SETUPS for s in range(N)],
        columns=["classifier", "dataset", "sample_id", "error"],
    )


def test_degenerate_flag_in_the_csvs_and_the_latex_note(tmp_path):
    # method means ~ A1 0.05, R1 0.10, A2 0.25, R2 0.35, B 0.55: a trivial answer at 0.2 beats 3
    # of 5 (degenerate), at 0.3 it beats 2 of 5 (not: more than half is needed)
    for level, beaten, flagged in ((0.2, 3, True), (0.3, 2, False)):
        result = _table(_values(), trivial=_trivial(level))
        assert (result.degenerate, result.n_beaten_by_trivial) == (flagged, beaten)
        write_table_csv(result, tmp_path / "cap_label.csv")
        cells = pd.read_csv(tmp_path / "cap_label.csv")
        summary = pd.read_csv(tmp_path / "cap_label_summary.csv").set_index("method")
        assert (cells["degenerate"] == flagged).all() and (summary["degenerate"] == flagged).all()
        assert np.allclose(cells["trivial_error"], level)
        assert np.allclose(summary["trivial_error"], level)
        assert list(summary.index[summary["beaten_by_trivial"]]) == ["B", "R2", "A2"][:beaten]
        assert (
            list(cells.loc[cells["beaten_by_trivial"], "method"].unique())
            == ["B", "R2", "A2"][:beaten]
        )
        tex = render_table_tex(result)
        assert ("Degenerate task and shift" in tex) == flagged
        if flagged:
            assert "beats the overall mean error of 3 of the 5 methods" in tex
            assert "the validation accuracy, mean error 0.200" in tex
    # a method below the share is not judged: with B failing on most samples, 0.3 beats R2 of the
    # four judged methods, not more than half
    everywhere = {("B", *setup, s): "error" for setup in SETUPS for s in range(3, N)}
    result = _table(_values(), everywhere, trivial=_trivial(0.3))
    assert (result.degenerate, result.n_beaten_by_trivial) == (False, 1)
    # without the trivial answers the flag is unknown, not False
    cells = table_frame(_table(_values()))
    assert cells["degenerate"].isna().all() and cells["trivial_error"].isna().all()
    # trivial answers that miss a sample are refused
    with pytest.raises(ValueError, match="lack 1 of its 30 samples"):
        _table(_values(), trivial=_trivial(0.2).iloc[1:])


def test_api_table_returns_the_csv_columns():
    from unishift.api import table

    # in the table's row order: the API orders the rows as the records come
    records = _records(_values()).sort_values(["classifier", "dataset"], kind="stable")
    result = table(
        records, "cap", "label", METHODS, display=INFO, trivial=_trivial(0.2), n_bootstrap=B, seed=3
    )
    direct = _table(_values(), trivial=_trivial(0.2), seed=3)
    pd.testing.assert_frame_equal(table_frame(result), table_frame(direct))
    pd.testing.assert_frame_equal(summary_frame(result), summary_frame(direct))
    for bad in (0, True, 1.5):
        with pytest.raises(ValueError, match="n_bootstrap"):
            table(records, "cap", "label", METHODS, display=INFO, n_bootstrap=bad)
    with pytest.raises(ValueError, match="seed"):
        table(records, "cap", "label", METHODS, display=INFO, seed=-1)
