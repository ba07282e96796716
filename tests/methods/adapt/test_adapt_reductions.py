"""The six adapters in the configuration the tables use (isometric bins, B1, REF's side rule), their
fitting discipline (once per setting / partition), part-context sharing and fallback notes."""

from __future__ import annotations

import numpy as np
import pytest

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.adapt import to_calibration
from unishift.methods.adapt.to_calibration import (
    PositiveCAPToCalibration,
    PositiveQuantificationToCalibration,
)
from unishift.methods.adapt.to_cap import CalibrationToCAP, QuantificationToCAP
from unishift.methods.adapt.to_quantification import CalibratedEMQ, CAPToQuantification
from unishift.methods.base import (
    AccuracyPredictor,
    Calibrator,
    Quantifier,
    as_posteriors,
    fresh_context,
)
from unishift.methods.quantification.emq import em
from unishift.methods.registry import get_method


def items(scores, labels) -> LabelledSet:
    labels = np.asarray(labels)
    return LabelledSet(
        as_posteriors(np.asarray(scores, dtype=float)),
        labels,
        features=labels.reshape(-1, 1).astype(float),
    )


def sample_of(data: LabelledSet) -> Sample:
    return Sample(data.posteriors, data.features)


def setting_of(validation: LabelledSet, shift: str = "label") -> Setting:
    return Setting(validation, validation, shift, key="adapt-test")


class LabelQuantifier(Quantifier):
    """Positive rate of the labels carried in the first feature column; counts fits and calls."""

    fits = 0

    def fit(self, setting):
        type(self).fits += 1
        self.contexts = []
        return self

    def quantify(self, sample, context):
        self.contexts.append(context)
        positive = float(sample.features[:, 0].mean())
        return np.array([1.0 - positive, positive])


class LabelCAP(AccuracyPredictor):
    fits = 0

    def fit(self, setting):
        type(self).fits += 1
        return self

    def predict_accuracy(self, sample, context):
        return float(np.mean(sample.predictions == sample.features[:, 0]))


class IdentityCalibrator(Calibrator):
    def fit(self, setting):
        return self

    def calibrate(self, sample, context):
        return np.asarray(sample.posteriors, dtype=float)


@pytest.fixture
def captured_maps(monkeypatch):
    """Record the (abscissae, ordinates) each binned adapter hands to B1."""
    seen = []
    original = to_calibration.postprocess_map

    def spy(x, y, monotone, smooth):
        seen.append((np.array(x, dtype=float), np.array(y, dtype=float)))
        return original(x, y, monotone, smooth)

    monkeypatch.setattr(to_calibration, "postprocess_map", spy)
    return seen


# ------------------------------------------------------------------------------------------ ρ2ζ

Q2C_SCORES = [0.05, 0.1, 0.3, 0.35, 0.9]
Q2C_LABELS = [0, 1, 0, 1, 1]


def test_q2c_map_by_hand(captured_maps):
    data = items(Q2C_SCORES, Q2C_LABELS)
    method = PositiveQuantificationToCalibration(LabelQuantifier, bins=5).fit(setting_of(data))
    calibrated = method.calibrate(sample_of(data), fresh_context(setting_of(data)))
    x, y = captured_maps[0]
    # bins [0,.2) [.2,.4) [.4,.6) [.6,.8) [.8,1]: mean score of each non-empty bin, centre otherwise
    assert x == pytest.approx([0.075, 0.325, 0.5, 0.7, 0.9])
    assert y[[0, 1, 4]] == pytest.approx([0.5, 0.5, 1.0]) and np.isnan(y[[2, 3]]).all()
    # B1 by hand: imputation at .5 and .7 on the segment (.325, .5)-(.9, 1), then 3-point smoothing
    imputed = [0, 0.5, 0.5, 0.5 + 0.5 * 0.175 / 0.575, 0.5 + 0.5 * 0.375 / 0.575, 1, 1]
    smoothed = [0] + [sum(imputed[i - 1 : i + 2]) / 3 for i in range(1, 6)] + [1]
    xs = [0, 0.075, 0.325, 0.5, 0.7, 0.9, 1]
    expected = [np.interp(s, xs, smoothed) for s in Q2C_SCORES]
    assert calibrated[:, 1] == pytest.approx(expected, abs=1e-12)
    assert calibrated.sum(axis=1) == pytest.approx(np.ones(5))


def test_q2c_bin_centre_abscissae(captured_maps):
    data = items(Q2C_SCORES, Q2C_LABELS)
    method = PositiveQuantificationToCalibration(LabelQuantifier, abscissa="bin_centre")
    method.fit(setting_of(data)).calibrate(sample_of(data), fresh_context(setting_of(data)))
    x, _ = captured_maps[0]
    assert x == pytest.approx([0.1, 0.3, 0.5, 0.7, 0.9], abs=1e-5)


