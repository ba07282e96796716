"""Head2Tail (any k, tested for k classes): the transfer weights against a literal computation with SciPy's
multivariate normal, the head rules, the temperature against an independent minimiser, properties
of Head2Tail and Head2Tail_c2q. Their two-class numbers: tests/methods/test_method_regression.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, special
from scipy.stats import multivariate_normal

from tests.k_class_problems import samples, synthetic_problem
from unishift.data.containers import Setting
from unishift.evaluation.metrics import check_prevalence
from unishift.methods.base import fresh_context
from unishift.methods.calibration.head2tail import (
    Head2Tail,
    head2tail_weights,
    head_classes,
    transfer_matrix,
)
from unishift.methods.registry import get_method


def literal_weights(train_x, train_y, x, y, k, alpha, head):
    """The paper's construction written out item by item with SciPy's Gaussian densities."""
    d = train_x.shape[1]
    mu, var = [], []
    for c in range(k):
        part = train_x[train_y == c]
        v = part.var(axis=0)
        v[v < 1e-6] = 1e-6
        mu.append(part.mean(axis=0))
        var.append(v)
    weights = []
    for item, c in zip(x, y):
        if c in head:
            weights.append(1.0)
            continue
        donors = [j for j in head if j != c]
        scores = [
            -(np.sum((mu[c] - mu[j]) ** 2) + np.sum((np.sqrt(var[c]) - np.sqrt(var[j])) ** 2))
            / math.sqrt(d)
            for j in donors
        ]
        share = special.softmax(scores)
        mean = sum(s * mu[j] for s, j in zip(share, donors)) * (1 - alpha) + mu[c] * alpha
        std = sum(s * np.sqrt(var[j]) for s, j in zip(share, donors)) * (1 - alpha)
        std = std + np.sqrt(var[c]) * alpha
        ratio = np.exp(
            multivariate_normal(mean, np.diag(std**2)).logpdf(item)
            - multivariate_normal(mu[c], np.diag(var[c])).logpdf(item)
        )
        weights.append(float(np.clip(ratio, 0.3, 5)))
    return np.array(weights)


def long_tailed_problem(k=6, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(0, 1.5, size=(k, 3))
    prior = np.linspace(k, 1, k) ** 2
    prior /= prior.sum()

    def draw(n):
        y = rng.choice(k, size=n, p=prior)
        return means[y] + rng.normal(scale=rng.uniform(0.5, 1.5, 3), size=(n, 3)), y

    return draw(900), draw(300)


@pytest.mark.parametrize(
    "k, rule", [(3, "frequency"), (6, "frequency"), (6, "index"), (7, "index")]
)
def test_weights_are_the_literal_transfer_construction(k, rule):
    (train_x, train_y), (x, y) = long_tailed_problem(k)
    head = list(head_classes(train_y, k, rule))
    assert len(head) == math.ceil(0.2 * k)
    expected = literal_weights(train_x, train_y, x, y, k, 0.9, head)
    actual = head2tail_weights(train_x, train_y, x, y, k, 0.9, rule)
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-12)
    assert np.all(actual[np.isin(y, head)] == 1.0)
    assert np.ptp(actual[~np.isin(y, head)]) > 0.1  # the tail weights do vary


def test_head_rules_and_transfer_rows():
    labels = np.array([2] * 5 + [1] * 5 + [0] * 3 + [3] * 1 + [4] * 1 + [5] * 1)
    assert list(head_classes(labels, 6, "frequency")) == [1, 2]  # the two most frequent
    assert list(head_classes(labels, 6, "index")) == [0, 1]
    assert list(head_classes(np.array([0, 1, 1]), 2, "frequency")) == [1]  # ceil(0.4) = 1
    assert list(head_classes(np.array([0, 0, 1, 1]), 2, "frequency")) == [0]  # tie: lower index
    means = np.array([[0.0, 0.0], [10.0, 0.0], [1.0, 0.0], [9.0, 0.0]])
    stds = np.ones((4, 2))
    M = transfer_matrix(means, stds, np.array([0, 1]))
    np.testing.assert_allclose(M[2:].sum(axis=1), 1.0)
    assert M[2, 0] > 0.99 and M[3, 1] > 0.99  # each tail class borrows from its nearest head
    assert M[0, 1] == 1.0 and M[1, 0] == 1.0  # (head rows: never used)
    np.testing.assert_array_equal(M[:, 2:], 0.0)  # tail classes never donate


def test_with_alpha_one_every_weight_is_one_and_the_temperature_is_plain_cross_entropy_ts():
    setting, _ = synthetic_problem(seed=2, k=4, scale=3.0)
    method = Head2Tail(alpha=1.0).fit(setting)
    np.testing.assert_array_equal(method.weights_, 1.0)
    z = np.log(setting.validation.posteriors)
    y = setting.validation.labels

    def nll(t):
        return -np.mean(special.log_softmax(z / t, axis=1)[np.arange(len(y)), y])

    best = optimize.minimize_scalar(
        nll, bounds=(0.05, 5.0), method="bounded", options={"xatol": 1e-9}
    )
    assert method.temperature_ == pytest.approx(best.x, abs=1e-4)
    assert method.temperature_ > 1.5  # a scale-3 classifier is over-confident


def test_transfer_changes_the_temperature():
    setting, _ = synthetic_problem(seed=2, k=4, scale=3.0)
    y = setting.training.labels
    keep = np.isin(np.arange(len(y)), np.flatnonzero(y == 3)[::4]) | (y != 3)
    training = setting.training.subset(keep)
    setting = Setting(setting.validation, training, "label", key="lt")
    transferred = Head2Tail().fit(setting)
    plain = Head2Tail(alpha=1.0).fit(setting)
    assert abs(transferred.temperature_ - plain.temperature_) > 1e-3


def test_bad_input_is_refused_with_the_reason():
    setting, _ = synthetic_problem(seed=1, k=3)
    no_class_2 = Setting(
        setting.validation, setting.training.subset(setting.training.labels != 2), "label"
    )
    with pytest.raises(ValueError, match=r"class \[2\] has no classifier-training item"):
        Head2Tail().fit(no_class_2)
    with pytest.raises(ValueError, match="head"):
        Head2Tail(head="largest").fit(setting)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 6))
def test_head2tail_columns_return_valid_outputs(seed, k):
    setting, draw = synthetic_problem(seed, k, n_val=150, n_train=200, scale=3.0)
    calibrator = get_method("calibration", "Head2Tail").build("label", k).fit(setting)
    quantifier = get_method("quantification", "Head2Tail_c2q").build("label", k).fit(setting)
    for sample_id, (sample, _) in enumerate(samples(draw, k, np.random.default_rng(seed), n=2)):
        context = fresh_context(setting, sample_id)
        output = np.asarray(calibrator.calibrate(sample, context))
        assert output.shape == sample.posteriors.shape and np.all(output >= 0)
        np.testing.assert_allclose(output.sum(axis=1), 1.0, atol=1e-9)
        check_prevalence(quantifier.quantify(sample, context), k, "Head2Tail_c2q")
