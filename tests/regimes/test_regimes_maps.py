"""Regime maps (docs/regimes.md §3): bin edges, per-bin means and winners against loops, the tie
rule, paired samples, and the written files."""

import numpy as np
import pandas as pd
import pytest

from unishift.regimes.maps import (
    CSV_2D_COLUMNS,
    CSV_COLUMNS,
    assign_bins,
    bin_edges,
    decide,
    regime_map,
    regime_map_2d,
    setup_scales,
    write_regime_map_2d,
    write_regime_maps,
)


def _loop_bin(value, edges):
    last = len(edges) - 2
    for i in range(last + 1):
        if edges[i] <= value < edges[i + 1] or (i == last and value == edges[-1]):
            return i
    raise AssertionError("value outside the edges")


def test_values_on_edges_go_to_the_bin_on_their_right_and_the_maximum_to_the_last():
    edges = np.array([0.0, 0.25, 0.5, 1.0])
    values = np.array([0.0, 0.25, 0.2499999, 0.5, 0.75, 1.0])
    assert assign_bins(values, edges).tolist() == [0, 1, 0, 2, 2, 2]
    rng = np.random.default_rng(0)
    mixed = np.concatenate([rng.random(200), edges, edges])
    assert assign_bins(mixed, edges).tolist() == [_loop_bin(v, edges) for v in mixed]
    with pytest.raises(ValueError, match="outside the bin range"):
        assign_bins([1.0000001], edges)
    with pytest.raises(ValueError, match="outside the bin range"):
        assign_bins([-1e-9], edges)


def test_quantile_edges_merge_repeated_values_and_width_edges_follow_the_range():
    values = np.array([0.0] * 50 + [1.0] * 50)
    edges = bin_edges(values, 4, "quantile")
    assert edges.tolist() == [0.0, 0.5, 1.0]  # the 0.25 and 0.75 quantiles repeat 0 and 1
    assert np.bincount(assign_bins(values, edges)).tolist() == [50, 50]
    # edges on data values stay exact, so a value on an edge starts the next bin
    quantile_edges = bin_edges(np.arange(11.0), 5, "quantile")
    assert quantile_edges.tolist() == [0, 2, 4, 6, 8, 10]
    assert assign_bins([6.0], quantile_edges).tolist() == [3]
    tenths = bin_edges([0.0, 1.0], 10, "width")
    assert assign_bins([0.3, 0.7, 75 / 250], tenths).tolist() == [3, 7, 3]
    assert np.allclose(
        bin_edges([0.2, 0.3], 4, "width", value_range=(0, 1)), [0, 0.25, 0.5, 0.75, 1]
    )
    assert np.allclose(bin_edges([0.2, 0.6], 2, "width"), [0.2, 0.4, 0.6])
    assert bin_edges([0.3, 0.3], 4).tolist() == [0.3, 0.3]  # one bin [0.3, 0.3]
    assert assign_bins([0.3], [0.3, 0.3]).tolist() == [0]
    with pytest.raises(ValueError, match="scheme"):
        bin_edges(values, 4, "log")
    with pytest.raises(ValueError, match="non-finite"):
        bin_edges([0.1, np.nan], 2)


def _records(n=60, seed=0, methods=("A", "B", "C")):
    """A wins where the descriptor is low, B where it is high, C never."""
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    rows = []
    for s in range(n):
        errors = {
            "A": 0.1 + 0.8 * x[s] + 0.01 * rng.random(),
            "B": 0.9 - 0.8 * x[s] + 0.01 * rng.random(),
            "C": 1.0 + rng.random(),
        }
        for m in methods:
            rows.append(
                {
                    "task": "quantification",
                    "method": m,
                    "classifier": "LR",
                    "dataset": "d1" if s % 2 else "d2",
                    "sample_id": s,
                    "error": errors[m],
                    "domain_auc": x[s],
                }
            )
    return pd.DataFrame(rows)


