"""The methods for k classes: properties (estimates on the simplex, rows summing to 1), exactness of
the base methods whose assumption can be met exactly on a finite sample (label shift by
replication), and oracle tests of the k-class forms of DMCal, EMQ_TransCal, DMCal_c2a and
LEAP_PCC_a2q. The contract of every registered method for two and three classes is
tests/methods/test_method_contract.py's; their numbers to the last bit, tests/methods/test_method_regression.py's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.k_class_problems import grid_setting, replicated, samples, synthetic_problem
from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.evaluation.metrics import accuracy, check_prevalence, quantification_ae
from unishift.methods.adapt.to_cap import CalibrationToCAP
from unishift.methods.adapt.to_quantification import CAPToQuantification
from unishift.methods.base import Quantifier, fresh_context
from unishift.methods.calibration.dmcal import DMCal
from unishift.methods.calibration.emq import EMQCalibrator
from unishift.methods.calibration.scaling import TemperatureScaling
from unishift.methods.calibration.transcal import TransCal
from unishift.methods.cap.leap import LEAP, LEAPPCC
from unishift.methods.quantification.aggregative import ACC, CC, PACC, PCC, KDEy
from unishift.methods.quantification.emq import EMQ
from unishift.methods.registry import get_method

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
            check_prevalence(estimate, k, factory.__name__)
        for factory in FAST["calibration"]:
            calibrated = np.asarray(factory().fit(setting).calibrate(sample, context))
            np.testing.assert_allclose(calibrated.sum(axis=1), 1.0, atol=1e-9)
            assert np.all(calibrated >= 0)


# ---------------------------------------------------------------------------------------------------
# Exact finite-sample label shift: the validation set with each class's items repeated


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
    assert quantification_ae(truth, CC().fit(setting).quantify(sample, None)) > 1e-3


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
    truth = accuracy(test.posteriors, test.labels)
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
    check_prevalence(estimate, 3, "KDEy")


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


def test_the_prevalence_check_names_the_method():
    with pytest.raises(ValueError, match=r"Q \[0.7 0.7\] is not on the probability simplex"):
        check_prevalence([0.7, 0.7], 2, "Q")
    with pytest.raises(ValueError, match="Q must be a vector of k >= 2 class shares"):
        check_prevalence([1.0], 2, "Q")


# ---------------------------------------------------------------------------------------------------
# DMCal: Bayes' rule on top-label cells


@pytest.mark.parametrize("bias", [0.0, 0.3])
def test_dmcal_cells_are_exact_under_exact_label_shift_with_the_true_prior(bias):
    setting = grid_setting(0)
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


# ---------------------------------------------------------------------------------------------------
# EMQ_TransCal


def shifted_training(k=3, seed=4):
    """A synthetic problem whose classifier-training prevalence differs from validation's, so that
    the prior EM starts from is identifiable in the output."""
    setting, draw = synthetic_problem(seed, k, scale=2.0)
    prior = np.linspace(3, 1, k) / np.linspace(3, 1, k).sum()
    training = draw(400, prior)
    return Setting(setting.validation, training, "covariate", key="emq-transcal"), draw


def test_emq_transcal_is_bayes_reweighting_of_transcal_posteriors_from_the_training_prior():
    setting, draw = shifted_training()
    train_prior = setting.train_prevalence
    assert np.abs(train_prior - setting.validation.prevalence).max() > 0.05
    method = get_method("calibration", "EMQ_TransCal").build("covariate", 3).fit(setting)
    transcal = TransCal(logits="L").fit(setting)
    for sample_id, (sample, _) in enumerate(samples(draw, 3, np.random.default_rng(2), n=3)):
        output = method.calibrate(sample, fresh_context(setting, sample_id))
        base = transcal.calibrate(sample, fresh_context(setting, sample_id))
        # EM's output is base re-weighted by one class vector w (rows renormalised): the ratio
        # output / base is the same vector, up to a row factor, on every row
        ratio = output / base
        ratio /= ratio.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(ratio, np.broadcast_to(ratio[0], ratio.shape), atol=1e-9)
        # ... and at EM's fixed point w = q / prior with q the mean adapted posterior
        expected = output.mean(axis=0) / train_prior
        np.testing.assert_allclose(ratio[0], expected / expected.sum(), atol=2e-3)
        # the re-weighting is not the identity (the sample's prevalence is not the training one)
        assert np.abs(output - base).max() > 1e-3


def test_emq_transcal_inherits_transcal_and_the_prior_source():
    spec = get_method("calibration", "EMQ_TransCal")
    assert not spec.binary_only and spec.shifts == ("covariate", "compound")
    assert spec.params("covariate", 3)["logits"] == spec.params("covariate", 2)["logits"] == "L"
    with pytest.raises(ValueError, match="train_prevalence"):
        spec.build("covariate", 3, {"train_prevalence": "test"})


# ---------------------------------------------------------------------------------------------------
# DMCal_c2a


class _PartOracleDMCal(DMCal):
    """DMCal whose DMy prior is the true prevalence of the part it calibrates (labels read from the
    sample's last feature column), optionally pulled towards class 0 by ``bias``."""

    def __init__(self, bias=0.0, **params):
        super().__init__(**params)
        self.bias = bias

    def calibrate(self, sample, context):
        labels = np.asarray(sample.features[:, -1], dtype=int)
        truth = np.bincount(labels, minlength=sample.n_classes) / len(labels)
        prior = (1 - self.bias) * truth + self.bias * np.eye(sample.n_classes)[0]
        self.quantifier_.aggregate = lambda posteriors: prior
        return super().calibrate(sample, context)


def _tagged_grid_case():
    setting = grid_setting(0)
    v = setting.validation
    tagged = LabelledSet(v.posteriors, v.labels, features=v.labels[:, None], n_classes=3)
    setting = Setting(tagged, tagged, "label", key="grid")
    test = replicated(tagged, [1, 4, 2])
    return setting, test, Sample(test.posteriors, test.features)


@pytest.mark.parametrize("bias", [0.0, 0.3])
def test_dmcal_c2a_is_exact_under_exact_label_shift_with_a_perfect_part_prior(bias):
    """Lemma 2 with DMCal's cells: with each part's true prior every cell's Bayes share is the
    cell's accuracy (grid posteriors: one confidence per cell, no post-processing)."""
    setting, test, sample = _tagged_grid_case()
    inner = {"n_bins": 3, "monotone": "none", "smooth": False, "abscissa": "bin_mean"}
    method = CalibrationToCAP(inner=_PartOracleDMCal, inner_params={**inner, "bias": bias})
    estimate = method.fit(setting).predict_accuracy(sample, fresh_context(setting))
    truth = accuracy(test.posteriors, test.labels)
    if bias == 0.0:
        assert estimate == pytest.approx(truth, abs=1e-5)  # DMCal's 1e-7 smoothing terms
    else:
        assert abs(estimate - truth) > 0.02


def test_dmcal_c2a_is_the_ten_bin_dmcal_per_predicted_class():
    """The catalogue column against the construction written out: one 10-bin DMCal per predicted
    class of the validation set, the test part's own-class calibrated posteriors summed."""
    setting, draw = synthetic_problem(seed=5, k=3, scale=2.0)
    column = get_method("cap", "DMCal_c2a").build("label", 3).fit(setting)
    predicted = setting.validation.predictions
    parts = {
        j: DMCal(n_bins=10).fit(setting.restrict_validation(predicted == j, f"pred={j}"))
        for j in range(3)
    }
    eight_bins = CalibrationToCAP(inner=DMCal).fit(setting)
    differs = False
    for sample_id, (sample, _) in enumerate(samples(draw, 3, np.random.default_rng(3), n=4)):
        context = fresh_context(setting, sample_id)
        expected = 0.0
        for j, inner in parts.items():
            mask = sample.predictions == j
            if mask.any():
                expected += inner.calibrate(sample.subset(mask), None)[:, j].sum()
        expected /= len(sample)
        assert column.predict_accuracy(sample, context) == pytest.approx(expected, abs=1e-12)
        differs |= abs(eight_bins.predict_accuracy(sample, context) - expected) > 1e-6
    assert differs  # the bin count matters on these samples, so the test sees it


# ---------------------------------------------------------------------------------------------------
# LEAP_PCC_a2q


def _grid_setting_with_label_shares(share, k=3, n_per_point=48, seed=0):
    """Grid posteriors p, each repeated ``n_per_point`` times, whose labels at every grid point split
    as ``share(p)`` (rounded): with share = identity the posteriors are calibrated on the finite
    sample (PCC is exact on any union of grid points)."""
    rng = np.random.default_rng(seed)
    points = np.unique(rng.multinomial(4, np.ones(k) / k, size=400) / 4, axis=0)
    points = points[points.max(axis=1) < 1]
    posteriors, labels = [], []
    for p in points:
        counts = np.round(share(p) * n_per_point).astype(int)
        counts[np.argmax(counts)] += n_per_point - counts.sum()
        labels.extend(np.repeat(np.arange(k), counts))
        posteriors.extend([p] * n_per_point)
    data = LabelledSet(np.array(posteriors), np.array(labels), n_classes=k)
    return Setting(data, data, "covariate", key="grid"), data


def test_leap_pcc_a2q_is_exact_without_shift_with_calibrated_posteriors():
    """Lemma 5 with LEAP^PCC inside: on the validation data itself every part's LEAP^PCC accuracy
    is exact when the posteriors are calibrated, and the errors have the validation composition."""
    method = get_method("quantification", "LEAP_PCC_a2q").build("covariate", 3)
    setting, data = _grid_setting_with_label_shares(lambda p: p)
    sample = Sample(data.posteriors)
    estimate = method.fit(setting).quantify(sample, fresh_context(setting))
    np.testing.assert_allclose(estimate, data.prevalence, atol=1e-8)
    # labels sharper than the posteriors (the posteriors under-confident): PCC is off, so is the column
    setting, data = _grid_setting_with_label_shares(lambda p: p**3 / np.sum(p**3))
    off = method.fit(setting).quantify(Sample(data.posteriors), fresh_context(setting))
    assert quantification_ae(data.prevalence, off) > 0.01


def test_leap_pcc_a2q_wraps_leap_with_pcc():
    setting, draw = synthetic_problem(seed=6, k=3, scale=2.0)
    column = get_method("quantification", "LEAP_PCC_a2q").build("covariate", 3).fit(setting)
    assert column.inner.name == "LEAP_PCC" and column.split == "validation"
    literal = CAPToQuantification(inner=LEAPPCC).fit(setting)
    with_kdey = CAPToQuantification(inner=LEAP).fit(setting)
    differs = False
    for sample_id, (sample, _) in enumerate(samples(draw, 3, np.random.default_rng(4), n=3)):
        context = fresh_context(setting, sample_id)
        estimate = column.quantify(sample, context)
        np.testing.assert_array_equal(estimate, literal.quantify(sample, context))
        differs |= np.abs(estimate - with_kdey.quantify(sample, context)).max() > 1e-6
    assert differs


# ---------------------------------------------------------------------------------------------------
# Properties: posterior rows sum to 1, prevalence estimates on the simplex, accuracies in [0, 1]


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 4))
def test_added_columns_return_valid_outputs(seed, k):
    setting, draw = synthetic_problem(seed, k, n_val=150, n_train=150, scale=3.0)
    setting = Setting(setting.validation, setting.training, "covariate", key=f"p{seed}")
    rng = np.random.default_rng(seed)
    build = {
        name: get_method(task, name).build("covariate", k).fit(setting)
        for task, name in (
            ("calibration", "EMQ_TransCal"),
            ("cap", "DMCal_c2a"),
            ("quantification", "LEAP_PCC_a2q"),
        )
    }
    for sample_id, (sample, _) in enumerate(samples(draw, k, rng, n=2, size=80)):
        context = fresh_context(setting, sample_id)
        calibrated = np.asarray(build["EMQ_TransCal"].calibrate(sample, context))
        assert calibrated.shape == sample.posteriors.shape and np.all(calibrated >= 0)
        np.testing.assert_allclose(calibrated.sum(axis=1), 1.0, atol=1e-9)
        check_prevalence(build["LEAP_PCC_a2q"].quantify(sample, context), k, "LEAP_PCC_a2q")
        assert 0.0 <= build["DMCal_c2a"].predict_accuracy(sample, context) <= 1.0
