"""The evaluation driver (:mod:`unishift.evaluation.evaluate`): what each column of a per-sample record holds
in both record layouts (two_class: the binary tables' columns; k_class: prevalence vectors, QuaPy's
AE and RAE, the class-wise ECE), the ECE each layout can rank, quantifier outputs checked on the
simplex, and failures recorded per sample, not raised."""

import json

import numpy as np
import pytest
import quapy as qp

from unishift.data.containers import LabelledSet, Setting, derive_seed
from unishift.data.setups import SetupData
from unishift.evaluation.evaluate import check_options, evaluate_method, evaluate_setup, score
from unishift.evaluation.metrics import (
    accuracy,
    brier,
    ece_classwise,
    ece_positive_class,
    ece_top_label,
)
from unishift.evaluation.records import BASE_COLUMNS, COLUMNS, K_CLASS, TWO_CLASS
from unishift.methods.base import AccuracyPredictor, Calibrator, Quantifier, SampleContext
from unishift.methods.quantification.aggregative import PCC


def make_setup(n_samples=5):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    pos = np.clip(0.3 + 0.4 * y + rng.normal(0, 0.1, 60), 0, 1)
    P = np.column_stack([1 - pos, pos])
    setting = Setting(LabelledSet(P, y), LabelledSet(P, y), shift="label", key="toy/LR")
    indices = rng.integers(0, 60, size=(n_samples, 20))
    return SetupData(
        shift="label",
        classifier="LR",
        dataset="toy",
        setting=setting,
        pool=LabelledSet(P, y),
        sample_indices=indices,
        shift_intensity=np.linspace(0, 1, n_samples),
    )


def toy_setup(k=3, n=90, seed=0):
    rng = np.random.default_rng(seed)
    posteriors = rng.dirichlet(np.ones(k), size=n)
    labels = rng.integers(0, k, n)
    data = LabelledSet(posteriors, labels, n_classes=k)
    setting = Setting(data, data, "label", key="toy/LR")
    indices = np.stack([rng.choice(n, 30) for _ in range(4)])
    return (
        SetupData("label", "LR", "toy", setting, data, indices, np.linspace(0, 0.3, 4)),
        posteriors,
        labels,
    )


# ---------------------------------------------------------------------------------------------
# Failures are recorded per sample


class FlakyQuantifier(Quantifier):
    """Raises on sample 2, notes a fallback on sample 3."""

    def fit(self, setting):
        return self

    def quantify(self, sample, context):
        if context.sample_id == 2:
            raise ArithmeticError("cannot divide this sample")
        if context.sample_id == 3:
            context.note("fallback", "used the plan B")
        return np.array([0.5, 0.5])


def test_an_error_on_one_sample_is_recorded_and_the_job_goes_on():
    records, timing = evaluate_setup("quantification", "Flaky", FlakyQuantifier, make_setup())
    assert [r["status"] for r in records] == ["ok", "ok", "error", "fallback", "ok"]
    assert "ArithmeticError: cannot divide this sample" in records[2]["reason"]
    assert "error" not in records[2] and records[3]["reason"] == "used the plan B"
    assert records[0]["error"] == pytest.approx(abs(records[0]["true_value"] - 0.5))
    assert set(records[0]) <= set(COLUMNS[TWO_CLASS]) and timing["n_samples"] == 5


class Unfittable(Quantifier):
    def fit(self, setting):
        raise ValueError("no positives")

    def quantify(self, sample, context):
        raise AssertionError("never called")


@pytest.mark.parametrize("layout", [TWO_CLASS, K_CLASS])
def test_a_fit_failure_marks_every_sample_of_the_setup(layout):
    setup = make_setup(3) if layout == TWO_CLASS else toy_setup()[0]
    records, _ = evaluate_setup("quantification", "Bad", Unfittable, setup, layout=layout)
    assert {r["status"] for r in records} == {"error"}
    assert all("fit failed: ValueError: no positives" == r["reason"] for r in records)
    assert all(set(r) <= set(COLUMNS[layout]) for r in records)


class Returns(Quantifier):
    """Answers every sample with ``output``."""

    def __init__(self, output):
        self.output = output

    def fit(self, setting):
        return self

    def quantify(self, sample, context):
        return self.output