def test_means_winners_and_changes_against_a_loop():
    records = _records()
    rmap = regime_map(records, "domain_auc", n_bins=4, scheme="width", value_range=(0, 1))
    assert rmap.edges.tolist() == [0, 0.25, 0.5, 0.75, 1]
    per_sample = records[records["method"] == "A"][["sample_id", "domain_auc"]]
    for b in range(4):
        ids = [
            s
            for s, v in zip(per_sample["sample_id"], per_sample["domain_auc"], strict=True)
            if _loop_bin(v, rmap.edges) == b
        ]
        means = {}
        for m in ("A", "B", "C"):
            errs = [
                e
                for s, mm, e in zip(
                    records["sample_id"], records["method"], records["error"], strict=True
                )
                if mm == m and s in ids
            ]
            means[m] = sum(errs) / len(errs)
            cell = rmap.cells[(rmap.cells["bin"] == b) & (rmap.cells["method"] == m)]
            assert cell["mean_error"].item() == pytest.approx(means[m], abs=1e-12)
        row = rmap.bins.iloc[b]
        assert row["n_samples"] == len(ids)
        assert row["winner"] == min(means, key=means.get)
        assert row["ranking"] == ";".join(sorted(means, key=means.get))
    assert rmap.bins["winner"].tolist() == ["A", "A", "B", "B"]
    assert rmap.bins["winner_changed"].tolist() == [False, False, True, False]
    assert rmap.change_edges() == [0.5]
    assert rmap.n_dropped == 0


def test_ties_go_to_the_method_listed_first_also_across_summation_noise():
    records = _records()
    b_rows = records["method"] == "B"
    a_errors = records.loc[records["method"] == "A", "error"].to_numpy()
    # B equals A up to 1e-15 (a different float, the same mean after rounding to 12 decimals)
    records.loc[b_rows, "error"] = a_errors + 1e-15
    first = regime_map(records, "domain_auc", n_bins=3, methods=["B", "A", "C"])
    # leads by the tie rule, but a difference of 1e-15 is no difference: no clear winner, the bins
    # merged into one region that never becomes significant, the tied set B and A
    assert first.bins["leader"].tolist() == ["B"] and first.bins["winner"].tolist() == [""]
    assert first.bins[["first_bin", "last_bin", "n_tied"]].values.tolist() == [[0, 2, 2]]
    assert first.bins["tied"].tolist() == ["B;A"]
    assert first.bins["verdict"].tolist() == ["no clear winner"]
    second = regime_map(records, "domain_auc", n_bins=3, methods=["A", "B", "C"])
    assert second.bins["leader"].tolist() == ["A"] and second.bins["tied"].tolist() == ["A;B"]
    assert not second.bins["winner_changed"].any()


def test_samples_where_a_method_failed_are_left_out_for_every_method():
    records = _records()
    records.loc[(records["method"] == "C") & (records["sample_id"] == 3), "error"] = np.nan
    rmap = regime_map(records, "domain_auc", n_bins=1)
    assert rmap.n_dropped == 1 and rmap.bins["n_samples"].item() == 59
    kept = records[records["sample_id"] != 3]
    expected = kept[kept["method"] == "A"]["error"].mean()
    assert rmap.cells.loc[rmap.cells["method"] == "A", "mean_error"].item() == pytest.approx(
        expected
    )


def test_bad_records_are_refused():
    records = _records()
    with pytest.raises(ValueError, match="one task"):
        regime_map(pd.concat([records, records.assign(task="cap")]), "domain_auc")
    moved = records.copy()
    moved.loc[moved["method"] == "B", "domain_auc"] += 0.1
    with pytest.raises(ValueError, match="belongs to the sample"):
        regime_map(moved, "domain_auc")
    with pytest.raises(ValueError, match="lack the columns"):
        regime_map(records, "confidence_drop")
    with pytest.raises(ValueError, match="no records"):
        regime_map(records, "domain_auc", methods=["A", "Z"])


def test_empty_width_bins_have_no_winner_and_do_not_break_the_change_chain():
    records = _records()
    records["domain_auc"] = np.where(records["domain_auc"] < 0.5, 0.1, 0.9)
    rmap = regime_map(records, "domain_auc", n_bins=5, scheme="width", value_range=(0, 1))
    assert rmap.bins["n_samples"].tolist()[1:4] == [0, 0, 0]
    assert rmap.bins["winner"].tolist() == ["A", "", "", "", "B"]
    assert rmap.bins["winner_changed"].tolist() == [False, False, False, False, True]


