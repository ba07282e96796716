"""The field's accuracy predictors (docs/methods.md §6.3) against literal implementations of their
papers' formulas on worked examples: AC (mean max posterior), AC after temperature scaling, DoE
(difference of normalised entropies), Nuclear Norm (Deng et al. 2023's normalised nuclear norm and
its regression), MaNo (Xie et al. 2024's criterion, Taylor normalisation and L_p norm), COT (Lu et
al. 2023's transport cost, against SciPy's assignment solver and the two-class sorting solution) and
CBPE (isotonic expected accuracy of the classifier's own predictions)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment, minimize_scalar
from sklearn.isotonic import IsotonicRegression

from tests.calibration_settings import make_setting
from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.base import fresh_context
from unishift.methods.cap.cot import cot_cost
from unishift.methods.cap.mano import mano_score
from unishift.methods.cap.nuclear_norm import nuclear_norm_score
from unishift.methods.registry import get_method
from unishift.protocols.sampling import npp_indices, upp_indices


def _predict(name, setting, sample, overrides=None, shift="label"):
    spec = get_method("cap", name, shift)
    method = spec.build(shift, setting.n_classes, overrides).fit(setting)
    return method.predict_accuracy(sample, fresh_context(setting)), method


def _toy(posteriors, labels):
    data = LabelledSet(np.asarray(posteriors, dtype=float), np.asarray(labels))
    return Setting(data, data, "label", "toy")


WORKED = np.array([[0.9, 0.1], [0.4, 0.6], [0.5, 0.5], [0.2, 0.8]])


def test_average_confidence_on_a_worked_example():
    setting = _toy(WORKED, [0, 1, 0, 0])
    value, _ = _predict("AC", setting, Sample(WORKED))
    assert value == pytest.approx((0.9 + 0.6 + 0.5 + 0.8) / 4, abs=1e-15)


def test_average_confidence_after_temperature_scaling_uses_the_nll_temperature():
    setting, _, draw = make_setting(seed=2, separation=1.5, logits=False)
    sample, _ = draw(150, 0.4)
    value, _ = _predict("AC_TS", setting, sample)
    logs = np.log(setting.validation.posteriors)
    labels = setting.validation.labels

    def nll(temperature):
        z = logs / temperature
        z = z - z.max(axis=1, keepdims=True)
        return -np.mean(z[np.arange(len(labels)), labels] - np.log(np.exp(z).sum(axis=1)))

    temperature = minimize_scalar(
        nll, bounds=(0.05, 20), method="bounded", options={"xatol": 1e-9}
    ).x
    z = np.log(sample.posteriors) / temperature
    scaled = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    assert value == pytest.approx(scaled.max(axis=1).mean(), abs=1e-4)
    assert abs(value - sample.posteriors.max(axis=1).mean()) > 1e-3  # the scaling matters here


def test_doe_on_a_worked_example():
    validation = np.array([[0.9, 0.1], [0.3, 0.7]])
    setting = _toy(validation, [0, 0])  # validation accuracy 1/2
    test = np.array([[0.5, 0.5], [1.0, 0.0]])
    value, _ = _predict("DoE", setting, Sample(test))

    def h(p):
        return -sum(x * math.log(x) for x in p if x > 0) / math.log(2)

    val_entropy = (h([0.9, 0.1]) + h([0.3, 0.7])) / 2
    test_entropy = (h([0.5, 0.5]) + h([1.0, 0.0])) / 2
    assert value == pytest.approx(0.5 - (test_entropy - val_entropy), abs=1e-12)


def test_nuclear_norm_score_closed_forms():
    # balanced one-hot predictions: k singular values sqrt(n/k), score 1; uniform rows: 1/k
    onehot = np.eye(3)[np.arange(12) % 3]
    assert nuclear_norm_score(onehot) == pytest.approx(1.0, abs=1e-12)
    assert nuclear_norm_score(np.full((12, 3), 1 / 3)) == pytest.approx(1 / 3, abs=1e-12)
    # all mass on one class (confident, not dispersed): sqrt(n) / sqrt(n k)
    assert nuclear_norm_score(np.eye(3)[np.zeros(12, int)]) == pytest.approx(1 / math.sqrt(3))
    rng = np.random.default_rng(0)
    posteriors = rng.dirichlet(np.ones(4), size=7)
    eigenvalues = np.linalg.eigvalsh(posteriors.T @ posteriors)
    literal = np.sqrt(np.clip(eigenvalues, 0, None)).sum() / math.sqrt(7 * 4)
    assert nuclear_norm_score(posteriors) == pytest.approx(literal, abs=1e-12)


@pytest.mark.parametrize("shift, draw", [("label", "upp"), ("covariate", "npp")])
def test_nuclear_norm_regresses_accuracy_on_the_validation_resamples(shift, draw):
    setting, _, sampler = make_setting(seed=5, n_val=400, separation=1.0, logits=False)
    sample, _ = sampler(250, 0.8)
    value, method = _predict("NuclearNorm", setting, sample, {"repeats": 30}, shift=shift)
    validation = setting.validation
    if draw == "upp":
        indices = upp_indices(validation.labels, 250, 30, 0, n_classes=2)
    else:
        indices = npp_indices(len(validation), 250, 30, 0)
    scores = [nuclear_norm_score(validation.posteriors[i]) for i in indices]
    correct = validation.predictions == validation.labels
    slope, intercept = np.polyfit(scores, correct[indices].mean(axis=1), 1)
    expected = np.clip(intercept + slope * nuclear_norm_score(sample.posteriors), 0, 1)
    assert value == pytest.approx(expected, abs=1e-9)
    assert method.protocol == draw


def _literal_mano(logits, threshold, p):
    n, k = len(logits), len(logits[0])
    criterion = 0.0
    for row in logits:
        log_norm = math.log(sum(math.exp(v) for v in row))
        criterion += sum(-(v - log_norm) / k for v in row) / n
    rows = []
    for row in logits:
        if criterion > threshold:
            total = sum(math.exp(v) for v in row)
            rows.append([math.exp(v) / total for v in row])
        else:
            taylor = [1 + v + v * v / 2 for v in row]
            rows.append([t / sum(taylor) for t in taylor])
    return sum(abs(x) ** p for r in rows for x in r) ** (1 / p) / (n * k) ** (1 / p)


def test_mano_score_on_worked_examples_of_both_normalisations():
    logits = [[2.0, -1.0, 0.5], [0.1, 0.3, -0.2], [-3.0, 1.0, 4.0], [0.0, 0.0, 1.0]]
    # the criterion here is about 1.9: below the default threshold 5 (Taylor), above 1 (softmax)
    assert mano_score(np.array(logits)) == pytest.approx(_literal_mano(logits, 5.0, 4), abs=1e-12)
    softmax_branch = mano_score(np.array(logits), threshold=1.0)
    assert softmax_branch == pytest.approx(_literal_mano(logits, 1.0, 4), abs=1e-12)
    assert softmax_branch != pytest.approx(mano_score(np.array(logits)))
    assert mano_score(np.array(logits), norm_order=2) == pytest.approx(
        _literal_mano(logits, 5.0, 2), abs=1e-12
    )


def test_mano_takes_the_models_logits_when_the_data_carry_them():
    setting, _, draw = make_setting(seed=6, logits=True)
    sample, _ = draw(250, 0.5)
    _, method = _predict("MaNo", setting, sample, {"repeats": 10})
    assert method.score(sample.posteriors, sample.logits) == pytest.approx(
        mano_score(sample.logits)
    )
    logs = np.log(sample.posteriors)
    assert method.score(sample.posteriors, None) == pytest.approx(mano_score(logs))
    # two classes: the paper's Taylor step keeps the rows informative (the authors' code, which
    # subtracts each row's minimum first, makes them one-hot: a constant score 2^(-1/4))
    assert mano_score(sample.logits) == pytest.approx(_literal_mano(sample.logits.tolist(), 5, 4))
    assert abs(mano_score(sample.logits) - 2**-0.25) > 1e-3


def _cot_by_assignment(posteriors, counts):
    columns = np.repeat(np.arange(len(counts)), counts)
    cost = 1.0 - posteriors[:, columns]
    rows, cols = linear_sum_assignment(cost)
    return cost[rows, cols].sum() / len(posteriors)


def test_cot_equals_the_assignment_solution_for_integer_masses():
    rng = np.random.default_rng(3)
    posteriors = rng.dirichlet([0.6, 0.6, 0.6], size=12)
    counts = np.array([6, 4, 2])
    cost = cot_cost(posteriors, counts / 12)
    assert cost == pytest.approx(_cot_by_assignment(posteriors, counts), abs=1e-9)
    # brute force over the labellings with those counts, on a smaller case
    small, small_counts = posteriors[:6], np.array([3, 2, 1])
    best = min(
        sum(1 - small[i, y] for i, y in enumerate(perm)) / 6
        for perm in set(itertools.permutations(np.repeat(np.arange(3), small_counts)))
    )
    assert cot_cost(small, small_counts / 6) == pytest.approx(best, abs=1e-9)


def test_cot_in_two_classes_sorts_by_p1_and_matches_ac_when_the_counts_agree():
    p1 = np.array([0.95, 0.7, 0.6, 0.45, 0.3, 0.1, 0.05, 0.52])
    posteriors = np.column_stack([1 - p1, p1])
    # validation 3/8 positives: the three highest p_1 go to class 1
    validation_labels = np.array([1, 1, 1, 0, 0, 0, 0, 0])
    setting = _toy(posteriors, validation_labels)
    value, _ = _predict("COT", setting, Sample(posteriors))
    top = np.sort(p1)[::-1]
    expected_cost = (np.sum(1 - top[:3]) + np.sum(top[3:])) / 8
    assert value == pytest.approx(1 - expected_cost, abs=1e-9)
    # four predicted positives against three: COT is below AC (the pseudo-label shift it corrects)
    assert value < posteriors.max(axis=1).mean() - 1e-3
    balanced = _toy(posteriors, np.array([1, 1, 1, 1, 0, 0, 0, 0]))
    value, _ = _predict("COT", balanced, Sample(posteriors))
    assert value == pytest.approx(posteriors.max(axis=1).mean(), abs=1e-9)


def test_cbpe_is_the_isotonic_expected_accuracy_of_the_classifiers_own_predictions():
    # validation items with p_1 in (0.5, 0.65) are mostly negatives: isotonic maps them below 0.5,
    # but the classifier still predicts 1 there, and CBPE scores that prediction
    p1 = np.array([0.05, 0.1, 0.2, 0.3, 0.55, 0.58, 0.6, 0.62, 0.8, 0.9, 0.95, 0.99])
    labels = np.array([0, 0, 0, 1, 0, 0, 1, 0, 1, 1, 1, 1])
    setting = _toy(np.column_stack([1 - p1, p1]), labels)
    test = np.array([0.57, 0.61, 0.85, 0.15, 0.3])
    value, _ = _predict("CBPE", setting, Sample(np.column_stack([1 - test, test])))
    calibrated = IsotonicRegression(out_of_bounds="clip").fit(p1, labels).predict(test)
    predicted_one = test > 0.5
    expected = np.mean(np.where(predicted_one, calibrated, 1 - calibrated))
    assert value == pytest.approx(expected, abs=1e-12)
    assert value != pytest.approx(np.mean(np.maximum(calibrated, 1 - calibrated)))
