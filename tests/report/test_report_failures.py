"""No conclusion drawn from failures (docs/reporting.md §2.1.1, docs/regimes.md "Failures"): a method
scored on fewer than 90 % of the samples it was asked for is shown and counted, but never bold,
best-coloured, top-ranked, daggered, chosen, the best single method, the Oracle's pick or a regime
map's winner, and its failures drop no other method's samples (issue 32)."""

import numpy as np
import pandas as pd
import pytest

from tests.report.test_report_tables import INFO, SETUPS, _records, _values
from unishift.evaluation.stats import bold_row, covered, row_colours, top_ranked, win_rates
from unishift.regimes import selector as S
from unishift.regimes.maps import regime_map
from unishift.report.tables import compute_table, render_table_tex, table_frame

N = 30  # samples per setup of tests.report.test_report_tables


def test_the_share_is_counted_in_integers_on_its_boundary():
    # 9 of 10 meets 0.9 although 0.9 * 10 is 9.000000000000002 in floats; 8 of 10 does not
    values = np.zeros((10, 3))
    values[:1, 1] = np.nan
    values[:2, 2] = np.nan
    assert covered(values).tolist() == [True, True, False]
    assert covered(values, 0.8).tolist() == [True, True, True]
    assert not covered(np.zeros((0, 2))).any()


def test_a_cell_scored_on_few_samples_is_never_bold_nor_best_coloured():
    rng = np.random.default_rng(1)
    values = np.column_stack([rng.uniform(0.3, 0.4, 40), rng.uniform(0.5, 0.6, 40)])
    values[:, 0][4:] = np.nan  # 4 of 40 left, each better than every error of column 1
    row = bold_row(values)
    assert row.bold.tolist() == [False, True] and row.best == 1
    # before the rule the 4 survivors' mean was the row's minimum: the bold reference, green!40
    before = bold_row(values, min_coverage=0.1)
    assert before.best == 0 and before.bold[0]
    means = np.nanmean(values, axis=0)
    # the one eligible cell spans the scale alone: red!40, as every row of equal means
    assert row_colours(means, eligible=covered(values)) == [None, "red!40"]
    assert row_colours(means) == ["green!40", "red!40"]


def test_top_ranks_and_daggers_skip_a_method_below_the_share():
    assert top_ranked(np.array([1.0, 2.0, 3.0]), 1, np.array([False, True, True])).tolist() == [
        False,
        True,
        False,
    ]
    # M beats R on every sample it scores (85 of 100): without the rule a dagger
    errors = np.column_stack([np.full(100, 0.1), np.full(100, 0.5)])
    errors[:15, 0] = np.nan
    assert win_rates(errors, ["M", "R"], ["R"], min_coverage=0.5).dagger[0, 0]
    result = win_rates(errors, ["M", "R"], ["R"])
    assert not result.dagger[0, 0] and result.counts[0, 0] == 85


def test_a_table_shows_and_flags_a_method_below_the_share_but_never_bolds_it():
    values = _values()
    # A2 far better than everyone, but failing on 27 of the 30 samples of every setup
    status = {}
    for clf, ds in SETUPS:
        values[("A2", clf, ds)] = np.full(N, 1e-4)
        status.update({("A2", clf, ds, s): "error" for s in range(3, N)})
    result = compute_table(_records(values, status), "cap", "label", list(INFO), method_info=INFO)
    j = result.names.index("A2")
    cells = table_frame(result)
    a2 = cells[cells["method"] == "A2"]
    assert (a2["n_samples"] == 3).all() and (a2["n_errors"] == 27).all()  # shown, counted
    assert np.allclose(a2["mean_error"], 1e-4)
    assert not a2["bold"].any() and (a2["colour"] == "").all()  # never bold nor coloured
    # each row's bold and green!40 cell is another method's
    assert result.bold.any(axis=1).all()
    assert all("green!40" in row for row in result.colours)
    assert not result.rank_bold[j]
    assert not result.wins.dagger[:, j].any()
    tex = render_table_tex(result)
    assert r"$0.000^{\ast}$" in tex and r"fewer than 90\% of its samples (4 cells)" in tex
    # the same records with A2's samples all scored make it bold everywhere: the rule decided it
    scored = compute_table(_records(values), "cap", "label", list(INFO), method_info=INFO)
    assert scored.bold[:, j].all()