def test_q2c_fits_one_quantifier_per_setting_and_uses_bin_contexts():
    LabelQuantifier.fits = 0
    data = items(Q2C_SCORES, Q2C_LABELS)
    method = PositiveQuantificationToCalibration(LabelQuantifier).fit(setting_of(data))
    contexts = [fresh_context(setting_of(data), i) for i in range(4)]
    for context in contexts:
        method.calibrate(sample_of(data), context)
    assert LabelQuantifier.fits == 1
    # three non-empty bins per sample, each answered in its own part context
    assert len(method.inner_.contexts) == 12
    tags = {c.setting_key.rsplit("|", 1)[1] for c in method.inner_.contexts}
    assert tags == {"q2c:5B:bin0", "q2c:5B:bin1", "q2c:5B:bin4"}


# ------------------------------------------------------------------------------------------ α2ζ


def test_a2c_ordinates_by_hand(captured_maps):
    # scores 0.1 / 0.2 predicted negative, 0.55 / 0.9 / 0.95 predicted positive
    data = items([0.1, 0.2, 0.55, 0.9, 0.95], [0, 1, 1, 0, 1])
    method = PositiveCAPToCalibration(LabelCAP, bins=6).fit(setting_of(data))
    method.calibrate(sample_of(data), fresh_context(setting_of(data)))
    x, y = captured_maps[0]
    edges = np.linspace(0, 1, 7)
    edges[-1] += 1e-5
    assert x == pytest.approx((edges[:-1] + edges[1:]) / 2, abs=1e-15)
    # below 0.5: 1 - accuracy (accuracy 1 -> 0, accuracy 0 -> 1); above: the accuracy itself
    assert y[[0, 1, 3, 5]] == pytest.approx([0.0, 1.0, 1.0, 0.5])
    assert np.isnan(y[[2, 4]]).all()


def test_a2c_side_is_decided_by_the_bin_centre_as_in_ref(captured_maps):
    # 0.5 is predicted negative (ties to class 0) but lies in the bin [0.5, 2/3) whose centre > 0.5:
    # REF reads the accuracy there as the positive rate, so a correct negative yields ordinate 1.
    data = items([0.5], [0])
    method = PositiveCAPToCalibration(LabelCAP).fit(setting_of(data))
    method.calibrate(sample_of(data), fresh_context(setting_of(data)))
    assert captured_maps[0][1][3] == 1.0


def test_a2c_needs_an_even_number_of_bins():
    with pytest.raises(ValueError, match="even"):
        PositiveCAPToCalibration(LabelCAP, bins=5).check_params()


def test_binned_adapters_validate_their_options():
    with pytest.raises(ValueError, match="binning"):
        PositiveQuantificationToCalibration(LabelQuantifier, binning="quantile").check_params()
    with pytest.raises(ValueError, match="abscissa"):
        PositiveQuantificationToCalibration(LabelQuantifier, abscissa="median").check_params()


# ------------------------------------------------------------------------------------------ partitions


def test_partitioned_adapters_fit_once_per_partition():
    LabelQuantifier.fits = LabelCAP.fits = 0
    data = items([0.1, 0.7, 0.8, 0.3], [0, 1, 0, 1])
    q2a = QuantificationToCAP(LabelQuantifier).fit(setting_of(data))
    a2q = CAPToQuantification(LabelCAP).fit(setting_of(data))
    for i in range(5):
        q2a.predict_accuracy(sample_of(data), fresh_context(setting_of(data), i))
        a2q.quantify(sample_of(data), fresh_context(setting_of(data), i))
    assert LabelQuantifier.fits == 2 and LabelCAP.fits == 2
    assert len(q2a.inner_[1].contexts) == 5 and len(q2a.inner_[0].contexts) == 5


def test_adapters_share_the_part_contexts_of_a_sample():
    data = items([0.1, 0.7, 0.8, 0.3], [0, 1, 0, 1])
    first = QuantificationToCAP(LabelQuantifier).fit(setting_of(data))
    second = QuantificationToCAP(LabelQuantifier).fit(setting_of(data))
    context = fresh_context(setting_of(data), 3)
    first.predict_accuracy(sample_of(data), context)
    second.predict_accuracy(sample_of(data), context)
    for cls in (0, 1):
        assert first.inner_[cls].contexts[0] is second.inner_[cls].contexts[0]
    assert context.computations[("part", "pred=1")] == 1
    assert context.computations[("part-masks",)] == 1


