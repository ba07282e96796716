"""ATC, DoC, LEAP and LEAP^PCC (docs/methods.md §4.1) against hand computations and literal re-statements."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LinearRegression

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.base import as_posteriors, fresh_context
from unishift.methods.cap import doc as doc_module
from unishift.methods.cap.atc import ATC, atc_threshold
from unishift.methods.cap.doc import DoC
from unishift.methods.cap.leap import LEAP, leap_equations, leap_rhs, solve_contingency
from unishift.methods.registry import get_method
from unishift.protocols.sampling import npp_indices, upp_indices


def labelled(scores, labels) -> LabelledSet:
    return LabelledSet(as_posteriors(np.asarray(scores, dtype=float)), np.asarray(labels))


def synthetic(seed: int, n: int, prevalence: float, separation: float = 1.5) -> LabelledSet:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < prevalence).astype(int)
    s = 1 / (1 + np.exp(-(rng.normal(0, 1, n) + separation * (2 * y - 1))))
    return labelled(s, y)


def setting_of(validation: LabelledSet, shift: str = "label") -> Setting:
    return Setting(validation, validation, shift, key="cap-test")


def sample_of(items: LabelledSet) -> Sample:
    return Sample(items.posteriors)


# ---------------------------------------------------------------------------------------------- ATC


def literal_atc_walk(scores, correct):
    """The walk of docs/methods.md §4.1 written out item by item."""
    order = np.argsort(scores)
    fp, fn = int(np.sum(~correct)), 0
    best, threshold = abs(fp - fn), 0.0
    for i in order:
        if correct[i]:
            fn += 1
        else:
            fp -= 1
        if abs(fp - fn) < best:
            best, threshold = abs(fp - fn), scores[i]
    return threshold


def test_atc_threshold_by_hand():
    scores = np.array([0.9, 0.55, 0.7, 0.6, 0.8])
    correct = np.array([True, False, False, True, True])
    # two incorrect items: |FP - FN| reaches 0 after the second-lowest score
    assert atc_threshold(scores, correct) == 0.6
    assert atc_threshold(scores, np.ones(5, dtype=bool)) == 0.0


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 60), grid=st.booleans())
def test_atc_threshold_matches_the_literal_walk(seed, n, grid):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.uniform(0.5, 1, n), 1) if grid else rng.uniform(0.5, 1, n)
    correct = rng.random(n) < 0.7
    assert atc_threshold(scores, correct) == literal_atc_walk(scores, correct)


def test_atc_predicts_the_share_at_or_above_the_threshold():
    validation = labelled([0.1, 0.45, 0.6, 0.8, 0.95], [0, 1, 0, 1, 1])
    # max-confidences 0.9, 0.55, 0.6, 0.8, 0.95; incorrect: 0.55, 0.6 -> threshold 0.6
    atc = ATC().fit(setting_of(validation))
    assert atc.threshold_ == 0.6
    test = Sample(as_posteriors(np.array([0.5, 0.4, 0.6, 0.3])))  # confidences 0.5 0.6 0.6 0.7
    assert atc.predict_accuracy(test, fresh_context(setting_of(validation))) == 0.75


# ---------------------------------------------------------------------------------------------- DoC


def doc_by_hand(validation, indices, test_posteriors):
    confidence = validation.posteriors.max(axis=1)
    correct = (validation.predictions == validation.labels).astype(float)
    x = confidence[indices].mean(axis=1) - confidence.mean()
    t = correct.mean() - correct[indices].mean(axis=1)
    regression = LinearRegression().fit(x.reshape(-1, 1), t)
    shift = test_posteriors.max(axis=1).mean() - confidence.mean()
    return float(np.clip(correct.mean() - regression.predict([[shift]])[0], 0, 1))


@pytest.mark.parametrize("protocol", ["upp", "npp"])
def test_doc_matches_a_hand_regression_on_the_protocol_samples(protocol):
    validation = synthetic(1, 400, 0.4)
    if protocol == "upp":
        indices = upp_indices(validation.labels, 250, 100, 0)
    else:
        indices = npp_indices(len(validation), 250, 100, 0)
    doc = DoC(protocol=protocol).fit(setting_of(validation))
    assert doc.fit_notes == []
    for seed, prevalence in [(2, 0.1), (3, 0.5), (4, 0.9)]:
        test = synthetic(seed, 250, prevalence)
        expected = doc_by_hand(validation, indices, test.posteriors)
        got = doc.predict_accuracy(sample_of(test), fresh_context(setting_of(validation), seed))
        assert got == pytest.approx(expected, abs=1e-12)


def test_doc_draws_its_samples_once_per_setting(monkeypatch):
    calls = []
    original = doc_module.upp_indices
    monkeypatch.setattr(
        doc_module, "upp_indices", lambda *a, **k: calls.append(a) or original(*a, **k)
    )
    validation = synthetic(5, 300, 0.5)
    doc = DoC(protocol="upp").fit(setting_of(validation))
    for seed in range(5):
        doc.predict_accuracy(
            sample_of(synthetic(seed, 250, 0.3)), fresh_context(setting_of(validation))
        )
    assert len(calls) == 1
    assert calls[0][1:] == (250, 100, 0)


def test_doc_on_a_single_class_validation_set_uses_npp_and_says_so():
    validation = synthetic(6, 200, 0.0)
    assert validation.labels.sum() == 0
    doc = DoC(protocol="upp").fit(setting_of(validation))
    assert [status for status, _ in doc.fit_notes] == ["fallback"]
    assert "NPP" in doc.fit_notes[0][1]
    indices = npp_indices(len(validation), 250, 100, 0)
    test = synthetic(7, 250, 0.5)
    expected = doc_by_hand(validation, indices, test.posteriors)
    assert doc.predict_accuracy(sample_of(test), fresh_context(setting_of(validation))) == (
        pytest.approx(expected, abs=1e-12)
    )


def test_doc_clips_to_the_unit_interval():
    validation = synthetic(8, 300, 0.5, separation=0.2)
    doc = DoC(protocol="npp").fit(setting_of(validation))
    extreme = Sample(as_posteriors(np.full(250, 1.0)))
    unclipped = DoC(protocol="npp", clip=False).fit(setting_of(validation))
    raw = unclipped.predict_accuracy(extreme, fresh_context(setting_of(validation)))
    clipped = doc.predict_accuracy(extreme, fresh_context(setting_of(validation)))
    assert clipped == pytest.approx(float(np.clip(raw, 0, 1)))
    assert 0.0 <= clipped <= 1.0


def test_doc_protocol_follows_the_shift():
    spec = get_method("cap", "DoC")
    assert spec.build("label", 2).protocol == "upp"
    assert spec.build("covariate", 2).protocol == "npp"


# ---------------------------------------------------------------------------------------------- LEAP


def leap_system(tpr, cc, q):
    """LEAP's two-class system from the validation TPR, the CC and the quantifier's estimates."""
    ratios = np.array([[np.nan, np.nan], [1.0 - tpr, tpr]])  # row 0 enters no equation
    return leap_equations(ratios), leap_rhs(np.array([1 - cc, cc]), np.array([1 - q, q]))


def test_the_two_class_system_is_the_papers():
    A, b = leap_system(0.75, 0.5, 0.4)
    np.testing.assert_array_equal(
        A, [[1, 1, 1, 1], [0, 0, -0.75, 0.25], [0, 1, 0, 1], [0, 0, 1, 1]]
    )
    np.testing.assert_array_equal(b, [1, 0, 0.5, 0.4])


@settings(max_examples=60, deadline=None)
@given(
    tpr=st.floats(0, 1),
    cc=st.floats(0, 1),
    q=st.floats(0, 1),
)
def test_leap_table_is_a_distribution_and_matches_the_closed_form(tpr, cc, q):
    table, fallback = solve_contingency(*leap_system(tpr, cc, q))
    assert table.shape == (2, 2)
    assert table.sum() == pytest.approx(1.0, abs=1e-6)
    assert np.all(table >= -1e-9)
    exact_valid = cc - tpr * q >= 0 and 1 - cc - (1 - tpr) * q >= 0
    if exact_valid and not fallback:
        assert np.trace(table) == pytest.approx(1 - cc - q + 2 * tpr * q, abs=1e-12)
        assert table[0, 1] + table[1, 1] == pytest.approx(cc)
        assert table[1, 0] + table[1, 1] == pytest.approx(q)
    if not exact_valid and min(cc - tpr * q, 1 - cc - (1 - tpr) * q) < -1e-9:
        assert fallback


class FixedQuantifier:
    """A quantifier factory answering ``value`` on every sample."""

    def __init__(self, value):
        self.value = value

    def __call__(self):
        from unishift.methods.base import Quantifier

        value = self.value

        class _Fixed(Quantifier):
            def fit(self, setting):
                return self

            def quantify(self, sample, context):
                return np.array([1 - value, value])

        return _Fixed()


def test_leap_uses_the_validation_tpr_and_its_quantifier():
    # validation: true positives 0.8, 0.3, 0.7, 0.6 -> predicted 1, 0, 1, 1 -> tpr = 3/4
    validation = labelled([0.8, 0.3, 0.7, 0.6, 0.2, 0.55], [1, 1, 1, 1, 0, 0])
    leap = LEAP(quantifier=FixedQuantifier(0.4)).fit(setting_of(validation))
    assert leap.ratios_[1, 1] == 0.75
    test = Sample(as_posteriors(np.array([0.9, 0.6, 0.2, 0.1])))  # CC = 0.5
    context = fresh_context(setting_of(validation))
    table = leap.predict_table(test, context)
    assert table == pytest.approx(np.array([[0.4, 0.2], [0.1, 0.3]]))
    assert leap.predict_accuracy(test, context) == pytest.approx(1 - 0.5 - 0.4 + 2 * 0.75 * 0.4)


def test_leap_without_validation_positives_takes_tpr_zero_and_says_so():
    validation = labelled([0.8, 0.3, 0.2], [0, 0, 0])
    leap = LEAP(quantifier=FixedQuantifier(0.1)).fit(setting_of(validation))
    assert leap.ratios_[1, 1] == 0.0
    assert any("TPR" in reason for _, reason in leap.fit_notes)


def test_leap_pcc_uses_the_mean_posterior():
    validation = synthetic(9, 300, 0.5)
    leap = (
        get_method("cap", "LEAP_PCC").build("covariate", 2).fit(setting_of(validation, "covariate"))
    )
    test = synthetic(10, 250, 0.3)
    context = fresh_context(setting_of(validation))
    cc, q = test.predictions.mean(), test.posteriors[:, 1].mean()
    table, _ = solve_contingency(*leap_system(leap.ratios_[1, 1], cc, q))
    assert leap.predict_accuracy(sample_of(test), context) == pytest.approx(np.trace(table))


def test_leap_with_kdey_is_close_to_the_truth_on_an_easy_problem():
    validation = synthetic(11, 500, 0.5, separation=2.5)
    leap = LEAP().fit(setting_of(validation))
    for seed, prevalence in [(12, 0.2), (13, 0.8)]:
        test = synthetic(seed, 250, prevalence, separation=2.5)
        truth = float(np.mean(test.predictions == test.labels))
        estimate = leap.predict_accuracy(sample_of(test), fresh_context(setting_of(validation)))
        assert abs(estimate - truth) < 0.05


def test_doc_with_app_draws_app_samples_for_k_classes():
    """QuaPy's APP over three classes: every point of the grid of prevalence vectors with 21
    values per class (231 points), ``repeats`` samples each; not NPP (the multiclass branch's drift)."""
    rng = np.random.default_rng(12)
    labels = np.repeat([0, 1, 2], 60)
    posteriors = rng.dirichlet(np.ones(3), len(labels))
    doc = DoC(protocol="app", sample_size=20, repeats=2)
    doc.fit_notes = []
    indices = doc._sample_indices(labels, 3)
    assert indices.shape == (231 * 2, 20) and doc.fit_notes == []
    shares = {tuple(np.bincount(labels[row], minlength=3)) for row in indices}
    grid = {(a, b, 20 - a - b) for a in range(21) for b in range(21 - a)}
    assert shares == grid  # 20 items, steps of 1/20: the counts are the grid points exactly
    fitted = DoC(protocol="app", sample_size=20, repeats=2).fit(
        Setting(LabelledSet(posteriors, labels), LabelledSet(posteriors, labels), "label")
    )
    assert fitted.fit_notes == []
