"""The numbers a finished run of .test/config.yaml wrote, against a recomputation in this process.

The recomputation starts from the data (QuaPy's loader, our splits, the classifiers, the UPP samples)
and applies every configured method to every sample of every (data set, classifier) setup without the
workflow's evaluation driver: true values, estimates and errors come from their definitions, the
calibration error from the ECE definition the config names. Each per-sample record, each table cell
and the tables' bold, colours, ranks and win rates must agree. With two data sets and two classifiers,
a mix-up of setups (a posterior file paired with the wrong data set, say) changes numbers too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.conftest import REPO
from unishift.data.label_shift import (
    label_shift_samples,
    load_label_setup,
    prepare_splits,
    train_and_predict,
)
from unishift.evaluation.metrics import ece_positive_class, ece_top_label
from unishift.methods.base import Sample, SampleContext
from unishift.methods.registry import get_method
from unishift.regimes.references import N_BOOTSTRAP
from unishift.report.regimes import read_trivial
from unishift.report.tables import compute_table, summary_frame, table_frame

pytestmark = pytest.mark.workflow

CONFIG = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
LABEL = CONFIG["label_shift"]
KEYS = ["task", "method", "classifier", "dataset", "sample_id"]
# Nearly every value is reproduced to the last bit; LEAP's SLSQP fallback (numerical gradients)
# turns last-bit differences of NumPy's vectorised math between two processes into ~1e-11. Any bug
# worth the name (another ECE, another setup) moves values by far more than this.
CLOSE = {"rtol": 1e-7, "atol": 1e-10}
VALUES = ["shift_intensity", "true_value", "estimate", "error", "ece", "ece_positive", "brier"]


def recompute_method(task, name, setup):
    """One method on every sample of one setup, scored from the definitions."""
    overrides = (CONFIG.get("method_params") or {}).get(f"{task}/{name}")
    method = get_method(task, name, "label").build(
        "label", setup.setting.validation.n_classes, overrides
    )
    try:
        method.fit(setup.setting)
        failed = None
    except Exception as err:  # noqa: BLE001 - a fit failure marks every sample as an error
        failed = err
    fit_notes = list(method.fit_notes)
    # the domain classifier's draws: one stream continued across the setup's samples in order
    # (domain_stream: reference), or None for seeds derived per sample
    stream = None
    if CONFIG["domain_stream"] == "reference":
        stream = np.random.RandomState()
        stream.set_state(setup.stream_state)
    rows = []
    for sample_id, indices in enumerate(setup.sample_indices):
        if LABEL["sample_posteriors"] == "per_sample":
            posteriors = setup.sample_posteriors[sample_id]
        else:
            posteriors = setup.pool.posteriors[indices]
        labels = setup.pool.labels[indices]
        row = {
            "task": task,
            "method": name,
            "classifier": setup.classifier,
            "dataset": setup.dataset,
            "sample_id": sample_id,
            "shift_intensity": float(setup.shift_intensity[sample_id]),
        }
        rows.append(row)
        if failed is not None:
            row["status"] = "error"
            continue
        context = SampleContext(
            setup.setting.key,
            sample_id,
            setup.setting.seed,
            draws=None if stream is None else (lambda *parts: stream),
        )
        try:
            output = method.apply(Sample(posteriors, setup.pool.features[indices]), context)
        except Exception:  # noqa: BLE001
            row["status"] = "error"
            continue
        notes = fit_notes + list(context.notes)
        row["status"] = "fallback" if notes else "ok"
        if task == "calibration":
            calibrated = np.asarray(output, dtype=float)
            top, positive = (
                ece_top_label(calibrated, labels, precision=CONFIG["ece_precision"]),
                ece_positive_class(calibrated, labels),
            )
            row.update(
                true_value=labels.mean(),
                estimate=calibrated[:, 1].mean(),
                error=top if CONFIG["ece"] == "top_label" else positive,
                ece=top,
                ece_positive=positive,
                brier=np.mean((labels - calibrated[:, 1]) ** 2),
            )
        else:
            if task == "quantification":  # the prevalence vector; the records hold the positive's
                truth, estimate = labels.mean(), float(np.asarray(output, dtype=float)[1])
            else:  # accuracy of the crisp predictions, a tie going to class 0
                truth = np.mean((posteriors[:, 1] > posteriors[:, 0]).astype(int) == labels)
                estimate = float(output)
            row.update(true_value=truth, estimate=estimate, error=abs(truth - estimate))
    return rows


@pytest.fixture(scope="module")
def recomputed(tmp_path_factory):
    from threadpoolctl import threadpool_limits

    home = tmp_path_factory.mktemp("quapy_home")
    rows, accuracies = [], []
    # one BLAS/OpenMP thread, as in the workflow's jobs
    limits = threadpool_limits(limits=1)
    for dataset in LABEL["datasets"]:
        splits, _ = prepare_splits(dataset, home, None, CONFIG["seed"])
        samples = label_shift_samples(
            splits, LABEL["sample_size"], LABEL["n_samples"], CONFIG["seed"]
        )
        for classifier in LABEL["classifiers"]:
            _, posteriors = train_and_predict(splits, classifier, CONFIG["seed"], samples=samples)
            accuracies.append((classifier, dataset, float(posteriors["test_accuracy"])))
            setup = load_label_setup(
                splits,
                posteriors,
                samples,
                dataset,
                classifier,
                CONFIG["seed"],
                sample_posteriors=LABEL["sample_posteriors"],
            )
            for task, methods in CONFIG["methods"]["label"].items():
                for name in methods:
                    rows += recompute_method(task, name, setup)
    limits.restore_original_limits()
    frame = pd.DataFrame(rows)
    for column in VALUES:
        frame[column] = frame.get(column, np.nan)
    return frame, accuracies


@pytest.fixture(scope="module")
def written(finished_test_run):
    results = finished_test_run[0] / "results"
    # the configured methods' records (the Selector's are the chosen methods' rows: see
    # selector_rows and tests/workflow/test_regimes_workflow.py)
    paths = sorted((results / "eval" / "label").glob("*/*.csv"))
    frames = [pd.read_csv(path) for path in paths if path.stem != "Selector"]
    return results, pd.concat(frames, ignore_index=True)


def selector_rows(ours, results, task):
    """The Selector's records rebuilt from the recomputed ones: on each sample the row of the method
    the run's Selector chose (results/regimes/{task}_label_choices.csv), renamed."""
    choices = pd.read_csv(results / "regimes" / f"{task}_label_choices.csv")
    chosen = choices.rename(columns={"selector_choice": "method"})[
        ["classifier", "dataset", "sample_id", "method"]
    ].assign(task=task)
    rows = ours.merge(chosen, on=KEYS, validate="one_to_one")
    assert len(rows) == len(choices)
    return rows.assign(method="Selector")


