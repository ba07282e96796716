"""Property tests of the methods for k classes, plus exactness checks of the base methods whose
assumption can be met exactly on a finite sample (label shift by replication). The contract of every
registered method for two and three classes is tests/test_method_contract.py's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.base import Quantifier, fresh_context, simplex_check
from unishift.methods.calibration.emq import EMQCalibrator
from unishift.methods.calibration.scaling import TemperatureScaling
from unishift.methods.cap.leap import LEAP
from unishift.methods.quantification.aggregative import ACC, CC, PACC, PCC, KDEy
from unishift.methods.quantification.emq import EMQ
from unishift.metrics import multiclass as mcm


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def synthetic_problem(seed=0, k=3, n_val=300, n_train=300, dim=4, scale=1.5, spread=1.5):
    """Gaussian classes in feature space; the 'classifier' is the linear discriminant of the class
    means (the Bayes rule for unit covariances and uniform priors), its logits scaled by ``scale``
    (above 1 over-confident, below under-confident)."""
    rng = np.random.default_rng(seed)
    means = rng.normal(0, spread, size=(k, dim))

    def draw(n, prior):
        labels = rng.choice(k, size=n, p=prior)
        features = means[labels] + rng.normal(size=(n, dim))
        logits = scale * (features @ means.T - 0.5 * np.sum(means**2, axis=1))
        return LabelledSet(softmax(logits), labels, features=features, logits=logits, n_classes=k)

    uniform = np.full(k, 1.0 / k)
    setting = Setting(draw(n_val, uniform), draw(n_train, uniform), "label", key=f"s{seed}")
    return setting, draw


def samples(draw, k, rng, n=6, size=120):
    out = []
    for _ in range(n):
        data = draw(size, rng.dirichlet(np.ones(k)))
        out.append((Sample(data.posteriors, data.features, data.logits), data.labels))
    return out


@pytest.fixture(scope="module")
def problem():
    setting, draw = synthetic_problem()
    return setting, samples(draw, 3, np.random.default_rng(1))


FAST = {
    "quantification": [CC, PCC, PACC, ACC, EMQ],
    "calibration": [EMQCalibrator, lambda: TemperatureScaling(logits="L")],
}


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 5))
def test_estimates_lie_on_the_simplex_and_rows_sum_to_one(seed, k):
    setting, draw = synthetic_problem(seed, k, n_val=150, n_train=150, scale=3.0)
    rng = np.random.default_rng(seed)
    for sample, _ in samples(draw, k, rng, n=3, size=80):
        context = fresh_context(setting)
        for factory in FAST["quantification"]:
            estimate = factory().fit(setting).quantify(sample, context)
            simplex_check(estimate, k, factory.__name__)
        for factory in FAST["calibration"]:
            calibrated = np.asarray(factory().fit(setting).calibrate(sample, context))
            np.testing.assert_allclose(calibrated.sum(axis=1), 1.0, atol=1e-9)
            assert np.all(calibrated >= 0)


# ---------------------------------------------------------------------------------------------------
# Exact finite-sample label shift: the validation set with each class's items repeated


def replicated(validation: LabelledSet, multiplicities) -> LabelledSet:
    index = np.repeat(np.arange(len(validation)), np.asarray(multiplicities)[validation.labels])
    return validation.subset(index)


@pytest.mark.parametrize("k", [3, 4])
def test_adjusted_quantifiers_are_exact_under_exact_label_shift(k):
    setting, _ = synthetic_problem(seed=k, k=k, n_val=600, scale=1.0)
    test = replicated(setting.validation, [1, 3, 2, 1][:k])
    truth = test.prevalence
    sample = Sample(test.posteriors, test.features)
    for factory in (ACC, PACC):
        estimate = factory().fit(setting).quantify(sample, fresh_context(setting))
        np.testing.assert_allclose(estimate, truth, atol=1e-5, err_msg=factory.__name__)
    # CC is not adjusted: it is off under the same shift (a negative control)
    assert mcm.quantification_ae(truth, CC().fit(setting).quantify(sample, None)) > 1e-3


class _LabelOracle(Quantifier):
    """Reads the labels the test stored in the first feature column."""

    def fit(self, setting):
        return self

    def quantify(self, sample, context):
        labels = np.asarray(sample.features[:, -1]).astype(int)
        return np.bincount(labels, minlength=sample.n_classes) / len(labels)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_leap_is_exact_under_exact_label_shift_with_a_perfect_quantifier(k):
    setting, _ = synthetic_problem(seed=10 + k, k=k, n_val=600, spread=0.4)
    validation = setting.validation
    # every cell of the table occupied: LEAP's exact solve then has no zero to round below 0
    assert np.all(validation.confusion > 0)
    tagged = LabelledSet(
        validation.posteriors,
        validation.labels,
        features=np.column_stack([validation.features, validation.labels]),
        n_classes=k,
    )
    setting = Setting(tagged, tagged, "label", key="leap")
    test = replicated(tagged, [2, 1, 3, 1][:k])
    sample = Sample(test.posteriors, test.features)
    leap = LEAP(quantifier=_LabelOracle).fit(setting)
    truth = mcm.accuracy(test.posteriors, test.labels)
    assert leap.predict_accuracy(sample, None) == pytest.approx(truth, abs=1e-10)
    np.testing.assert_allclose(
        leap.predict_table(sample, None), test.confusion / len(test), atol=1e-10
    )


def test_kdey_handles_a_class_absent_from_validation_and_records_it():
    setting, _ = synthetic_problem(seed=3, k=3)
    keep = setting.validation.labels != 2
    reduced = setting.restrict_validation(keep, "no-class-2")
    method = KDEy().fit(reduced)
    assert any("absent from validation" in reason for _, reason in method.fit_notes)
    estimate = method.quantify(Sample(setting.validation.posteriors), None)
    simplex_check(estimate, 3, "KDEy")


# ---------------------------------------------------------------------------------------------------
# Bad input


def test_a_classifier_without_one_column_per_class_is_rejected():
    with pytest.raises(ValueError, match="must output 3 columns"):
        LabelledSet(np.full((4, 2), 0.5), np.array([0, 1, 2, 0]), n_classes=3)
    with pytest.raises(ValueError, match="labels must lie in 0..1"):
        LabelledSet(np.full((2, 2), 0.5), np.array([0, 2]), n_classes=2)
    setting, _ = synthetic_problem()
    with pytest.raises(ValueError, match="n x 3 posterior matrix"):
        CC().fit(setting).quantify(Sample(np.full((5, 2), 0.5)), None)


def test_simplex_check_names_the_method():
    with pytest.raises(ValueError, match="Q returned .* not on the simplex"):
        simplex_check([0.7, 0.7], 2, "Q")
    with pytest.raises(ValueError, match="Q returned shape"):
        simplex_check([1.0], 2, "Q")


# ---------------------------------------------------------------------------------------------------
# DMCal: Bayes' rule on top-label cells


def _grid_setting(seed, k=3, n=2000):
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(4, np.ones(k) / k, size=n)
    posteriors = counts / 4
    posteriors = posteriors[posteriors.max(axis=1) < 1]
    predicted = np.argmax(posteriors, axis=1)
    labels = np.where(
        rng.random(len(posteriors)) < 0.6, predicted, rng.integers(0, k, len(posteriors))
    )
    validation = LabelledSet(posteriors, labels, n_classes=k)
    return Setting(validation, validation, "label", key="grid")


@pytest.mark.parametrize("bias", [0.0, 0.3])
def test_dmcal_cells_are_exact_under_exact_label_shift_with_the_true_prior(bias):
    from unishift.methods.calibration.dmcal import DMCal

    setting = _grid_setting(0)
    test = replicated(setting.validation, [1, 4, 2])
    # grid posteriors: one confidence per cell, so with the cell mean as abscissa and no
    # post-processing the map passes through each cell's Bayes share
    method = DMCal(n_bins=3, monotone="none", smooth=False, abscissa="bin_mean").fit(setting)
    truth = test.prevalence
    prior = (1 - bias) * truth + bias * np.array([1.0, 0.0, 0.0])
    method.quantifier_.aggregate = lambda posteriors: prior  # a perfect (or biased) prior
    output = method.calibrate(Sample(test.posteriors), None)
    predicted = test.predictions
    confidence = test.posteriors[np.arange(len(test)), predicted]
    gaps = []
    for cls in range(3):
        for value in np.unique(confidence[predicted == cls]):
            cell = (predicted == cls) & (confidence == value)
            gaps.append(np.abs(output[cell, cls] - np.mean(test.labels[cell] == cls)).max())
    if bias == 0.0:
        assert max(gaps) < 1e-5  # the 1e-7 smoothing terms of the binary method
    else:
        assert max(gaps) > 0.02
