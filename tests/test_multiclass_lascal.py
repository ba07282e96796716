"""LasCal for k classes: the k-class RLLS against independent solutions and the exact label-shift
weights, the temperature search against a literal loop, and properties of the four LasCal columns.
Their two-class numbers: tests/test_method_regression.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from tests.test_multiclass_methods import replicated, samples, synthetic_problem
from unishift.methods.base import fresh_context, simplex_check
from unishift.methods.calibration.lascal import (
    LasCal,
    ece_label_shift_loop,
    lascal_losses,
    rlls_closed_form,
    rlls_cvxpy,
    rlls_lambda,
    rlls_objective,
    rlls_system,
    rlls_weights,
    torch_log,
)
from unishift.methods.calibration.shared import first_strict_minimum, softmax, temperature_grid
from unishift.registry import get_method


def random_rlls(seed, k):
    rng = np.random.default_rng(seed)
    n = 300
    labels = rng.integers(0, k, n)
    pred = np.where(rng.random(n) < 0.7, labels, rng.integers(0, k, n))
    target = rng.integers(0, k, 200)
    return rlls_system(pred, labels, target, k), rlls_lambda(n, k)


def rlls_scipy(C, b, lam):
    """The same problem in epigraph form with smooth constraints, by SLSQP from several starts:
    min s + lam t  s.t.  s^2 >= ||C theta - b||^2, t^2 >= ||theta||^2, s, t >= 0, theta >= -1."""
    k = C.shape[0]

    def constraints(v):
        theta, s, t = v[:k], v[k], v[k + 1]
        return np.array([s * s - np.sum((C @ theta - b) ** 2), t * t - np.sum(theta**2)])

    best = None
    for start in (np.zeros(k), np.full(k, -0.5), np.linalg.pinv(C) @ b):
        v0 = np.concatenate(
            [start, [np.linalg.norm(C @ start - b) + 0.1, np.linalg.norm(start) + 0.1]]
        )
        result = optimize.minimize(
            lambda v: v[k] + lam * v[k + 1],
            v0,
            method="SLSQP",
            bounds=[(-1, None)] * k + [(0, None), (0, None)],
            constraints=[{"type": "ineq", "fun": constraints}],
            options={"ftol": 1e-14, "maxiter": 1000},
        )
        theta = result.x[:k]
        if best is None or rlls_objective(theta, C, b, lam) < rlls_objective(best, C, b, lam):
            best = theta
    return best


def test_rlls_system_is_the_literal_joint_and_marginal_shares():
    rng = np.random.default_rng(0)
    pred, labels, target = rng.integers(0, 3, 50), rng.integers(0, 3, 50), rng.integers(0, 3, 40)
    C, b = rlls_system(pred, labels, target, 3)
    for i in range(3):
        for j in range(3):
            assert C[i, j] == sum(1 for p, y in zip(pred, labels) if p == i and y == j) / 50
        assert b[i] == pytest.approx(
            sum(t == i for t in target) / 40 - sum(p == i for p in pred) / 50
        )


@pytest.mark.parametrize("k", [3, 4, 5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_k_class_rlls_matches_an_independent_solver(seed, k):
    (C, b), lam = random_rlls(seed, k)
    theta = rlls_cvxpy(C, b, lam)
    other = rlls_scipy(C, b, lam)
    assert np.all(theta >= -1 - 1e-8)
    assert rlls_objective(theta, C, b, lam) <= rlls_objective(other, C, b, lam) + 1e-7
    np.testing.assert_allclose(theta, other, atol=2e-3)
    # no feasible perturbation does better (first-order optimality, tested directly)
    rng = np.random.default_rng(seed)
    f = rlls_objective(theta, C, b, lam)
    for _ in range(200):
        probe = np.maximum(theta + rng.normal(scale=1e-3, size=k), -1)
        assert rlls_objective(probe, C, b, lam) >= f - 1e-8


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_cvxpy_agrees_with_the_binary_closed_form_for_two_classes(seed):
    (C, b), lam = random_rlls(seed, 2)
    np.testing.assert_allclose(rlls_cvxpy(C, b, lam), rlls_closed_form(C, b, lam), atol=1e-5)


@pytest.mark.parametrize("k", [3, 4])
def test_unregularised_rlls_recovers_exact_label_shift_weights(k):
    """Under exact label shift (each validation class repeated m_c times) C w = mu_target holds with
    w the true class ratios, so RLLS without its penalty returns them."""
    setting, _ = synthetic_problem(seed=k, k=k, n_val=600, scale=1.0, spread=0.5)
    validation = setting.validation
    test = replicated(validation, [1, 3, 2, 1][:k])
    C, b = rlls_system(validation.predictions, validation.labels, test.predictions, k)
    truth = test.prevalence / validation.prevalence
    np.testing.assert_allclose(1 + rlls_cvxpy(C, b, 0.0), truth, atol=1e-5)
    # the weights are a per-class ratio: the transposed system does not give them
    assert np.abs(1 + rlls_cvxpy(C.T, b, 0.0) - truth).max() > 1e-2
    # LasCal's own call (with its penalty) stays close
    weights = rlls_weights(validation.predictions, validation.labels, test.predictions, k)
    np.testing.assert_allclose(weights, truth, atol=0.1)


def test_rlls_weights_use_the_k_class_penalty():
    """lambda = 0.01 rho(n, K) with abstention's rho = 3 (2 ln(2K/delta) / (3n) + sqrt(2 ln(2K/delta)
    / n)), delta = 0.05, K the number of classes."""
    rng = np.random.default_rng(3)
    n, k = 80, 4
    labels = rng.integers(0, k, n)
    pred = np.where(rng.random(n) < 0.6, labels, rng.integers(0, k, n))
    target = rng.choice(k, 60, p=[0.55, 0.3, 0.1, 0.05])
    C, b = rlls_system(pred, labels, target, k)
    log_term = np.log(2 * k / 0.05)
    lam = 0.01 * 3 * (2 * log_term / (3 * n) + np.sqrt(2 * log_term / n))
    weights = rlls_weights(pred, labels, target, k)
    np.testing.assert_allclose(weights, 1 + rlls_cvxpy(C, b, lam), atol=1e-7)
    assert np.abs(weights - (1 + rlls_cvxpy(C, b, rlls_lambda(n, 2)))).max() > 1e-5


def literal_lascal_temperature(z_source, y_source, z_target, k):
    """The search written out: for each grid T, the k-class RLLS weights from hard predictions and
    the mean over classes of the binary module's literal estimator loop (float64 arithmetic)."""
    temps = temperature_grid()
    losses = []
    for T in temps:
        s_src, s_tgt = softmax(z_source / float(T)), softmax(z_target / float(T))
        w = rlls_weights(np.argmax(s_src, 1), y_source, np.argmax(s_tgt, 1), k, "cvxpy")
        per_class = [
            ece_label_shift_loop(s_src[:, c], s_tgt[:, c], y_source == c, w[c]) for c in range(k)
        ]
        losses.append(np.mean(per_class))
    best = first_strict_minimum(np.array(losses))
    return float(temps[best]), np.array(losses)


