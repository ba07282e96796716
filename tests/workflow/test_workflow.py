"""The Snakemake workflow: lint, planning, validation failures and a real end-to-end run."""

import filecmp
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.conftest import REPO
from tests.snakemake_forks import FORKED_SERVER_LINE, WARM, run_fresh, run_snakemake
from unishift.io import read_npz
from unishift.methods.domain_weights import SHARED_PLANS

pytestmark = pytest.mark.workflow
WORKFLOW_FILES = (
    "Snakefile",
    "envs",
    "workflow",
    "config",
    "profiles",
    ".test",
    "requirements.lock",
)


def snakemake(*args, cwd=REPO, check=True, env=None, fresh=False):
    """``python -m snakemake ARGS`` in ``cwd``: in a fork of the tests' warm process where the
    environment allows (tests/snakemake_forks.py), in a fresh interpreter where ``fresh``."""
    result = (run_fresh if fresh else run_snakemake)(args, cwd, env=env)
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


BAD_NAMES = [
    (
        "label_shift={'datasets': ['iris.9']}",
        "unknown uci_binary data set 'iris.9'; valid ones",
    ),
    (
        "label_shift={'classifiers': ['SVM']}",
        "classifiers: unknown classifier 'SVM'; valid ones are",
    ),
    ("methods={'label': {'quantification': ['NotAMethod']}}", "valid quantification methods"),
]


@pytest.mark.parametrize("override, message", BAD_NAMES)
def test_the_run_s_preparation_refuses_bad_names(tmp_path, monkeypatch, override, message):
    """``--config key=value`` over the embedded config, as Snakemake merges it, refused by the
    preparation ``common.smk`` runs before any job (through snakemake below, for one of them)."""
    import ast

    from snakemake.utils import update_config

    from tests.workflow.test_config_checks import prepare_in_this_process

    monkeypatch.chdir(tmp_path)
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    key, value = override.split("=", 1)
    update_config(config, {key: ast.literal_eval(value)})
    with pytest.raises(Exception, match=re.escape(message)):
        prepare_in_this_process(config, [REPO / "config" / "config.yaml"])
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("override, message", BAD_NAMES[-1:])
def test_bad_names_fail_validation_before_any_job(tmp_path, override, message):
    work = copy_workflow(tmp_path / "wf")
    result = snakemake("-n", "--cores", "1", "--config", override, cwd=work, check=False)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
    assert not (work / "results" / "data").exists()


def test_end_to_end_run_is_complete(finished_test_run):
    """The run of the tiny config writes every table, diagram, plot and record file it promises. The
    values themselves are checked in test_workflow_values.py, determinism below."""
    first_run, output = finished_test_run
    assert "Provided cores: 2" in output.stdout + output.stderr
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    first = first_run / "results"
    n_setups = len(config["label_shift"]["datasets"]) * len(config["label_shift"]["classifiers"])
    for task, methods in config["methods"]["label"].items():
        table = pd.read_csv(first / "tables" / f"{task}_label.csv")
        # the Selector is a column of every table (docs/regimes.md §5.4)
        assert set(table["method"]) == {*methods, "Selector"}
        assert len(table) == n_setups * (len(methods) + 1)
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


def rows_of_setup(path: Path, dataset: str, classifier: str) -> bytes:
    """The header and the rows of one setup of a record file, byte for byte as the file holds them."""
    lines = path.read_bytes().splitlines(keepends=True)
    frame = pd.read_csv(path, usecols=["dataset", "classifier"])
    rows = np.flatnonzero((frame["dataset"] == dataset) & (frame["classifier"] == classifier))
    assert len(rows) and np.all(np.diff(rows) == 1), (path, rows)  # one block
    assert len(lines) == len(frame) + 1, path  # one line per row: no quoted line breaks
    return lines[0] + b"".join(lines[1 + i] for i in rows)