def test_every_per_sample_record_equals_the_recomputation(recomputed, written):
    ours, _ = recomputed
    _, records = written
    n_methods = sum(len(m) for m in CONFIG["methods"]["label"].values())
    n_setups = len(LABEL["datasets"]) * len(LABEL["classifiers"])
    assert len(records) == len(ours) == n_methods * n_setups * LABEL["n_samples"]
    merged = records.merge(ours, on=KEYS, suffixes=("", "_expected"), validate="one_to_one")
    assert len(merged) == len(ours)
    assert (merged["status"] == merged["status_expected"]).all(), merged.loc[
        merged["status"] != merged["status_expected"], [*KEYS, "status", "status_expected"]
    ]
    assert merged.loc[merged["status"] != "ok", "reason"].notna().all()
    for column in VALUES:
        got, expected = merged[column].to_numpy(float), merged[f"{column}_expected"].to_numpy(float)
        same = np.isclose(got, expected, **CLOSE) | (np.isnan(got) & np.isnan(expected))
        assert same.all(), merged.loc[~same, [*KEYS, column, f"{column}_expected"]].head()


def test_the_calibration_error_is_the_configured_ece(recomputed, written):
    ours, _ = recomputed
    _, records = written
    calibration = records[(records["task"] == "calibration") & (records["status"] != "error")]
    configured = "ece" if CONFIG["ece"] == "top_label" else "ece_positive"
    other = "ece_positive" if configured == "ece" else "ece"
    np.testing.assert_array_equal(calibration["error"], calibration[configured])
    # the two definitions disagree on nearly every sample here, so the check has teeth
    assert (~np.isclose(calibration["error"], calibration[other])).mean() > 0.9


def expected_table(ours, task, metric, results):
    frame = ours.assign(shift="label", reason="")
    frame.loc[frame["status"] == "error", VALUES[1:]] = np.nan
    methods = CONFIG["methods"]["label"][task]
    trivial = None
    if metric == "error":  # the Brier tables have no trivial answer
        trivial = read_trivial(
            sorted((results / "regimes" / "trivial" / "label").glob("*/*.csv")), task, "label"
        )
    return compute_table(
        frame,
        task,
        "label",
        [*methods, "Selector"],
        metric=metric,
        classifiers=LABEL["classifiers"],
        datasets=LABEL["datasets"],
        n_samples=LABEL["n_samples"],
        alpha=CONFIG["alpha"],
        method_info={"Selector": ("Selector", "selection")},
        trivial=trivial,
        seed=CONFIG.get("seed", 0),
        n_bootstrap=(CONFIG.get("regimes") or {}).get("n_bootstrap", N_BOOTSTRAP),
    )


