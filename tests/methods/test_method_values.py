"""Values of Platt, PacCal, KDEy, EMQ^BCTS's fallback and LEAP against oracles written from their
definitions, on inputs where the plausible variants (a swapped column, a precision for a recall, a
bandwidth, a prior source, a one-sided condition) give different numbers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.base import Quantifier, as_posteriors, fresh_context
from unishift.methods.calibration.paccal_sigma import PacCalSigma
from unishift.methods.calibration.platt import Platt
from unishift.methods.cap.leap import LEAP
from unishift.methods.quantification.aggregative import KDEy
from unishift.methods.quantification.emq import EMQBCTS, em


def setting_of(scores, labels, train_labels=None):
    validation = LabelledSet(as_posteriors(np.asarray(scores, float)), np.asarray(labels))
    training = LabelledSet(None, np.asarray(labels if train_labels is None else train_labels))
    return Setting(validation, training, "label", key="values")


def test_platt_is_the_logistic_fit_of_platts_smoothed_targets():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 300)
    scores = np.clip(0.5 + 0.25 * (2 * labels - 1) + rng.normal(0, 0.2, 300), 0, 1) ** 2
    setting = setting_of(scores, labels)
    n_pos, n_neg = labels.sum(), len(labels) - labels.sum()
    target = np.where(labels == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(ab):
        z = ab[0] * scores + ab[1]
        return np.sum(np.logaddexp(0, z) - target * z)

    a, b = optimize.minimize(loss, [1.0, 0.0], method="BFGS", options={"gtol": 1e-10}).x
    test = np.array([0.05, 0.2, 0.5, 0.7, 0.95])
    out = Platt().fit(setting).calibrate(Sample(as_posteriors(test)), fresh_context(setting))
    np.testing.assert_allclose(out[:, 1], 1 / (1 + np.exp(-(a * test + b))), atol=1e-5)
    np.testing.assert_allclose(out.sum(axis=1), 1.0)


@pytest.mark.parametrize("side", ["above", "below"])
def test_paccal_squashes_the_sample_when_values_leave_the_unit_interval_on_one_side(side):
    # validation tpr 0.8, fpr 0.2: p' = (p - 0.2) / 0.6
    setting = setting_of([0.15, 0.25, 0.75, 0.85], [0, 0, 1, 1])
    p = np.array([0.3, 0.5, 0.95]) if side == "above" else np.array([0.1, 0.5, 0.7])
    adjusted = (p - 0.2) / 0.6
    assert (adjusted > 1).any() != (adjusted < 0).any()  # out of range on one side only
    out = PacCalSigma().fit(setting).calibrate(Sample(as_posteriors(p)), fresh_context(setting))
    np.testing.assert_allclose(out[:, 1], 1 / (1 + np.exp(-(2 * adjusted - 1))))


def test_paccal_for_three_classes_inverts_paccs_matrix_and_squashes_negative_entries():
    # the columns of M are the mean validation posteriors of each class
    columns = np.array([[0.6, 0.3, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]])
    labels = np.repeat([0, 1, 2], 10)
    validation = LabelledSet(columns[labels], labels)
    setting = Setting(validation, validation, "label", key="paccal-3")
    method = PacCalSigma().fit(setting)
    inside = np.array([[0.45, 0.35, 0.2], [0.3, 0.4, 0.3]])
    adjusted = np.linalg.solve(columns.T, inside.T).T
    assert np.all((adjusted >= 0) & (adjusted <= 1))
    context = fresh_context(setting)
    np.testing.assert_allclose(method.calibrate(Sample(inside), context), adjusted, atol=1e-12)
    assert [s for s, _ in context.notes] == ["fallback"]  # returned unchanged, and said so
    # one entry below 0 and none above 1 (the rows sum to 1): sigma squashes every row
    outside = np.array([[0.12, 0.45, 0.43], [0.3, 0.4, 0.3]])
    adjusted = np.linalg.solve(columns.T, outside.T).T
    assert adjusted.min() < 0 and adjusted.max() <= 1
    expected = np.exp(adjusted) / np.exp(adjusted).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(
        method.calibrate(Sample(outside), fresh_context(setting)), expected, atol=1e-12
    )


def kdey_oracle(validation_posteriors, labels, test_posteriors, bandwidth=0.1):
    """Maximum-likelihood mixture of the class-conditional Gaussian KDEs of the posterior vectors."""

    def density(points, centres):
        d2 = ((points[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        return np.exp(-d2 / (2 * bandwidth**2)).mean(axis=1)

    f0 = density(test_posteriors, validation_posteriors[labels == 0])
    f1 = density(test_posteriors, validation_posteriors[labels == 1])

    def nll(p):
        return -np.sum(np.log((1 - p) * f0 + p * f1 + 1e-300))

    return optimize.minimize_scalar(nll, bounds=(0, 1), method="bounded", options={"xatol": 1e-9}).x


def test_kdey_is_the_maximum_likelihood_kde_mixture_with_bandwidth_0_1():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 2, 400)
    scores = np.clip(0.35 + 0.3 * labels + rng.normal(0, 0.15, 400), 0.001, 0.999)
    setting = setting_of(scores, labels)
    test_labels = (rng.random(250) < 0.7).astype(int)
    test = as_posteriors(np.clip(0.35 + 0.3 * test_labels + rng.normal(0, 0.15, 250), 0.001, 0.999))
    estimate = KDEy().fit(setting).quantify(Sample(test), fresh_context(setting))[1]
    expected = kdey_oracle(setting.validation.posteriors, labels, test)
    assert estimate == pytest.approx(expected, abs=2e-3)
    assert abs(expected - kdey_oracle(setting.validation.posteriors, labels, test, 0.05)) > 0.01


def test_emq_bcts_fallback_starts_em_from_its_configured_prior():
    rng = np.random.default_rng(3)
    labels = np.r_[np.ones(60), np.zeros(40)].astype(int)  # validation prevalence 0.6
    scores = np.round(np.clip(0.5 * labels + rng.uniform(0, 0.5, 100), 0, 1), 1)  # exact 0 / 1
    setting = setting_of(scores, labels, train_labels=np.r_[np.ones(20), np.zeros(80)].astype(int))
    test = as_posteriors(np.round(rng.uniform(0, 1, 50), 1))
    for source, prior in (("validation", 0.6), ("training", 0.2)):
        model = EMQBCTS(fallback_prevalence=source).fit(setting)
        assert model.fit_notes[0][0] == "fallback"
        got = model.quantify(Sample(test), fresh_context(setting))
        assert got == pytest.approx(em([1 - prior, prior], test)[0], abs=1e-12)
    assert em([0.4, 0.6], test)[0] != pytest.approx(em([0.8, 0.2], test)[0], abs=1e-3)


class Fixed(Quantifier):
    """A quantifier written as an ordinary scikit-learn estimator (its own ``fit``)."""

    def __init__(self, value=0.5):
        self.value = value

    def fit(self, setting):
        return self

    def quantify(self, sample, context=None):
        return np.array([1 - self.value, self.value])


def test_leap_uses_the_recall_not_the_precision_of_the_validation_positives():
    # positives 0.8, 0.3, 0.7, 0.6 -> recall 3/4; predicted positives 0.8, 0.7, 0.6, 0.55, 0.9
    # include two negatives -> precision 3/5
    setting = setting_of([0.8, 0.3, 0.7, 0.6, 0.2, 0.55, 0.9], [1, 1, 1, 1, 0, 0, 0])
    leap = LEAP(quantifier=lambda: Fixed(0.4)).fit(setting)
    assert leap.ratios_[1, 1] == 0.75
    table = leap.predict_table(Sample(as_posteriors(np.array([0.9, 0.6, 0.2, 0.1]))), None)
    # x11 = tpr * q, x10 = q - x11, x01 = cc - x11, x00 = the rest
    np.testing.assert_allclose(table, [[1 - 0.4 - 0.5 + 0.3, 0.5 - 0.3], [0.4 - 0.3, 0.3]])
