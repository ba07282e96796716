"""Evaluation granularity (docs/evaluation-jobs.md): one job per (shift, task, method, setup), whose
record files an aggregation concatenates, in table order, into the per-method file the tables read.

The unit tests check that the concatenation equals one job over every setup, byte for byte (the
reference domain stream included); the workflow tests that, on top of a finished per-setup run
(`one_setup_run`), a new data set, classifier or method plans exactly its own evaluation jobs (and
data jobs), the aggregations and the reports, and nothing else, and that the two cuts write the same
bytes on the session's per-method run of .test/config.yaml."""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.calibration_settings import make_setting
from tests.conftest import ONE_SETUP_CONFIG, ONE_SETUP_METHODS, REPO
from tests.k_class_problems import synthetic_problem
from tests.workflow.test_workflow import snakemake
from tests.workflow.test_workflow_reruns import copy_run, planned_jobs
from unishift.data.containers import LabelledSet
from unishift.data.setups import SetupData
from unishift.evaluation.evaluate import evaluate_method
from unishift.evaluation.records import COLUMNS, K_CLASS, TWO_CLASS
from unishift.io import DamagedFileError, concat_csv, write_csv


def _setup(dataset, classifier, seed, stream_seed, n_samples=5):
    setting, _, draw = make_setting(seed=seed, n_train=300, n_val=200, d=4)
    sample, labels = draw(700, 0.7, shift_x=0.3)
    pool = LabelledSet(sample.posteriors, labels, sample.features, sample.logits)
    indices = np.random.default_rng(seed).integers(0, 700, size=(n_samples, 120))
    stream = np.random.RandomState(stream_seed).get_state()
    setting = dataclasses.replace(setting, key=f"{dataset}/{classifier}")
    return SetupData("label", classifier, dataset, setting, pool, indices,
                     np.linspace(0, 1, n_samples), stream_state=stream)  # fmt: skip


SETUPS = [_setup("a", "LR", 1, 11), _setup("b", "LR", 2, 12), _setup("a", "kNN", 3, 13)]


