"""The regime rules' entry points on record files (docs/regimes.md §5.3-5.4): the regime maps of a
task, the Selector's record file (read by the tables like any method's), its references, its table
column and group, the paper comparison without it, and the leave-one-data-set-out guard through the
files the rule reads and writes."""

import numpy as np
import pandas as pd
import pytest

from unishift.evaluation.records import COLUMNS, K_CLASS, TWO_CLASS
from unishift.io import write_csv
from unishift.regimes import hybrid as H
from unishift.regimes import selector as S
from unishift.report.pipeline import build_reproduction, build_table
from unishift.report.regimes import build_regime_maps, build_selection, map_descriptors
from unishift.report.tables import load_records, read_records

INFO = {
    "CC": ("CC", "baseline"),
    "PACC": ("PACC", "reference"),
    "EMQ": ("EMQ", "reference"),
    "Selector": ("Selector", "selection"),
}


def write_records(folder, errors, descriptors, layout=TWO_CLASS, task="quantification"):
    """One record file per method; ``errors``: method -> {(classifier, dataset): errors};
    ``descriptors``: {(classifier, dataset): n x 4 unsupervised descriptors}."""
    files = []
    for method, cells in errors.items():
        rows = []
        for (clf, ds), errs in cells.items():
            d = descriptors[clf, ds]
            for s, e in enumerate(errs):
                rows.append(
                    {c: np.nan for c in COLUMNS[layout]}
                    | {"shift": "label", "task": task, "method": method, "classifier": clf,
                       "dataset": ds, "sample_id": s, "shift_intensity": d[s, 0] / 2,
                       "error": e, "status": "ok" if np.isfinite(e) else "error",
                       "reason": "" if np.isfinite(e) else "failed", "n_classes": 3,
                       "true_label_shift": d[s, 0], "est_prevalence_shift": d[s, 0],
                       "domain_auc": d[s, 1], "confidence_drop": d[s, 2],
                       "prediction_shift": d[s, 3]}
                )  # fmt: skip
        path = folder / f"{method}.csv"
        write_csv(path, pd.DataFrame(rows, columns=list(COLUMNS[layout])))
        files.append(path)
    return files


def _synthetic(rng, datasets=("a", "b", "c"), classifiers=("LR", "NB"), n=30):
    """PACC wins at low est_prevalence_shift, EMQ at high; CC is always worst."""
    descriptors = {(c, d): rng.random((n, 4)) for c in classifiers for d in datasets}
    errors = {m: {} for m in ("CC", "PACC", "EMQ")}
    for key, desc in descriptors.items():
        x = desc[:, 0]
        errors["CC"][key] = 0.6 + 0.05 * rng.random(n)
        errors["PACC"][key] = np.where(x < 0.5, 0.1, 0.4) + 0.05 * rng.random(n)
        errors["EMQ"][key] = np.where(x < 0.5, 0.4, 0.1) + 0.05 * rng.random(n)
    return errors, descriptors


@pytest.fixture
def selection(tmp_path):
    errors, descriptors = _synthetic(np.random.default_rng(0))
    files = write_records(tmp_path, errors, descriptors)
    out = {k: tmp_path / f"{k}.csv" for k in ("Selector", "summary", "choices")}
    result = build_selection(
        files, "quantification", "label", ["CC", "PACC", "EMQ"], TWO_CLASS, 0, *out.values()
    )
    return files, out, result


def test_the_selector_file_is_a_record_file_of_the_chosen_rows_in_table_order(selection):
    files, out, _ = selection
    selector = read_records(out["Selector"])
    assert tuple(selector.columns) == COLUMNS[TWO_CLASS]
    first = read_records(files[0])
    key = ["classifier", "dataset", "sample_id"]
    assert selector[key].equals(first[key])  # the first method's row order
    assert set(selector["method"]) == {"Selector"}
    records = load_records(files)
    choices = pd.read_csv(out["choices"])
    for row, choice in zip(selector.itertuples(), choices.itertuples(), strict=True):
        chosen = records[
            (records["method"] == choice.selector_choice)
            & (records["classifier"] == row.classifier)
            & (records["dataset"] == row.dataset)
            & (records["sample_id"] == row.sample_id)
        ].iloc[0]
        assert row.error == chosen["error"] and row.domain_auc == chosen["domain_auc"]
    # the rule is learnable across data sets: the selector gets most samples right
    assert (choices["selector_choice"] == choices["oracle_choice"]).mean() > 0.8


