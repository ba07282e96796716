"""The regime pieces of a finished run of .test/config.yaml (the session's shared run,
``finished_test_run``; docs/regimes.md §5): descriptor files once per setup and joined into every
record, regime maps per task, the Selector as a column of every table with its references, and
the leave-one-data-set-out guard on the run's own records."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.conftest import MULTICLASS_CONFIG, REPO
from unishift.data.label_shift import read_label_setup, read_splits
from unishift.evaluation.records import DESCRIPTOR_COLUMNS, TWO_CLASS
from unishift.regimes import selector as S
from unishift.regimes.setups import COLUMNS as FILE_COLUMNS
from unishift.regimes.setups import describe_setup, full_prevalence
from unishift.report.names import latex_escape
from unishift.report.regimes import build_selection, map_descriptors
from unishift.report.tables import read_records

pytestmark = pytest.mark.workflow

CONFIG = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
LABEL = CONFIG["label_shift"]
SETUPS = [(c, d) for c in LABEL["classifiers"] for d in LABEL["datasets"]]
TASKS = ("calibration", "quantification", "cap")
KEY = ["classifier", "dataset", "sample_id"]


@pytest.fixture(scope="module")
def results(finished_test_run):
    return finished_test_run[0] / "results"


def _records(results, task, method):
    return read_records(results / "eval" / "label" / task / f"{method}.csv")


def test_descriptors_are_computed_once_per_setup_and_joined_into_every_record(results):
    files = {s: results / "descriptors" / "label" / s[0] / f"{s[1]}.csv" for s in SETUPS}
    table = pd.concat([pd.read_csv(f, dtype={"dataset": str}) for f in files.values()])
    assert list(table.columns) == list(FILE_COLUMNS)
    assert len(table) == len(SETUPS) * LABEL["n_samples"]
    assert table["true_mixture"].isna().all()  # no mixture under label shift
    for task in TASKS:
        for method in CONFIG["methods"]["label"][task]:
            records = _records(results, task, method)
            joined = records.merge(table, on=KEY, suffixes=("", "_file"), validate="one_to_one")
            assert len(joined) == len(records)
            for d in DESCRIPTOR_COLUMNS:  # the same numbers in every method's records
                np.testing.assert_array_equal(joined[d], joined[f"{d}_file"], err_msg=(method, d))
    # pi is the 70 % portion's prevalence the tables' intensity uses: twice |p - pi| for two classes
    records = _records(results, "cap", "Naive")
    np.testing.assert_allclose(
        records["true_label_shift"], 2 * records["shift_intensity"], rtol=0, atol=1e-12
    )
    assert records["domain_auc"].between(0, 1).all()


def test_a_setups_descriptors_equal_a_recomputation_from_its_files(results):
    classifier, dataset = SETUPS[-1]
    setup = read_label_setup(
        results / "data" / "label" / dataset / "split.npz",
        results / "posteriors" / "label" / dataset / f"{classifier}.npz",
        results / "samples" / "label" / f"{dataset}.npz",
        dataset,
        classifier,
        CONFIG["seed"],
        sample_posteriors=LABEL["sample_posteriors"],
    )
    pi = full_prevalence(
        read_splits(results / "data" / "label" / dataset / "split.npz")["prevalence_full"]
    )
    expected, _ = describe_setup(setup, CONFIG["seed"], pi)
    stored = pd.read_csv(results / "descriptors" / "label" / classifier / f"{dataset}.csv")
    pd.testing.assert_frame_equal(stored, expected, check_exact=False, rtol=0, atol=1e-15)


@pytest.mark.parametrize("task", TASKS)
def test_regime_maps_of_every_task(results, task):
    table = pd.read_csv(results / "regimes" / f"{task}_label.csv")
    assert list(dict.fromkeys(table["descriptor"])) == list(map_descriptors("label"))
    methods = CONFIG["methods"]["label"][task]
    assert set(table["method"]) == set(methods)  # the methods, not the Selector
    selection = pd.read_csv(results / "regimes" / f"{task}_label_selection.csv")
    assert set(table["degenerate"]) == {bool(selection["degenerate"].iloc[0])}
    for descriptor, part in table.groupby("descriptor"):
        per_bin = part.groupby("bin")["n_samples"].first()
        dropped = len(SETUPS) * LABEL["n_samples"] - per_bin.sum()
        assert 0 <= dropped and per_bin.gt(0).all(), descriptor
        # the leader has the lowest mean normalised error; it is the winner only when its tests
        # are significant after Holm, and then the only method of its tied set
        means = part.pivot(index="bin", columns="method", values="normalised_error")
        leaders = part.groupby("bin")["leader"].first()
        assert leaders.tolist() == means.idxmin(axis=1).tolist()
        regions = part.drop_duplicates("bin").set_index("bin")
        clear = regions["verdict"] == "winner"
        assert (regions.loc[clear, "winner"] == leaders[clear]).all()
        assert (regions.loc[clear, "n_tied"] == 1).all()
        winners = part[part["is_winner"]].groupby("bin")["method"].first()
        assert winners.tolist() == leaders[clear].tolist()
        p_holm = part[part["method"] != part["leader"]].groupby("bin")["p_holm"].max()
        assert ((p_holm < 0.05) == clear.reindex(p_holm.index)).all()
        assert regions["bootstrap_share"].between(0, 1).all()
        # the regions tile the bins in order
        assert regions["first_bin"].iloc[0] == 0
        assert (regions["first_bin"].iloc[1:].to_numpy() == regions["last_bin"].iloc[:-1] + 1).all()
    assert (results / "regimes" / f"{task}_label.png").stat().st_size > 0
    tex = (results / "regimes" / f"{task}_label.tex").read_text()
    assert tex.count(r"\begin{tabular}") == len(map_descriptors("label"))


@pytest.mark.parametrize("task", TASKS)
def test_the_selector_is_a_column_of_every_table(results, task):
    methods = CONFIG["methods"]["label"][task]
    cells = pd.read_csv(results / "tables" / f"{task}_label.csv")
    assert set(cells["method"]) == {*methods, "Selector"}
    assert set(cells.loc[cells["method"] == "Selector", "group"]) == {"selection"}
    summary = pd.read_csv(results / "tables" / f"{task}_label_summary.csv").set_index("method")
    assert np.isfinite(summary.loc["Selector", "avg_rank"])
    assert np.isnan(summary.loc["Selector", "avg_rank_methods"])
    assert "Selector" in (results / "tables" / f"{task}_label.tex").read_text()
    assert "Selector" in (results / "cd" / f"{task}_label.tex").read_text()
    if task == "calibration":
        brier = pd.read_csv(results / "tables" / "calibration_brier_label.csv")
        assert "Selector" in set(brier["method"])
    # its records are the chosen methods' rows
    selector = _records(results, task, "Selector")
    assert len(selector) == len(SETUPS) * LABEL["n_samples"]
    choices = pd.read_csv(results / "regimes" / f"{task}_label_choices.csv", dtype={"dataset": str})
    merged = selector.merge(choices, on=KEY, validate="one_to_one")
    for method in set(merged["selector_choice"]):
        rows = merged[merged["selector_choice"] == method]
        chosen = _records(results, task, method).merge(rows[KEY], on=KEY)
        np.testing.assert_array_equal(rows["error"].to_numpy(), chosen["error"].to_numpy())
    summary = pd.read_csv(results / "regimes" / f"{task}_label_selection.csv").set_index("method")
    assert list(summary.index[:7]) == [
        "Selector", "Hybrid", "BestSingle", "Oracle", "SetupOracle", "BestInHindsight", "Trivial",
    ]  # fmt: skip
    # the references carry their cluster-bootstrap intervals around their means
    assert (summary["ci_low"] <= summary["mean_error"] + 1e-12).all()
    assert (summary["mean_error"] <= summary["ci_high"] + 1e-12).all()
    assert summary["degenerate"].nunique() == 1
    means = summary.loc[methods, "mean_error"]
    assert summary.loc["Oracle", "mean_error"] <= min(
        summary.loc["Selector", "mean_error"], means.min()
    )
    # the report's tabular beside the regime maps (rule report_pdf's regimes input)
    tex = (results / "regimes" / f"{task}_label_selection.tex").read_text()
    for name in ("Selector", "BestSingle", "Oracle", means.idxmin()):
        assert f"{latex_escape(name)} & {summary.loc[name, 'mean_error']:.4f} &" in tex


def _selection(files, task, folder, results):
    out = [folder / n for n in ("Selector.csv", "summary.csv", "choices.csv")]
    methods = CONFIG["methods"]["label"][task]
    trivial = sorted((results / "regimes" / "trivial" / "label").glob("*/*.csv"))
    build_selection(
        files, task, "label", methods, TWO_CLASS, CONFIG["seed"], *out, trivial_files=trivial
    )
    return out


def test_the_rule_outputs_are_the_library_s_on_the_run_s_records(results, tmp_path):
    task = "quantification"
    files = [
        results / "eval" / "label" / task / f"{m}.csv" for m in CONFIG["methods"]["label"][task]
    ]
    selector, summary, choices = _selection(files, task, tmp_path, results)
    assert (
        selector.read_bytes() == (results / "eval" / "label" / task / "Selector.csv").read_bytes()
    )
    assert choices.read_bytes() == (results / "regimes" / f"{task}_label_choices.csv").read_bytes()


def _perturbed_choices(results, task, held_out, penalised, folder):
    """The Selector's choices after adding 10 to the errors of the ``penalised`` methods on the
    held-out data set's samples (their records only; nothing else changes)."""
    files = []
    for method in CONFIG["methods"]["label"][task]:
        frame = pd.read_csv(
            results / "eval" / "label" / task / f"{method}.csv", dtype=str, keep_default_na=False
        )
        if method in penalised:
            rows = (frame["dataset"] == held_out) & (frame["error"] != "")
            frame.loc[rows, "error"] = [repr(float(e) + 10.0) for e in frame.loc[rows, "error"]]
        path = folder / f"{method}.csv"
        frame.to_csv(path, index=False, lineterminator="\n")
        files.append(path)
    choices = pd.read_csv(_selection(files, task, folder, results)[2], dtype={"dataset": str})
    return choices[choices["dataset"] == held_out].reset_index(drop=True)


