"""The six multiclass adaptations fed perfect and biased oracles (docs/multiclass.md §2).

As in tests/test_oracles.py, the oracles read the true label of each item from its first feature
column. Fed a perfect oracle on data where its assumption holds, each adaptation must return exactly
the true prevalence vector, the true accuracy, or a calibrated output; fed a biased oracle, it must
not, by the amount the algebra predicts.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.adapt.to_calibration import CAPToCalibration, QuantificationToCalibration
from unishift.methods.adapt.to_cap import CalibrationToCAP, QuantificationToCAP
from unishift.methods.adapt.to_quantification import (
    CalibrationToQuantification,
    CAPToQuantification,
)
from unishift.methods.base import AccuracyPredictor, Calibrator, Quantifier, fresh_context
from unishift.metrics import multiclass as mcm

# ---------------------------------------------------------------------------------------------------
# test-only oracles


def labels_of(items) -> np.ndarray:
    return np.asarray(items.features[:, 0]).astype(int)


def prevalence(labels, k) -> np.ndarray:
    return np.bincount(labels, minlength=k) / len(labels)


def towards_class_0(vector: np.ndarray, bias: float) -> np.ndarray:
    """(1 - bias) v + bias e_0: a biased answer that stays on the simplex."""
    target = np.zeros_like(vector)
    target[..., 0] = 1.0
    return (1.0 - bias) * vector + bias * target


class OracleQuantifier(Quantifier):
    def __init__(self, bias: float = 0.0):
        self.bias = bias

    def fit(self, setting):
        return self

    def quantify(self, sample, context):
        return towards_class_0(prevalence(labels_of(sample), sample.n_classes), self.bias)


class OracleCAP(AccuracyPredictor):
    def __init__(self, bias: float = 0.0):
        self.bias = bias

    def fit(self, setting):
        return self

    def predict_accuracy(self, sample, context):
        return float(np.mean(sample.predictions == labels_of(sample))) + self.bias


class OracleCalibrator(Calibrator):
    """ζ*: ``level_sets`` gives each exact score class its class distribution (canonical);
    ``constant`` gives every item the class distribution of all items."""

    def __init__(self, rule: str = "level_sets", bias: float = 0.0):
        self.rule = rule
        self.bias = bias

    def fit(self, setting):
        return self

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
# synthetic data


def grid_posteriors(rng, n, k, resolution=4):
    """Posterior rows on a coarse grid of the simplex (many exact ties and shared level sets)."""
    counts = rng.multinomial(resolution, np.ones(k) / k, size=n)
    return counts / resolution


def labelled(posteriors, labels, k):
    features = labels.reshape(-1, 1).astype(float)
    return LabelledSet(posteriors, labels, features=features, n_classes=k)


def sample_of(data: LabelledSet) -> Sample:
    return Sample(data.posteriors, data.features)


def setting_of(validation: LabelledSet, key="synthetic") -> Setting:
    return Setting(validation, validation, "label", key=key)


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
    method.fit(setting_of(validation))
    return method.apply(sample_of(test), fresh_context(setting_of(validation)))


CASES = st.tuples(st.integers(0, 2**31 - 1), st.integers(2, 5), st.integers(1, 300), st.booleans())


# ---------------------------------------------------------------------------------------------------
# ζ2ρ (Lemma 1)


@settings(max_examples=40, deadline=None)
@given(case=CASES, rule=st.sampled_from(["level_sets", "constant"]))
def test_calibration_to_quantification_is_exact_with_a_perfect_calibrator(case, rule):
    seed, k, n, grid = case
    data = random_case(seed, n, k, grid)
    estimate = run(CalibrationToQuantification(OracleCalibrator(rule)), data, data)
    np.testing.assert_allclose(estimate, prevalence(data.labels, k), atol=1e-12)


def test_calibration_to_quantification_inherits_the_calibrator_bias_exactly():
    data = random_case(1, 300, 4)
    truth = prevalence(data.labels, 4)
    estimate = run(CalibrationToQuantification(OracleCalibrator(bias=0.1)), data, data)
    np.testing.assert_allclose(estimate, towards_class_0(truth, 0.1), atol=1e-12)
    assert mcm.quantification_ae(truth, estimate) > 0.01


# ---------------------------------------------------------------------------------------------------
# ζ2α (Lemma 2)


@settings(max_examples=40, deadline=None)
@given(case=CASES, rule=st.sampled_from(["level_sets", "constant"]))
def test_calibration_to_cap_is_exact_with_a_perfect_calibrator(case, rule):
    seed, k, n, grid = case
    data = random_case(seed, n, k, grid)
    estimate = run(CalibrationToCAP(OracleCalibrator(rule)), data, data)
    assert estimate == pytest.approx(mcm.accuracy(data.posteriors, data.labels), abs=1e-12)


def test_calibration_to_cap_with_a_biased_calibrator_is_wrong():
    data = random_case(2, 300, 3)
    truth = mcm.accuracy(data.posteriors, data.labels)
    estimate = run(CalibrationToCAP(OracleCalibrator(bias=0.2)), data, data)
    assert abs(estimate - truth) > 0.01


def test_one_calibration_of_the_whole_sample_is_not_enough_for_cap():
    """Negative control: Lemma 2 calibrates each predicted-class part separately. The constant map
    calibrated on the whole sample, read at each item's predicted class, gives sum_j n_j p_j / n,
    not the accuracy."""
    data = random_case(3, 300, 3, grid=False)
    calibrated = OracleCalibrator("constant").calibrate(sample_of(data), None)
    predicted = data.predictions
    whole = calibrated[np.arange(len(data)), predicted].mean()
    truth = mcm.accuracy(data.posteriors, data.labels)
    assert abs(whole - truth) > 0.01


# ---------------------------------------------------------------------------------------------------
# ρ2ζ (Lemma 3): canonical calibration from a perfect quantifier


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
    output = run(QuantificationToCalibration(OracleQuantifier(), binning="level_sets"), data, data)
    assert_canonically_calibrated(output, data.labels, k)
    assert mcm.ece_top_label(output, data.labels) == 0.0
    assert mcm.ece_classwise(output, data.labels) == 0.0
    np.testing.assert_allclose(output.mean(axis=0), prevalence(data.labels, k), atol=1e-12)


def test_quantification_to_calibration_with_a_biased_quantifier_is_miscalibrated():
    data = random_case(4, 400, 3)
    output = run(
        QuantificationToCalibration(OracleQuantifier(bias=0.2), binning="level_sets"), data, data
    )
    assert mcm.ece_classwise(output, data.labels) > 0.5


# ---------------------------------------------------------------------------------------------------
# ρ2α (Lemma 4)


@settings(max_examples=40, deadline=None)
@given(case=CASES)
def test_quantification_to_cap_is_exact_with_a_perfect_quantifier(case):
    seed, k, n, grid = case
    data = random_case(seed, n, k, grid)
    estimate = run(QuantificationToCAP(OracleQuantifier()), data, data)
    assert estimate == pytest.approx(mcm.accuracy(data.posteriors, data.labels), abs=1e-12)


def test_quantification_to_cap_with_a_biased_quantifier_is_wrong():
    data = random_case(5, 300, 4)
    truth = mcm.accuracy(data.posteriors, data.labels)
    assert abs(run(QuantificationToCAP(OracleQuantifier(0.2)), data, data) - truth) > 0.01


# ---------------------------------------------------------------------------------------------------
# α2ρ (Lemma 5 and its k-class completions)


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
        error = mcm.quantification_ae(prevalence(test.labels, k), estimate)
        assert (error < 1e-12) == exact, (k, error)


def label_shifted_copy(validation, multiplicities):
    """Exact finite-sample label shift: every item of class i repeated multiplicities[i] times, so
    that P(prediction | class) is the validation one."""
    index = np.repeat(np.arange(len(validation)), np.asarray(multiplicities)[validation.labels])
    return validation.subset(index)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_cap_to_quantification_recall_split_is_exact_under_label_shift(k):
    validation = random_case(8 + k, 500, k, grid=False, concentration=2.0)
    test = label_shifted_copy(validation, np.arange(1, k + 1))
    truth = prevalence(test.labels, k)
    recall = run(CAPToQuantification(OracleCAP(), split="recall"), validation, test)
    np.testing.assert_allclose(recall, truth, atol=1e-12)
    if k > 2:  # the validation split assumes the errors' composition, which label shift changes
        split = run(CAPToQuantification(OracleCAP()), validation, test)
        assert mcm.quantification_ae(truth, split) > 1e-4


def test_cap_to_quantification_with_a_biased_cap_is_wrong_by_the_predicted_amount():
    validation = random_case(9, 300, 3, grid=False, concentration=2.0)
    method = CAPToQuantification(OracleCAP(bias=-0.1))
    estimate = run(method, validation, validation)
    # each part moves 0.1 of its mass from its own class to its errors' classes
    shares = np.bincount(validation.predictions, minlength=3) / len(validation)
    moved = sum(shares[j] * (np.eye(3)[j] - method.error_split_[:, j]) for j in range(3))
    truth = prevalence(validation.labels, 3)
    np.testing.assert_allclose(estimate, truth - 0.1 * moved, atol=1e-12)
    assert mcm.quantification_ae(truth, estimate) > 1e-3


# ---------------------------------------------------------------------------------------------------
# α2ζ (Lemma 6)


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
    assert mcm.ece_top_label(output, labels) == 0.0


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
    inner = OracleQuantifier() if factory is QuantificationToCalibration else OracleCAP()
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
    method = QuantificationToCalibration(OracleQuantifier(), bins=3, smooth=False, monotone="none")
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
    inner = OracleQuantifier() if factory is QuantificationToCalibration else OracleCAP()
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
    method = CAPToQuantification(OracleCAP())
    method.fit(setting_of(validation))
    assert method.empty_parts_ == [2] and method.whole_ is not None
    context = fresh_context(setting_of(validation))
    estimate = method.quantify(sample_of(test), context)
    assert any("no validation item is predicted 2" in reason for _, reason in context.notes)
    assert estimate.shape == (3,) and abs(estimate.sum() - 1) < 1e-12
    # a perfect inner method stays perfect on the part it answers for through the whole fit
    accuracy = run(QuantificationToCAP(OracleQuantifier()), validation, test)
    assert accuracy == pytest.approx(mcm.accuracy(test.posteriors, test.labels), abs=1e-12)