def test_written_files_are_deterministic_and_well_formed(tmp_path):
    records = _records()
    records["method"] = records["method"].replace({"C": "EMQ_BCTS"})
    rmap = regime_map(records, "domain_auc", n_bins=4)
    paths = write_regime_maps([rmap], tmp_path / "a" / "quant_domain_auc")
    again = write_regime_maps([rmap], tmp_path / "b" / "quant_domain_auc")
    for suffix in ("csv", "png", "tex"):
        assert paths[suffix].read_bytes() == again[suffix].read_bytes(), suffix
    table = pd.read_csv(paths["csv"])
    assert tuple(table.columns) == CSV_COLUMNS
    assert len(table) == 4 * 3 and table["is_winner"].sum() == 4
    tex = paths["tex"].read_text()
    assert r"EMQ\_BCTS" in tex and "EMQ_BCTS" not in tex.replace(r"EMQ\_BCTS", "")
    body = [line for line in tex.splitlines() if line.startswith("$[")]
    assert len(body) == 4 and body[-1].startswith("$[") and "]$" in body[-1]
    for line, b in zip(body, range(4), strict=True):
        cells = rmap.cells[rmap.cells["bin"] == b]
        best = cells.loc[cells["is_winner"], "normalised_error"].item()
        assert line.count(r"\textbf{") == 1 and rf"\textbf{{{best:.4f}}}" in line
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- uncertainty: normalisation, tests, merging, the bootstrap share (docs/regimes.md §3) ---------


def _rows(errors_by_method, x, datasets, sample_ids=None, task="quantification", y=None):
    rows = []
    for m, errs in errors_by_method.items():
        for s, e in enumerate(errs):
            row = {"task": task, "method": m, "classifier": "LR", "dataset": datasets[s],
                   "sample_id": s if sample_ids is None else sample_ids[s], "error": e,
                   "domain_auc": x[s]}  # fmt: skip
            if y is not None:
                row |= {"true_label_shift": x[s], "true_mixture": y[s]}
            rows.append(row)
    return pd.DataFrame(rows)