@pytest.mark.parametrize("k", [3, 4])
def test_the_search_is_the_literal_loop_over_temperatures_and_classes(k):
    setting, draw = synthetic_problem(seed=20 + k, k=k, scale=3.0)
    sample = samples(draw, k, np.random.default_rng(k), n=1, size=200)[0][0]
    z_src, z_tgt = np.log(setting.validation.posteriors), np.log(sample.posteriors)
    y = setting.validation.labels
    temperature, literal = literal_lascal_temperature(z_src, y, z_tgt, k)
    losses = lascal_losses(z_src, y, z_tgt, solver="cvxpy", arithmetic="float64")
    np.testing.assert_allclose(losses, literal, rtol=1e-9, atol=1e-12)
    # REF's arithmetic (torch softmax, float32 sums and mean) is the same loss to float32 precision
    reference = lascal_losses(z_src, y, z_tgt, solver="cvxpy", arithmetic="reference")
    assert reference.dtype == np.float32
    np.testing.assert_allclose(reference, literal, rtol=1e-4)
    method = LasCal(logits="S", arithmetic="float64").fit(setting)
    output = method.calibrate(sample, fresh_context(setting))
    np.testing.assert_allclose(output, softmax(z_tgt / temperature), atol=1e-12)
    assert temperature != pytest.approx(1.0, abs=0.05)  # the search moved (a scale-3 classifier)


def test_closed_form_is_refused_for_more_than_two_classes():
    setting, _ = synthetic_problem(k=3)
    with pytest.raises(ValueError, match="two-class RLLS only"):
        LasCal(solver="closed_form").fit(setting)


def test_the_reference_arithmetic_uses_torch_log_and_is_close_to_float64():
    setting, draw = synthetic_problem(seed=3, k=3, scale=3.0)
    sample = samples(draw, 3, np.random.default_rng(5), n=1, size=200)[0][0]
    z = torch_log(sample.posteriors)
    reference = LasCal().fit(setting).calibrate(sample, fresh_context(setting))
    plain = LasCal(arithmetic="float64").fit(setting).calibrate(sample, fresh_context(setting))
    assert np.isfinite(z).all()
    np.testing.assert_allclose(reference, plain, atol=1e-6)


LASCAL_COLUMNS = [
    ("calibration", "LasCal"),
    ("calibration", "EMQ_LasCal"),
    ("quantification", "LasCal_c2q"),
    ("quantification", "EMQ_LasCal"),
    ("cap", "LasCal_c2a"),
]


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 4))
def test_lascal_columns_return_valid_outputs(seed, k):
    setting, draw = synthetic_problem(seed, k, n_val=150, n_train=150, scale=3.0)
    rng = np.random.default_rng(seed)
    methods = {
        (task, name): get_method(task, name).build("label", k).fit(setting)
        for task, name in LASCAL_COLUMNS
    }
    for sample_id, (sample, _) in enumerate(samples(draw, k, rng, n=2, size=80)):
        context = fresh_context(setting, sample_id)
        for (task, name), method in methods.items():
            output = method.apply(sample, context)
            if task == "calibration":
                output = np.asarray(output)
                assert output.shape == sample.posteriors.shape and np.all(output >= 0)
                np.testing.assert_allclose(output.sum(axis=1), 1.0, atol=1e-9)
            elif task == "quantification":
                simplex_check(output, k, name)
            else:
                assert 0.0 <= float(output) <= 1.0


def test_lascal_columns_run_for_any_number_of_classes_with_their_conventions():
    for task, name in LASCAL_COLUMNS:
        assert not get_method(task, name).binary_only
    lascal = get_method("calibration", "LasCal")
    assert lascal.params("covariate", 3)["logits"] == lascal.params("covariate", 2)["logits"] == "L"
    assert (lascal.params("label", 3)["logits"], lascal.params("label", 2)["logits"]) == ("S", "P")
    assert get_method("quantification", "EMQ_LasCal").shifts == ("label",)