def test_the_summary_sets_the_selector_beside_its_references(selection):
    files, out, result = selection
    summary = pd.read_csv(out["summary"]).set_index("method")
    assert list(summary.index) == [
        "Selector", "Hybrid", "BestSingle", "Oracle", "SetupOracle", "BestInHindsight",
        "CC", "PACC", "EMQ",
    ]  # fmt: skip
    records = load_records(files)
    by_method = records.groupby("method")["error"].mean()
    choices = pd.read_csv(out["choices"])
    # the oracle is the per-sample minimum (a loop), an upper bound on every method and the selector
    minimum = [
        records[
            (records["classifier"] == r.classifier)
            & (records["dataset"] == r.dataset)
            & (records["sample_id"] == r.sample_id)
        ]["error"].min()
        for r in choices.itertuples()
    ]
    assert summary.loc["Oracle", "mean_error"] == pytest.approx(np.mean(minimum))
    assert summary.loc["Oracle", "mean_error"] <= summary.loc["Selector", "mean_error"]
    assert summary.loc["Selector", "mean_error"] < by_method.min()
    for method in ("CC", "PACC", "EMQ"):
        assert summary.loc[method, "mean_error"] == pytest.approx(by_method[method])
    assert "not a method" in summary.loc["Oracle", "role"]


def test_the_selection_tabular_sets_the_three_references_with_the_summary_s_numbers(
    selection, tmp_path
):
    files, out, _ = selection
    tex = tmp_path / "selection.tex"
    build_selection(
        files, "quantification", "label", ["CC", "PACC", "EMQ"], TWO_CLASS, 0,
        *out.values(), tex_path=tex,
    )  # fmt: skip
    summary = pd.read_csv(out["summary"]).set_index("method")
    rows = [line for line in tex.read_text().splitlines() if line.endswith(r"\\")][1:]
    names = [row.split(" & ")[0] for row in rows]
    best = summary.loc[["CC", "PACC", "EMQ"], "mean_error"].idxmin()
    assert names == ["Selector", "Hybrid", "BestSingle", "Oracle", "SetupOracle", best]
    for name, row in zip(names, rows, strict=True):
        assert f"{summary.loc[name, 'mean_error']:.4f}" in row
        assert f" {summary.loc[name, 'n_finite']} " in row


def test_the_table_ranks_the_selector_in_its_own_group_and_keeps_the_papers_view(
    selection, tmp_path
):
    files, out, _ = selection
    methods = ["CC", "PACC", "EMQ"]
    kwargs = dict(classifiers=["LR", "NB"], datasets=["a", "b", "c"], n_samples=30)
    with_selector = build_table(
        [*files, out["Selector"]], "quantification", "label", [*methods, "Selector"],
        tmp_path / "with", method_info=INFO, **kwargs,
    )  # fmt: skip
    without = build_table(
        files, "quantification", "label", methods, tmp_path / "without", method_info=INFO, **kwargs
    )
    assert [m.name for m in with_selector.methods][-1] == "Selector"
    assert with_selector.methods[-1].group == "selection"
    tex = (tmp_path / "with" / "quantification_label.tex").read_text()
    assert "Selection" in tex and "Selector" in tex
    # ranked with the methods, and the methods' own view stored beside it
    summary = pd.read_csv(tmp_path / "with" / "quantification_label_summary.csv")
    plain = pd.read_csv(tmp_path / "without" / "quantification_label_summary.csv")
    assert summary["avg_rank"].iloc[-1] < summary["avg_rank"].iloc[:-1].min()
    np.testing.assert_allclose(summary["avg_rank_methods"].iloc[:-1], plain["avg_rank"])
    assert np.isnan(summary["avg_rank_methods"].iloc[-1])
    cells = pd.read_csv(tmp_path / "with" / "quantification_label.csv")
    plain_cells = pd.read_csv(tmp_path / "without" / "quantification_label.csv")
    kept = cells[cells["method"] != "Selector"].reset_index(drop=True)
    assert kept["bold_methods"].equals(plain_cells["bold"])
    assert "bold_methods" not in plain_cells and "avg_rank_methods" not in plain
    # the other columns' win rates against the references do not move
    assert summary["wins_1"].iloc[0] == plain["wins_1"].iloc[0]
    assert np.isfinite(with_selector.wins.rates[:, -1]).all()
    assert without.avg_ranks_methods is None