def assert_no_leak(results, task, held_out, folder):
    """The Selector's choices on a data set do not depend on that data set's errors: worsening the
    methods it chose there, in those records only, changes none of its choices there."""
    run = pd.read_csv(results / "regimes" / f"{task}_label_choices.csv", dtype={"dataset": str})
    run = run[run["dataset"] == held_out].reset_index(drop=True)
    penalised = set(run["selector_choice"])
    after = _perturbed_choices(results, task, held_out, penalised, folder)
    assert after["selector_choice"].tolist() == run["selector_choice"].tolist()
    # nor the Hybrid's (with two data sets its variant is BestSingle, chosen on the other one)
    assert after["hybrid_choice"].tolist() == run["hybrid_choice"].tolist()
    assert not after["selector_error"].equals(run["selector_error"])  # the errors did change


@pytest.mark.parametrize("held_out", LABEL["datasets"])
def test_no_leak_from_the_held_out_data_set_and_this_test_fails_with_one(
    results, tmp_path, monkeypatch, held_out
):
    task = "cap"
    folder = tmp_path / "honest"
    folder.mkdir()
    assert_no_leak(results, task, held_out, folder)
    # put the held-out data set's records back into training: the check fails
    monkeypatch.setattr(S, "training_mask", lambda groups, g: np.ones(len(groups), bool))
    shutil.rmtree(folder)
    folder.mkdir()
    with pytest.raises(AssertionError):
        assert_no_leak(results, task, held_out, folder)