@pytest.mark.parametrize(
    "layout, output, reason",
    [
        (K_CLASS, [0.9, 0.9, 0.1], "is not on the probability simplex"),
        (K_CLASS, [0.5, 0.5], "has 2 entries, the problem has 3"),
        (K_CLASS, [np.nan, 0.5, 0.5], "holds NaN or infinite values"),
        (K_CLASS, 0.5, "must be a vector of k >= 2 class shares"),
        (TWO_CLASS, [1.2, -0.2], "is not on the probability simplex"),
        (TWO_CLASS, [0.2, 0.3, 0.5], "has 3 entries, the problem has 2"),
        (TWO_CLASS, 0.5, "must be a vector of k >= 2 class shares"),  # a bare positive share
        (TWO_CLASS, [np.inf, 0.0], "holds NaN or infinite values"),
    ],
)
def test_a_quantifier_output_off_the_simplex_is_an_error_with_the_reason(layout, output, reason):
    setup = make_setup(3) if layout == TWO_CLASS else toy_setup()[0]
    records, _ = evaluate_setup(
        "quantification", "Off", lambda: Returns(output), setup, layout=layout
    )
    assert all(r["status"] == "error" for r in records)
    assert all("the quantifier's estimate" in r["reason"] for r in records)
    assert all(reason in r["reason"] for r in records), records[0]["reason"]
    assert all("error" not in r for r in records)  # nothing scored


def test_a_calibrator_output_of_another_shape_or_not_finite_is_an_error():
    setup, _, _ = toy_setup()

    class Narrow(Calibrator):
        def fit(self, setting):
            return self

        def calibrate(self, sample, context):
            return sample.posteriors[:, :2]

    class Infinite(Narrow):
        def calibrate(self, sample, context):
            return np.where(sample.posteriors > 0.5, np.inf, sample.posteriors)

    records, _ = evaluate_setup("calibration", "N", Narrow, setup, layout=K_CLASS)
    assert all(
        "calibrator returned shape (30, 2), expected (30, 3)" in r["reason"] for r in records
    )
    records, _ = evaluate_setup("calibration", "I", Infinite, setup, layout=K_CLASS)
    failed = [r for r in records if r["status"] == "error"]
    assert failed and all("NaN or infinite" in r["reason"] for r in failed)


# ---------------------------------------------------------------------------------------------
# The two-class layout


class Half(AccuracyPredictor):
    def fit(self, setting):
        return self

    def predict_accuracy(self, sample, context):
        return 0.5


def test_cap_truth_is_the_accuracy_of_crisp_predictions():
    setup = make_setup(1)

    records, _ = evaluate_setup("cap", "Half", Half, setup)
    sample, labels = setup.sample(0)
    assert records[0]["true_value"] == pytest.approx(np.mean(sample.predictions == labels))
    assert records[0]["error"] == pytest.approx(abs(records[0]["true_value"] - 0.5))


def test_context_caches_and_counts():
    context = SampleContext("toy", 0)
    calls = []
    for _ in range(3):
        context.cached(("weights", "features"), lambda: calls.append(1) or 42)
    assert calls == [1] and context.computations[("weights", "features")] == 1
    child = context.child("pos")
    child.cached(("weights", "features"), lambda: 7)
    assert (
        context.computations[("weights", "features")] == 2
    )  # a part of the sample is another input


def test_derived_seeds_are_stable_and_distinct():
    assert derive_seed(0, "yeast/LR", 3) == derive_seed(0, "yeast/LR", 3)
    assert derive_seed(0, "yeast/LR", 3) != derive_seed(0, "yeast/LR", 4)


class Sharpen(Calibrator):
    """A calibrator that squares the odds: posteriors move away from 0.5, both ECEs change."""

    def calibrate(self, sample, context=None):
        p = sample.posteriors[:, 1] ** 2 / (
            sample.posteriors[:, 1] ** 2 + sample.posteriors[:, 0] ** 2
        )
        return np.column_stack([1 - p, p])