def test_the_reproduction_compares_the_methods_own_ranks(tmp_path, selection):
    files, out, _ = selection
    table = tmp_path / "t"
    build_table(
        [*files, out["Selector"]], "quantification", "label", ["CC", "PACC", "EMQ", "Selector"],
        table, method_info=INFO,
    )  # fmt: skip
    cells = table / "quantification_label.csv"
    summary = table / "quantification_label_summary.csv"
    build_reproduction(
        cells, summary, "quantification", "label", tmp_path / "r.csv", tmp_path / "r.md"
    )
    md = (tmp_path / "r.md").read_text()
    ours = pd.read_csv(summary).set_index("method")["avg_rank_methods"]
    for method in ("CC", "PACC", "EMQ"):
        assert f"{ours[method]:.2f}" in md, method


def test_regime_maps_per_descriptor_in_one_file(tmp_path):
    errors, descriptors = _synthetic(np.random.default_rng(1))
    files = write_records(tmp_path, errors, descriptors)
    maps, undefined = build_regime_maps(
        files, "quantification", "label", ["CC", "PACC", "EMQ"], tmp_path / "map", n_bins=4
    )
    table = pd.read_csv(tmp_path / "map.csv")
    assert list(dict.fromkeys(table["descriptor"])) == list(map_descriptors("label"))
    assert undefined == dict.fromkeys(map_descriptors("label"), 0)
    est = table[(table["descriptor"] == "est_prevalence_shift")]
    winners = est.groupby("bin")["winner"].first().tolist()
    assert winners == ["PACC", "PACC", "EMQ", "EMQ"]  # PACC below 0.5, EMQ above
    assert est.groupby("bin")["winner_changed"].first().tolist() == [False, False, True, False]
    tex = (tmp_path / "map.tex").read_text()
    assert tex.count(r"\begin{tabular}") == len(map_descriptors("label"))
    assert (tmp_path / "map.png").stat().st_size > 0
    assert map_descriptors("compound")[:2] == ("true_label_shift", "true_mixture")


def test_k_class_records_and_a_failed_method(tmp_path):
    errors, descriptors = _synthetic(np.random.default_rng(2))
    errors["EMQ"][("LR", "a")][3] = np.nan  # one failed sample
    files = write_records(tmp_path, errors, descriptors, layout=K_CLASS)
    out = [tmp_path / n for n in ("S.csv", "s.csv", "c.csv")]
    build_selection(files, "quantification", "label", ["CC", "PACC", "EMQ"], K_CLASS, 0, *out)
    selector = read_records(out[0])
    assert tuple(selector.columns) == COLUMNS[K_CLASS]
    maps, _ = build_regime_maps(
        files, "quantification", "label", ["CC", "PACC", "EMQ"], tmp_path / "m", n_bins=3
    )
    assert all(m.n_dropped == 1 for m in maps)


# --- no leak through the files ------------------------------------------------------------------


def _group_specific_files(folder):
    """Only in data set g0 does est_prevalence_shift tell PACC from EMQ the way it does (PACC best
    below 0); elsewhere the relation is reversed, and domain_auc identifies g0: a model that saw
    g0's rows could learn g0's own rule."""
    rng = np.random.default_rng(3)
    descriptors, errors = {}, {"PACC": {}, "EMQ": {}}
    for g in ("g0", "g1", "g2", "g3"):
        n = 150
        x = rng.uniform(-1, 1, n)
        z = rng.uniform(10, 11, n) if g == "g0" else rng.uniform(0, 3, n)
        descriptors["LR", g] = np.column_stack([x, z, rng.random(n), rng.random(n)])
        pacc_best = (x < 0) if g == "g0" else (x > 0)
        errors["PACC"]["LR", g] = np.where(pacc_best, 0.2, 0.5) + 0.02 * rng.random(n)
        errors["EMQ"]["LR", g] = np.where(pacc_best, 0.5, 0.2) + 0.02 * rng.random(n)
    return write_records(folder, errors, descriptors)


