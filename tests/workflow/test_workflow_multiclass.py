"""k classes end to end: a run of .test/multiclass.yaml (QuaPy's multiclass UCI collection, the
three-class tweets; the same rules as every run) writes every table, CD diagram, plot and accuracy
appendix under its results folder, results/multiclass/ (and nothing under results/ itself), in the
k-class record layout, and its per-sample records and table cells agree with a recomputation in this
process from the data (QuaPy's loader, the splits, the classifiers, the UPP samples) and the metrics'
definitions, without the workflow's evaluation driver. Bad input fails before any job.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from threadpoolctl import threadpool_limits

from tests.conftest import MULTICLASS_CONFIG, REPO
from tests.workflow.test_workflow import copy_workflow, snakemake
from unishift.data.containers import Sample
from unishift.data.label_shift import (
    label_shift_samples,
    load_label_setup,
    prepare_splits,
    train_and_predict,
)
from unishift.evaluation.metrics import ece_classwise, ece_top_label
from unishift.evaluation.records import COLUMNS, K_CLASS
from unishift.methods.base import SampleContext
from unishift.methods.registry import get_method

pytestmark = pytest.mark.workflow

CONFIG_FILE = MULTICLASS_CONFIG  # run once a session: multiclass_run of tests/conftest.py
CONFIG = yaml.safe_load((REPO / CONFIG_FILE).read_text())
LABEL = CONFIG["label_shift"]
RESULTS = CONFIG["results"]  # results/multiclass
CLOSE = {"rtol": 1e-7, "atol": 1e-10}
TASKS = ("calibration", "quantification", "cap")


def test_the_run_writes_every_report_under_its_results_folder(multiclass_run):
    work, _ = multiclass_run
    results = work / RESULTS
    for shift in CONFIG["shifts"]:
        for task in TASKS:
            for path in (
                f"tables/{task}_{shift}.tex",
                f"tables/{task}_{shift}.csv",
                f"cd/{task}_{shift}.tex",
                f"cd/{task}_{shift}.png",
                f"plots/{task}_{shift}_err_by_shift.pdf",
            ):
                assert (results / path).stat().st_size > 0, path
        assert "Logistic" in (results / "tables/classifier_accuracy_label.tex").read_text()
    for task in TASKS:  # the label-shift rows name each data set's number of classes
        tex = (results / f"tables/{task}_label.tex").read_text()
        assert r"\texttt{cmc (k=3)}" in tex and r"\texttt{yeast (k=4)}" in tex
    assert sorted(p.name for p in (work / "results").iterdir()) == ["multiclass", "quapy_home"]
    provenance = json.loads((results / "provenance.json").read_text())
    config = provenance["config"]
    assert "regime" not in config and config["results"] == RESULTS == "results/multiclass"
    assert config["label_shift"]["benchmark"] == "uci_multiclass"
    assert config["covariate_shift"]["tweets"]["classes"] == 3


def test_records_hold_every_sample_in_the_k_class_layout(multiclass_run):
    work, _ = multiclass_run
    k_of = {"cmc": 3, "yeast": 4}
    paths = sorted((work / RESULTS / "eval").glob("*/*/*.csv"))
    assert {p.parent.parent.name for p in paths} == {"label", "covariate", "compound"}
    for path in paths:
        assert pd.read_csv(path, nrows=0).columns.tolist() == list(COLUMNS[K_CLASS]), path
    for path in sorted((work / RESULTS / "eval" / "label").glob("*/*.csv")):
        records = pd.read_csv(path)
        assert (
            len(records) == len(LABEL["datasets"]) * len(LABEL["classifiers"]) * LABEL["n_samples"]
        )
        assert (records["n_classes"] == records["dataset"].map(k_of)).all(), path
        assert (records["status"] != "error").all(), records.loc[
            records.status == "error", "reason"
        ]
        if path.parent.name == "quantification":
            lengths = records["estimated_prevalence"].map(lambda v: len(json.loads(v)))
            assert (lengths == records["n_classes"]).all()
    covariate = pd.read_csv(work / RESULTS / "eval/covariate/calibration/TS.csv")
    assert set(covariate["n_classes"]) == {3}
    assert set(covariate["dataset"]) == {"claritin->self-driving", "self-driving->claritin"}
    # compound shift: the same setups, its own samples, both true intensities in every record
    compound = pd.read_csv(work / RESULTS / "eval/compound/calibration/TS.csv")
    assert set(compound["dataset"]) == set(covariate["dataset"])
    assert len(compound) == 2 * CONFIG["covariate_shift"]["compound"]["n_samples"]
    assert compound[["true_label_shift", "true_mixture"]].notna().all().all()
    assert not np.array_equal(compound["true_label_shift"], covariate["true_label_shift"])
    for shift in CONFIG["shifts"]:
        for task in TASKS:
            assert "Selector" in set(
                pd.read_csv(work / RESULTS / f"tables/{task}_{shift}.csv").method
            )
            assert (work / RESULTS / f"regimes/{task}_{shift}.png").stat().st_size > 0


@pytest.fixture(scope="module")
def setups(tmp_path_factory):
    home = tmp_path_factory.mktemp("quapy")
    out = {}
    limits = threadpool_limits(limits=1)  # as the jobs train the classifiers
    for dataset in LABEL["datasets"]:
        splits, _ = prepare_splits(
            dataset,
            home,
            seed=CONFIG["seed"],
            collection="uci_multiclass",
            min_class_support=LABEL["min_class_support"],
        )
        samples = label_shift_samples(
            splits, LABEL["sample_size"], LABEL["n_samples"], CONFIG["seed"]
        )
        for classifier in LABEL["classifiers"]:
            _, posteriors = train_and_predict(splits, classifier, CONFIG["seed"])
            out[dataset, classifier] = load_label_setup(
                splits, posteriors, samples, dataset, classifier, CONFIG["seed"], "pool"
            )
    limits.restore_original_limits()
    return out


def recompute(task, name, setup) -> pd.DataFrame:
    """One method on every sample of one setup, scored from the metrics' definitions, with one BLAS
    thread as the evaluation jobs run (QuaPy's PACC solver sees the last bits of multithreaded dot
    products: 6e-8 differences otherwise)."""
    with threadpool_limits(limits=1):
        return _recompute(task, name, setup)


def _recompute(task, name, setup) -> pd.DataFrame:
    method = get_method(task, name, "label").build("label", setup.n_classes)
    method.fit(setup.setting)
    k, rows = setup.n_classes, []
    for sample_id, indices in enumerate(setup.sample_indices):
        labels = setup.pool.labels[indices]
        posteriors = setup.pool.posteriors[indices]
        sample = Sample(posteriors, setup.pool.features[indices])
        output = method.apply(
            sample, SampleContext(setup.setting.key, sample_id, setup.setting.seed)
        )
        truth = np.bincount(labels, minlength=k) / len(labels)
        row = {"dataset": setup.dataset, "classifier": setup.classifier, "sample_id": sample_id}
        # shift intensity: QuaPy's AE between the sample's and the 70 % portion's prevalence
        row["shift_intensity"] = float(np.mean(np.abs(truth - setup_prevalence(setup))))
        if task == "calibration":
            precision = CONFIG["ece_precision"]
            assert CONFIG["ece"] == "top_label"
            row["error"] = ece_top_label(output, labels, precision=precision)
            row["ece_classwise"] = ece_classwise(output, labels, precision=precision)
            row["brier"] = float(np.mean(np.sum((np.eye(k)[labels] - output) ** 2, axis=1)))
        elif task == "quantification":
            estimate = np.asarray(output)
            row["error"] = float(np.mean(np.abs(truth - estimate)))
            # QuaPy's RAE: both vectors smoothed with eps = 1 / (2 * sample size)
            eps = 1 / (2 * len(labels))
            smooth_truth, smooth_estimate = ((v + eps) / (eps * k + 1) for v in (truth, estimate))
            row["rae"] = float(np.mean(np.abs(smooth_estimate - smooth_truth) / smooth_truth))
        else:
            accuracy = float(np.mean(np.argmax(posteriors, axis=1) == labels))
            row["true_value"], row["estimate"] = accuracy, float(output)
            row["error"] = abs(accuracy - float(output))
        rows.append(row)
    return pd.DataFrame(rows)


def setup_prevalence(setup):
    labels = np.concatenate([setup.setting.training.labels, setup.setting.validation.labels])
    return np.bincount(labels, minlength=setup.n_classes) / len(labels)


RECOMPUTED = [
    ("calibration", "TS"),
    ("calibration", "PACC_q2c_3B"),
    ("quantification", "PACC"),
    ("quantification", "ATC_a2q"),
    ("cap", "ATC"),
    ("cap", "PACC_q2a"),
    ("cap", "CPCS_c2a"),  # its jobs read the shared weights file; this process fits its own
]


def test_every_label_shift_method_of_the_run_is_recomputed():
    label = CONFIG["methods"]["label"]
    assert sorted(RECOMPUTED) == sorted((task, m) for task in label for m in label[task])


@pytest.mark.parametrize("task, name", RECOMPUTED)
def test_records_equal_a_recomputation_from_the_definitions(multiclass_run, setups, task, name):
    work, _ = multiclass_run
    written = pd.read_csv(work / RESULTS / "eval" / "label" / task / f"{name}.csv")
    ours = pd.concat([recompute(task, name, setup) for setup in setups.values()])
    merged = written.merge(ours, on=["dataset", "classifier", "sample_id"], suffixes=("", "_ours"))
    assert len(merged) == len(written) == len(ours)
    for column in [c for c in ours.columns if c not in ("dataset", "classifier", "sample_id")]:
        np.testing.assert_allclose(
            merged[column], merged[f"{column}_ours"], **CLOSE, err_msg=column
        )
    # the table's cell is the mean error of the setup's samples
    cells = pd.read_csv(work / RESULTS / "tables" / f"{task}_label.csv")
    cells = cells[cells["method"] == name].set_index(["classifier", "dataset"])["mean_error"]
    means = ours.groupby(["classifier", "dataset"])["error"].mean()
    np.testing.assert_allclose(cells.sort_index(), means.sort_index(), **CLOSE)


def test_a_binary_only_method_fails_before_any_job_with_its_reason(tmp_path):
    work = copy_workflow(tmp_path / "wf")
    config = yaml.safe_load((work / CONFIG_FILE).read_text())
    config["methods"]["label"]["calibration"].append("Platt")
    (work / "bad.yaml").write_text(yaml.safe_dump(config))
    result = snakemake("-n", "--configfile", "bad.yaml", cwd=work, check=False)
    assert result.returncode != 0
    message = result.stdout + result.stderr
    reason = get_method("calibration", "Platt", "label").binary_only
    assert "config methods.label.calibration" in message
    assert f"'Platt' is binary-only ({reason})" in message
    assert "more than two classes; remove it" in message
    assert not (work / RESULTS).exists()


def test_the_multiclass_rules_lint_clean():
    result = snakemake("--lint", "--configfile", "config/multiclass.yaml")
    assert "Congratulations, your workflow is in a good condition" in result.stdout + result.stderr