def test_the_trivial_cap_answer_is_naive_s_error_sample_by_sample(results):
    # two computations of "the validation accuracy" (Naive through the evaluation, the trivial rule
    # from the setup files): a wrong validation set, sample or posterior source would differ
    trivial = pd.concat(
        pd.read_csv(f, dtype={"dataset": str})
        for f in sorted((results / "regimes" / "trivial" / "label").glob("*/*.csv"))
    )
    naive = _records(results, "cap", "Naive").merge(trivial, on=KEY, validate="one_to_one")
    assert len(naive) == len(trivial) > 0
    np.testing.assert_allclose(naive["trivial_cap"], naive["error"], rtol=0, atol=1e-12)
    summary = pd.read_csv(results / "regimes" / "cap_label_selection.csv").set_index("method")
    assert summary.loc["Trivial", "mean_error"] == pytest.approx(naive["error"].mean())


def test_a_compound_run_plans_the_two_dimensional_maps(multiclass_plan):
    """.test/config.yaml has no compound shift, so the session's run writes no 2-D map; a dry run
    of the compound config (the session's, ``multiclass_plan``) plans rule regime_map_2d once per
    task, with its files as targets."""
    config = yaml.safe_load((REPO / MULTICLASS_CONFIG).read_text())
    assert "compound" in config["shifts"] and "compound" not in CONFIG["shifts"]
    plan = multiclass_plan
    blocks = [b for b in plan.split("\nrule ")[1:] if b.startswith("regime_map_2d:")]
    tasks = [t for t in TASKS if config["methods"]["compound"].get(t)]
    assert len(blocks) == len(tasks) == 3
    for task in tasks:
        stem = f"{config['results']}/regimes/{task}_compound_2d"
        block = next(b for b in blocks if f"{stem}.csv" in b)
        assert f"{stem}.png" in block and f"{config['results']}/logs/regimes/" in block


