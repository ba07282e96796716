"""Nothing silently wrong, nothing lost: what the harness refuses before anything is scored or
overwritten (docs/evaluation-jobs.md, "What made a file", "One run at a time", "A method that fails
everywhere"; docs/reporting.md, "The run summary")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from tests.conftest import REPO
from unishift import output_records
from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.data.setups import SetupData
from unishift.evaluation.evaluate import evaluate_setup, score
from unishift.evaluation.records import check_not_all_failed
from unishift.io import write_csv, write_npz
from unishift.methods.base import AccuracyPredictor, Calibrator, Quantifier
from unishift.methods.registry import get_method
from unishift.report.summary import run_summary
from unishift.workflow.checks import (
    ConfigError,
    DamagedIntermediatesError,
    check_integers,
    check_intermediates,
    check_method_params,
)
from unishift.workflow.run_lock import RunLockError, hold_run_lock

# ------------------------------------------------------------------------------------------------
# What made a file


def written(path, **arrays):
    write_npz(path, **arrays)
    output_records.write_record(path, "label_samples", {"dataset": path.stem}, [])
    return path


def test_an_unchanged_file_passes_and_an_edited_one_is_named(tmp_path):
    path = written(tmp_path / "results" / "samples" / "label" / "yeast.npz", indices=np.arange(6))
    assert output_records.problem_of(path) is None
    frame = pd.DataFrame({"a": [1.5, 2.5]})
    csv = tmp_path / "results" / "eval" / "label" / "cap" / "Naive.csv"
    write_csv(csv, frame)
    output_records.write_record(csv, "evaluation_records", {}, [path])
    assert output_records.problem_of(csv) is None
    # one number edited by hand: the sha256 no longer matches
    csv.write_text(csv.read_text().replace("2.5", "2.6"))
    assert "content changed" in output_records.problem_of(csv)
    with pytest.raises(
        output_records.ProvenanceError, match="Naive.csv: its content changed.*delete"
    ):
        output_records.verify([csv])


def test_a_touched_but_unchanged_file_still_passes(tmp_path):
    path = written(tmp_path / "samples" / "yeast.npz", indices=np.arange(6))
    os.utime(path, ns=(1, 1))  # a new modification time: the sha256 decides
    assert output_records.problem_of(path) is None


def test_a_file_of_another_setup_copied_in_place_is_refused_with_or_without_its_record(tmp_path):
    samples = tmp_path / "results" / "samples" / "label"
    cmc = written(samples / "cmc.3.npz", indices=np.arange(6))
    yeast = written(samples / "yeast.npz", indices=np.arange(6) + 1)
    shutil.copy(cmc, yeast)  # the file alone: yeast's record no longer matches
    assert "content changed" in output_records.problem_of(yeast)
    shutil.copy(
        output_records.record_path(cmc), output_records.record_path(yeast)
    )  # with cmc.3's record
    problem = output_records.problem_of(yeast)
    assert "written as" in problem and "cmc.3.npz" in problem and "another setup" in problem


def test_a_file_without_a_record_is_not_trusted(tmp_path):
    path = tmp_path / "posteriors" / "LR.npz"
    write_npz(path, P_val=np.zeros((2, 2)))
    assert "no record" in output_records.problem_of(path)


def test_the_planning_names_the_damaged_per_setup_file_itself(tmp_path):
    """A per-setup record file cut at a line end passes every cheap check; its record does not."""
    results = tmp_path / "results"
    part = results / "eval_setups" / "label" / "cap" / "Naive" / "LR" / "cmc.3.csv"
    write_csv(part, pd.DataFrame({"sample_id": [0, 1, 2], "error": [0.1, 0.2, 0.3]}))
    output_records.write_record(part, "evaluate", {}, [])
    check_intermediates(results)
    lines = part.read_text().splitlines(keepends=True)
    part.write_text("".join(lines[:-1]))  # the last row gone, the file still ends with a newline
    with pytest.raises(DamagedIntermediatesError, match="no job was started") as caught:
        check_intermediates(results)
    assert str(part) in str(caught.value) and "content changed" in str(caught.value)


def test_a_job_refuses_an_input_its_job_did_not_write_and_records_its_outputs(tmp_path):
    inputs = written(tmp_path / "samples.npz", indices=np.arange(3))
    output = tmp_path / "out.npz"
    script = f"""
