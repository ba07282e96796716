"""Regime maps (docs/regimes.md §3): bin edges, per-bin means and winners against loops, the tie
rule, paired samples, and the written files."""

import numpy as np
import pandas as pd
import pytest

from unishift.regimes.maps import CSV_COLUMNS, assign_bins, bin_edges, regime_map, write_regime_maps


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
    assert set(first.bins["winner"]) == {"B"} and set(first.bins["n_tied"]) == {2}
    second = regime_map(records, "domain_auc", n_bins=3, methods=["A", "B", "C"])
    assert set(second.bins["winner"]) == {"A"}
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
        best = cells.loc[cells["is_winner"], "mean_error"].item()
        assert line.count(r"\textbf{") == 1 and rf"\textbf{{{best:.4f}}}" in line
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
