"""The six reductions of the paper (§4, oracles.md) proven on the project's own adapters.

The oracles below read the true labels of whatever items they are given: in these tests the first
feature column of every item is its label. Wrapped in the production adapters (the same classes the
tables use, with ``binning="level_sets"`` where a lemma needs the exact score classes [x]_h), they must
return exactly the true prevalence, the true accuracy, or a level-set calibrated map, on arbitrary
finite samples, including empty and single-class prediction partitions. Biased oracles are the negative
controls: their error must come out exactly as the lemma's algebra predicts.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.adapt.to_calibration import (
    PositiveCAPToCalibration,
    PositiveQuantificationToCalibration,
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
from unishift.metrics import ece_positive_class, ece_top_label

# ---------------------------------------------------------------------------------------------------
# test-only oracles


def labels_of(items) -> np.ndarray:
    return np.asarray(items.features[:, 0]).astype(int)


class OracleQuantifier(Quantifier):
    """ρ*: the fraction of positives of the given items (plus ``bias`` for negative controls), as
    the prevalence vector (1 - p, p)."""

    def __init__(self, bias: float = 0.0):
        self.bias = bias

    def fit(self, setting):
        return self

    def quantify(self, sample, context):
        positive = float(labels_of(sample).mean()) + self.bias
        return np.array([1.0 - positive, positive])


class OracleCAP(AccuracyPredictor):
    """α*: the accuracy of the crisp predictions on the given items (plus ``bias``)."""

    def __init__(self, bias: float = 0.0):
        self.bias = bias

    def fit(self, setting):
        return self

    def predict_accuracy(self, sample, context):
        return float(np.mean(sample.predictions == labels_of(sample))) + self.bias


class OracleCalibrator(Calibrator):
    """ζ*: a level-set calibrated output on the given items (plus ``bias``).

    ``rule``: ``level_sets`` (Lemma 3's map: positive rate of each exact score class), ``bins10`` (REF's
    oracle: 10 equal-width bins spanning the scores' range, open outer edges) or ``constant`` (the
    coarsest calibrated output, the positive rate of all items).
    """

    def __init__(self, rule: str = "level_sets", bias: float = 0.0):
        self.rule = rule
        self.bias = bias

    def fit(self, setting):
        return self

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
