"""The six reductions of the paper (its section 4; docs/multiclass.md) proven on the project's own adapters, for two
classes (the paper's lemmas) and for k classes (docs/multiclass.md §2).

The oracles below read the true labels of whatever items they are given: in these tests the first
feature column of every item is its label. Wrapped in the production adapters (the same classes the
tables use, with ``binning="level_sets"`` where a lemma needs the exact score classes [x]_h), they must
return exactly the true prevalence, the true accuracy, or a level-set calibrated map, on arbitrary
finite samples, including empty and single-class prediction partitions. Biased oracles are the negative
controls: their error must come out exactly as the lemma's algebra predicts.

For k classes the adaptations are fed the same kind of oracles on data where their assumption holds
(a quantifier answering the prevalence vector, a calibrator the class distribution of each level set):
each must return exactly the true prevalence vector, the true accuracy, or a calibrated output, and
a biased oracle must move it by the amount the algebra predicts.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.k_class_problems import replicated
from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.evaluation.metrics import (
    accuracy,
    ece_classwise,
    ece_positive_class,
    ece_top_label,
    quantification_ae,
)
from unishift.methods.adapt.to_calibration import (
    CAPToCalibration,
    PositiveCAPToCalibration,
    PositiveQuantificationToCalibration,
    QuantificationToCalibration,
)
from unishift.methods.adapt.to_cap import CalibrationToCAP, QuantificationToCAP
from unishift.methods.adapt.to_quantification import (
    CalibrationToQuantification,
    CAPToQuantification,
)
from unishift.methods.base import (
    AccuracyPredictor,
    Calibrator,
    Quantifier,
    as_posteriors,
    fresh_context,
)

# ---------------------------------------------------------------------------------------------------
# test-only oracles


def labels_of(items) -> np.ndarray:
    return np.asarray(items.features[:, 0]).astype(int)


class Oracle:
    """An oracle learns nothing; ``bias`` moves its answer (the negative controls)."""

    def __init__(self, bias: float = 0.0):
        self.bias = bias

    def fit(self, setting):
        return self


class OracleQuantifier(Oracle, Quantifier):
    """ρ*: the fraction of positives of the given items (plus ``bias`` for negative controls), as
    the prevalence vector (1 - p, p)."""

    def quantify(self, sample, context):
        positive = float(labels_of(sample).mean()) + self.bias
        return np.array([1.0 - positive, positive])


class OracleCAP(Oracle, AccuracyPredictor):
    """α*: the accuracy of the crisp (argmax) predictions on the given items (plus ``bias``), for
    any number of classes."""

    def predict_accuracy(self, sample, context):
        return float(np.mean(sample.predictions == labels_of(sample))) + self.bias


class OracleCalibrator(Oracle, Calibrator):
    """ζ*: a level-set calibrated output on the given items (plus ``bias``).

    ``rule``: ``level_sets`` (Lemma 3's map: positive rate of each exact score class), ``bins10`` (REF's
    oracle: 10 equal-width bins spanning the scores' range, open outer edges) or ``constant`` (the
    coarsest calibrated output, the positive rate of all items).
    """

    def __init__(self, rule: str = "level_sets", bias: float = 0.0):
        super().__init__(bias)
        self.rule = rule

    def _cells(self, scores):
        if self.rule == "constant":
            return np.zeros(len(scores), dtype=int)
        if self.rule == "level_sets":
            return np.unique(scores, return_inverse=True)[1]
        inner_edges = np.linspace(scores.min(), scores.max(), 11)[1:-1]
        return np.digitize(scores, inner_edges)

    def calibrate(self, sample, context):
        labels = labels_of(sample)
        cells = self._cells(sample.posteriors[:, 1])
        positive = np.empty(len(labels))
        for cell in np.unique(cells):
            positive[cells == cell] = labels[cells == cell].mean()
        return as_posteriors(positive + self.bias)


CALIBRATOR_RULES = ("level_sets", "bins10", "constant")

# ---------------------------------------------------------------------------------------------------
# random finite data sets: scores, labels (carried as the first feature) and crisp predictions

KNN_GRID = np.round(np.linspace(0.0, 1.0, 11), 10)


def make_items(rng: np.random.Generator, n: int, scores: str, labels: str) -> LabelledSet:
    if scores == "continuous":
        s = rng.random(n)
    elif scores == "knn_grid":  # many ties, exact 0, 0.5 and 1 (0.5 is predicted negative)
        s = rng.choice(KNN_GRID, size=n)
    elif scores == "constant":
        s = np.full(n, rng.choice(KNN_GRID))
    elif scores == "all_positive":
        s = 0.5 + 0.5 * rng.random(n) + 1e-9
    else:  # all predicted negative, 0.5 included
        s = rng.choice(KNN_GRID[:6], size=n)
    s = np.clip(s, 0.0, 1.0)
    if labels == "score_dependent":
        y = (rng.random(n) < s).astype(int)
    else:
        y = (rng.random(n) < float(labels)).astype(int)
    return LabelledSet(as_posteriors(s), y, features=y.reshape(-1, 1).astype(float))


datasets = st.builds(
    lambda seed, n, scores, labels: make_items(np.random.default_rng(seed), n, scores, labels),
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([1, 2, 3, 10, 250]),
    scores=st.sampled_from(["continuous", "knn_grid", "constant", "all_positive", "all_negative"]),
    labels=st.sampled_from(["0", "0.02", "0.5", "0.98", "1", "score_dependent"]),
)


def as_sample(items: LabelledSet) -> Sample:
    return Sample(items.posteriors, items.features)


def fitted(method, validation: LabelledSet):
    """Fit on a validation set that may itself have empty or single-class prediction partitions."""
    setting = Setting(validation, validation, "label", key="oracle")
    return method.fit(setting), fresh_context(setting, 0)


def true_accuracy(items) -> float:
    return float(np.mean(items.predictions == items.labels))


def split_weight(items) -> float:
    """(n+ - n-)/n: how a constant bias on both parts moves the Lemma-2/4/5 combinations."""
    predicted = items.predictions
    return float(np.sum(predicted == 1) - np.sum(predicted == 0)) / len(predicted)


def assert_level_set_calibrated(calibrated: np.ndarray, labels: np.ndarray) -> None:
    positive = calibrated[:, 1]
    for value in np.unique(positive):
        members = positive == value
        assert labels[members].mean() == pytest.approx(value, rel=1e-12, abs=1e-12)
    assert positive.mean() == pytest.approx(labels.mean(), rel=1e-12, abs=1e-12)
    for n_bins in (15, 7, 2, 100):
        assert ece_top_label(calibrated, labels, n_bins) == pytest.approx(0.0, abs=1e-12)
        assert ece_positive_class(calibrated, labels, n_bins) == pytest.approx(0.0, abs=1e-12)


def assert_score_class_rates(calibrated: np.ndarray, items: LabelledSet) -> None:
    """The lemmas' exact construction: every item gets the positive rate of its score class [x]_h
    (a coarser calibrated map, e.g. the constant one, would pass the calibration checks alone)."""
    scores = items.posteriors[:, 1]
    for value in np.unique(scores):
        members = scores == value
        rate = items.labels[members].mean()
        assert calibrated[members, 1] == pytest.approx(np.full(members.sum(), rate), abs=1e-12)


ORACLE_SETTINGS = settings(max_examples=60, deadline=None)

# ---------------------------------------------------------------------------------------------------
# Lemma 1: ζ* ⇒ ρ* (ζ2ρ)


@ORACLE_SETTINGS
@given(test=datasets, validation=datasets, rule=st.sampled_from(CALIBRATOR_RULES))
def test_lemma1_calibration_to_quantification_is_exact(test, validation, rule):
    method, context = fitted(
        CalibrationToQuantification(OracleCalibrator, {"rule": rule}), validation
    )
    assert method.quantify(as_sample(test), context) == pytest.approx(test.prevalence, abs=1e-12)


# ---------------------------------------------------------------------------------------------------
# Lemma 2: ζ* ⇒ α* (ζ2α), each prediction partition calibrated separately


@ORACLE_SETTINGS
@given(test=datasets, validation=datasets, rule=st.sampled_from(CALIBRATOR_RULES))
def test_lemma2_calibration_to_cap_is_exact(test, validation, rule):
    method, context = fitted(CalibrationToCAP(OracleCalibrator, {"rule": rule}), validation)
    estimate = method.predict_accuracy(as_sample(test), context)
    assert estimate == pytest.approx(true_accuracy(test), abs=1e-12)


def test_lemma2_needs_separate_calibration_of_the_parts():
    """Negative control: one calibrated map for all of D whose level set mixes D+ and D- is not exact."""
    scores = np.array([0.2, 0.4, 0.6, 0.8])
    labels = np.array([1, 0, 1, 1])
    items = LabelledSet(as_posteriors(scores), labels, features=labels.reshape(-1, 1).astype(float))
    calibrated = OracleCalibrator("constant").calibrate(as_sample(items), None)[:, 1]
    predicted = items.predictions
    joint = (calibrated[predicted == 1].sum() + (1 - calibrated[predicted == 0]).sum()) / 4
    assert joint == pytest.approx(0.5)  # v = 3/4 everywhere: (2 * 3/4 + 2 * 1/4) / 4
    assert true_accuracy(items) == pytest.approx(0.75)
    method, context = fitted(CalibrationToCAP(OracleCalibrator, {"rule": "constant"}), items)
    assert method.predict_accuracy(as_sample(items), context) == pytest.approx(0.75)


# ---------------------------------------------------------------------------------------------------
# Lemma 3: ρ* ⇒ ζ* (ρ2ζ on the exact score classes)


@ORACLE_SETTINGS
@given(test=datasets, validation=datasets)
def test_lemma3_quantification_to_calibration_is_level_set_calibrated(test, validation):
    method, context = fitted(
        PositiveQuantificationToCalibration(OracleQuantifier, binning="level_sets"), validation
    )
    calibrated = method.calibrate(as_sample(test), context)
    assert_level_set_calibrated(calibrated, test.labels)
    assert_score_class_rates(calibrated, test)


# ---------------------------------------------------------------------------------------------------
# Lemma 4: ρ* ⇒ α* (ρ2α), both directly and as Lemma 3 composed with Lemma 2


@ORACLE_SETTINGS
@given(test=datasets, validation=datasets)
def test_lemma4_quantification_to_cap_is_exact(test, validation):
    direct, context = fitted(QuantificationToCAP(OracleQuantifier), validation)
    assert direct.predict_accuracy(as_sample(test), context) == pytest.approx(
        true_accuracy(test), abs=1e-12
    )
    lemma3 = PositiveQuantificationToCalibration(OracleQuantifier, binning="level_sets")
    composed, context = fitted(CalibrationToCAP(lemma3), validation)
    assert composed.predict_accuracy(as_sample(test), context) == pytest.approx(
        true_accuracy(test), abs=1e-12
    )


# ---------------------------------------------------------------------------------------------------
# Lemma 5: α* ⇒ ρ* (α2ρ), empty partitions included


@ORACLE_SETTINGS
@given(test=datasets, validation=datasets)
def test_lemma5_cap_to_quantification_is_exact(test, validation):
    method, context = fitted(CAPToQuantification(OracleCAP), validation)
    assert method.quantify(as_sample(test), context) == pytest.approx(test.prevalence, abs=1e-12)


@pytest.mark.parametrize("side", [0.2, 0.9])
def test_lemma5_with_an_empty_partition(side):
    scores = np.full(5, side)
    labels = np.array([1, 0, 0, 1, 1])
    items = LabelledSet(as_posteriors(scores), labels, features=labels.reshape(-1, 1).astype(float))
    method, context = fitted(CAPToQuantification(OracleCAP), items)
    assert method.quantify(as_sample(items), context)[1] == pytest.approx(0.6, abs=1e-15)


# ---------------------------------------------------------------------------------------------------
# Lemma 6: α* ⇒ ζ* (α2ζ on the exact score classes), and as Lemma 5 composed with Lemma 3


@ORACLE_SETTINGS
@given(test=datasets, validation=datasets)
def test_lemma6_cap_to_calibration_is_level_set_calibrated(test, validation):
    method, context = fitted(PositiveCAPToCalibration(OracleCAP, binning="level_sets"), validation)
    calibrated = method.calibrate(as_sample(test), context)
    assert_level_set_calibrated(calibrated, test.labels)
    assert_score_class_rates(calibrated, test)
    composed, context = fitted(
        PositiveQuantificationToCalibration(CAPToQuantification(OracleCAP), binning="level_sets"),
        validation,
    )
    calibrated = composed.calibrate(as_sample(test), context)
    assert_level_set_calibrated(calibrated, test.labels)
    assert_score_class_rates(calibrated, test)


# ---------------------------------------------------------------------------------------------------
# negative controls: a biased oracle moves each reduction by exactly the predicted amount

BIASES = st.sampled_from([0.05, -0.1, 0.25])


def _assert_biased(estimate, truth, predicted_shift):
    """``estimate`` and ``truth``: numbers, or prevalence vectors compared at the positive class."""
    estimate, truth = (float(np.asarray(v).reshape(-1)[-1]) for v in (estimate, truth))
    assert estimate == pytest.approx(truth + predicted_shift, abs=1e-12)
    if abs(predicted_shift) > 1e-9:
        assert estimate != pytest.approx(truth, abs=1e-9)


@ORACLE_SETTINGS
@given(test=datasets, validation=datasets, bias=BIASES)
def test_biased_oracles_give_the_predicted_error(test, validation, bias):
    sample, weight = as_sample(test), split_weight(test)

    method, context = fitted(
        CalibrationToQuantification(OracleCalibrator, {"bias": bias}), validation
    )
    _assert_biased(method.quantify(sample, context), test.prevalence, bias)

    method, context = fitted(CalibrationToCAP(OracleCalibrator, {"bias": bias}), validation)
    _assert_biased(method.predict_accuracy(sample, context), true_accuracy(test), bias * weight)

    method, context = fitted(QuantificationToCAP(OracleQuantifier, {"bias": bias}), validation)
    _assert_biased(method.predict_accuracy(sample, context), true_accuracy(test), bias * weight)

    method, context = fitted(CAPToQuantification(OracleCAP, {"bias": bias}), validation)
    _assert_biased(method.quantify(sample, context), test.prevalence, bias * weight)

    method, context = fitted(
        PositiveQuantificationToCalibration(OracleQuantifier, {"bias": bias}, binning="level_sets"),
        validation,
    )
    _assert_biased(method.calibrate(sample, context)[:, 1].mean(), test.prevalence, bias)

    method, context = fitted(
        PositiveCAPToCalibration(OracleCAP, {"bias": bias}, binning="level_sets"), validation
    )
    _assert_biased(method.calibrate(sample, context)[:, 1].mean(), test.prevalence, bias * weight)


# ---------------------------------------------------------------------------------------------------
# k classes: test-only oracles (labels_of and OracleCAP above serve any k)


def prevalence(labels, k) -> np.ndarray:
    return np.bincount(labels, minlength=k) / len(labels)


def towards_class_0(vector: np.ndarray, bias: float) -> np.ndarray:
    """(1 - bias) v + bias e_0: a biased answer that stays on the simplex."""
    target = np.zeros_like(vector)
    target[..., 0] = 1.0
    return (1.0 - bias) * vector + bias * target


class KClassOracleQuantifier(Oracle, Quantifier):
    """ρ* for k classes: the prevalence vector of the given items, pulled towards class 0 by
    ``bias``."""

    def quantify(self, sample, context):
        return towards_class_0(prevalence(labels_of(sample), sample.n_classes), self.bias)


class KClassOracleCalibrator(OracleCalibrator):
    """ζ* for k classes: ``level_sets`` gives each exact score class its class distribution
    (canonical); ``constant`` gives every item the class distribution of all items; ``bias`` pulls
    the output towards class 0."""

    def calibrate(self, sample, context):
        labels, k = labels_of(sample), sample.n_classes
        posteriors = np.asarray(sample.posteriors)
        out = np.empty(posteriors.shape)
        if self.rule == "constant":
            out[:] = prevalence(labels, k)
        else:
            _, inverse = np.unique(posteriors, axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            for cell in np.unique(inverse):
                out[inverse == cell] = prevalence(labels[inverse == cell], k)
        return towards_class_0(out, self.bias)


# ---------------------------------------------------------------------------------------------------
# k classes: synthetic data


def grid_posteriors(rng, n, k, resolution=4):
    """Posterior rows on a coarse grid of the simplex (many exact ties and shared level sets)."""
    counts = rng.multinomial(resolution, np.ones(k) / k, size=n)
    return counts / resolution


def labelled(posteriors, labels, k):
    features = labels.reshape(-1, 1).astype(float)
    return LabelledSet(posteriors, labels, features=features, n_classes=k)


def random_case(seed, n=200, k=3, grid=True, concentration=1.0):
    rng = np.random.default_rng(seed)
    if grid:
        posteriors = grid_posteriors(rng, n, k)
    else:
        posteriors = rng.dirichlet(np.full(k, concentration), size=n)
    labels = np.array(
        [
            rng.choice(k, p=np.clip(row, 0.05, None) / np.clip(row, 0.05, None).sum())
            for row in posteriors
        ]
    )
    return labelled(posteriors, labels, k)


def run(method, validation, test):
    method, context = fitted(method, validation)
    return method.apply(as_sample(test), context)


CASES = st.tuples(st.integers(0, 2**31 - 1), st.integers(2, 5), st.integers(1, 300), st.booleans())


# ---------------------------------------------------------------------------------------------------
# k classes: ζ2ρ (Lemma 1)


@settings(max_examples=40, deadline=None)
@given(case=CASES, rule=st.sampled_from(["level_sets", "constant"]))
def test_calibration_to_quantification_is_exact_with_a_perfect_calibrator(case, rule):
    seed, k, n, grid = case
    data = random_case(seed, n, k, grid)
    estimate = run(CalibrationToQuantification(KClassOracleCalibrator(rule)), data, data)
    np.testing.assert_allclose(estimate, prevalence(data.labels, k), atol=1e-12)


def test_calibration_to_quantification_inherits_the_calibrator_bias_exactly():
    data = random_case(1, 300, 4)
    truth = prevalence(data.labels, 4)
    estimate = run(CalibrationToQuantification(KClassOracleCalibrator(bias=0.1)), data, data)
    np.testing.assert_allclose(estimate, towards_class_0(truth, 0.1), atol=1e-12)
    assert quantification_ae(truth, estimate) > 0.01


# ---------------------------------------------------------------------------------------------------
# k classes: ζ2α (Lemma 2)


@settings(max_examples=40, deadline=None)
@given(case=CASES, rule=st.sampled_from(["level_sets", "constant"]))
def test_calibration_to_cap_is_exact_with_a_perfect_calibrator(case, rule):
    seed, k, n, grid = case
    data = random_case(seed, n, k, grid)
    estimate = run(CalibrationToCAP(KClassOracleCalibrator(rule)), data, data)
    assert estimate == pytest.approx(accuracy(data.posteriors, data.labels), abs=1e-12)


def test_calibration_to_cap_with_a_biased_calibrator_is_wrong():
    data = random_case(2, 300, 3)
    truth = accuracy(data.posteriors, data.labels)
    estimate = run(CalibrationToCAP(KClassOracleCalibrator(bias=0.2)), data, data)
    assert abs(estimate - truth) > 0.01


def test_one_calibration_of_the_whole_sample_is_not_enough_for_cap():
    """Negative control: Lemma 2 calibrates each predicted-class part separately. The constant map
    calibrated on the whole sample, read at each item's predicted class, gives sum_j n_j p_j / n,
    not the accuracy."""
    data = random_case(3, 300, 3, grid=False)
    calibrated = KClassOracleCalibrator("constant").calibrate(as_sample(data), None)
    predicted = data.predictions
    whole = calibrated[np.arange(len(data)), predicted].mean()
    truth = accuracy(data.posteriors, data.labels)
    assert abs(whole - truth) > 0.01


# ---------------------------------------------------------------------------------------------------
# k classes: ρ2ζ (Lemma 3): canonical calibration from a perfect quantifier


def assert_canonically_calibrated(output, labels, k):
    rows, inverse = np.unique(output, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    for cell, row in enumerate(rows):
        np.testing.assert_allclose(prevalence(labels[inverse == cell], k), row, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(case=CASES)
def test_quantification_to_calibration_level_sets_is_canonically_calibrated(case):
    seed, k, n, grid = case
    data = random_case(seed, n, k, grid)
    output = run(
        QuantificationToCalibration(KClassOracleQuantifier(), binning="level_sets"), data, data
    )
    assert_canonically_calibrated(output, data.labels, k)
    assert ece_top_label(output, data.labels) == 0.0
    assert ece_classwise(output, data.labels) == 0.0
    np.testing.assert_allclose(output.mean(axis=0), prevalence(data.labels, k), atol=1e-12)


def test_quantification_to_calibration_with_a_biased_quantifier_is_miscalibrated():
    data = random_case(4, 400, 3)
    output = run(
        QuantificationToCalibration(KClassOracleQuantifier(bias=0.2), binning="level_sets"),
        data,
        data,
    )
    assert ece_classwise(output, data.labels) > 0.5


# ---------------------------------------------------------------------------------------------------
# k classes: ρ2α (Lemma 4)


@settings(max_examples=40, deadline=None)
@given(case=CASES)
def test_quantification_to_cap_is_exact_with_a_perfect_quantifier(case):
    seed, k, n, grid = case
    data = random_case(seed, n, k, grid)
    estimate = run(QuantificationToCAP(KClassOracleQuantifier()), data, data)
    assert estimate == pytest.approx(accuracy(data.posteriors, data.labels), abs=1e-12)


def test_quantification_to_cap_with_a_biased_quantifier_is_wrong():
    data = random_case(5, 300, 4)
    truth = accuracy(data.posteriors, data.labels)
    assert abs(run(QuantificationToCAP(KClassOracleQuantifier(0.2)), data, data) - truth) > 0.01


# ---------------------------------------------------------------------------------------------------
# k classes: α2ρ (Lemma 5 and its k-class completions)


def resample_correct(data, rng, max_copies=4):
    """A test set that repeats each correctly classified validation item 0..max_copies times and
    keeps every error once: the accuracy of each predicted class changes, the composition of its
    errors does not."""
    correct = data.predictions == data.labels
    copies = np.where(correct, rng.integers(0, max_copies + 1, len(data)), 1)
    index = np.repeat(np.arange(len(data)), copies)
    return data.subset(index)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 5))
def test_cap_to_quantification_is_exact_when_errors_keep_their_validation_composition(seed, k):
    rng = np.random.default_rng(seed)
    validation = random_case(seed, 300, k, grid=False, concentration=2.0)
    test = resample_correct(validation, rng)
    if len(test) == 0:
        return
    estimate = run(CAPToQuantification(OracleCAP()), validation, test)
    np.testing.assert_allclose(estimate, prevalence(test.labels, k), atol=1e-12)


def error_composition_changed(validation, rng):
    """A test set that drops every error whose true class is 0 (the errors' composition changes)."""
    keep = (validation.predictions == validation.labels) | (validation.labels != 0)
    return validation.subset(keep)


def test_lemma_5_needs_no_assumption_for_two_classes_but_the_k_class_split_does():
    rng = np.random.default_rng(0)
    for k, exact in ((2, True), (3, False)):
        validation = random_case(7, 400, k, grid=False, concentration=2.0)
        test = error_composition_changed(validation, rng)
        estimate = run(CAPToQuantification(OracleCAP()), validation, test)
        error = quantification_ae(prevalence(test.labels, k), estimate)
        assert (error < 1e-12) == exact, (k, error)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_cap_to_quantification_recall_split_is_exact_under_label_shift(k):
    validation = random_case(8 + k, 500, k, grid=False, concentration=2.0)
    test = replicated(validation, np.arange(1, k + 1))
    truth = prevalence(test.labels, k)
    recall = run(CAPToQuantification(OracleCAP(), split="recall"), validation, test)
    np.testing.assert_allclose(recall, truth, atol=1e-12)
    if k > 2:  # the validation split assumes the errors' composition, which label shift changes
        split = run(CAPToQuantification(OracleCAP()), validation, test)
        assert quantification_ae(truth, split) > 1e-4


def test_cap_to_quantification_with_a_biased_cap_is_wrong_by_the_predicted_amount():
    validation = random_case(9, 300, 3, grid=False, concentration=2.0)
    method = CAPToQuantification(OracleCAP(bias=-0.1))
    estimate = run(method, validation, validation)
    # each part moves 0.1 of its mass from its own class to its errors' classes
    shares = np.bincount(validation.predictions, minlength=3) / len(validation)
    moved = sum(shares[j] * (np.eye(3)[j] - method.error_split_[:, j]) for j in range(3))
    truth = prevalence(validation.labels, 3)
    np.testing.assert_allclose(estimate, truth - 0.1 * moved, atol=1e-12)
    assert quantification_ae(truth, estimate) > 1e-3


# ---------------------------------------------------------------------------------------------------
# k classes: α2ζ (Lemma 6)


def predicted_label_gap(output, data) -> float:
    """max over level sets of |mean p~_{prediction of h} - accuracy|: 0 iff the output is calibrated
    for the event 'y = the classifier's prediction'."""
    predicted = data.predictions
    coordinate = output[np.arange(len(data)), predicted]
    _, inverse = np.unique(data.posteriors, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    gaps = [
        abs(
            coordinate[inverse == c].mean()
            - np.mean(predicted[inverse == c] == data.labels[inverse == c])
        )
        for c in np.unique(inverse)
    ]
    return max(gaps)


@settings(max_examples=40, deadline=None)
@given(case=CASES)
def test_cap_to_calibration_level_sets_is_calibrated_for_the_predicted_label(case):
    seed, k, n, grid = case
    data = random_case(seed, n, k, grid)
    output = run(CAPToCalibration(OracleCAP(), binning="level_sets"), data, data)
    assert predicted_label_gap(output, data) < 1e-12
    np.testing.assert_allclose(output.sum(axis=1), 1.0, atol=1e-12)


def test_cap_to_calibration_is_top_label_calibrated_when_cells_are_mostly_right():
    """With every level set's accuracy above 1/2 the predicted class stays on top, so the output is
    top-label calibrated (the notion α2ζ targets)."""
    rng = np.random.default_rng(11)
    posteriors = grid_posteriors(rng, 400, 4)
    predicted = np.argmax(posteriors, axis=1)
    labels = predicted.copy()
    _, inverse = np.unique(posteriors, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    for cell in np.unique(inverse):
        members = rng.permutation(np.flatnonzero(inverse == cell))
        wrong = members[: (len(members) - 1) // 2]  # fewer than half of each level set is wrong
        labels[wrong] = (predicted[wrong] + rng.integers(1, 4, len(wrong))) % 4
    data = labelled(posteriors, labels, 4)
    output = run(CAPToCalibration(OracleCAP(), binning="level_sets"), data, data)
    assert np.all(np.argmax(output, axis=1) == predicted)
    assert ece_top_label(output, labels) == 0.0


def test_cap_to_calibration_with_a_biased_cap_is_miscalibrated():
    data = random_case(12, 400, 3)
    output = run(CAPToCalibration(OracleCAP(bias=-0.15), binning="level_sets"), data, data)
    assert predicted_label_gap(output, data) > 0.1


# ---------------------------------------------------------------------------------------------------
# The isometric (practical) forms with perfect oracles: what they do and do not guarantee


def grid_cells_case(seed=13, n=3000, k=3, resolution=4):
    """Posteriors on a grid of the simplex without confidence 1 (it meets the (1, 1) anchor) or
    1/k (the (1/k, 1/k) anchor): every top-label cell holds one or two confidence values."""
    rng = np.random.default_rng(seed)
    posteriors = grid_posteriors(rng, n, k, resolution)
    confidence = posteriors.max(axis=1)
    posteriors = posteriors[(confidence < 1) & (confidence > 1 / k + 1e-9)]
    labels = rng.integers(0, k, len(posteriors))
    return labelled(posteriors, labels, k)


def cell_shares(data):
    """{(class, confidence): share of the class} for each (predicted class, confidence value)."""
    predicted = data.predictions
    confidence = data.posteriors[np.arange(len(data)), predicted]
    return (
        predicted,
        confidence,
        {
            (cls, value): np.mean(data.labels[(predicted == cls) & (confidence == value)] == cls)
            for cls in range(data.n_classes)
            for value in np.unique(confidence[predicted == cls])
        },
    )


def expected_top_label(data, bins, rate, at_centres):
    """The documented map, written out in the original coordinates: cells [e_b, e_b+1) of the
    confidence on [1/k, 1] (first edge lowered, last raised by 1e-5), one point per non-empty cell
    at its centre or mean confidence with ordinate ``rate(cls, mask)``, NaNs at empty cells' centres
    imputed by interpolation, anchors (1/k, 1/k) and (1, 1), no monotonicity, no smoothing."""
    k = data.n_classes
    predicted = data.predictions
    confidence = data.posteriors[np.arange(len(data)), predicted]
    edges = np.linspace(1 / k, 1, bins + 1)
    edges[0] -= 1e-5
    edges[-1] += 1e-5
    centres = (edges[:-1] + edges[1:]) / 2
    expected = np.empty(len(data))
    for cls in range(k):
        xs, ys = [1 / k], [1 / k]
        for b in range(bins):
            mask = (predicted == cls) & (confidence >= edges[b]) & (confidence < edges[b + 1])
            if mask.any():
                xs.append(centres[b] if at_centres else confidence[mask].mean())
                ys.append(rate(cls, mask))
            else:
                xs.append(centres[b])
                ys.append(np.nan)
        xs, ys = np.array(xs + [1.0]), np.array(ys + [1.0])
        known = ~np.isnan(ys)
        ys[~known] = np.interp(xs[~known], xs[known], ys[known])
        expected[predicted == cls] = np.interp(confidence[predicted == cls], xs, ys)
    return expected


CELL_CASES = [(3, 4, 3), (3, 5, 3), (2, 8, 2), (4, 6, 4)]  # (k, grid resolution, bins)


@pytest.mark.parametrize("k, resolution, bins", CELL_CASES)
@pytest.mark.parametrize("factory", [QuantificationToCalibration, CAPToCalibration])
def test_isometric_maps_follow_the_documented_cells_anchors_and_abscissae(
    factory, k, resolution, bins
):
    """Grid posteriors put confidences on interior bin edges (k=2: 0.75 with 2 bins) and below the
    first / above the last point, where the anchors matter."""
    data = grid_cells_case(seed=13 + k, k=k, resolution=resolution)
    inner = KClassOracleQuantifier() if factory is QuantificationToCalibration else OracleCAP()
    output = run(factory(inner, bins=bins, smooth=False, monotone="none"), data, data)
    predicted = data.predictions
    top = output[np.arange(len(data)), predicted]
    labels = data.labels

    def share(cls, mask):
        return np.mean(labels[mask] == cls)

    at_centres = factory is CAPToCalibration  # rho2zeta: bin_mean, alpha2zeta: bin centres
    np.testing.assert_allclose(
        top, expected_top_label(data, bins, share, at_centres), rtol=0, atol=1e-12
    )


def test_isometric_rho2zeta_cells_get_the_oracle_rates_without_post_processing():
    """Each cell holding one confidence value, the bin-mean map passes exactly through each cell's
    (confidence, true share) point."""
    data = grid_cells_case()
    method = QuantificationToCalibration(
        KClassOracleQuantifier(), bins=3, smooth=False, monotone="none"
    )
    output = run(method, data, data)
    predicted, confidence, shares = cell_shares(data)
    top = output[np.arange(len(data)), predicted]
    for (cls, value), share in shares.items():
        cell = (predicted == cls) & (confidence == value)
        np.testing.assert_allclose(top[cell], share, atol=1e-12)


@pytest.mark.parametrize("factory", [QuantificationToCalibration, CAPToCalibration])
@pytest.mark.parametrize("k", [2, 3, 6])
def test_isometric_adapters_return_row_stochastic_matrices(factory, k):
    data = random_case(14 + k, 300, k, grid=False, concentration=0.5)
    inner = KClassOracleQuantifier() if factory is QuantificationToCalibration else OracleCAP()
    output = run(factory(inner), data, data)
    assert output.shape == (300, k)
    assert np.all(output >= 0) and np.all(output <= 1)
    np.testing.assert_allclose(output.sum(axis=1), 1.0, atol=1e-12)


class ValidationPrevalence(Quantifier):
    """Answers every sample with the prevalence of the validation set it was fitted on."""

    assumption = "label"

    def fit(self, setting):
        self.prevalence_ = setting.validation.prevalence
        return self

    def quantify(self, sample, context):
        return self.prevalence_


@pytest.mark.parametrize("cell_fit", ["per_cell", "auto", "whole"])
def test_label_shift_inner_methods_are_fitted_per_cell(cell_fit):
    """A label-shift quantifier is consistent on a cell only when fitted on the validation items of
    the same cell: per_cell (and auto, for assumption='label') fits one per cell."""
    validation = grid_cells_case(seed=21)
    test = grid_cells_case(seed=22)
    method = QuantificationToCalibration(
        ValidationPrevalence, bins=3, smooth=False, monotone="none", cell_fit=cell_fit
    )
    output = run(method, validation, test)
    predicted, confidence, _ = cell_shares(test)
    _, _, validation_shares = cell_shares(validation)
    whole = validation.prevalence
    top = output[np.arange(len(test)), predicted]
    for cls in range(3):
        for value in np.unique(confidence[predicted == cls]):
            cell = (predicted == cls) & (confidence == value)
            expected = whole[cls] if cell_fit == "whole" else validation_shares[cls, value]
            np.testing.assert_allclose(top[cell], expected, atol=1e-12)


def test_a_class_never_predicted_on_validation_is_answered_by_the_whole_fit_and_recorded():
    validation = random_case(30, 300, 3, grid=False, concentration=2.0)
    keep = validation.predictions != 2  # the classifier never predicts class 2 on validation
    validation = validation.subset(keep)
    test = random_case(31, 200, 3, grid=False, concentration=2.0)
    method, context = fitted(CAPToQuantification(OracleCAP()), validation)
    assert method.empty_parts_ == [2] and method.whole_ is not None
    estimate = method.quantify(as_sample(test), context)
    assert any("no validation item is predicted 2" in reason for _, reason in context.notes)
    assert estimate.shape == (3,) and abs(estimate.sum() - 1) < 1e-12
    # a perfect inner method stays perfect on the part it answers for through the whole fit
    estimate = run(QuantificationToCAP(KClassOracleQuantifier()), validation, test)
    assert estimate == pytest.approx(accuracy(test.posteriors, test.labels), abs=1e-12)