def test_a_method_failing_everywhere_is_an_empty_column_and_the_table_goes_on():
    values = _values()
    status = {("A2", clf, ds, s): "error" for clf, ds in SETUPS for s in range(N)}
    result = compute_table(_records(values, status), "cap", "label", list(INFO), method_info=INFO)
    j = result.names.index("A2")
    assert np.isnan(result.means[:, j]).all() and (result.n_samples[:, j] == 0).all()
    assert "n/a" in render_table_tex(result)
    assert result.bold.any(axis=1).all()


def _frame(errors: dict, groups: list[str]) -> pd.DataFrame:
    """Records of one task: ``errors[m]`` per sample, sample i in group ``groups[i]``."""
    rows = []
    for m, errs in errors.items():
        for s, e in enumerate(errs):
            rows.append(
                {"shift": "label", "task": "calibration", "method": m, "classifier": "LR",
                 "dataset": groups[s], "group": groups[s], "sample_id": s, "error": e,
                 "estimate": 0.0, "est_prevalence_shift": (s % 7) / 7, "domain_auc": s / 40}
            )  # fmt: skip
    return pd.DataFrame(rows)


def _issue_records(seed=0):
    """The issue's probe: 40 samples in 4 groups; NegCal fails on 36 and is far the best on the
    other 4; B beats C everywhere."""
    rng = np.random.default_rng(seed)
    groups = [f"g{s // 10}" for s in range(40)]
    neg = np.full(40, np.nan)
    neg[::10] = 0.001
    b = 0.2 + 0.01 * rng.random(40)
    c = 0.3 + 0.01 * rng.random(40)
    return _frame({"NegCal": neg, "B": b, "C": c}, groups)


def test_the_selector_and_its_references_never_pick_a_method_below_the_share():
    records = _issue_records()
    methods = ["NegCal", "B", "C"]
    # before the rule: NegCal, best on the 4 samples where every method scored
    assert S.best_single_method(records, methods, min_coverage=0.05) == "NegCal"
    assert S.best_single_method(records, methods) == "B"
    assert set(S.best_single_records(records, methods)["chosen_method"]) == {"B"}
    oracle = S.oracle_records(records, methods)
    assert set(oracle["chosen_method"]) == {"B"}
    selected = S.select_methods(records, ["est_prevalence_shift", "domain_auc"], methods)
    assert "NegCal" not in set(selected["chosen_method"])
    # nothing reaches the share: a clear error naming each method's count
    broken = records.assign(error=np.where(records["sample_id"] % 2, np.nan, records["error"]))
    with pytest.raises(ValueError, match=r"90% of the 40 samples .*NegCal 4, B 20, C 20"):
        S.best_single_method(broken, methods)


def test_a_regime_map_keeps_every_sample_of_the_compared_methods():
    records = _issue_records()
    rmap = regime_map(records, "domain_auc", n_bins=2, methods=["NegCal", "B", "C"])
    # before: only the 4 samples where NegCal scored, and NegCal the winner of every bin
    assert rmap.n_dropped == 0 and rmap.bins["n_samples"].sum() == 40
    assert set(rmap.bins["winner"]) == {"B"} and rmap.below_share == ("NegCal",)
    neg = rmap.cells[rmap.cells["method"] == "NegCal"]
    assert (neg["rank"] == 0).all() and not neg["is_winner"].any()
    assert np.allclose(neg["mean_error"], 0.001)  # shown: the mean of its finite errors
    b = records[records["method"] == "B"].sort_values("sample_id")["error"].to_numpy()
    low = rmap.cells[(rmap.cells["method"] == "B") & (rmap.cells["bin"] == 0)]
    assert low["mean_error"].item() == pytest.approx(b[:20].mean())
    # a method failing everywhere (allow_failed_methods) is drawn empty, the map goes on
    dead = records.assign(error=np.where(records["method"] == "NegCal", np.nan, records["error"]))
    empty = regime_map(dead, "domain_auc", n_bins=2, methods=["NegCal", "B", "C"])
    assert empty.bins["winner"].tolist() == ["B", "B"] and empty.n_dropped == 0


