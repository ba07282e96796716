"""The field's quantifiers (docs/methods.md §6.1) against QuaPy run directly: QuaPy's own class on a
real scikit-learn logistic regression, fitted on the validation features and applied to the test
features, must give the estimates the registered method gives on the cached posteriors (through
the pass-through classifier, whose decision function differs from the regression's by an increasing
map). A wrong QuaPy class, a lost hyper-parameter, a swapped class column, an unseeded Monte-Carlo
draw or a different fit set (training instead of validation) all change the numbers."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from tests.calibration_settings import make_setting
from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.data.quapy_loader import load_quapy
from unishift.methods.base import fresh_context
from unishift.methods.registry import get_method

load_quapy()
from quapy.method import aggregative  # noqa: E402

# name -> (QuaPy class, its keyword arguments as the method passes them)
BINARY = {
    "HDy": ("HDy", {}),
    "DyS": ("DyS", {"n_bins": 8, "divergence": "HD", "tol": 1e-5}),
    "SMM": ("SMM", {}),
    "MAX": ("MAX", {}),
    "X": ("X", {}),
    "T50": ("T50", {}),
    "MS": ("MS", {}),
    "MS2": ("MS2", {}),
}
ANY_K = {
    "DMy": ("DMy", {"nbins": 8, "divergence": "HD", "cdf": False}),
    "KDEyCS": ("KDEyCS", {"bandwidth": 0.1}),
    "KDEyHD": ("KDEyHD", {"bandwidth": 0.1, "montecarlo_trials": 10000, "random_state": 0}),
}


def _binary_case():
    # an imbalanced validation set (30% positives) so that a swapped class column shows
    setting, classifier, draw = make_setting(
        seed=3, n_val=300, train_prevalence=0.3, separation=0.8
    )
    samples = [draw(200, prevalence, sample_seed=s) for s, prevalence in ((11, 0.7), (12, 0.15))]
    return setting, classifier, samples


def _three_class_case():
    rng = np.random.default_rng(5)
    centres = rng.normal(0, 1.0, (3, 4))

    def draw(n, weights):
        y = rng.choice(3, size=n, p=weights)
        return centres[y] + rng.normal(size=(n, 4)), y

    x_train, y_train = draw(600, [1 / 3] * 3)
    classifier = LogisticRegression(max_iter=1000).fit(x_train, y_train)

    def labelled(x, y):
        return LabelledSet(classifier.predict_proba(x), y, features=x)

    validation = labelled(*draw(400, [0.5, 0.3, 0.2]))
    setting = Setting(validation, labelled(x_train, y_train), "label", "toy3", seed=0)
    samples = []
    for weights in ([0.1, 0.2, 0.7], [0.6, 0.3, 0.1]):
        x, y = draw(250, weights)
        samples.append((Sample(classifier.predict_proba(x), features=x), y))
    return setting, classifier, samples


def _compare(name, quapy_class, options, case):
    setting, classifier, samples = case
    k = setting.n_classes
    method = get_method("quantification", name).build("label", k).fit(setting)
    direct = getattr(aggregative, quapy_class)(
        classifier, fit_classifier=False, val_split=None, **options
    )
    direct.fit(setting.validation.features, setting.validation.labels)
    for sample, _ in samples:
        ours = method.quantify(sample, fresh_context(setting))
        theirs = direct.predict(sample.features)
        np.testing.assert_allclose(ours, theirs, atol=1e-9, rtol=0)
    return method


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_field_quantifier_equals_quapy_on_a_real_classifier(name):
    quapy_class, options = BINARY[name]
    method = _compare(name, quapy_class, options, _binary_case())
    assert get_method("quantification", name).binary_only
    assert method.group == "field"


@pytest.mark.parametrize("name", sorted(ANY_K))
@pytest.mark.parametrize("case", [_binary_case, _three_class_case], ids=["k2", "k3"])
def test_any_k_field_quantifier_equals_quapy_on_a_real_classifier(name, case):
    quapy_class, options = ANY_K[name]
    _compare(name, quapy_class, options, case())


def test_the_estimates_move_with_the_sample_and_the_options_reach_quapy():
    setting, _, samples = _binary_case()
    spec = get_method("quantification", "DyS")
    rich, poor = samples
    method = spec.build("label", 2).fit(setting)
    assert method.quantify(rich[0], fresh_context(setting))[1] > 0.5
    assert method.quantify(poor[0], fresh_context(setting))[1] < 0.35
    # a parameter that is not passed on would leave the estimate unchanged
    coarse = spec.build("label", 2, {"n_bins": 2}).fit(setting)
    assert method.quapy_options["n_bins"] == 8 and coarse.quantifier_.n_bins == 2
    assert not np.allclose(
        coarse.quantify(rich[0], fresh_context(setting)),
        method.quantify(rich[0], fresh_context(setting)),
    )


def test_kdey_hd_is_seeded():
    setting, _, samples = _three_class_case()
    spec = get_method("quantification", "KDEyHD")
    first = spec.build("label", 3).fit(setting).quantify(samples[0][0], fresh_context(setting))
    again = spec.build("label", 3).fit(setting).quantify(samples[0][0], fresh_context(setting))
    other = spec.build("label", 3, {"seed": 1}).fit(setting)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other.quantify(samples[0][0], fresh_context(setting)))


@pytest.mark.parametrize("name", ["KDEyCS", "KDEyHD"])
def test_an_empty_validation_class_gets_kdeys_uniform_kernel_or_quapys_error(name):
    setting, _, samples = _three_class_case()
    without_class_1 = setting.restrict_validation(setting.validation.labels != 1, "no-1")
    spec = get_method("quantification", name)
    method = spec.build("label", 3).fit(without_class_1)
    assert method.fit_notes == [
        ("fallback", f"{name}: class [1] absent from validation; uniform-point kernel used")
    ]
    assert method.quantify(samples[0][0], fresh_context(setting)).shape == (3,)
    with pytest.raises(ValueError):
        spec.build("label", 3, {"empty_class": "raise"}).fit(without_class_1)


@pytest.mark.parametrize("name", ["HDy", "MS2"])
def test_a_binary_quantifier_on_a_one_class_validation_set_falls_back_to_cc_recorded(name):
    # an adaptation's part (a predicted class, a confidence cell) can hold one true class only
    setting, _, samples = _binary_case()
    positives_only = setting.restrict_validation(setting.validation.labels == 1, "pos")
    method = get_method("quantification", name).build("label", 2).fit(positives_only)
    assert method.fit_notes == [
        ("fallback", f"{name}: validation holds class [1] only; classify and count answers")
    ]
    sample = samples[0][0]
    counted = np.bincount(sample.posteriors.argmax(axis=1), minlength=2) / len(sample.posteriors)
    np.testing.assert_allclose(method.quantify(sample, fresh_context(setting)), counted)
