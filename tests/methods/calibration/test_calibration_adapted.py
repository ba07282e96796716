"""EMQ, EMQ^BCTS, PacCal^σ, DMCal, B1 properties and the driver run of every calibrator."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.calibration_settings import context_for, make_setting, with_zero_posteriors
from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.base import as_posteriors
from unishift.methods.binning import postprocess_map
from unishift.methods.calibration.dmcal import DMCal
from unishift.methods.calibration.emq import EMQCalibrator
from unishift.methods.calibration.emq_bcts import EMQBCTSCalibrator
from unishift.methods.calibration.paccal_sigma import PacCalSigma
from unishift.methods.calibration.shared import softmax
from unishift.methods.quantification.emq import em


def _setting(validation_posteriors, validation_labels, train_labels=None):
    validation = LabelledSet(
        np.asarray(validation_posteriors, float), np.asarray(validation_labels)
    )
    train_labels = validation.labels if train_labels is None else np.asarray(train_labels)
    training = LabelledSet(None, train_labels, features=np.zeros((len(train_labels), 1)))
    return Setting(validation=validation, training=training, shift="label", key="toy", seed=0)


def test_emq_calibrator_recovers_the_prior_shifted_posteriors():
    # Scores from N(+1, 1) / N(-1, 1): sigmoid(2x) is calibrated at prior 0.5; under prior 0.2
    # the calibrated posterior is sigmoid(2x + logit(0.2)), which EM must recover.
    rng = np.random.default_rng(21)
    n, prior = 20000, 0.2
    labels = (rng.random(n) < prior).astype(int)
    x = rng.normal(size=n) + (2 * labels - 1)
    sample = Sample(as_posteriors(1 / (1 + np.exp(-2 * x))))
    setting = _setting(sample.posteriors[:10], labels[:10], train_labels=np.arange(1000) % 2)
    adapted = EMQCalibrator("training").fit(setting).calibrate(sample, context_for(setting))
    shifted = 1 / (1 + np.exp(-(2 * x + np.log(prior / (1 - prior)))))
    assert np.max(np.abs(adapted[:, 1] - shifted)) < 0.02
    assert np.max(np.abs(sample.posteriors[:, 1] - shifted)) > 0.3  # the shift was substantial
    np.testing.assert_allclose(adapted.sum(axis=1), 1.0)


def test_emq_bcts_matches_abstention_then_em_and_records_its_fallback():
    from abstention.calibration import TempScaling

    setting, _, draw = make_setting(seed=22)
    sample, _ = draw(250, 0.8)
    validation = setting.validation
    model = EMQBCTSCalibrator().fit(setting)
    assert model.fit_notes == []
    bcts = TempScaling(bias_positions="all", verbose=False)(
        validation.posteriors, np.eye(2)[validation.labels], posterior_supplied=True
    )
    prior = bcts(validation.posteriors)[:, 1].mean()
    expected = em([1 - prior, prior], bcts(sample.posteriors))[1]
    np.testing.assert_allclose(model.calibrate(sample, context_for(setting)), expected, atol=1e-10)

    knn = Setting(with_zero_posteriors(validation, rows=[0, 1]), setting.training, "label", "knn")
    fallback = EMQBCTSCalibrator().fit(knn)
    assert fallback.fit_notes and fallback.fit_notes[0][0] == "fallback"
    assert "BCTS failed" in fallback.fit_notes[0][1]
    np.testing.assert_allclose(
        fallback.calibrate(sample, context_for(knn)),
        em(validation.prevalence, sample.posteriors)[1],
    )
    with pytest.raises(ValueError, match="posterior probabilities"):
        model.calibrate(Sample(sample.posteriors * 2), context_for(setting))


def _pacc_setting(tpr, fpr):
    # two positives with mean posterior tpr, two negatives with mean posterior fpr
    positives = [tpr - 0.05, tpr + 0.05]
    negatives = [fpr - 0.05, fpr + 0.05]
    return _setting(as_posteriors(np.array(negatives + positives)), [0, 0, 1, 1])


def test_paccal_all_adjusted_values_in_range_are_returned_unchanged():
    setting = _pacc_setting(0.9, 0.1)
    model = PacCalSigma().fit(setting)
    assert (model.tpr_, model.fpr_) == pytest.approx((0.9, 0.1))
    p = np.array([0.1, 0.3, 0.5, 0.9])
    context = context_for(setting)
    out = model.calibrate(Sample(as_posteriors(p)), context)
    np.testing.assert_allclose(out[:, 1], (p - 0.1) / 0.8)
    assert context.notes == [
        ("fallback", "PacCal: all adjusted posteriors in [0, 1]; returned unchanged")
    ]


def test_paccal_any_value_out_of_range_squashes_the_whole_sample():
    setting = _pacc_setting(0.9, 0.1)
    p = np.array([0.05, 0.3, 0.5, 0.95])
    out = PacCalSigma().fit(setting).calibrate(Sample(as_posteriors(p)), context_for(setting))
    adjusted = (p - 0.1) / 0.8
    np.testing.assert_allclose(out[:, 1], 1 / (1 + np.exp(-(2 * adjusted - 1))))
    assert out[2, 1] == pytest.approx(0.5) and out[1, 1] > 0.27  # in-range items squashed too
    clipped = PacCalSigma("clip").fit(setting).calibrate(Sample(as_posteriors(p)), None)
    np.testing.assert_allclose(clipped[:, 1], np.clip(adjusted, 0, 1))


def test_paccal_without_a_positive_denominator_keeps_the_posteriors():
    setting = _pacc_setting(0.3, 0.6)  # tpr <= fpr
    model = PacCalSigma().fit(setting)
    assert model.fit_notes and "tpr=0.3 <= fpr=0.6" in model.fit_notes[0][1]
    p = np.array([0.2, 0.7])
    out = model.calibrate(Sample(as_posteriors(p)), context_for(setting))
    np.testing.assert_allclose(out[:, 1], p)


@pytest.fixture(scope="module")
def dm_validation():
    rng = np.random.default_rng(23)
    positives, negatives = rng.beta(4, 2, 300), rng.beta(2, 4, 700)
    p = np.concatenate([negatives, positives])
    labels = np.array([0] * 700 + [1] * 300)
    return _setting(as_posteriors(p), labels), p, labels


def test_dmcal_map_is_the_mixture_ratio_on_an_exact_mixture(dm_validation):
    setting, p, labels = dm_validation
    # The validation set is itself the mixture 0.3 H+ + 0.7 H-: DMy recovers 0.3 and the raw map in
    # bin k is the share of positives among the validation items with positive posterior in bin k.
    model = DMCal(monotone="none", smooth=False, cells="positive_class").fit(setting)
    x, y = model.calibration_map(setting.validation.posteriors)
    bins = np.minimum((p * 8).astype(int), 7)
    share = np.array([labels[bins == k].mean() for k in range(8)])
    np.testing.assert_allclose(x[1:-1], (np.arange(8) + 0.5) / 8)
    np.testing.assert_allclose(y[1:-1], share, atol=1e-4)
    assert np.ptp(share) > 0.5


def test_dmcal_map_is_monotone_through_the_corners(dm_validation):
    setting, _, _ = dm_validation
    rng = np.random.default_rng(24)
    p = np.sort(np.concatenate([[0.0, 1.0], rng.beta(3, 2, 248)]))
    model = DMCal(cells="positive_class").fit(setting)
    out = model.calibrate(Sample(as_posteriors(p)), context_for(setting))[:, 1]
    assert out[0] == 0.0 and out[-1] == 1.0
    assert np.all(np.diff(out) >= 0)
    x, y = model.calibration_map(as_posteriors(p))
    assert (x[0], y[0], x[-1], y[-1]) == (0.0, 0.0, 1.0, 1.0)
    x10, _ = DMCal(n_bins=10, cells="positive_class").fit(setting).calibration_map(as_posteriors(p))
    assert len(x10) == 12


def test_dmcal_with_a_missing_validation_class_is_recorded():
    rng = np.random.default_rng(26)
    setting = _setting(as_posteriors(rng.beta(4, 2, 50)), np.ones(50, int))
    context = context_for(setting)
    out = (
        DMCal(n_bins=10, cells="positive_class")
        .fit(setting)
        .calibrate(Sample(as_posteriors(rng.random(20))), context)
    )
    assert np.all(np.isfinite(out))
    assert context.notes == [
        ("fallback", "DMCal: a class is absent from validation; map imputed by B1")
    ]


def test_dmcal_rejects_bad_options():
    with pytest.raises(ValueError, match="positive integer"):
        DMCal(n_bins=0).check_params()
    with pytest.raises(ValueError, match="running_max"):
        DMCal(monotone="isotonic").check_params()


ordinates = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=24)


@settings(max_examples=200, deadline=None)
@given(ordinates)
def test_b1_output_is_monotone_and_in_the_unit_interval(values):
    b = len(values)
    centres = (np.arange(b) + 0.5) / b
    for smooth in (False, True):
        x, y = postprocess_map(centres, np.array(values), monotone="running_max", smooth=smooth)
        assert np.all(np.diff(y) >= -1e-15)
        assert np.all((y >= 0) & (y <= 1))
        assert (y[0], y[-1]) == (0.0, 1.0)
        assert np.all(np.diff(x) > 0)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 40))
def test_b1_is_the_identity_on_calibrated_maps_up_to_smoothing(b):
    centres = (np.arange(b) + 0.5) / b
    _, y = postprocess_map(centres, centres.copy(), smooth=False)
    np.testing.assert_array_equal(y[1:-1], centres)
    _, y = postprocess_map(centres, centres.copy(), smooth=True)
    # 3-point means reproduce a linear map except next to the padded ends (half-spaced)
    assert np.max(np.abs(y[1:-1] - centres)) <= 1 / (6 * b) + 1e-12
    if b >= 3:
        np.testing.assert_allclose(y[2:-2], centres[1:-1], atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(ordinates, st.data())
def test_b1_imputes_missing_bins(values, data):
    b = len(values)
    missing = data.draw(st.lists(st.booleans(), min_size=b, max_size=b))
    y_in = np.where(missing, np.nan, values)
    _, y = postprocess_map((np.arange(b) + 0.5) / b, y_in)
    assert np.all(np.isfinite(y)) and np.all(np.diff(y) >= -1e-15)


def test_softmax_of_sigma_is_the_logistic_of_2p_minus_1():
    p = np.linspace(-0.5, 1.5, 9)
    np.testing.assert_allclose(
        softmax(np.column_stack([1 - p, p]))[:, 1], 1 / (1 + np.exp(1 - 2 * p))
    )