def test_partition_fit_notes_are_tagged_and_doc_falls_back_to_npp():
    rng = np.random.default_rng(0)
    scores = rng.random(400)
    # every predicted positive is a true positive: V+ lacks negatives, so UPP is impossible there
    labels = np.where(scores > 0.5, 1, (rng.random(400) < 0.3).astype(int))
    data = items(scores, labels)
    method = get_method("quantification", "DoC_a2q").build("label", 2).fit(setting_of(data))
    assert method.inner_[1].protocol == "upp"
    assert [(s, r.split(":")[0]) for s, r in method.fit_notes] == [("fallback", "pred=1")]
    estimate = method.quantify(sample_of(data), fresh_context(setting_of(data)))
    assert np.all((0.0 <= estimate) & (estimate <= 1.0)) and estimate.sum() == pytest.approx(1.0)
    covariate = get_method("quantification", "DoC_a2q").build("covariate", 2).fit(setting_of(data))
    assert covariate.inner_[0].protocol == "npp" and covariate.fit_notes == []


def test_c2a_calibrates_each_part_with_its_own_model():
    data = items([0.2, 0.4, 0.6, 0.9], [0, 1, 1, 1])
    method = CalibrationToCAP(IdentityCalibrator).fit(setting_of(data))
    # identity calibration: (0.6 + 0.9 + 0.8 + 0.6) / 4, the mean max-confidence
    assert method.predict_accuracy(sample_of(data), fresh_context(setting_of(data))) == (
        pytest.approx(0.725)
    )
    assert method.inner_[0] is not method.inner_[1]


def test_pcc_q2a_is_the_mean_max_confidence():
    rng = np.random.default_rng(1)
    validation = items(rng.random(300), (rng.random(300) < 0.5).astype(int))
    test = items(rng.random(250), np.zeros(250, dtype=int))
    method = get_method("cap", "PCC_q2a").build("covariate", 2).fit(setting_of(validation))
    estimate = method.predict_accuracy(sample_of(test), fresh_context(setting_of(validation)))
    assert estimate == pytest.approx(test.posteriors.max(axis=1).mean(), abs=1e-12)


# ------------------------------------------------------------------------------------------ EMQ^LasCal


@pytest.mark.parametrize("source", ["validation", "training"])
def test_calibrated_emq_runs_em_on_the_calibrated_posteriors(source):
    rng = np.random.default_rng(2)
    validation = items(rng.random(200), (rng.random(200) < 0.3).astype(int))
    training = items(rng.random(200), (rng.random(200) < 0.6).astype(int))
    setting = Setting(validation, training, "label", key="emq")
    test = items(rng.random(250), np.zeros(250, dtype=int))
    method = CalibratedEMQ(IdentityCalibrator, train_prevalence=source).fit(setting)
    prior = validation.prevalence if source == "validation" else training.prevalence
    expected = em(prior, test.posteriors)[0]
    assert method.quantify(sample_of(test), fresh_context(setting)) == pytest.approx(expected)


@pytest.mark.parametrize("adapter", [CAPToQuantification, CalibrationToCAP, QuantificationToCAP])
def test_each_partition_model_sees_only_its_part_of_the_validation_set(adapter):
    data = items([0.1, 0.7, 0.8, 0.3, 0.5, 0.9], [0, 1, 0, 1, 1, 1])
    inner_task = adapter.inner_task

    class Recording(
        {"cap": LabelCAP, "calibration": IdentityCalibrator}.get(inner_task, LabelQuantifier)
    ):
        def fit(self, setting):
            self.validation, self.key = setting.validation, setting.key
            return self

    method = adapter(Recording).fit(setting_of(data))
    for cls in (0, 1):
        seen = method.inner_[cls].validation
        assert np.all(seen.predictions == cls)
        assert len(seen) == np.sum(data.predictions == cls)
        assert method.inner_[cls].key.endswith(f"pred={cls}")


def test_inner_methods_must_belong_to_the_expected_task():
    with pytest.raises(TypeError, match="not a quantification method"):
        QuantificationToCAP(LabelCAP).fit(setting_of(items([0.2, 0.8], [0, 1])))
    # a name is resolved by the registry entry of an adaptation, never by the adapter
    with pytest.raises(
        TypeError, match="names a method: build the adaptation through the registry"
    ):
        QuantificationToCAP("PCC").fit(setting_of(items([0.2, 0.8], [0, 1])))


def test_q2c_abscissa_is_the_bin_mean_not_its_median(captured_maps):
    # a skewed bin [0, .2): mean .06, median .02; the bins above are empty or single
    data = items([0.01, 0.02, 0.15, 0.9], [0, 0, 1, 1])
    method = PositiveQuantificationToCalibration(LabelQuantifier, bins=5).fit(setting_of(data))
    method.calibrate(sample_of(data), fresh_context(setting_of(data)))
    x, y = captured_maps[0]
    assert x[0] == pytest.approx(0.06) and y[0] == pytest.approx(1 / 3)
    assert x[4] == pytest.approx(0.9) and y[4] == 1.0