@pytest.mark.parametrize("ece", ["top_label", "positive_class"])
def test_the_calibration_error_is_the_configured_ece(ece):
    setup = make_setup(4)
    records, _ = evaluate_setup("calibration", "Sharpen", Sharpen, setup, ece=ece)
    for record in records:
        sample, labels = setup.sample(record["sample_id"])
        calibrated = Sharpen().apply(sample, None)
        top, positive = ece_top_label(calibrated, labels), ece_positive_class(calibrated, labels)
        assert top != pytest.approx(positive)  # the definitions differ on these samples
        assert record["ece"] == top and record["ece_positive"] == positive
        assert record["error"] == (top if ece == "top_label" else positive)
        assert record["brier"] == pytest.approx(np.mean((labels - calibrated[:, 1]) ** 2))
        # the positive class's prevalence and mean calibrated probability
        assert record["true_value"] == labels.mean()
        assert record["estimate"] == calibrated[:, 1].mean()
        assert set(record) <= set(COLUMNS[TWO_CLASS])


def test_a_two_class_quantifier_record_holds_the_positive_prevalence():
    setup = make_setup(3)
    records, _ = evaluate_setup("quantification", "PCC", PCC, setup)
    for record in records:
        sample, labels = setup.sample(record["sample_id"])
        estimate = sample.posteriors[:, 1].mean()
        assert record["true_value"] == labels.mean()
        assert record["estimate"] == pytest.approx(estimate, abs=1e-12)
        assert record["error"] == pytest.approx(abs(labels.mean() - estimate), abs=1e-12)
        # a record of the driver; the workflow joins the descriptor columns (records.BASE_COLUMNS)
        assert set(record) == set(BASE_COLUMNS[TWO_CLASS]) - {"ece", "ece_positive", "brier"}


# ---------------------------------------------------------------------------------------------
# The k-class layout


def test_quantification_records_hold_vectors_and_quapy_errors():
    setup, posteriors, labels = toy_setup()
    records, timing = evaluate_setup("quantification", "PCC", PCC, setup, layout=K_CLASS)
    assert timing["n_samples"] == 4 and len(records) == 4
    assert set(records[0]) <= set(COLUMNS[K_CLASS])
    for record, index in zip(records, setup.sample_indices):
        truth = np.bincount(labels[index], minlength=3) / 30
        estimate = posteriors[index].mean(axis=0)
        np.testing.assert_allclose(json.loads(record["true_prevalence"]), truth, atol=1e-12)
        np.testing.assert_allclose(json.loads(record["estimated_prevalence"]), estimate, atol=1e-12)
        assert record["error"] == record["ae"] == pytest.approx(qp.error.ae(truth, estimate))
        assert record["rae"] == pytest.approx(qp.error.rae(truth, estimate, eps=1 / 60))
        assert record["status"] == "ok" and record["n_classes"] == 3
        # a vector has no scalar: a quantifier's true_value and estimate stay empty
        assert "true_value" not in record and "estimate" not in record


class Identity(Calibrator):
    def fit(self, setting):
        return self

    def calibrate(self, sample, context):
        return sample.posteriors


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_calibration_records_rank_by_top_label_or_classwise_ece(precision):
    setup, posteriors, labels = toy_setup()
    options = dict(layout=K_CLASS, ece_precision=precision)
    top, _ = evaluate_setup("calibration", "Id", Identity, setup, **options)
    classwise, _ = evaluate_setup("calibration", "Id", Identity, setup, ece="classwise", **options)
    for record, other, index in zip(top, classwise, setup.sample_indices):
        P, y = posteriors[index], labels[index]
        expected_top = ece_top_label(P, y, precision=precision)
        expected_classwise = ece_classwise(P, y, precision=precision)
        assert expected_top != expected_classwise  # the definitions differ on these samples
        assert record["error"] == record["ece"] == expected_top == other["ece"]
        assert other["error"] == other["ece_classwise"] == expected_classwise
        assert record["ece_classwise"] == expected_classwise
        assert record["brier"] == pytest.approx(brier(P, y))
        assert record["brier"] == pytest.approx(np.mean(np.sum((np.eye(3)[y] - P) ** 2, axis=1)))
        # the accuracy and the mean top-label confidence
        assert record["true_value"] == accuracy(P, y)
        assert record["estimate"] == pytest.approx(P.max(axis=1).mean(), abs=1e-12)
        np.testing.assert_allclose(json.loads(record["estimated_prevalence"]), P.mean(axis=0))
        np.testing.assert_allclose(
            json.loads(record["true_prevalence"]), np.bincount(y, minlength=3) / len(y)
        )