@pytest.mark.parametrize(
    "task, metric, name",
    [
        ("calibration", "error", "calibration_label"),
        ("calibration", "brier", "calibration_brier_label"),
        ("quantification", "error", "quantification_label"),
        ("cap", "error", "cap_label"),
    ],
)
def test_every_table_cell_equals_the_recomputation(recomputed, written, task, metric, name):
    ours, _ = recomputed
    results, _ = written
    ours = pd.concat([ours, selector_rows(ours, results, task)], ignore_index=True)
    cells = pd.read_csv(results / "tables" / f"{name}.csv", keep_default_na=False, na_values=[""])
    scored = ours[(ours["task"] == task) & (ours["status"] != "error")]
    means = scored.groupby(["classifier", "dataset", "method"])[metric].mean()
    counts = ours[ours["task"] == task].groupby(["classifier", "dataset", "method"])["status"]
    for cell in cells.itertuples():
        key = (cell.classifier, cell.dataset, cell.method)
        assert cell.mean_error == pytest.approx(means[key], rel=CLOSE["rtol"]), key
        statuses = counts.get_group(key)
        assert cell.n_errors == (statuses == "error").sum()
        assert cell.n_fallbacks == (statuses == "fallback").sum()
        assert cell.n_samples == (statuses != "error").sum()
    # bold, colours, ranks and win rates: the library's table code on the recomputed records
    expected = expected_table(ours, task, metric, results)
    frame = table_frame(expected)
    merged = cells.merge(frame, on=["classifier", "dataset", "method"], suffixes=("", "_expected"))
    assert len(merged) == len(cells) == len(frame)
    assert (merged["bold"] == merged["bold_expected"]).all()
    assert (merged["colour"] == merged["colour_expected"]).all()
    # the intervals, coverage flags, Holm tests and degenerate flag (docs/reporting.md §2.7)
    _same_checks(merged, ["ci_low", "ci_high", "coverage", "holm_pvalue_vs_best", "trivial_error"])
    _same_flags(merged, ["below_coverage", "best_cell", "best_significantly_better", "degenerate"])
    assert (merged["ci_low"] <= merged["mean_error"] + 1e-12).all()
    assert (merged["mean_error"] <= merged["ci_high"] + 1e-12).all()
    summary = pd.read_csv(results / "tables" / f"{name}_summary.csv")
    expected_summary = summary_frame(expected)
    pairs = summary.merge(expected_summary, on="method", suffixes=("", "_expected"))
    _same_checks(pairs, ["mean_error", "ci_low", "ci_high", "coverage", "holm_pvalue_vs_winner"])
    _same_flags(pairs, ["below_coverage", "winner", "winner_significantly_better", "degenerate"])
    assert pairs["degenerate"].isna().all() == (metric == "brier")
    np.testing.assert_allclose(summary["avg_rank"], expected_summary["avg_rank"], rtol=1e-12)
    assert (summary["rank_bold"] == expected_summary["rank_bold"]).all()
    wins = [c for c in summary.columns if c.startswith("wins_") and c[5:].isdigit()]
    np.testing.assert_allclose(
        summary[wins].to_numpy(float), expected_summary[wins].to_numpy(float), rtol=1e-12
    )


def _same_checks(merged, columns):
    for column in columns:
        np.testing.assert_allclose(
            merged[column].to_numpy(float),
            merged[f"{column}_expected"].to_numpy(float),
            rtol=CLOSE["rtol"],
            atol=CLOSE["atol"],
            err_msg=column,
        )


def _same_flags(merged, columns):
    for column in columns:
        written = merged[column].astype(object).where(merged[column].notna(), None)
        expected = merged[f"{column}_expected"].astype(object)
        expected = expected.where(expected.notna(), None)
        assert [None if v is None else bool(v) for v in written] == [
            None if v is None else bool(v) for v in expected
        ], column


def test_classifier_accuracies_equal_the_recomputation(recomputed, written):
    _, accuracies = recomputed
    results, _ = written
    table = pd.read_csv(results / "tables" / "classifier_accuracy_label.csv")
    got = {(r.classifier, r.dataset): r.accuracy for r in table.itertuples()}
    assert got == {(c, d): pytest.approx(a, abs=1e-15) for c, d, a in accuracies}
