"""Values of the reference calibrators against independent oracles: a known density ratio for the
domain classifier, TransCal's control-variate risk written out from its definition, CPCS's weighted
Brier minimum, Head2Tail's closed-form weights and LasCal's tie rule."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import optimize

from unishift.methods.calibration import lascal as lascal_module
from unishift.methods.calibration import transcal as transcal_module
from unishift.methods.calibration.cpcs import cpcs_temperature
from unishift.methods.calibration.head2tail import head2tail_weights
from unishift.methods.calibration.shared import softmax
from unishift.methods.calibration.transcal import transcal_temperature
from unishift.methods.domain_weights import fit_domain_weights


def test_domain_weights_recover_the_density_ratio_of_two_gaussians():
    # train ~ N(0, 1), target ~ N(1, 1): p_target(x) / p_train(x) = exp(x - 1/2), which a logistic
    # regression on x represents exactly. Equal sizes: no resampling is involved.
    rng = np.random.default_rng(0)
    train = rng.normal(0.0, 1.0, (20000, 1))
    target = rng.normal(1.0, 1.0, (20000, 1))
    at = np.array([[-1.0], [0.0], [0.5], [1.0], [2.0]])
    weights = fit_domain_weights(train, target, at, seed=0)
    assert weights.shape == (5, 1)
    np.testing.assert_allclose(weights[:, 0], np.exp(at[:, 0] - 0.5), rtol=0.1)


def test_domain_weights_up_weight_items_that_look_like_the_target():
    rng = np.random.default_rng(1)
    train = rng.normal(0.0, 1.0, (600, 2))
    target = rng.normal(0.8, 1.0, (200, 2))  # fewer target items: the target is up-sampled
    near_target, near_train = np.array([[1.5, 1.5]]), np.array([[-1.5, -1.5]])
    weights = fit_domain_weights(train, target, np.vstack([near_target, near_train]), seed=3)
    assert weights[0, 0] > 2.0 > 0.5 > weights[1, 0]


# ------------------------------------------------------------------------------------------------
# TransCal


def sample_cov(a, b):
    return float(np.sum((a - a.mean()) * (b - b.mean())) / (len(a) - 1))


def transcal_risk_oracle(weights, error, source_confidence, lam):
    """Importance-weighted target risk with TransCal's two control variates (Wang et al. 2020):
    the weights (known mean 1) and the correctness (mean taken as the source confidence)."""
    w = weights**lam
    weighted = w * error
    eta_1 = -sample_cov(weighted, w) / sample_cov(w, w)
    corrected = weighted + eta_1 * (w - 1.0)
    correct = 1.0 - error
    eta_2 = -sample_cov(corrected, correct) / sample_cov(correct, correct)
    return float(np.mean(corrected) + eta_2 * (np.mean(correct) - source_confidence))


@pytest.fixture
def captured_objective(monkeypatch):
    """Replace scipy's minimize inside TransCal by a recorder of the objective it is given."""
    seen = {}

    def minimize(fun, x0, **kwargs):
        seen["fun"] = fun
        return SimpleNamespace(x=np.asarray(x0, dtype=float))

    monkeypatch.setattr(transcal_module, "optimize", SimpleNamespace(minimize=minimize))
    return seen


def transcal_problem(seed=5):
    rng = np.random.default_rng(seed)
    n = 300
    weights = rng.lognormal(0.0, 0.6, (n, 1))
    # errors more frequent where the weights are large: both control variates matter
    error = (rng.random((n, 1)) < 0.15 + 0.25 * (weights > 1.2)).astype(np.float32)
    target_logits = rng.normal(0, 2.0, (200, 2))
    return weights, error, target_logits


@pytest.mark.parametrize("temperature, lam", [(1.0, 0.1), (1.7, 0.5), (3.0, 1.0), (1.2, 0.25)])
def test_transcal_objective_is_the_control_variate_risk(captured_objective, temperature, lam):
    weights, error, target_logits = transcal_problem()
    source_confidence = 0.83
    transcal_temperature(target_logits, weights, error, source_confidence)
    objective = captured_objective["fun"]
    confidence = np.mean(np.max(softmax(target_logits / temperature), axis=1))
    risk = transcal_risk_oracle(weights[:, 0], error[:, 0].astype(float), source_confidence, lam)
    expected = abs(confidence - (1.0 - risk))
    # REF keeps the correctness in float32 (its variance and mean too): agreement to ~1e-7
    assert objective(np.array([temperature, lam])) == pytest.approx(expected, rel=1e-5, abs=1e-9)


def test_transcal_objective_without_the_variance_term_is_the_weighted_error(captured_objective):
    weights, error, target_logits = transcal_problem(seed=6)
    transcal_temperature(target_logits, weights, error, 0.8, variance_term=False)
    confidence = np.mean(np.max(softmax(target_logits / 2.5), axis=1))
    risk = np.mean(weights[:, 0] ** 0.7 * error[:, 0])
    assert captured_objective["fun"](np.array([2.5, 0.7])) == pytest.approx(
        abs(confidence - (1 - risk)), rel=1e-9
    )