@pytest.mark.workflow
def test_allow_failed_methods_finishes_with_an_empty_column(finished_test_run, tmp_path):
    """Issue 32: with ``allow_failed_methods: true`` a method failing everywhere crashed the
    selector and regime-map jobs ("no sample has a finite error for every method"), and a method
    failing on 36 of 40 samples was the best single method over all groups (config/README.md
    promises a column of empty cells)."""
    import os
    import shutil

    import yaml

    from tests.conftest import REPO
    from tests.workflow.test_workflow import snakemake
    from unishift.report.summary import run_summary

    work = tmp_path / "wf"
    shutil.copytree(finished_test_run[0], work, symlinks=True)
    config = yaml.safe_load((work / ".test" / "config.yaml").read_text())
    # four of the shared run's calibrators (the key re-runs their evaluation jobs: it is one of
    # their parameters) beside the three wrong ones
    kept = ["Platt", "Head2Tail", "EMQ", "PacCal_sigma"]
    assert set(kept) <= set(config["methods"]["label"]["calibration"])
    config["methods"]["label"]["calibration"] = [*kept, "AlwaysFails", "MostlyFails", "NegCal"]
    config.update(plugins=["tests.wrong_methods"], allow_failed_methods=True)
    (work / "failing.yaml").write_text(yaml.safe_dump(config))
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    stems = ["tables/calibration_label", "regimes/calibration_label_selection"]
    targets = [f"results/{stem}.{suffix}" for stem in stems for suffix in ("csv", "tex")]
    targets.append("results/regimes/calibration_label.csv")
    snakemake("--cores", "2", *targets, "--configfile", "failing.yaml", cwd=work, env=env)

    results = work / "results"
    cells = pd.read_csv(results / "tables" / "calibration_label.csv")
    dead = cells[cells["method"] == "AlwaysFails"]
    assert len(dead) == 4 and dead["mean_error"].isna().all() and (dead["n_errors"] == 10).all()
    mostly = cells[cells["method"] == "MostlyFails"]
    assert (mostly["n_samples"] == 1).all() and (mostly["n_errors"] == 9).all()
    assert not mostly["bold"].any() and mostly["colour"].isna().all()
    summary = pd.read_csv(results / "regimes" / "calibration_label_selection.csv")
    notes = summary.set_index("method")["note"]
    assert "scored on 4 of 40 samples" in notes["MostlyFails"]
    assert "scored on 0 of 40 samples" in notes["AlwaysFails"]
    best = summary.loc[summary["note"] == "best single method over all groups", "method"]
    assert len(best) == 1 and best.item() not in ("MostlyFails", "AlwaysFails")
    choices = pd.read_csv(results / "regimes" / "calibration_label_choices.csv")
    for column in ("selector_choice", "hybrid_choice", "best_single_choice", "oracle_choice"):
        assert not set(choices[column]) & {"MostlyFails", "AlwaysFails"}, column
    maps = pd.read_csv(results / "regimes" / "calibration_label.csv")
    assert not set(maps["winner"].dropna()) & {"MostlyFails", "AlwaysFails"}
    text = run_summary(results, [("calibration", "label")])
    assert "AlwaysFails: errors on 40 of 40 samples" in text
    assert "MostlyFails: errors on 36 of 40 samples" in text
    # entries of -5e-10 are within the tolerance: clipped and scored on every sample, not failed
    negcal = pd.read_csv(results / "eval" / "label" / "calibration" / "NegCal.csv")
    assert len(negcal) == 40 and (negcal["status"] == "ok").all()
    assert np.isfinite(negcal["error"]).all() and (negcal["error"] >= 0).all()
    negcal_cells = cells[cells["method"] == "NegCal"]
    assert (negcal_cells["n_errors"] == 0).all() and np.isfinite(negcal_cells["mean_error"]).all()
    assert "NegCal" not in text


def test_the_cd_diagram_flags_a_method_below_the_share(tmp_path):
    from unishift.report.cd import write_cd

    values = _values()
    status = {("A2", clf, ds, s): "error" for clf, ds in SETUPS for s in range(3, N)}
    result = compute_table(_records(values, status), "cap", "label", list(INFO), method_info=INFO)
    write_cd(result, tmp_path / "cd.tex", tmp_path / "cd.png")
    tex = (tmp_path / "cd.tex").read_text()
    assert tex.count(r"${}^{\ast}$") == 1 and r"DMCal${}^{\ast}$" in tex
    assert (tmp_path / "cd.png").stat().st_size > 0
