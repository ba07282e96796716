"""The field's calibrators (docs/methods.md §6.2) against their originals: Isotonic against
scikit-learn's CalibratedClassifierCV(method="isotonic") run on the same posteriors, histogram
binning against a literal loop over bins, beta calibration against its closed-form map with the
fitted (a, b, c) and against the authors' betacal package when installed (the ``oracles`` extra),
Dirichlet calibration against scikit-learn's logistic regression (k = 2 without regularisation,
where matrix scaling is a logistic regression on [ln p_0, ln p_1]) and against a literal loop over
its ODIR objective (zero gradient at the fit)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.calibration import CalibratedClassifierCV
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.base import fresh_context
from unishift.methods.registry import get_method


class _Given(ClassifierMixin, BaseEstimator):
    """A fitted k-class classifier whose inputs are its posteriors."""

    def __init__(self, k=2):
        self.k = k

    def fit(self, X=None, y=None):
        self.classes_ = np.arange(self.k)
        return self

    def predict_proba(self, X):
        return np.asarray(X)

    def predict(self, X):
        return np.argmax(np.asarray(X), axis=1)


def _setting(k, n=300, seed=0, skew=1.5):
    """Over-confident posteriors (logits scaled by ``skew``) of an imbalanced k-class problem."""
    rng = np.random.default_rng(seed)
    prior = np.linspace(1, 2, k)[::-1] / np.linspace(1, 2, k).sum()

    def labelled(m):
        labels = rng.choice(k, size=m, p=prior)
        logits = rng.normal(size=(m, k)) + 1.2 * np.eye(k)[labels]
        z = skew * logits
        posteriors = np.exp(z - z.max(axis=1, keepdims=True))
        return LabelledSet(posteriors / posteriors.sum(axis=1, keepdims=True), labels)

    setting = Setting(labelled(n), labelled(n), "label", f"toy{k}", seed=seed)
    test = labelled(200)
    return setting, Sample(test.posteriors)


def _calibrate(name, setting, sample, overrides=None):
    method = get_method("calibration", name).build("label", setting.n_classes, overrides)
    return method.fit(setting).calibrate(sample, fresh_context(setting)), method


@pytest.mark.parametrize("k", [2, 3, 4])
def test_isotonic_equals_scikit_learns_calibrated_classifier(k):
    setting, sample = _setting(k)
    ours, _ = _calibrate("Isotonic", setting, sample)
    validation = setting.validation
    everything = np.arange(len(validation))
    theirs = CalibratedClassifierCV(
        FrozenEstimator(_Given(k).fit()), method="isotonic", cv=[(everything, everything)]
    ).fit(validation.posteriors, validation.labels)
    np.testing.assert_allclose(ours, theirs.predict_proba(sample.posteriors), atol=1e-12, rtol=0)


def _literal_histogram_binning(val_scores, val_hits, test_scores, n_bins):
    edges = [i / n_bins for i in range(n_bins + 1)]
    out = []
    for score in test_scores:
        for b in range(n_bins):
            inside = edges[b] <= score < edges[b + 1] or (b == n_bins - 1 and score == 1.0)
            if inside:
                members = [
                    h
                    for s, h in zip(val_scores, val_hits)
                    if edges[b] <= s < edges[b + 1] or (b == n_bins - 1 and s == 1.0)
                ]
                out.append(np.mean(members) if members else (edges[b] + edges[b + 1]) / 2)
                break
    return np.array(out)


def test_histogram_binning_follows_the_literal_formula_at_the_bin_edges():
    # p_1 on the inner edges 0.5 and 0.2 belongs to the upper bin; 1.0 to the last; bin 0.3-0.4
    # is empty (its centre)
    val_p1 = np.array([0.0, 0.05, 0.2, 0.2, 0.25, 0.5, 0.5, 0.55, 0.6, 0.95, 1.0, 0.49])
    labels = np.array([0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 1, 0])
    test_p1 = np.array([0.2, 0.5, 0.35, 1.0, 0.0, 0.49, 0.61])
    setting = Setting(
        LabelledSet(np.column_stack([1 - val_p1, val_p1]), labels),
        LabelledSet(np.column_stack([1 - val_p1, val_p1]), labels),
        "label",
        "hb",
    )
    ours, _ = _calibrate("HB", setting, Sample(np.column_stack([1 - test_p1, test_p1])))
    expected = _literal_histogram_binning(val_p1, labels, test_p1, 10)
    np.testing.assert_allclose(ours[:, 1], expected, atol=1e-15)
    assert ours[1, 1] == 1.0  # 0.5 joins [0.5, 0.6) (all positives), not [0.4, 0.5) (2 of 3)
    assert ours[2, 1] == pytest.approx(0.35)  # the empty bin's centre


def test_histogram_binning_for_k_classes_is_one_vs_rest_renormalised():
    setting, sample = _setting(3)
    ours, _ = _calibrate("HB", setting, sample, {"n_bins": 5})
    validation = setting.validation
    columns = np.column_stack(
        [
            _literal_histogram_binning(
                validation.posteriors[:, c], validation.labels == c, sample.posteriors[:, c], 5
            )
            for c in range(3)
        ]
    )
    np.testing.assert_allclose(ours, columns / columns.sum(axis=1, keepdims=True), atol=1e-12)


def _beta_map(scores, a, b, c):
    """Kull et al. 2017, eq. (the abm family): 1 / (1 + 1 / (e^c s^a / (1 - s)^b))."""
    return 1.0 / (1.0 + 1.0 / (np.exp(c) * scores**a / (1.0 - scores) ** b))


def test_beta_calibration_is_the_three_parameter_beta_map():
    setting, sample = _setting(2, skew=2.5)
    ours, method = _calibrate("Beta", setting, sample)
    beta = method.maps_[1]
    assert beta.kept == [0, 1]  # both coefficients positive on this data
    (a, b), c = beta.regression.coef_[0], beta.regression.intercept_[0]
    assert a > 0 and b > 0 and not np.isclose(a, b)  # not the logistic (a = b) special case
    np.testing.assert_allclose(ours[:, 1], _beta_map(sample.posteriors[:, 1], a, b, c), atol=1e-12)
    # the fit is betacal's: an unpenalised-in-effect logistic regression on [ln p, -ln(1 - p)]
    p1 = setting.validation.posteriors[:, 1]
    reference = LogisticRegression(C=99999999999).fit(
        np.column_stack([np.log(p1), -np.log(1 - p1)]), setting.validation.labels
    )
    np.testing.assert_allclose([a, b, c], [*reference.coef_[0], reference.intercept_[0]])


def test_beta_calibration_drops_a_negative_coefficient_and_refits():
    # positives rarer at high scores: a < 0 on both features, betacal's rule keeps -ln(1 - p) only
    rng = np.random.default_rng(4)
    p1 = rng.uniform(0.01, 0.99, 400)
    labels = (rng.uniform(size=400) < 0.8 - 0.6 * p1).astype(int)
    data = LabelledSet(np.column_stack([1 - p1, p1]), labels)
    setting = Setting(data, data, "label", "beta-neg")
    test = np.array([0.1, 0.5, 0.9])
    ours, method = _calibrate("Beta", setting, Sample(np.column_stack([1 - test, test])))
    beta = method.maps_[1]
    assert len(beta.kept) == 1
    a, b = (
        (beta.regression.coef_[0][0], 0.0)
        if beta.kept == [0]
        else (0.0, beta.regression.coef_[0][0])
    )
    np.testing.assert_allclose(
        ours[:, 1], _beta_map(test, a, b, beta.regression.intercept_[0]), atol=1e-12
    )


def test_beta_calibration_equals_the_authors_betacal():
    betacal = pytest.importorskip("betacal", reason="the oracles extra (betacal) is not installed")
    for seed, skew in ((0, 2.5), (1, 0.6)):
        setting, sample = _setting(2, seed=seed, skew=skew)
        ours, _ = _calibrate("Beta", setting, sample)
        theirs = betacal.BetaCalibration(parameters="abm").fit(
            setting.validation.posteriors[:, 1], setting.validation.labels
        )
        np.testing.assert_allclose(ours[:, 1], theirs.predict(sample.posteriors[:, 1]), atol=1e-9)


def test_dirichlet_without_regularisation_is_logistic_regression_on_log_posteriors_for_k2():
    setting, sample = _setting(2, skew=2.0)
    ours, _ = _calibrate("Dirichlet", setting, sample, {"reg_lambda": 0.0, "reg_mu": 0.0})
    features = np.log(setting.validation.posteriors)
    reference = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10000).fit(
        features, setting.validation.labels
    )
    # two optimisers of one convex likelihood: equal to their tolerances, not to 1e-9
    np.testing.assert_allclose(ours, reference.predict_proba(np.log(sample.posteriors)), atol=1e-6)


def _literal_odir_loss(weights, bias, posteriors, labels, lam, mu):
    n, k = posteriors.shape
    total = 0.0
    for i in range(n):
        z = [
            sum(weights[j][m] * np.log(posteriors[i][m]) for m in range(k)) + bias[j]
            for j in range(k)
        ]
        total -= z[labels[i]] - np.log(sum(np.exp(v) for v in z))
    off = sum(weights[i][j] ** 2 for i in range(k) for j in range(k) if i != j)
    return total / n + lam / (k * (k - 1)) * off + mu / k * sum(v**2 for v in bias)


def test_dirichlet_odir_fit_is_a_stationary_point_of_the_literal_objective():
    setting, sample = _setting(3, n=60, skew=2.0)
    ours, method = _calibrate("Dirichlet", setting, sample, {"reg_lambda": 0.5, "reg_mu": 0.2})
    validation = setting.validation
    weights, bias = method.weights_, method.bias_

    def loss(w, b):
        return _literal_odir_loss(w, b, validation.posteriors, validation.labels, 0.5, 0.2)

    base = loss(weights, bias)
    step = 1e-6
    for i in range(3):
        for j in range(3):
            bumped = weights.copy()
            bumped[i, j] += step
            assert (loss(bumped, bias) - base) / step == pytest.approx(0.0, abs=1e-4)
        bumped_bias = bias.copy()
        bumped_bias[i] += step
        assert (loss(weights, bumped_bias) - base) / step == pytest.approx(0.0, abs=1e-4)
    # the identity start would not be stationary on over-confident posteriors
    assert abs(loss(np.eye(3), np.zeros(3)) - base) > 1e-3
    logits = np.log(sample.posteriors) @ weights.T + bias
    expected = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ours, expected, atol=1e-12)
    # the regularisation reaches the fit: a strong lambda shrinks the off-diagonal entries
    _, strong = _calibrate("Dirichlet", setting, sample, {"reg_lambda": 50.0, "reg_mu": 0.2})
    off = ~np.eye(3, dtype=bool)
    assert np.abs(strong.weights_[off]).sum() < 0.5 * np.abs(weights[off]).sum()
