"""The Snakemake workflow: lint, planning, validation failures and a real end-to-end run."""

import filecmp
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.conftest import REPO

pytestmark = pytest.mark.workflow
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
WORKFLOW_FILES = ("workflow", "config", "profiles", ".test", "requirements.lock")


def snakemake(*args, cwd=REPO, check=True, env=None):
    result = subprocess.run(
        [*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, timeout=1200, env=env
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
        )
    return result


def copy_workflow(target: Path) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name)
        else:
            shutil.copy(source, target / name)
    return target


def test_lint_is_clean():
    result = snakemake("--lint")
    assert "Congratulations, your workflow is in a good condition" in result.stdout + result.stderr


def test_paper_config_plans_without_network(tmp_path):
    """The whole paper grid plans offline: 40 UCI setups and 3 models x 3 source domains fine-tuned
    on a GPU each (the default's MiniLM is not merged into the paper's models)."""
    work = copy_workflow(tmp_path / "wf")
    plan = snakemake("-n", "--configfile", "config/paper.yaml", cwd=work).stdout
    finetunes = re.findall(
        r"rule lm_finetune:.*?wildcards: model=(\w+), source=(\w+).*?resources: ([^\n]*)",
        plan,
        re.S,
    )
    assert {(m, s) for m, s, _ in finetunes} == {
        (m, s) for m in ("BERT", "DistilBERT", "RoBERTa") for s in ("imdb", "rt", "yelp")
    }
    assert all("gpu=1" in resources for _, _, resources in finetunes)
    assert plan.count("rule train_classifier:") == 40
    # the three data sets and three models are downloaded once, on the submitting machine
    downloads = re.findall(r"rule hub_download:.*?wildcards: kind=(\w+), name=(\w+)", plan, re.S)
    assert sorted(downloads) == sorted(
        [("datasets", d) for d in ("imdb", "rt", "yelp")]
        + [("models", m) for m in ("BERT", "DistilBERT", "RoBERTa")]
    )


@pytest.mark.parametrize(
    "override, message",
    [
        ("label_shift={'datasets': ['iris.9']}", "is not one of"),
        ("label_shift={'classifiers': ['SVM']}", "is not one of"),
        ("methods={'label': {'quantification': ['NotAMethod']}}", "valid quantification methods"),
    ],
)
def test_bad_names_fail_validation_before_any_job(tmp_path, override, message):
    work = copy_workflow(tmp_path / "wf")
    result = snakemake("-n", "--cores", "1", "--config", override, cwd=work, check=False)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
    assert not (work / "results" / "data").exists()


def test_end_to_end_run_is_complete_and_byte_identical(finished_test_run, tmp_path):
    """Two runs of the tiny config, one with two jobs side by side and one with one job at a time,
    write the same bytes: results depend neither on the run nor on the scheduling (each job caps its
    BLAS/OpenMP pools at the rule's threads). The values themselves are checked in
    test_workflow_values.py."""
    first_run, output = finished_test_run
    assert "Provided cores: 2" in output.stdout + output.stderr
    work = copy_workflow(tmp_path / "second")
    output = snakemake("--cores", "1", "--configfile", ".test/config.yaml", cwd=work)
    assert "Provided cores: 1" in output.stdout + output.stderr
    runs = [first_run / "results", work / "results"]
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    first = runs[0]
    n_setups = len(config["label_shift"]["datasets"]) * len(config["label_shift"]["classifiers"])
    for task, methods in config["methods"]["label"].items():
        table = pd.read_csv(first / "tables" / f"{task}_label.csv")
        assert set(table["method"]) == set(methods)
        assert len(table) == n_setups * len(methods)
        assert (table["n_samples"] + table["n_errors"] == 10).all()
        assert r"\begin{tabular}" in (first / "tables" / f"{task}_label.tex").read_text()
        assert (first / "cd" / f"{task}_label.png").stat().st_size > 0
        assert (first / "plots" / f"{task}_label_err_by_shift.png").stat().st_size > 0
        for method in methods:
            records = pd.read_csv(first / "eval" / "label" / task / f"{method}.csv")
            assert len(records) == n_setups * 10
            assert set(records["status"]) <= {"ok", "fallback", "error"}
    accuracy = pd.read_csv(first / "tables" / "classifier_accuracy_label.csv")
    assert set(accuracy["classifier"]) == {"LR", "kNN"}
    reproduction = pd.read_csv(first / "reproduction" / "classifier_accuracy_label.csv")
    ours = reproduction.dropna(subset=["accuracy_ours"])
    # LR and kNN on cmc.3 and yeast are deterministic and equal the paper's appendix table
    assert len(ours) == n_setups and set(ours["verdict"]) == {"equal"}, ours
    for folder in ("eval", "tables", "cd"):
        compared = filecmp.dircmp(runs[0] / folder, runs[1] / folder)
        assert_identical(compared)


def assert_identical(compared: filecmp.dircmp):
    assert not compared.left_only and not compared.right_only
    _, mismatch, errors = filecmp.cmpfiles(
        compared.left, compared.right, compared.common_files, shallow=False
    )
    assert not mismatch and not errors, f"files differ between runs: {mismatch or errors}"
    for sub in compared.subdirs.values():
        assert_identical(sub)