def test_transcal_never_sharpens_the_target_posteriors():
    """TransCal searches T >= 1 only. With no source error the estimated target accuracy is 1, so
    the objective |confidence - 1| keeps falling as T falls: the search must stop at the bound,
    T = 1 (and a search allowed below 1 goes there)."""
    weights, _, target_logits = transcal_problem(seed=7)
    error = np.zeros((len(weights), 1), dtype=np.float32)
    found = transcal_temperature(target_logits, weights, error, 0.9, variance_term=False)
    assert found == pytest.approx(1.0, abs=1e-9)
    objective_at = [
        abs(np.mean(np.max(softmax(target_logits / t), axis=1)) - 1.0) for t in (1.0, 0.5)
    ]
    assert objective_at[1] < objective_at[0]  # below 1 would fit better: the bound is binding


# ------------------------------------------------------------------------------------------------
# CPCS and Head2Tail


def test_cpcs_temperature_minimises_the_importance_weighted_brier_score():
    # items with a positive score are calibrated at T = 1, those with a negative score at T = 3:
    # weights that stress one group pull the weighted-Brier optimum towards that group's T
    rng = np.random.default_rng(7)
    n = 4000
    score = rng.normal(0, 3, n)
    true_t = np.where(score > 0, 1.0, 3.0)
    labels = (rng.random(n) < 1 / (1 + np.exp(-score / true_t))).astype(int)
    logits = np.column_stack([np.zeros(n), score])
    weights = np.where(score > 0, 4.0, 0.25)

    def weighted_brier(t, w):
        z = logits.astype(np.float32).astype(float)
        brier = np.sum((softmax(z / t) - np.eye(2)[labels]) ** 2, axis=1)
        return np.mean(brier * w)

    expected = optimize.minimize_scalar(
        weighted_brier, bounds=(0.05, 50), args=(weights,), method="bounded"
    ).x
    unweighted = optimize.minimize_scalar(
        weighted_brier, bounds=(0.05, 50), args=(np.ones(n),), method="bounded"
    ).x
    assert cpcs_temperature(logits, labels, weights) == pytest.approx(expected, rel=1e-3)
    assert unweighted - expected > 0.3  # the weights matter on this problem


def test_head2tail_reweights_only_the_tail_class_by_the_gaussian_ratio():
    rng = np.random.default_rng(8)
    train_labels = np.repeat([0, 1], [300, 100])
    train = rng.normal(0, 1, (400, 2)) + 1.5 * train_labels[:, None]
    labels = np.array([0, 0, 1, 1, 1])
    features = np.array([[0.0, 0.0], [2.0, 2.0], [1.5, 1.5], [0.3, 0.2], [5.0, -3.0]])
    weights = head2tail_weights(train, train_labels, features, labels, alpha=0.9)
    assert weights[:2].tolist() == [1.0, 1.0]  # the head class keeps unit weights
    # the ratio N(0.1 m0 + 0.9 m1, (0.1 s0 + 0.9 s1)^2) / N(m1, s1^2), clipped to [0.3, 5]
    m0, m1 = train[train_labels == 0].mean(0), train[train_labels == 1].mean(0)
    s0, s1 = train[train_labels == 0].std(0), train[train_labels == 1].std(0)
    m, s = 0.1 * m0 + 0.9 * m1, 0.1 * s0 + 0.9 * s1

    def log_density(x, mean, std):
        return float(np.sum(-0.5 * np.log(2 * np.pi * std**2) - (x - mean) ** 2 / (2 * std**2)))

    ratios = [np.exp(log_density(x, m, s) - log_density(x, m1, s1)) for x in features[2:]]
    np.testing.assert_allclose(weights[2:], np.clip(ratios, 0.3, 5.0), rtol=1e-10)
    assert len({round(w, 6) for w in weights[2:]}) == 3  # the three tail items differ


# ------------------------------------------------------------------------------------------------
# LasCal


def test_lascal_reads_a_tie_as_class_zero_like_numpys_argmax():
    rng = np.random.default_rng(9)
    scores = np.round(rng.uniform(0, 1, 120), 1)  # many exact 0.5 ties
    scores[:10] = 0.5
    z_source = np.column_stack([1 - scores, scores])
    y_source = (rng.random(120) < scores).astype(int)
    y_source[:5] = 1  # ties with label 1: right only if a tie is read as class 1
    target = np.round(rng.uniform(0, 1, 80), 1)
    target[:8] = 0.5
    z_target = np.column_stack([1 - target, target])
    fast = lascal_module.lascal_losses(z_source, y_source, z_target)
    loop = lascal_module.lascal_losses(z_source, y_source, z_target, estimator="loop")
    np.testing.assert_allclose(fast, loop, rtol=1e-12)