def _held_out_hits(folder, files):
    out = [folder / n for n in ("Selector.csv", "summary.csv", "choices.csv")]
    build_selection(files, "quantification", "label", ["PACC", "EMQ"], TWO_CLASS, 0, *out)
    choices = pd.read_csv(out[2])
    g0 = choices[choices["dataset"] == "g0"]
    return float((g0["selector_choice"] == g0["oracle_choice"]).mean())


def assert_no_leak(folder, files):
    # g0's rule cannot be learnt from the other data sets: an honest selector gets it wrong
    assert _held_out_hits(folder, files) < 0.3


def test_the_selector_rule_has_no_leak_and_this_test_fails_with_one(tmp_path, monkeypatch):
    files = _group_specific_files(tmp_path)
    assert_no_leak(tmp_path, files)
    # put the held-out data set's records back into training: the selector learns g0's rule ...
    monkeypatch.setattr(S, "training_mask", lambda groups, held_out: np.ones(len(groups), bool))
    assert _held_out_hits(tmp_path, files) > 0.9
    # ... and the guard above fails
    with pytest.raises(AssertionError):
        assert_no_leak(tmp_path, files)


def test_the_report_document_has_a_regime_section(tmp_path):
    from unishift.report.document import ReportContent, report_tex

    errors, descriptors = _synthetic(np.random.default_rng(4))
    files = write_records(tmp_path, errors, descriptors)
    build_regime_maps(files, "quantification", "label", ["CC", "PACC", "EMQ"], tmp_path / "m")
    text = report_tex(
        ReportContent(
            regimes=[("quantification label", tmp_path / "m.tex")],
            regime_figures=[("quantification label", tmp_path / "m.png")],
        )
    )
    assert r"\section{Regime maps" in text
    assert (tmp_path / "m.tex").read_text() in text and "m.png" in text
    assert "Regime maps" not in report_tex(ReportContent())


# --- references, intervals and the degenerate flag ------------------------------------------------


def _trivial_files(folder, descriptors, value):
    """One trivial-answer file per setup: every task's trivial error ``value`` on every sample."""
    files = []
    for (clf, ds), d in descriptors.items():
        path = folder / f"trivial_{clf}_{ds}.csv"
        n = len(d)
        pd.DataFrame(
            {"shift": "label", "classifier": clf, "dataset": ds, "sample_id": range(n),
             "trivial_calibration": value, "trivial_quantification": value,
             "trivial_cap": value, "validation_accuracy": 0.8}
        ).to_csv(path, index=False)  # fmt: skip
        files.append(path)
    return files