def test_holm_adjusted_one_sided_wilcoxon_against_a_literal_loop_and_statsmodels():
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(4)
    for n in (9, 40, 120):
        x = rng.normal(0, 1, (n, 6)) + np.array([0.0, 0.05, 0.3, 0.6, 0.0, 1.0])
        x[: n // 3, 4] = x[: n // 3, 0]  # zero differences with the leader
        x[:, 5] = np.round(x[:, 5], 1)  # ties among the differences
        verdict = decide(x)
        leader = int(np.argmin(x.mean(axis=0)))
        assert verdict.leader == leader
        others = [j for j in range(6) if j != leader]
        raw = [stats.wilcoxon(x[:, leader] - x[:, j], alternative="less").pvalue for j in others]
        # Holm by hand: the i-th smallest times (m - i), a running maximum, capped at 1
        order = sorted(range(len(raw)), key=lambda i: raw[i])
        adjusted, running = [0.0] * len(raw), 0.0
        for position, i in enumerate(order):
            running = max(running, (len(raw) - position) * raw[i])
            adjusted[i] = min(running, 1.0)
        np.testing.assert_allclose(verdict.pvalues[others], raw, rtol=1e-12)
        np.testing.assert_allclose(verdict.holm[others], adjusted, rtol=1e-12)
        np.testing.assert_allclose(
            verdict.holm[others], multipletests(raw, method="holm")[1], rtol=1e-12
        )
        assert verdict.significant == all(a < 0.05 for a in adjusted)
        assert set(verdict.tied) == {leader} | {o for o, a in zip(others, adjusted) if a >= 0.05}


def test_the_winner_is_tested_one_sided():
    # the leader by mean (one large gain) is worse on most samples: a two-sided test would call
    # the difference significant, but it is not evidence that the leader is better
    a = np.full(60, 1.0)
    b = np.concatenate([np.full(50, 0.9), np.full(10, 3.0)])
    verdict = decide(np.column_stack([a, b]))
    assert verdict.leader == 0 and not verdict.significant and verdict.tied == (0, 1)


def test_per_setup_normalisation_picks_the_winner_raw_pooling_misses():
    # d_big has errors ten times d_small's: A is better there by a tenth, B better on d_small by
    # half; raw pooling lets d_big decide (A), the normalised errors weigh both setups alike (B)
    rng = np.random.default_rng(5)
    n = 40
    datasets = ["d_big"] * n + ["d_small"] * n
    noise = 0.01 * rng.random((2, 2 * n))
    a = np.concatenate([np.full(n, 10.0), np.full(n, 0.2)]) + noise[0]
    b = np.concatenate([np.full(n, 11.0), np.full(n, 0.1)]) + noise[1]
    records = _rows({"A": a, "B": b}, np.linspace(0, 1, 2 * n), datasets)
    rmap = regime_map(records, "domain_auc", n_bins=1, n_bootstrap=200)
    assert a.mean() < b.mean()  # raw pooling's winner
    assert rmap.bins["leader"].item() == "B"
    scale = np.where(np.arange(2 * n) < n, (a[:n].sum() + b[:n].sum()) / (2 * n),
                     (a[n:].sum() + b[n:].sum()) / (2 * n))  # fmt: skip
    cells = rmap.cells.set_index("method")
    assert cells.loc["A", "normalised_error"] == pytest.approx((a / scale).mean(), rel=1e-12)
    assert cells.loc["A", "mean_error"] == pytest.approx(a.mean(), rel=1e-12)
    np.testing.assert_allclose(setup_scales(np.column_stack([a, b]), datasets), scale)
    # an all-zero setup keeps its errors
    assert setup_scales(np.zeros((2, 2)), ["s", "s"]).tolist() == [1.0, 1.0]


def _merge_case(seed=6):
    """Five quantile bins of 12 samples: in bins 1 and 2 A beats B, but on each bin's samples
    alone the signed ranks of A - B (A worse on the samples of ranks 1, 2, 7 and 9: W+ = 19, exact
    one-sided p = 0.065) fall short; on their 24 samples (W+ = 72, p = 0.012) they do not. Bin 0
    has a clear winner (A), bin 3 none (A and B differ by noise), bin 4 a clear winner (B)."""
    rng = np.random.default_rng(seed)
    n = 12
    x = np.repeat([0.1, 0.3, 0.5, 0.7, 0.9], n) + rng.uniform(-0.05, 0.05, 5 * n)
    a, b = np.empty(5 * n), np.empty(5 * n)
    a[:n], b[:n] = 0.2 + 1e-3 * rng.random(n), 0.8
    ranks = np.arange(1, n + 1)
    signs = np.where(np.isin(ranks, [1, 2, 7, 9]), 1.0, -1.0)
    for offset, start in ((0.0, n), (0.001, 2 * n)):  # distinct magnitudes: no ties when merged
        d = signs * (0.01 * ranks + offset)
        a[start : start + n], b[start : start + n] = 0.5 + d / 2, 0.5 - d / 2
    a[3 * n : 4 * n], b[3 * n : 4 * n] = 0.5 + 0.1 * rng.random((2, n))
    a[4 * n :], b[4 * n :] = 0.8, 0.2 + 1e-3 * rng.random(n)
    order = np.argsort(x)
    return _rows({"A": a[order], "B": b[order]}, x[order], ["d"] * (5 * n))


def test_adjacent_bins_are_merged_until_the_winner_is_significant():
    records = _merge_case()
    alone = regime_map(records, "domain_auc", n_bins=5, merge=False, n_bootstrap=50)
    assert alone.bins["leader"].tolist()[:3] == ["A", "A", "A"]
    assert alone.bins["verdict"].tolist() == [
        "winner", "no clear winner", "no clear winner", "no clear winner", "winner",
    ]  # fmt: skip
    assert (alone.cells.loc[alone.cells["bin"].isin([1, 2]), "p_holm"].dropna() > 0.05).all()
    merged = regime_map(records, "domain_auc", n_bins=5, n_bootstrap=50)
    # bins 1 and 2 merge into a significant region; bin 3 starts a new run, which bin 4 (clear
    # alone) closes unresolved: it is not merged into 1-2 nor into 4
    spans = merged.bins[["first_bin", "last_bin"]].values.tolist()
    assert spans == [[0, 0], [1, 2], [3, 3], [4, 4]]
    assert merged.bins["winner"].tolist() == ["A", "A", "", "B"]
    assert merged.bins["verdict"].tolist()[2] == "no clear winner"
    assert merged.bins["tied"].tolist()[2] in ("A;B", "B;A")
    middle = merged.cells[(merged.cells["bin"] == 1) & (merged.cells["method"] == "B")]
    assert middle["p_holm"].item() < 0.05
    assert merged.bins["n_samples"].tolist() == [12, 24, 12, 12]
    assert merged.bins["lower"].tolist()[1] == alone.bins["lower"].tolist()[1]
    assert merged.bins["upper"].tolist()[1] == alone.bins["upper"].tolist()[2]
    # the change is flagged at B's region; the region without a winner in between is skipped
    assert merged.bins["winner_changed"].tolist() == [False, False, False, True]
    # a trailing run that never becomes significant stays "no clear winner" with its tied set
    tail = regime_map(records[records["domain_auc"] < 0.8], "domain_auc", n_bins=4, n_bootstrap=50)
    assert tail.bins[["first_bin", "last_bin"]].values.tolist()[-1] == [3, 3]
    assert tail.bins["verdict"].tolist()[-1] == "no clear winner"


def test_the_bootstrap_share_resamples_whole_setups_and_follows_the_seed():
    # A wins on two setups by a lot, B on one by a little more often: resampling setups moves the
    # winner in a share of resamples that a loop over references.cluster_draws reproduces
    from unishift.regimes.references import cluster_draws

    rng = np.random.default_rng(7)
    n = 20
    datasets = ["s1"] * n + ["s2"] * n + ["s3"] * n
    a = np.r_[np.full(n, 0.5), np.full(n, 0.5), np.full(n, 0.5)] + 0.01 * rng.random(3 * n)
    b = np.r_[np.full(n, 0.8), np.full(n, 0.45), np.full(n, 0.45)] + 0.01 * rng.random(3 * n)
    records = _rows({"A": a, "B": b}, np.linspace(0, 1, 3 * n), datasets)
    rmap = regime_map(records, "domain_auc", n_bins=1, n_bootstrap=300, seed=11)
    scale = setup_scales(np.column_stack([a, b]), datasets)
    norm = np.column_stack([a, b]) / scale[:, None]
    leader = ["A", "B"].index(rmap.bins["leader"].item())
    kept = [
        np.argmin(np.round(norm[rows].mean(axis=0), 12)) == leader
        for rows in cluster_draws(np.array(datasets), 300, 11)
    ]
    assert rmap.bins["bootstrap_share"].item() == pytest.approx(np.mean(kept))
    assert 0.2 < np.mean(kept) < 0.95  # a setup-level resample does move the winner
    again = regime_map(records, "domain_auc", n_bins=1, n_bootstrap=300, seed=11)
    other = regime_map(records, "domain_auc", n_bins=1, n_bootstrap=300, seed=12)
    assert again.bins["bootstrap_share"].item() == rmap.bins["bootstrap_share"].item()
    assert other.bins["bootstrap_share"].item() != rmap.bins["bootstrap_share"].item()


def test_a_method_below_the_coverage_share_never_wins_nor_is_tied():
    rng = np.random.default_rng(8)
    n = 60
    good = np.full(n, np.nan)
    good[:5] = 0.0  # best where it scored, on 5 of 60 samples
    records = _rows(
        {"Flaky": good, "A": 0.2 + 0.01 * rng.random(n), "B": 0.2 + 0.01 * rng.random(n)},
        rng.random(n), ["d"] * n,
    )  # fmt: skip
    rmap = regime_map(records, "domain_auc", n_bins=2, methods=["Flaky", "A", "B"])
    assert rmap.below_share == ("Flaky",)
    assert "Flaky" not in set(rmap.bins["leader"]) | set(rmap.bins["winner"])
    assert not any("Flaky" in t.split(";") for t in rmap.bins["tied"])
    flaky = rmap.cells[rmap.cells["method"] == "Flaky"]
    assert (flaky["rank"] == 0).all() and flaky["p_value"].isna().all()


def _compound_records(seed=9, n_per_setup=60):
    """Two setups; A wins at low label shift and low mixture, B at high label shift; the high
    mixture / low label shift corner has no clear winner; the corner of few samples is sparse."""
    rng = np.random.default_rng(seed)
    rows, x, y, datasets, ids = {"A": [], "B": [], "C": []}, [], [], [], []
    for d in ("s1", "s2"):
        for s in range(n_per_setup):
            lx, my = rng.random(), rng.random()
            if lx > 0.5 and my > 0.5 and rng.random() < 0.8:
                my = rng.random() * 0.5  # the upper right cell gets few samples
            noise = 0.01 * rng.random(3)
            if lx > 0.5:
                a, b = 0.5, 0.2
            elif my < 0.5:
                a, b = 0.2, 0.5
            else:
                a, b = 0.3 + 0.1 * rng.standard_normal(), 0.3 + 0.1 * rng.standard_normal()
            rows["A"].append(a + noise[0])
            rows["B"].append(b + noise[1])
            rows["C"].append(0.9 + noise[2])
            x.append(lx)
            y.append(my)
            datasets.append(d)
            ids.append(s)
    records = _rows(rows, x, datasets, sample_ids=ids, y=y)
    return records.drop(columns="domain_auc").assign(task="cap")


def test_a_two_dimensional_map_on_constructed_records(tmp_path):
    records = _compound_records()
    rmap = regime_map_2d(
        records, n_bins=2, scheme="width", n_bootstrap=100, x_range=(0, 1), y_range=(0, 1)
    )
    cells = rmap.cells.drop_duplicates(["x_bin", "y_bin"]).set_index(["x_bin", "y_bin"])
    assert cells.loc[(0, 0), "winner"] == "A"  # low label shift, low mixture
    assert cells.loc[(1, 0), "winner"] == "B"  # high label shift
    assert cells.loc[(0, 1), "verdict"] == "no clear winner"
    assert set(cells.loc[(0, 1), "tied"].split(";")) == {"A", "B"}
    assert cells.loc[(1, 1), "verdict"].startswith("too few samples")
    assert cells.loc[(1, 1), "winner"] == "" and np.isnan(cells.loc[(1, 1), "bootstrap_share"])
    # each cell's counts and raw means against a loop over the records
    per_sample = records[records["method"] == "A"]
    for (i, j), cell in cells.iterrows():
        inside = [
            (d, s)
            for d, s, lx, my in zip(per_sample["dataset"], per_sample["sample_id"],
                                    per_sample["true_label_shift"], per_sample["true_mixture"])
            if (lx >= 0.5) == bool(i) and (my >= 0.5) == bool(j)
        ]  # fmt: skip
        assert cell["n_samples"] == len(inside)
        c_rows = records[(records["method"] == "C")]
        c_mean = np.mean([e for d, s, e in zip(c_rows["dataset"], c_rows["sample_id"],
                                               c_rows["error"]) if (d, s) in set(inside)])  # fmt: skip
        got = rmap.cells[(rmap.cells["x_bin"] == i) & (rmap.cells["y_bin"] == j)]
        assert got.loc[got["method"] == "C", "mean_error"].item() == pytest.approx(c_mean)
    paths = write_regime_map_2d(rmap, tmp_path / "a" / "cap_compound_2d")
    again = write_regime_map_2d(rmap, tmp_path / "b" / "cap_compound_2d")
    assert paths["csv"].read_bytes() == again["csv"].read_bytes()
    assert paths["png"].read_bytes() == again["png"].read_bytes()
    table = pd.read_csv(paths["csv"], keep_default_na=False)
    assert tuple(table.columns) == CSV_2D_COLUMNS and len(table) == 4 * 3
