import numpy as np
import pytest

from unishift.data.containers import LabelledSet, Setting, derive_seed
from unishift.evaluation import RECORD_COLUMNS, SetupData, evaluate_setup
from unishift.methods.base import Quantifier, SampleContext


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


class FlakyQuantifier(Quantifier):
    """Raises on sample 2, notes a fallback on sample 3."""

    def fit(self, setting):
        return self

    def quantify(self, sample, context):
        if context.sample_id == 2:
            raise ArithmeticError("cannot divide this sample")
        if context.sample_id == 3:
            context.note("fallback", "used the plan B")
        return 0.5


def test_an_error_on_one_sample_is_recorded_and_the_job_goes_on():
    records, timing = evaluate_setup("quantification", "Flaky", FlakyQuantifier, make_setup())
    assert [r["status"] for r in records] == ["ok", "ok", "error", "fallback", "ok"]
    assert "ArithmeticError: cannot divide this sample" in records[2]["reason"]
    assert "error" not in records[2] and records[3]["reason"] == "used the plan B"
    assert records[0]["error"] == pytest.approx(abs(records[0]["true_value"] - 0.5))
    assert set(records[0]) <= set(RECORD_COLUMNS) and timing["n_samples"] == 5


class Unfittable(Quantifier):
    def fit(self, setting):
        raise ValueError("no positives")

    def quantify(self, sample, context):
        return 0.0


def test_a_fit_failure_marks_every_sample_of_the_setup():
    records, _ = evaluate_setup("quantification", "Bad", Unfittable, make_setup(3))
    assert {r["status"] for r in records} == {"error"}
    assert all("fit failed: ValueError: no positives" == r["reason"] for r in records)


def test_cap_truth_is_the_accuracy_of_crisp_predictions():
    setup = make_setup(1)

    class Half(Quantifier):
        task = "cap"

        def fit(self, setting):
            return self

        def quantify(self, sample, context):
            return 0.5

    records, _ = evaluate_setup("cap", "Half", Half, setup)
    sample, labels = setup.sample(0)
    assert records[0]["true_value"] == pytest.approx(np.mean(sample.predictions == labels))


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


class Sharpen:
    """A calibrator that squares the odds: posteriors move away from 0.5, both ECEs change."""

    task = "calibration"

    def fit(self, setting):
        return self

    def apply(self, sample, context):
        p = sample.posteriors[:, 1] ** 2 / (
            sample.posteriors[:, 1] ** 2 + sample.posteriors[:, 0] ** 2
        )
        return np.column_stack([1 - p, p])


@pytest.mark.parametrize("ece", ["top_label", "positive_class"])
def test_the_calibration_error_is_the_configured_ece(ece):
    from unishift.metrics import ece_positive_class, ece_top_label

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