def test_cap_records_are_the_same_in_both_layouts_and_quantifier_errors_too():
    """One scorer computes both layouts: a two-class setup scored in the k-class layout (a shift
    that also has data of more classes) keeps its CAP record and its quantifier error |p1 - p1_hat|,
    and the top-label ECE and brier of its calibration records."""
    setup = make_setup(3)

    for task, method in (("cap", Half), ("quantification", PCC), ("calibration", Identity)):
        two, _ = evaluate_setup(task, "M", method, setup, layout=TWO_CLASS)
        k, _ = evaluate_setup(task, "M", method, setup, layout=K_CLASS)
        for a, b in zip(two, k):
            assert b["n_classes"] == 2 and a["error"] == b["error"], task
            if task == "calibration":
                assert a["ece"] == b["ece"] and a["brier"] == b["brier"]
            if task == "cap":
                assert (a["true_value"], a["estimate"]) == (b["true_value"], b["estimate"])


# ---------------------------------------------------------------------------------------------
# Options


def test_each_layout_ranks_only_the_eces_it_stores():
    setup, _, _ = toy_setup()
    with pytest.raises(ValueError, match="ece='positive_class' is not available in the k_class"):
        evaluate_setup("calibration", "Id", Identity, setup, ece="positive_class", layout=K_CLASS)
    with pytest.raises(ValueError, match="ece='classwise' is not available in the two_class"):
        evaluate_setup("calibration", "Id", Identity, make_setup(2), ece="classwise")
    with pytest.raises(ValueError, match="needs two classes"):
        check_options(K_CLASS, "positive_class", "float32", "per_sample")
    with pytest.raises(ValueError, match="needs data with more than two classes"):
        check_options(TWO_CLASS, "classwise", "float32", "per_sample")
    with pytest.raises(ValueError, match="layout='three_class' is not valid"):
        check_options("three_class", "top_label", "float32", "per_sample")
    with pytest.raises(ValueError, match="domain_stream='shared' is not valid"):
        check_options(TWO_CLASS, "top_label", "float32", "shared")
    for layout, eces in ((TWO_CLASS, ("top_label", "positive_class")),
                         (K_CLASS, ("top_label", "classwise"))):  # fmt: skip
        for ece in eces:
            check_options(layout, ece, "float64", "reference")


def test_score_writes_the_columns_of_its_layout():
    setup, _, _ = toy_setup()
    sample, labels = setup.sample(0)
    record = score("calibration", sample.posteriors, sample, labels, K_CLASS, "classwise")
    assert set(record) == set(BASE_COLUMNS[K_CLASS]) - {
        *("shift", "task", "method", "classifier", "dataset", "n_classes", "sample_id"),
        *("shift_intensity", "status", "reason", "ae", "rae"),  # a quantifier's errors
    }
    two = make_setup(1)
    sample, labels = two.sample(0)
    record = score("calibration", sample.posteriors, sample, labels, TWO_CLASS, "positive_class")
    assert (
        record["error"] == record["ece_positive"] == ece_positive_class(sample.posteriors, labels)
    )


@pytest.mark.parametrize("layout", [TWO_CLASS, K_CLASS])
def test_evaluate_method_writes_the_layouts_columns_for_each_setups_classes(layout):
    setups = [make_setup(2)] if layout == TWO_CLASS else [toy_setup(3)[0], toy_setup(4, seed=1)[0]]
    frame, timings = evaluate_method(
        "quantification", "PCC", "label", setups, layout=layout, domain_stream="per_sample"
    )
    assert list(frame.columns) == list(COLUMNS[layout])
    assert (frame["status"] == "ok").all() and len(timings) == len(setups)
    if layout == K_CLASS:
        assert frame["n_classes"].tolist() == [3] * 4 + [4] * 4
        assert [len(json.loads(v)) for v in frame["estimated_prevalence"]] == [3] * 4 + [4] * 4
    with pytest.raises(ValueError, match="is not available in the"):
        bad = "classwise" if layout == TWO_CLASS else "positive_class"
        evaluate_method("calibration", "TS", "label", setups, ece=bad, layout=layout)
