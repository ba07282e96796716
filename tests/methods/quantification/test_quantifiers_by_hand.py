import numpy as np
import pytest

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.base import fresh_context
from unishift.methods.quantification.aggregative import CC, PACC, PCC, KDEy
from unishift.methods.quantification.emq import EMQ, EMQBCTS
from unishift.methods.registry import get_method


def make_setting(P_val, y_val, y_train=None):
    y_train = y_val if y_train is None else y_train
    return Setting(
        validation=LabelledSet(np.asarray(P_val, float), np.asarray(y_val)),
        training=LabelledSet(None, np.asarray(y_train)),
        shift="label",
        key="toy",
    )


def as_p(pos):
    pos = np.asarray(pos, float)
    return np.column_stack([1 - pos, pos])


@pytest.fixture
def toy():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    pos = np.clip(0.25 + 0.5 * y + rng.normal(0, 0.15, 400), 0.01, 0.99)
    return make_setting(as_p(pos), y, y_train=np.r_[np.ones(30), np.zeros(70)].astype(int))


def quantify(method, setting, P):
    method.fit(setting)
    return method.quantify(Sample(P), fresh_context(setting))[1]


def test_cc_and_pcc_by_hand(toy):
    P = as_p([0.2, 0.7, 0.5, 0.9])
    assert quantify(CC(), toy, P) == pytest.approx(0.5)  # 0.5 ties go to the negative class
    assert quantify(PCC(), toy, P) == pytest.approx(np.mean([0.2, 0.7, 0.5, 0.9]))


def test_pacc_equals_binary_closed_form(toy):
    P = as_p(np.linspace(0.1, 0.9, 50))
    y, pos = toy.validation.labels, toy.validation.posteriors[:, 1]
    tpr, fpr = pos[y == 1].mean(), pos[y == 0].mean()
    expected = np.clip((P[:, 1].mean() - fpr) / (tpr - fpr), 0, 1)
    assert quantify(PACC(), toy, P) == pytest.approx(expected, abs=1e-4)


def em_by_hand(prior, P, tol=1e-4):
    pi = np.array([1 - prior, prior])
    q, k = pi.copy(), 0
    while True:
        R = P * (q / pi)
        R /= R.sum(axis=1, keepdims=True)
        new = R.mean(axis=0)
        done = np.mean(np.abs(new - q)) < tol and k > 10
        q, k = new, k + 1
        if done or k >= 1000:
            return q[1]


def test_emq_uses_the_configured_training_prevalence(toy):
    P = as_p(np.linspace(0.05, 0.95, 40) ** 0.5)
    assert quantify(EMQ("training"), toy, P) == pytest.approx(em_by_hand(0.3, P), abs=1e-6)
    validation_prior = toy.validation.prevalence[1]
    assert quantify(EMQ("validation"), toy, P) == pytest.approx(
        em_by_hand(validation_prior, P), abs=1e-6
    )


def test_emq_bcts_falls_back_to_plain_emq_on_exact_zero_posteriors():
    # kNN-like posteriors on the grid {0, 0.1, ..., 1}: BCTS cannot take log(0)
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    pos = np.clip(np.round(0.5 * y + rng.uniform(0, 0.5, 200), 1), 0, 1)
    setting = make_setting(as_p(pos), y, y_train=np.r_[np.ones(40), np.zeros(60)].astype(int))
    method = EMQBCTS("training").fit(setting)
    assert method.fit_notes and method.fit_notes[0][0] == "fallback"
    P = as_p(np.round(rng.uniform(0, 1, 50), 1))
    assert method.quantify(Sample(P), fresh_context(setting))[1] == pytest.approx(
        em_by_hand(0.4, P), abs=1e-6
    )


def test_emq_bcts_without_zeros_recalibrates():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    # a logistic score that is over-confident by a factor 3: BCTS must undo it
    pos = 1 / (1 + np.exp(-3 * (2 * y - 1 + rng.normal(0, 1, 400))))
    setting = make_setting(as_p(pos), y)
    method = EMQBCTS().fit(setting)
    assert method.fit_notes == []
    P = as_p(np.linspace(0.1, 0.9, 30))
    plain = quantify(EMQ("validation"), setting, P)
    assert method.quantify(Sample(P), fresh_context(setting))[1] != pytest.approx(plain, abs=1e-3)


def test_kdey_reproduces_quapy_019_empty_class_rule():
    y = np.zeros(50, dtype=int)
    pos = np.linspace(0.0, 0.4, 50)
    setting = make_setting(as_p(pos), y)
    method = KDEy().fit(setting)
    assert method.fit_notes[0][0] == "fallback"
    # test items at the uniform point are explained by the single positive kernel
    estimate = method.quantify(Sample(as_p(np.full(20, 0.5))), fresh_context(setting))[1]
    assert estimate > 0.9
    with pytest.raises(ValueError):
        KDEy(empty_class="raise").fit(setting)


def test_invalid_options_name_the_valid_ones():
    setting = make_setting(as_p(np.linspace(0.1, 0.9, 20)), np.arange(20) % 2)
    with pytest.raises(ValueError, match="training"):
        EMQ("test").fit(setting)
    with pytest.raises(ValueError, match="uniform_kernel"):
        KDEy(empty_class="ignore").fit(setting)


def test_registry_per_shift_defaults():
    spec = get_method("quantification", "EMQ")
    assert spec.build("label", 2).train_prevalence == "training"
    assert spec.build("covariate", 2).train_prevalence == "validation"
    with pytest.raises(KeyError, match="valid quantification methods"):
        get_method("quantification", "NotAMethod")
