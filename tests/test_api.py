"""The Python API (docs/api.md): setups loaded by name from a finished run, any object with a task's
interface scored on them, QuaPy quantifiers adapted, tables from records; and the example notebook
(examples/notebook_api.py) run end to end on a finished run of .test/config.yaml."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from quapy.method.aggregative import PACC as QuaPyPACC
from sklearn.linear_model import LogisticRegression

import unishift
from tests.calibration_settings import make_setting
from tests.conftest import REPO
from unishift.api import QuaPyQuantifier, adapt, evaluate, from_quapy, load_setups, table, task_of
from unishift.data.containers import LabelledSet
from unishift.data.setups import SetupData
from unishift.evaluation.records import COLUMNS, K_CLASS, TWO_CLASS
from unishift.methods.adapt.to_calibration import (
    PositiveQuantificationToCalibration as QuantificationToCalibration,
)
from unishift.methods.adapt.to_quantification import CAPToQuantification
from unishift.methods.base import fresh_context
from unishift.methods.cap.atc import ATC
from unishift.methods.quantification.aggregative import PACC


def _setup(seed=3):
    setting, _, draw = make_setting(seed=seed)
    pool, labels = draw(400, 0.5, shift_x=0.2)
    pool = LabelledSet(pool.posteriors, labels, pool.features, pool.logits)
    rng = np.random.default_rng(seed)
    positives, negatives = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    indices = np.array(
        [
            np.concatenate([rng.choice(positives, k), rng.choice(negatives, 100 - k)])
            for k in (20, 80)
        ]
    )
    return SetupData("label", "LR", f"toy{seed}", setting, pool, indices, np.zeros(2))


def test_the_api_is_importable_from_the_package():
    assert unishift.evaluate is evaluate and unishift.from_quapy is from_quapy
    with pytest.raises(AttributeError):
        unishift.not_a_name  # noqa: B018


def test_from_quapy_gives_the_registered_quapy_quantifiers_numbers():
    setup = _setup()
    ours = from_quapy(QuaPyPACC(LogisticRegression())).fit(setup.setting)
    reference = PACC().fit(setup.setting)
    for sample_id in range(2):
        sample, _ = setup.sample(sample_id)
        context = fresh_context(setup.setting, sample_id)
        np.testing.assert_array_equal(
            ours.quantify(sample, context), reference.quantify(sample, context)
        )


def test_from_quapy_refuses_a_non_aggregative_quantifier():
    from quapy.method.non_aggregative import MaximumLikelihoodPrevalenceEstimation

    with pytest.raises(ValueError, match="aggregative"):  # when wrapping it, not on every sample
        from_quapy(MaximumLikelihoodPrevalenceEstimation())


def test_adapt_turns_a_quantifier_into_a_calibrator_and_a_cap_method():
    quantifier = from_quapy(QuaPyPACC(LogisticRegression()))
    calibrator = adapt(quantifier, "q2c")
    assert isinstance(calibrator, QuantificationToCalibration) and calibrator.bins == 5
    assert task_of(adapt(quantifier, "q2a")) == "cap"
    assert isinstance(adapt(ATC(), "a2q"), CAPToQuantification)
    with pytest.raises(ValueError, match="adapts a calibration method"):
        adapt(quantifier, "c2q")


def test_evaluate_scores_a_plain_object_like_the_driver_scores_a_method():
    class Mean:
        """Duck-typed quantifier: the mean posterior vector (PCC), no unishift base class."""

        def fit(self, setting):
            return self

        def quantify(self, sample, context):
            return sample.posteriors.mean(axis=0)

    setups = [_setup(3), _setup(4)]
    mine = evaluate(Mean(), setups, name="Mean")
    pcc = evaluate("PCC", setups, task="quantification")
    assert list(mine["method"].unique()) == ["Mean"]
    assert list(mine.columns) == list(pcc.columns) == list(COLUMNS[TWO_CLASS])
    np.testing.assert_allclose(mine["estimate"], pcc["estimate"], rtol=0, atol=1e-12)
    assert (mine["status"] == "ok").all() and len(mine) == 4
    # the truth is the sample's prevalence, so a sample rich in positives has the larger truth
    assert mine["true_value"].tolist() == [0.2, 0.8, 0.2, 0.8]


def test_evaluate_records_a_quantifier_that_answers_no_prevalence_vector():
    class Positive:
        """Answers the positive share alone, not the prevalence vector a quantifier returns."""

        def fit(self, setting):
            return self

        def quantify(self, sample, context):
            return float(np.mean(sample.posteriors[:, 1]))

    with pytest.warns(UserWarning, match="Positive failed on 2 of 2 samples"):
        records = evaluate(Positive(), [_setup(3)], name="Positive")
    assert (records["status"] == "error").all() and records["error"].isna().all()
    assert records["reason"].str.contains("must be a vector of k >= 2 class shares").all()


def test_evaluate_writes_the_layout_of_its_setups_classes():
    from tests.evaluation.test_evaluate import toy_setup

    setups = [toy_setup(3)[0], toy_setup(4, seed=1)[0]]
    records = evaluate("PCC", setups, task="quantification")
    assert list(records.columns) == list(COLUMNS[K_CLASS])
    assert records["n_classes"].tolist() == [3] * 4 + [4] * 4
    two = evaluate("PCC", [_setup(3)], task="quantification", layout=K_CLASS)
    assert list(two.columns) == list(COLUMNS[K_CLASS]) and two["n_classes"].tolist() == [2, 2]
    with pytest.raises(ValueError, match="'positive_class' is not available in the k_class"):
        evaluate("TS", setups, task="calibration", ece="positive_class")


def test_evaluate_needs_the_task_of_a_name_and_a_clean_name():
    with pytest.raises(ValueError, match="needs task="):
        evaluate("PCC", [_setup()])
    with pytest.raises(ValueError, match="letters, digits"):
        evaluate(PACC(), [_setup()], name="my method")
    with pytest.raises(TypeError, match="interface of one task"):
        evaluate(object(), [_setup()])


def test_table_ranks_a_method_the_registry_does_not_know():
    setups = [_setup(3), _setup(4), _setup(5)]
    records = pd.concat(
        [
            evaluate("CC", setups, task="quantification"),
            evaluate("PACC", setups, task="quantification"),
            evaluate(QuaPyQuantifier(QuaPyPACC(LogisticRegression())), setups, name="MyPACC"),
        ]
    )
    result = table(records, "quantification", "label", groups={"MyPACC": "reference"})
    assert result.names == ["CC", "PACC", "MyPACC"]
    means = pd.DataFrame(result.means, columns=result.names)
    np.testing.assert_array_equal(means["PACC"], means["MyPACC"])  # same quantifier, same numbers


def test_table_names_an_unknown_shift_or_task():
    """A misspelt shift filtered every record away: "needs at least one method"."""
    records = pd.DataFrame({"task": ["quantification"], "shift": ["label"], "method": ["CC"]})
    with pytest.raises(ValueError, match=r"shift='lable' is not valid; choose one of \['compound'"):
        table(records, "quantification", "lable")
    with pytest.raises(ValueError, match=r"task='quantifcation' is not valid; choose one of"):
        table(records, "quantifcation", "label")


def test_load_setups_says_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="run the workflow first"):
        load_setups(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="no label-shift setup"):
        load_setups(tmp_path)


@pytest.mark.workflow  # finished_test_run runs snakemake on .test/config.yaml
def test_example_notebook_runs_on_a_finished_run(finished_test_run, tmp_path):
    work, _ = finished_test_run
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "examples" / "notebook_api.py"),
            str(work / "results"),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PACC through the API equals the workflow's per-sample records" in result.stdout
    setups = load_setups(work / "results", shift="label")
    assert [s.key for s in setups] == ["cmc.3/LR", "yeast/LR", "cmc.3/kNN", "yeast/kNN"]
    for task, mine in [
        ("quantification", "ACC"),
        ("calibration", "ACC_q2c_5B"),
        ("cap", "ACC_q2a"),
    ]:
        frame = pd.read_csv(tmp_path / f"{task}_label.csv")
        assert len(frame) == 4 and np.isfinite(frame[mine]).all()
        assert (tmp_path / f"{task}_label_cd.tex").read_text().strip()


def test_evaluate_warns_how_many_samples_a_method_failed_on():
    """Issue 32: no warning when every sample failed, and a mean of ``error`` averaged the rest."""
    from tests.wrong_methods import AlwaysFails, MostlyFails

    with pytest.warns(
        UserWarning, match=r"AlwaysFails failed on 2 of 2 samples .*fails on purpose"
    ):
        evaluate(AlwaysFails(), [_setup(3)])
    setups = [_setup(seed) for seed in range(3, 8)]
    # sample 1 of each of the 5 setups fails: 5 of 10, below the share of 90 %
    with pytest.warns(UserWarning, match=r"MostlyFails failed on 5 of 10 samples .*never bold"):
        records = evaluate(MostlyFails(), setups)
    assert (records["status"] == "error").sum() == 5
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate("CC", [_setup(3)], task="quantification")


@pytest.mark.parametrize("alpha", [2.0, -1.0, 0.0, 1.0, float("nan"), True, "0.05"])
def test_table_refuses_an_alpha_outside_the_open_unit_interval(alpha):
    records = evaluate("CC", [_setup(3), _setup(4)], task="quantification")
    with pytest.raises(ValueError, match="alpha must be"):
        table(records, "quantification", "label", alpha=alpha)
    with pytest.raises(ValueError, match="min_coverage must be"):
        table(records, "quantification", "label", min_coverage=float("nan"))