import numpy as np
from types import SimpleNamespace
from unishift.io import write_npz
from unishift.workflow.jobs import start_job
job = SimpleNamespace(log=[{str(tmp_path / "job.log")!r}], threads=1, rule="demo",
    input=[{str(inputs)!r}], output=[{str(output)!r}], wildcards={{"dataset": "yeast"}})
start_job(job)
write_npz({str(output)!r}, x=np.arange(2))
"""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=120)
    record = output_records.read_record(output)
    assert record["rule"] == "demo" and record["wildcards"] == {"dataset": "yeast"}
    assert record["inputs"] == {str(inputs): output_records.file_sha256(inputs)}
    # an input edited after its job wrote it: the next job stops before computing anything
    write_npz(inputs, indices=np.arange(4))
    failed = subprocess.run(
        [sys.executable, "-c", script.replace("out.npz", "out2.npz")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert failed.returncode != 0 and "content changed" in (tmp_path / "job.log").read_text()
    assert not (tmp_path / "out2.npz").exists()


def test_a_failing_job_records_nothing(tmp_path):
    output = tmp_path / "out.npz"
    script = f"""
import numpy as np
from types import SimpleNamespace
from unishift.io import write_npz
from unishift.workflow.jobs import start_job
job = SimpleNamespace(log=[{str(tmp_path / "job.log")!r}], threads=1, rule="demo", input=[],
    output=[{str(output)!r}], wildcards={{}})