def test_the_pool_sensitivity_reruns_the_hybrid_on_the_run_s_files(results):
    """unishift.report.hybrid_pool on the run (two data sets: no inner split, each pool's first
    variant): the pool as built is the run's Hybrid, and the median of the other data set's three
    best methods equals a literal recomputation from the record files."""
    from unishift.report import hybrid_pool as P

    pools = (
        P.POOLS[0],
        ("Top3Median alone", ("Top3Median",)),
        ("Shrink(0) alone", ("Shrink(0)",)),
    )
    rows = P.pool_rows(results, pools).set_index(["pool", "task"])
    assert set(rows["shift"]) == {"label"} and len(rows) == 9
    assert rows.loc[("Top3Median alone", "calibration"), "verdict"] == P.NOT_APPLICABLE
    for task in TASKS:
        selection = pd.read_csv(
            results / "regimes" / f"{task}_label_selection.csv", index_col="method"
        )
        built = rows.loc[(P.AS_BUILT, task)]
        assert built["hybrid_error"] == pytest.approx(selection.loc["Hybrid", "mean_error"])
        assert built["best_single_error"] == selection.loc["BestSingle", "mean_error"]
        shrink = rows.loc[("Shrink(0) alone", task)]
        assert shrink["gain"] == pytest.approx(
            1 - shrink["hybrid_error"] / shrink["best_single_error"]
        )
        assert shrink["group_variants"] == "; ".join(f"{d}: Shrink(0)" for d in LABEL["datasets"])
    for task in ("quantification", "cap"):
        methods = CONFIG["methods"]["label"][task]
        wide = {
            m: _records(results, task, m).set_index(KEY)[["error", "estimate", "true_value"]]
            for m in methods
        }
        errors = pd.DataFrame({m: w["error"] for m, w in wide.items()})
        complete = errors[np.isfinite(errors.to_numpy()).all(axis=1)]
        datasets = complete.index.get_level_values("dataset")
        total, count = 0.0, 0
        for held_out in LABEL["datasets"]:
            means = complete[datasets != held_out].mean().round(12)
            top = sorted(methods, key=lambda m: (means[m], methods.index(m)))[:3]
            rows_g = errors.index.get_level_values("dataset") == held_out
            for key in errors.index[rows_g]:
                median = np.nanmedian([wide[m].loc[key, "estimate"] for m in top])
                total += abs(median - wide[methods[0]].loc[key, "true_value"])
                count += 1
        assert rows.loc[("Top3Median alone", task), "hybrid_error"] == pytest.approx(
            total / count, abs=1e-12
        )


def test_trivial_answers_that_miss_a_sample_stop_the_selection(results, tmp_path):
    from unishift.report.regimes import selection_inputs

    task = "cap"
    files = [
        results / "eval" / "label" / task / f"{m}.csv" for m in CONFIG["methods"]["label"][task]
    ]
    trivial = sorted((results / "regimes" / "trivial" / "label").glob("*/*.csv"))
    records, _, answers, facts = selection_inputs(
        files, task, "label", CONFIG["methods"]["label"][task], trivial
    )
    assert len(answers) == len(facts) == records[KEY].drop_duplicates().shape[0]
    cut = tmp_path / "cut.csv"
    pd.read_csv(trivial[0]).iloc[1:].to_csv(cut, index=False)
    with pytest.raises(ValueError, match=r"the trivial answers cover .* \(1 of these lack one\)"):
        selection_inputs(
            files, task, "label", CONFIG["methods"]["label"][task], [cut, *trivial[1:]]
        )