@pytest.mark.parametrize(
    "task, method",
    [
        ("calibration", "CPCS"),  # the reference domain stream: one fresh copy per setup
        ("cap", "TransCal_c2a"),
        ("quantification", "EMQ_BCTS"),
        ("quantification", "CC"),
    ],
)
def test_per_setup_jobs_concatenate_to_the_one_job_over_every_setup(tmp_path, task, method):
    whole, timings = evaluate_method(task, method, "label", SETUPS)
    write_csv(tmp_path / "whole.csv", whole)
    parts, runtime_parts = [], []
    for i, setup in enumerate(SETUPS):
        records, timing = evaluate_method(task, method, "label", [setup])
        parts.append(tmp_path / f"part{i}.csv")
        runtime_parts.append(tmp_path / f"runtime{i}.csv")
        write_csv(parts[-1], records)
        write_csv(runtime_parts[-1], timing)
    assert concat_csv(parts, tmp_path / "joined.csv") == len(whole) == 15
    assert (tmp_path / "joined.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()
    # the timings: same columns and setups in the same order (the seconds differ run to run)
    concat_csv(runtime_parts, tmp_path / "runtime.csv")
    joined = pd.read_csv(tmp_path / "runtime.csv")
    assert list(joined.columns) == list(timings.columns)
    assert joined[["classifier", "dataset"]].values.tolist() == [
        ["LR", "a"],
        ["LR", "b"],
        ["kNN", "a"],
    ]


def _k_class_setup(dataset, seed, k, n_samples=4):
    setting, draw = synthetic_problem(seed=seed, k=k, n_val=200, n_train=200)
    pool = draw(500, np.random.default_rng(seed).dirichlet(np.ones(k)))
    indices = np.random.default_rng(seed).integers(0, 500, size=(n_samples, 100))
    setting = dataclasses.replace(setting, key=f"{dataset}/LR")
    return SetupData("label", "LR", dataset, setting, pool, indices, np.linspace(0, 1, n_samples))


@pytest.mark.parametrize(
    "task, method", [("quantification", "EMQ"), ("calibration", "DMCal"), ("cap", "ATC")]
)
def test_k_class_per_setup_jobs_concatenate_to_the_one_job_over_every_setup(tmp_path, task, method):
    """The k-class layout too (prevalence vectors are quoted JSON lists), with setups of three and
    four classes in one file."""
    setups = [_k_class_setup("c", 1, 3), _k_class_setup("y", 2, 4)]
    options = dict(layout=K_CLASS, domain_stream="per_sample")
    whole, _ = evaluate_method(task, method, "label", setups, **options)
    assert list(whole.columns) == list(COLUMNS[K_CLASS]) and (whole["status"] == "ok").all()
    write_csv(tmp_path / "whole.csv", whole)
    parts = []
    for i, setup in enumerate(setups):
        parts.append(tmp_path / f"part{i}.csv")
        write_csv(parts[-1], evaluate_method(task, method, "label", [setup], **options)[0])
    assert concat_csv(parts, tmp_path / "joined.csv") == len(whole) == 8
    assert (tmp_path / "joined.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()
    if task != "cap":
        assert '"[' in (tmp_path / "whole.csv").read_text()  # the vectors, quoted


def test_concatenation_equals_writing_the_records_at_once_nan_and_quotes_included(tmp_path):
    """The rows of one setup may all be errors (empty score cells) while another's are whole
    numbers as floats: each column's text must not depend on the other setups' rows."""
    base = dict(shift="label", task="cap", method="M", classifier="LR")
    ok = [
        dict(
            base,
            dataset="a",
            sample_id=i,
            shift_intensity=float(i),
            true_value=1.0,
            estimate=0.5,
            error=0.5,
            status="ok",
            reason="",
        )  # fmt: skip
        for i in range(3)
    ]
    failed = [
        dict(
            base,
            dataset='b,"x"',
            sample_id=i,
            shift_intensity=0.25,
            status="error",
            reason='fit failed: ValueError: "y", only one class',
        )  # fmt: skip
        for i in range(2)
    ]
    columns = list(COLUMNS[TWO_CLASS])
    write_csv(tmp_path / "whole.csv", pd.DataFrame.from_records(ok + failed, columns=columns))
    write_csv(tmp_path / "ok.csv", pd.DataFrame.from_records(ok, columns=columns))
    write_csv(tmp_path / "failed.csv", pd.DataFrame.from_records(failed, columns=columns))
    assert concat_csv([tmp_path / "ok.csv", tmp_path / "failed.csv"], tmp_path / "joined.csv") == 5
    assert (tmp_path / "joined.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()
    # order is the caller's
    concat_csv([tmp_path / "failed.csv", tmp_path / "ok.csv"], tmp_path / "swapped.csv")
    assert (tmp_path / "swapped.csv").read_bytes() != (tmp_path / "whole.csv").read_bytes()


def test_concatenation_refuses_a_cut_file_or_another_header(tmp_path):
    write_csv(tmp_path / "a.csv", pd.DataFrame({"x": [1.5], "y": ["u"]}))
    write_csv(tmp_path / "b.csv", pd.DataFrame({"x": [2.5], "z": ["v"]}))
    (tmp_path / "cut.csv").write_bytes((tmp_path / "a.csv").read_bytes()[:-2])
    with pytest.raises(DamagedFileError, match="header"):
        concat_csv([tmp_path / "a.csv", tmp_path / "b.csv"], tmp_path / "out.csv")
    with pytest.raises(DamagedFileError, match="cut off"):
        concat_csv([tmp_path / "a.csv", tmp_path / "cut.csv"], tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()


# ------------------------------------------------------------------------------------------------
# what a grown config plans on top of a finished run

REPORT_RULES = {
    "tables",
    "reproduction",
    "error_by_shift",
    "brier_table",
    "classifier_accuracy_label",
    "accuracy_appendix",
    "provenance",
    # the Selector and the regime maps read every method's records (docs/regimes.md §5)
    "selector",
    "regime_map",
    # a calibrator's reliability diagrams, and the site that shows every result
    "reliability",
    "site",
    "all",
}
DATA_RULES = {
    "uci_dataset",
    "label_samples",
    "train_classifier",
    "domain_weights_label",
    "descriptors",
}


def _descriptors(setups):
    """The descriptors jobs of (data set, classifier) setups, one per setup."""
    return {f"shift=label, setup={classifier}/{dataset}" for dataset, classifier in setups}


# the shared domain weights (docs/domain-weights.md) of the .test config's weighted methods
WEIGHT_PLANS = ("sample", "predicted_classes")


def _weights(setups):
    """The domain_weights_label jobs of (data set, classifier) setups, one per plan."""
    return {
        f"dataset={dataset}, classifier={classifier}, plan={plan}"
        for dataset, classifier in setups
        for plan in WEIGHT_PLANS
    }


def _plan_with(one_setup_run, tmp_path, grow, env=None):
    """The jobs that a dry run of the grown config plans on a copy of the finished per-setup run."""
    work = copy_run(one_setup_run, tmp_path / "wf")
    config = yaml.safe_load((work / ONE_SETUP_CONFIG).read_text())
    assert config["methods"]["label"] == ONE_SETUP_METHODS  # the expected jobs below are its own
    grow(config)
    (work / "grown.yaml").write_text(yaml.safe_dump(config))
    output = snakemake("-n", "--configfile", "grown.yaml", cwd=work, env=env)
    return config, planned_jobs(output.stdout + output.stderr)


def _all_methods(config):
    return [(task, m) for task, methods in config["methods"]["label"].items() for m in methods]


def _check(jobs, evaluations, aggregations, data, report_tasks):
    by_rule = {}
    for rule, wildcards in jobs:
        by_rule.setdefault(rule, set()).add(wildcards)
    assert by_rule.pop("evaluate") == evaluations
    assert by_rule.pop("evaluation_records") == aggregations
    for rule in DATA_RULES:
        assert by_rule.pop(rule, set()) == data.get(rule, set()), rule
    assert set(by_rule) <= REPORT_RULES, set(by_rule) - REPORT_RULES
    assert {w.split("task=")[1].split(",")[0] for w in by_rule.get("tables", ())} == report_tasks
    assert by_rule.get("all") == {""}


def _evaluations(methods, setups):
    return {
        f"shift=label, task={task}, method={method}, setup={setup}"
        for task, method in methods
        for setup in setups
    }


def _aggregations(methods):
    return {f"shift=label, task={task}, method={method}" for task, method in methods}


@pytest.mark.workflow
def test_a_new_data_set_plans_only_its_evaluations_the_aggregations_and_reports(
    one_setup_run, tmp_path
):
    config, jobs = _plan_with(
        one_setup_run, tmp_path, lambda c: c["label_shift"]["datasets"].append("wine-q-red")
    )
    methods = _all_methods(config)
    _check(
        jobs,
        evaluations=_evaluations(methods, ["kNN/wine-q-red"]),
        aggregations=_aggregations(methods),
        data={
            "uci_dataset": {"dataset=wine-q-red"},
            "label_samples": {"dataset=wine-q-red"},
            "train_classifier": {"dataset=wine-q-red, classifier=kNN"},
            "domain_weights_label": _weights([("wine-q-red", "kNN")]),
            "descriptors": _descriptors([("wine-q-red", "kNN")]),
        },
        report_tasks={"calibration", "quantification", "cap"},
    )


@pytest.mark.workflow
def test_a_new_classifier_plans_only_its_evaluations_the_aggregations_and_reports(
    one_setup_run, tmp_path
):
    config, jobs = _plan_with(
        one_setup_run, tmp_path, lambda c: c["label_shift"]["classifiers"].append("NB")
    )
    methods = _all_methods(config)
    _check(
        jobs,
        evaluations=_evaluations(methods, ["NB/yeast"]),
        aggregations=_aggregations(methods),
        data={
            "train_classifier": {"dataset=yeast, classifier=NB"},
            "domain_weights_label": _weights([("yeast", "NB")]),
            "descriptors": _descriptors([("yeast", "NB")]),
        },
        report_tasks={"calibration", "quantification", "cap"},
    )


@pytest.mark.workflow
def test_a_new_method_plans_only_its_evaluations_its_aggregation_and_its_reports(
    one_setup_run, tmp_path
):
    """The new method comes from the example plugin (examples/unishift-plugin-example), imported
    through the plugins key."""

    def grow(config):
        config["plugins"] = ["unishift_plugin_example.methods"]
        config["methods"]["label"]["calibration"].append("HistBin")

    path = [str(REPO / "examples" / "unishift-plugin-example" / "src")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path + [os.environ.get("PYTHONPATH", "")]))
    config, jobs = _plan_with(one_setup_run, tmp_path, grow, env=env)
    new = [("calibration", "HistBin")]
    _check(
        jobs,
        evaluations=_evaluations(new, ["kNN/yeast"]),
        aggregations=_aggregations(new),
        data={},
        # the plugin also registers HistBin_c2q and HistBin_c2a: the registry the table rules read
        # (their code version, docs/code-version.md) changed, so every task's reports are redrawn
        report_tasks={"calibration", "quantification", "cap"},
    )


@pytest.mark.workflow
def test_each_per_method_file_holds_its_setups_in_table_order(finished_test_run):
    """The session's run is cut per method: each method's one evaluation job writes its record
    files itself (no per-job copy, no aggregation), its setups in the tables' row order
    (classifier-major, then data set)."""
    results = finished_test_run[0] / "results"
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    assert config["evaluation_jobs"] == "per_method"
    assert not (results / "eval_setups").exists() and not (results / "runtime_setups").exists()
    label = config["label_shift"]
    order = [(c, d) for c in label["classifiers"] for d in label["datasets"]]
    for task, method in _all_methods(config):
        for kind in ("eval", "runtime"):
            made = json.loads(
                (results / kind / "label" / task / f".{method}.csv.made.json").read_text()
            )
            assert made["rule"] == "evaluate", (kind, task, method)
        records = pd.read_csv(results / "eval" / "label" / task / f"{method}.csv")
        blocks = records[["classifier", "dataset"]].drop_duplicates()
        assert list(blocks.itertuples(index=False, name=None)) == order


# The method whose per-setup jobs the switch test runs over the four setups: each job reads its own
# setup's shared domain weights (the per-predicted-class plan) and continues the reference domain
# stream, in PyTorch's float32 arithmetic. A spread of methods (ONE_SETUP_METHODS of conftest.py)
# runs per setup in `one_setup_run`, whose records test_workflow.py compares with this run's.
SWITCH_METHODS = [("cap", "TransCal_c2a")]


@pytest.mark.workflow
def test_one_job_per_setup_writes_the_same_bytes_as_one_job_per_method(finished_test_run, tmp_path):
    """`evaluation_jobs: per_setup` on top of the finished per-method run: the plan holds one
    evaluate job per method and setup, the aggregations and the reports, and no data, classifier or
    weights job. Run for SWITCH_METHODS, the per-setup jobs and their aggregation write each record
    file byte for byte as the one job over the four setups did (the tables are a function of these
    files, test_workflow.py; the per-setup files of a spread of methods are compared with their
    setup's rows in test_workflow.py's second run)."""
    work = copy_run(finished_test_run, tmp_path / "wf")
    config = yaml.safe_load((work / ".test" / "config.yaml").read_text())
    config["evaluation_jobs"] = "per_setup"
    (work / "per_setup.yaml").write_text(yaml.safe_dump(config))
    output = snakemake("-n", "--configfile", "per_setup.yaml", cwd=work)
    methods = _all_methods(config)
    setups = ["LR/cmc.3", "LR/yeast", "kNN/cmc.3", "kNN/yeast"]
    _check(
        planned_jobs(output.stdout + output.stderr),
        evaluations=_evaluations(methods, setups),
        aggregations=_aggregations(methods),
        data={},
        report_tasks={"calibration", "quantification", "cap"},
    )
    results = work / "results"
    records = {(task, method): results / "eval" / "label" / task / f"{method}.csv"
               for task, method in SWITCH_METHODS}  # fmt: skip
    before = {key: path.read_bytes() for key, path in records.items()}
    targets = [str(path.relative_to(work)) for path in records.values()]
    # the targets before --configfile, which takes several values
    snakemake("--cores", "2", *targets, "--configfile", "per_setup.yaml", cwd=work)
    for (task, method), path in records.items():
        assert path.read_bytes() == before[(task, method)], (task, method)
        for setup in setups:  # each job wrote its own setup's file
            assert (results / "eval_setups" / "label" / task / method / f"{setup}.csv").is_file()
    # a per-setup job names its setup in its log
    log = results / "logs" / "eval" / "label" / "cap" / "TransCal_c2a" / "kNN" / "yeast.log"
    assert "on kNN/yeast (1 setups)" in log.read_text()