start_job(job)
write_npz({str(output)!r}, x=np.arange(2))
raise RuntimeError("the job fails after writing")
"""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=120)
    assert output.exists() and not output_records.record_path(output).exists()


# ------------------------------------------------------------------------------------------------
# One run at a time


def test_a_second_run_on_the_same_results_folder_is_refused_while_the_first_holds_it(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from unishift.workflow.run_lock import hold_run_lock; "
            f"hold_run_lock({str(tmp_path)!r}); print('held', flush=True); time.sleep(60)",
        ],
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLockError, match=f"pid {holder.pid}.*no job was started"):
            hold_run_lock(tmp_path)
    finally:
        holder.kill()  # however the holder ends, the operating system releases its lock
        holder.wait()
    assert hold_run_lock(tmp_path).name == ".run.lock"


def test_a_symbolic_link_at_the_lock_is_refused_and_its_target_untouched(tmp_path):
    """The lock was opened following links and truncated: a link there overwrote its target."""
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    results = tmp_path / "results"
    results.mkdir()
    (results / ".run.lock").symlink_to(target)
    with pytest.raises(RunLockError, match=r"\.run\.lock is a symbolic link.*rm .*\.run\.lock"):
        hold_run_lock(results)
    assert target.read_text() == "keep me\n"


# ------------------------------------------------------------------------------------------------
# Output contracts: what a method returns is checked before it is scored


def _setting_and_sample(k=2, n=40, seed=0):
    rng = np.random.default_rng(seed)
    posteriors = rng.dirichlet(np.ones(k), n)
    labels = rng.integers(0, k, n)
    part = LabelledSet(posteriors, labels)
    return Setting(part, part, "label", "toy", 0), Sample(posteriors), labels


class _Returns:
    def __init__(self, output):
        self.output = output

    def fit(self, setting):
        return self


class BadCalibrator(_Returns, Calibrator):
    def calibrate(self, sample, context):
        return self.output(sample)


class BadQuantifier(_Returns, Quantifier):
    def quantify(self, sample, context):
        return self.output(sample)


class BadCAP(_Returns, AccuracyPredictor):
    def predict_accuracy(self, sample, context):
        return self.output(sample)


def _scaled_positive(sample):  # p1 x 1.8: rows still sum to 1, so p0 goes negative
    p1 = np.asarray(sample.posteriors)[:, 1] * 1.8
    return np.column_stack([1 - p1, p1])


@pytest.mark.parametrize(
    "method, reason",
    [
        (BadCalibrator(_scaled_positive), "must lie in \\[0, 1\\]"),
        (BadCalibrator(lambda s: np.tile([-1.0, 2.0], (len(s), 1))), "must lie in \\[0, 1\\]"),
        (BadCalibrator(lambda s: np.asarray(s.posteriors) * 0.9), "do not sum to 1"),
        (BadCalibrator(lambda s: np.asarray(s.posteriors)[:, :1]), "shape"),
        (BadCalibrator(lambda s: np.full(np.shape(s.posteriors), np.nan)), "NaN or infinite"),
        (BadQuantifier(lambda s: np.array([-0.7, 1.7])), "simplex"),
        (BadQuantifier(lambda s: 0.3), "vector"),
        (BadCAP(lambda s: 1.2), "outside \\[0, 1\\]"),
        (BadCAP(lambda s: np.nan), "not finite"),
    ],
    ids=[
        "p1x1.8",
        "minus-one-two",
        "rows-0.9",
        "one-column",
        "nan",
        "prevalence-1.7",
        "bare-float",
        "accuracy-1.2",
        "accuracy-nan",
    ],
)
def test_a_method_breaking_its_contract_is_an_error_never_a_score(method, reason):
    setting, _, _ = _setting_and_sample()
    rng = np.random.default_rng(1)
    pool = LabelledSet(rng.dirichlet([1, 1], 60), rng.integers(0, 2, 60))
    setup = SetupData(
        "label", "LR", "toy", setting, pool, np.arange(60).reshape(3, 20), np.zeros(3)
    )
    records, _ = evaluate_setup(
        method.task, "Bad", lambda: method, setup, domain_stream="per_sample"
    )
    assert {r["status"] for r in records} == {"error"}
    assert all("error" not in r or r.get("error") is None for r in records)
    assert pd.Series([r["reason"] for r in records]).str.contains(reason).all(), records[0]


def test_a_valid_output_is_scored_and_the_metrics_refuse_what_they_cannot_score():
    _, sample, labels = _setting_and_sample()
    fields = score("calibration", sample.posteriors, sample, labels)
    assert np.isfinite(fields["ece"]) and fields["estimate"] == pytest.approx(
        np.mean(np.asarray(sample.posteriors)[:, 1])
    )
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        score("calibration", _scaled_positive(sample), sample, labels)


# ------------------------------------------------------------------------------------------------
# Parameters and config values checked before any job


@pytest.mark.parametrize(
    "task, name, params, message",
    [
        ("calibration", "PACC_q2c_5B", {"bins": 0}, "bins=0 is not valid"),
        ("calibration", "ATC_a2c_6B", {"bins": 0}, "bins=0 is not valid"),
        ("calibration", "PACC_q2c_3B", {"bins": 2.5}, "bins=2.5 is not valid"),
        ("cap", "PACC_q2a", {"inner": "NOPE"}, "inner='NOPE' cannot be overridden"),
        ("quantification", "LEAP_a2q", {"inner": "NOPE"}, "inner='NOPE' cannot be overridden"),
        ("calibration", "DMCal", {"n_bins": 3.0}, "n_bins=3.0 is not valid"),
        ("calibration", "DMCal", {"n_binz": 3}, "'n_binz' is not a parameter"),
    ],
)
def test_method_params_are_checked_against_the_constructor(task, name, params, message):
    spec = get_method(task, name)
    with pytest.raises(ConfigError, match=message):
        check_method_params(spec, params, f"method_params.{task}/{name}")


def test_a_float_where_the_schema_says_integer_is_refused_naming_the_key():
    schema = REPO / "workflow" / "schemas" / "config.schema.yaml"
    check_integers({"label_shift": {"n_samples": 3}}, schema)
    with pytest.raises(ConfigError, match=r"label_shift\.n_samples: 3\.0 is not an integer"):
        check_integers({"label_shift": {"n_samples": 3.0}}, schema)
    with pytest.raises(ConfigError, match=r"covariate_shift\.mixture\.sample_size: 50\.0"):
        check_integers({"covariate_shift": {"mixture": {"sample_size": 50.0}}}, schema)


# ------------------------------------------------------------------------------------------------
# A method that fails everywhere, and the run summary


def _records(statuses):
    return pd.DataFrame(
        {
            "status": statuses,
            "reason": ["ValueError: the method broke" if s == "error" else "" for s in statuses],
        }
    )


def test_a_method_that_failed_on_every_sample_stops_the_run_with_its_first_reason():
    check_not_all_failed(_records(["error", "ok", "error"]), "Half", "cap under label shift")
    with pytest.raises(RuntimeError, match="Broken failed on every one of its 2 samples.*broke"):
        check_not_all_failed(_records(["error", "error"]), "Broken", "cap under label shift")


def test_the_summary_lists_per_table_the_methods_with_errors_and_fallbacks(tmp_path):
    tables = tmp_path / "tables"
    tables.mkdir()
    cells = pd.DataFrame(
        {
            "classifier": ["LR", "LR", "kNN", "kNN"],
            "dataset": ["a", "a", "a", "a"],
            "method": ["Naive", "DoC", "Naive", "DoC"],
            # a table's n_samples counts the scored samples: DoC was asked for 10 + 10 + 0 + 10
            "n_samples": [10, 10, 10, 0],
            "n_fallbacks": [0, 2, 0, 1],
            "n_errors": [0, 0, 0, 10],
        }
    )
    cells.to_csv(tables / "cap_label.csv", index=False)
    cells.assign(n_samples=10, n_fallbacks=0, n_errors=0).to_csv(
        tables / "quantification_label.csv"
    )
    text = run_summary(tmp_path, [("cap", "label"), ("quantification", "label")])
    # issue 32: the count of errors over the scored count read "errors on 10 of 10"
    assert "DoC: errors on 10 of 20 samples, scored on fewer than 90% of its samples" in text
    assert "fallbacks on 3" in text
    assert "Naive" not in text
    assert "quantification under label shift: every method scored every sample" in text


@pytest.mark.workflow
def test_a_finished_run_refuses_an_edited_or_a_copied_intermediate(finished_test_run, tmp_path):
    """The probes of the issue, on a real finished run: a number edited in an evaluation job's
    record file, and one data set's samples copied over another's, are each named by the dry run
    before any job starts; the untouched run plans nothing."""
    from tests.workflow.test_workflow import snakemake
    from tests.workflow.test_workflow_reruns import copy_run

    def dry_run(work):
        result = snakemake("-n", "--configfile", ".test/config.yaml", cwd=work, check=False)
        return result.returncode, result.stdout + result.stderr

    code, output = dry_run(copy_run(finished_test_run, tmp_path / "untouched"))
    assert code == 0 and "Nothing to be done" in output, output

    edited = copy_run(finished_test_run, tmp_path / "edited")
    # the run's one evaluation job per method writes the method's record file (per_method)
    platt = edited / "results" / "eval" / "label" / "calibration" / "Platt.csv"
    lines = platt.read_text().splitlines()
    header, first = lines[0].split(","), lines[1].split(",")
    column = header.index("error")
    first[column] = "0.0" if first[column] != "0.0" else "0.5"
    platt.write_text("\n".join([lines[0], ",".join(first), *lines[2:]]) + "\n")
    code, output = dry_run(edited)
    assert code != 0
    assert str(platt.relative_to(edited)) in output and "content changed" in output
    assert "no job was started" in output

    copied = copy_run(finished_test_run, tmp_path / "copied")
    samples = sorted((copied / "results" / "samples" / "label").glob("*.npz"))
    assert len(samples) >= 2
    shutil.copy(samples[0], samples[1])  # the file alone, its record stays the other's
    code, output = dry_run(copied)
    assert code != 0 and str(samples[1].relative_to(copied)) in output