def test_a_second_run_one_job_at_a_time_writes_the_same_bytes(
    finished_test_run, one_setup_run, tmp_path
):
    """Results depend neither on the run, nor on the scheduling (each job caps its BLAS/OpenMP pools
    at the rule's threads), nor on the cut into jobs, nor on the other setups of the config. The
    second run (`one_setup_run`: from scratch, one job at a time, one job per setup, the tiny config
    reduced to its last setup and one method of each kind, ONE_SETUP_METHODS) writes that setup's
    data, samples, posteriors, both plans' domain weights and records as the first run (two jobs at
    a time, one job per method over the four setups) did: each per-setup record file is, byte for
    byte, that setup's rows of the first run's per-method file, so none of these methods carries
    state from one setup to the next. Re-running the report jobs of the first run one at a time
    writes the same tables and CD diagrams."""
    first = finished_test_run[0] / "results"
    work, config, output = one_setup_run
    assert "Provided cores: 1" in output.stdout + output.stderr
    # the first run's jobs ran in forks of a server forked from the tests' warm process, the
    # second's in forks of one the library started in an interpreter of its own
    for run, forked in ((finished_test_run[0], WARM.can_run(None)), (work, False)):
        server = (run / "results/logs/job_server.log").read_text()
        assert server.startswith(FORKED_SERVER_LINE) == forked, run
        evaluations = list((run / "results/logs/eval").rglob("*.log"))
        assert evaluations and all(
            "job server: ran in a fork" in p.read_text() for p in evaluations
        )
    (dataset,), (classifier,) = (
        config["label_shift"]["datasets"],
        config["label_shift"]["classifiers"],
    )
    second = work / "results"

    npz_files = [
        f"data/label/{dataset}/split.npz",
        f"samples/label/{dataset}.npz",
        f"posteriors/label/{dataset}/{classifier}.npz",
        *(f"weights/label/{dataset}/{classifier}/{plan}.npz" for plan in SHARED_PLANS),
    ]
    for name in npz_files:  # .npz archives carry the time of writing: compare their arrays
        assert_same_arrays(first / name, second / name)
    for task, methods in config["methods"]["label"].items():
        for method in methods:
            setup_file = second / f"eval_setups/label/{task}/{method}/{classifier}/{dataset}.csv"
            # a fallback's record would not show what a job carried over (ONE_SETUP_METHODS)
            assert set(pd.read_csv(setup_file)["status"]) == {"ok"}, setup_file
            whole = first / "eval" / "label" / task / f"{method}.csv"
            assert setup_file.read_bytes() == rows_of_setup(whole, dataset, classifier), setup_file
            method_file = second / "eval" / "label" / task / f"{method}.csv"
            assert method_file.read_bytes() == setup_file.read_bytes(), method_file

    reports = tmp_path / "reports"
    shutil.copytree(finished_test_run[0], reports, symlinks=True)
    before = {folder: snapshot(reports / "results" / folder) for folder in ("tables", "cd")}
    # the table jobs only (the reports that read their files are not compared here)
    tables = [f"results/tables/{task}_label.csv" for task in config["methods"]["label"]]
    written = {name: (reports / name).stat().st_mtime_ns for name in tables}
    snakemake(
        "--cores", "1", *tables, "--configfile", ".test/config.yaml", "--forcerun", "tables",
        cwd=reports,
    )  # fmt: skip
    assert all((reports / name).stat().st_mtime_ns > written[name] for name in tables)
    for folder, files in before.items():
        assert snapshot(reports / "results" / folder) == files, folder


def is_made_record(path: Path | str) -> bool:
    """A job's record of what made a file (``.<name>.made.json``): it holds the file's modification
    time, so it differs between runs by design; the results are the files it describes."""
    name = Path(path).name
    return name.startswith(".") and name.endswith(".made.json")


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not is_made_record(p)
    }


def assert_same_arrays(left: Path, right: Path):
    a, b = read_npz(left), read_npz(right)
    assert sorted(a) == sorted(b), (left, right)
    for key, array in a.items():
        assert array.dtype == b[key].dtype and array.shape == b[key].shape, (left, key)
        np.testing.assert_array_equal(array, b[key], err_msg=f"{left}:{key}")


def assert_identical(compared: filecmp.dircmp):
    """The same files with the same bytes in two folders, apart from the jobs' records."""
    assert not [n for n in compared.left_only + compared.right_only if not is_made_record(n)]
    common = [name for name in compared.common_files if not is_made_record(name)]
    _, mismatch, errors = filecmp.cmpfiles(compared.left, compared.right, common, shallow=False)
    assert not mismatch and not errors, f"files differ between runs: {mismatch or errors}"
    for sub in compared.subdirs.values():
        assert_identical(sub)


def test_snakemake_exits_when_its_run_ends(finished_test_run):
    """The process ends when its run does, not one job-rate timespan (100 s) later: the newest
    Snakemake log is written as the run ends (unishift.workflow.prepare.end_run)."""
    from tests.conftest import SNAKEMAKE_EXITS

    work, _ = finished_test_run
    last_log = max((work / ".snakemake" / "log").glob("*.snakemake.log"), key=os.path.getmtime)
    assert SNAKEMAKE_EXITS[work] - last_log.stat().st_mtime < 50