@pytest.mark.parametrize(("value", "flagged"), [(0.2, True), (0.31, False)])
def test_the_selection_file_sets_trivial_answers_oracles_and_intervals(tmp_path, value, flagged):
    # method means: CC 0.62, PACC 0.30, EMQ 0.25; a trivial error of 0.2 beats all three (more
    # than half: degenerate), 0.31 only CC (one of three: not)
    errors, descriptors = _synthetic(np.random.default_rng(0))
    files = write_records(tmp_path, errors, descriptors)
    out = [tmp_path / f"{k}.csv" for k in ("Selector", "summary", "choices")]
    result = build_selection(
        files, "quantification", "label", ["CC", "PACC", "EMQ"], TWO_CLASS, 0, *out,
        trivial_files=_trivial_files(tmp_path, descriptors, value),
        gains_path=tmp_path / "gains.csv", n_bootstrap=200,
    )  # fmt: skip
    summary = pd.read_csv(out[1]).set_index("method")
    assert summary.loc["Trivial", "mean_error"] == pytest.approx(value)
    assert summary["degenerate"].tolist() == [flagged] * len(summary)
    assert ("degenerate" in summary.loc["Trivial", "note"]) == flagged
    # the per-setup oracle: per (classifier, data set) the method with the lowest mean (a loop)
    records = load_records(files)
    expected = []
    for _, part in records.groupby(["classifier", "dataset"]):
        means = part.groupby("method")["error"].mean()
        expected += list(part.loc[part["method"] == means.idxmin(), "error"])
    assert summary.loc["SetupOracle", "mean_error"] == pytest.approx(np.mean(expected))
    assert summary.loc["Oracle", "mean_error"] <= summary.loc["SetupOracle", "mean_error"]
    hindsight = records.groupby("method")["error"].mean().min()
    assert summary.loc["BestInHindsight", "mean_error"] == pytest.approx(hindsight)
    varied = summary.drop(index="Trivial")  # a constant error has a point interval
    assert (varied["ci_low"] < varied["mean_error"]).all()
    assert (varied["mean_error"] < varied["ci_high"]).all()
    assert summary.loc["Trivial", ["ci_low", "ci_high"]].tolist() == pytest.approx([value] * 2)
    # the gains over BestSingle, overall and per held-out group, are 1 - mean / BestSingle's mean
    gains = pd.read_csv(tmp_path / "gains.csv")
    choices = pd.read_csv(out[2])
    for row in gains.itertuples():
        part = choices[choices["dataset"] == row.group]
        column = "selector_error" if row.method == "Selector" else "hybrid_error"
        gain = 1 - part[column].mean() / part["best_single_error"].mean()
        assert row.gain_vs_best_single == pytest.approx(gain)
        assert row.gain_ci_low <= row.gain_vs_best_single <= row.gain_ci_high
    overall = 1 - choices["selector_error"].mean() / choices["best_single_error"].mean()
    assert summary.loc["Selector", "gain_vs_best_single"] == pytest.approx(overall)
    assert set(result["hybrid"]["variant"]) <= set(H.VARIANTS)


@pytest.mark.parametrize(("value", "flagged"), [(0.2, True), (0.31, False)])
def test_the_regime_maps_carry_the_degenerate_flag_and_the_trivial_answer(tmp_path, value, flagged):
    # the selection file's rule on the same records (0.2 beats all three methods' means, 0.31
    # only CC's); a map computing its own means over the kept samples or per bin would differ
    errors, descriptors = _synthetic(np.random.default_rng(0))
    errors["EMQ"][("LR", "a")][:2] = np.nan  # a dropped sample: the flag is the overall one
    files = write_records(tmp_path, errors, descriptors)
    trivial = _trivial_files(tmp_path, descriptors, value)
    out = [tmp_path / f"{k}.csv" for k in ("Selector", "summary", "choices")]
    methods = ["CC", "PACC", "EMQ"]
    build_selection(
        files, "quantification", "label", methods, TWO_CLASS, 0, *out, trivial_files=trivial,
        n_bootstrap=20, hybrid=False,
    )  # fmt: skip
    selection_flag = bool(pd.read_csv(out[1])["degenerate"].iloc[0])
    assert selection_flag == flagged
    maps, _ = build_regime_maps(
        files, "quantification", "label", methods, tmp_path / "map", n_bins=3,
        trivial_files=trivial, n_bootstrap=20,
    )  # fmt: skip
    table = pd.read_csv(tmp_path / "map.csv")
    assert table["degenerate"].tolist() == [flagged] * len(table)
    assert table["trivial_error"].to_numpy() == pytest.approx(value)
    tex = (tmp_path / "map.tex").read_text()
    assert ("Degenerate: the trivial answer beats 3 of the 3" in tex) == flagged
    assert all(m.degenerate == flagged for m in maps)
    # without trivial files the flag is unknown: an empty column, no sentence
    build_regime_maps(files, "quantification", "label", methods, tmp_path / "bare", n_bins=3,
                      n_bootstrap=20)  # fmt: skip
    bare = pd.read_csv(tmp_path / "bare.csv", keep_default_na=False)
    assert (
        set(bare["degenerate"]) == {""} and "Degenerate" not in (tmp_path / "bare.tex").read_text()
    )
