"""Head2Tail, CPCS, TransCal, LasCal: reductions, sharing of per-sample work, REF fallbacks."""

import numpy as np
import pytest
from scipy import optimize, special
from scipy.stats import multivariate_normal

from tests.calibration_settings import context_for, make_setting, with_zero_posteriors
from unishift.data.containers import Sample
from unishift.methods.calibration import lascal as lascal_module
from unishift.methods.calibration.cpcs import CPCS
from unishift.methods.calibration.emq_lascal import EMQLasCal
from unishift.methods.calibration.head2tail import Head2Tail
from unishift.methods.calibration.lascal import LasCal, lascal_key
from unishift.methods.calibration.shared import softmax
from unishift.methods.calibration.transcal import TransCal
from unishift.methods.domain_weights import domain_weights_key, fit_domain_weights
from unishift.methods.quantification.emq import em
from unishift.methods.registry import get_method, method_names


@pytest.fixture(scope="module")
def problem():
    setting, _, draw = make_setting(seed=11, d=6)
    sample, labels = draw(250, 0.8, shift_x=0.3)
    return setting, sample, labels


@pytest.mark.parametrize(
    "factory, kwargs, valid",
    [
        (CPCS, {"logits": "X"}, "['L', 'P', 'S']"),
        (TransCal, {"zero_posteriors": "ignore"}, "['clip', 'faithful']"),
        (TransCal, {"weights": "kde"}, "['domain_classifier', 'uniform']"),
        (LasCal, {"solver": "scs"}, "['auto', 'closed_form', 'cvxpy']"),
        (Head2Tail, {"pca_components": 0}, "positive integer or None"),
        (EMQLasCal, {"train_prevalence": "test"}, "['training', 'validation']"),
    ],
)
def test_invalid_options_name_the_valid_ones(factory, kwargs, valid):
    """The constructor stores what it is given (scikit-learn's convention); fit refuses it."""
    method = factory(**kwargs)
    assert method.get_params()[next(iter(kwargs))] == next(iter(kwargs.values()))
    setting, _, _ = make_setting(seed=1, logits=True)
    with pytest.raises(ValueError, match=valid.replace("[", r"\[").replace("]", r"\]")):
        method.fit(setting)


@pytest.mark.parametrize("factory", [CPCS, TransCal, LasCal, Head2Tail])
def test_true_logits_are_required_for_L(factory):
    setting, _, _ = make_setting(seed=1, logits=False)
    with pytest.raises(ValueError, match="logits='L' needs true logits"):
        factory(logits="L").fit(setting)


def test_cpcs_with_uniform_weights_is_brier_temperature_scaling_on_validation(problem):
    setting, sample, _ = problem
    z = setting.validation.logits
    onehot = np.eye(2)[setting.validation.labels]
    z32 = z.astype(np.float32).astype(float)
    brier = lambda t: np.mean(np.sum((softmax(z32 / t) - onehot) ** 2, axis=1))  # noqa: E731
    expected_T = optimize.minimize_scalar(brier, bounds=(0.05, 20), method="bounded").x
    model = CPCS(logits="L", weights="uniform").fit(setting)
    context = context_for(setting)
    assert model.temperature(sample, context) == pytest.approx(expected_T, rel=1e-3)
    assert not context.computations  # no domain classifier was fitted
    np.testing.assert_allclose(
        model.calibrate(sample, context), softmax(sample.logits / expected_T), atol=1e-4
    )


def test_transcal_with_uniform_weights_is_confidence_matching_on_validation():
    # An over-confident model (logits x 4): with unit weights TransCal's target-accuracy estimate
    # is the validation accuracy, and on the validation set itself T must make the mean
    # confidence equal to it (TransCal's one-bin calibration objective).
    setting, _, _ = make_setting(seed=12, d=4, separation=0.8)
    validation = setting.validation
    sharp = type(validation)(
        validation.posteriors, validation.labels, validation.features, validation.logits * 4
    )
    setting = type(setting)(sharp, setting.training, setting.shift, setting.key, setting.seed)
    model = TransCal(logits="L", weights="uniform", variance_term=False).fit(setting)
    sample = Sample(sharp.posteriors, sharp.features, sharp.logits)
    T = model.temperature(sample, context_for(setting))
    accuracy = np.mean(np.argmax(sharp.logits, 1) == sharp.labels)
    gap = lambda t: np.mean(np.max(softmax(sharp.logits / t), axis=1)) - accuracy  # noqa: E731
    assert T > 1.5
    assert T == pytest.approx(optimize.brentq(gap, 1.0, 50.0), rel=1e-3)


def test_domain_classifier_is_fitted_once_per_sample_and_shared(problem):
    setting, sample, _ = problem
    context = context_for(setting, sample_id=3)
    cpcs, transcal = CPCS(logits="P").fit(setting), TransCal(logits="S").fit(setting)
    out_cpcs = cpcs.calibrate(sample, context)
    out_transcal = transcal.calibrate(sample, context)
    key = domain_weights_key(setting)
    assert context.computations == {key: 1}
    direct = fit_domain_weights(
        setting.training.features,
        sample.features,
        setting.validation.features,
        seed=context.derive_seed("domain_classifier", setting.key, "features"),
    )
    np.testing.assert_array_equal(context.store[key].weights, direct)
    assert direct.shape == (len(setting.validation), 1) and np.ptp(direct) > 0
    # the shared weights give the same outputs as fresh per-method contexts
    np.testing.assert_array_equal(out_cpcs, cpcs.calibrate(sample, context_for(setting, 3)))
    np.testing.assert_array_equal(out_transcal, transcal.calibrate(sample, context_for(setting, 3)))
    other = context_for(setting, sample_id=4)
    cpcs.calibrate(sample, other)
    assert other.computations == {key: 1}
    assert not np.array_equal(other.store[key].weights, direct)  # a different seed/sample


def test_domain_classifier_value_error_falls_back_to_unit_weights(problem):
    setting, sample, _ = problem
    broken = Sample(sample.posteriors, np.full_like(sample.features, np.nan), sample.logits)
    context = context_for(setting)
    out = CPCS(logits="P").fit(setting).calibrate(broken, context)
    assert np.all(np.isfinite(out))
    np.testing.assert_array_equal(context.store[domain_weights_key(setting)].weights, 1.0)
    assert [s for s, _ in context.notes] == ["fallback"]
    assert "CPCS: domain classifier raised ValueError" in context.notes[0][1]
    # a second consumer of the same cached weights records the fallback too
    TransCal(logits="S").fit(setting).calibrate(broken, context)
    assert any(r.startswith("TransCal: domain classifier") for _, r in context.notes)


def test_transcal_sentinel_is_kept_and_recorded_or_clipped():
    setting, _, draw = make_setting(seed=13)
    validation = setting.validation
    # an item whose true class has posterior exactly 0: infinite cross-entropy at every T
    wrong = np.flatnonzero(validation.labels == 1)[:1]
    posteriors = validation.posteriors.copy()
    posteriors[wrong] = [1.0, 0.0]
    knn_like = type(validation)(posteriors, validation.labels, validation.features, None)
    setting = type(setting)(knn_like, setting.training, setting.shift, setting.key, setting.seed)
    faithful = TransCal(logits="S").fit(setting)
    assert faithful.source_temperature_ == -1.0
    assert faithful.fit_notes and "sentinel T_s = -1" in faithful.fit_notes[0][1]
    assert np.isnan(faithful.source_confidence_)  # REF's flipped -inf row
    clipped = TransCal(logits="S", zero_posteriors="clip").fit(setting)
    assert clipped.source_temperature_ > 0 and not clipped.fit_notes
    sample, _ = draw(250, 0.5)
    out = clipped.calibrate(sample, context_for(setting))
    np.testing.assert_allclose(out.sum(axis=1), 1.0)


def test_lascal_search_is_shared_with_emq_lascal(problem):
    setting, sample, _ = problem
    context = context_for(setting)
    lascal = LasCal(logits="S").fit(setting)
    emq_lascal = EMQLasCal(logits="S").fit(setting)
    calibrated = lascal.calibrate(sample, context)
    adapted = emq_lascal.calibrate(sample, context)
    assert context.computations == {lascal_key("S", setting): 1}
    np.testing.assert_allclose(adapted, em(setting.train_prevalence, calibrated)[1])
    LasCal(logits="P").fit(setting).calibrate(sample, context)
    assert context.computations[lascal_key("P", setting)] == 1
    T = context.store[lascal_key("S", setting)][0]
    assert T in lascal_module.temperature_grid()
    np.testing.assert_allclose(calibrated, softmax(np.log(sample.posteriors) / T))


@pytest.mark.parametrize("convention", ["P", "S"])
def test_lascal_failure_returns_the_posteriors_and_is_recorded(problem, monkeypatch, convention):
    setting, sample, _ = problem

    def broken(*args, **kwargs):
        raise RuntimeError("solver failed")

    monkeypatch.setattr(lascal_module, "rlls_closed_form", broken)
    context = context_for(setting)
    out = LasCal(logits=convention).fit(setting).calibrate(sample, context)
    np.testing.assert_allclose(out, sample.posteriors, atol=1e-12)
    assert context.notes and context.notes[0][0] == "fallback"
    assert "LasCal failed (RuntimeError: solver failed)" in context.notes[0][1]


def test_lascal_handles_zero_posteriors_with_S_logits(problem):
    setting, sample, _ = problem
    knn_sample = with_zero_posteriors(sample, rows=[0, 1, 2, 3])
    validation = with_zero_posteriors(setting.validation, rows=[5, 6, 7])
    setting = type(setting)(validation, setting.training, setting.shift, "knn", setting.seed)
    context = context_for(setting)
    out = LasCal(logits="S").fit(setting).calibrate(knn_sample, context)
    assert context.store[lascal_key("S", setting)][0] > 0 and not context.notes
    assert np.all(np.isfinite(out))
    np.testing.assert_array_equal(out[[0, 2], 1], 0.0)
    np.testing.assert_array_equal(out[[1, 3], 1], 1.0)


def _head2tail_weights_generic(train_x, train_y, x, y, alpha=0.9):
    """The Wasserstein-softmax transfer with K classes, written without the K = 2 shortcut."""
    K = 2
    means = [train_x[train_y == c].mean(0) for c in range(K)]
    covs = [np.maximum(train_x[train_y == c].var(0), 1e-6) for c in range(K)]
    head = np.array([1] + [0] * (K - 1), bool)
    W = np.full((K, K), -1e9)
    for i in range(K):
        for j in range(K):
            if i != j and head[j]:
                dist = np.sum((means[i] - means[j]) ** 2) + np.sum(
                    (covs[i] ** 0.5 - covs[j] ** 0.5) ** 2
                )
                W[i, j] = -dist / np.sqrt(train_x.shape[1])
        W[i] = special.softmax(W[i])
    w = np.ones(len(y))
    for n, c in enumerate(y):
        if head[c]:
            continue
        mean = (np.array(means) * W[c][:, None]).sum(0) * (1 - alpha) + means[c] * alpha
        cov = (
            (np.sqrt(np.array(covs)) * W[c][:, None]).sum(0) * (1 - alpha)
            + np.sqrt(covs[c]) * alpha
        ) ** 2
        ratio = multivariate_normal(mean, cov).logpdf(x[n]) - multivariate_normal(
            means[c], covs[c]
        ).logpdf(x[n])
        w[n] = np.clip(np.exp(ratio), 0.3, 5)
    return w


def test_head2tail_weights_temperature_and_pca():
    setting, _, draw = make_setting(seed=14, d=8, n_val=120)
    model = Head2Tail(logits="P", pca_components=None).fit(setting)
    expected = _head2tail_weights_generic(
        setting.training.features,
        setting.training.labels,
        setting.validation.features,
        setting.validation.labels,
    )
    np.testing.assert_allclose(model.weights_, expected, rtol=1e-9)
    assert np.all(model.weights_[setting.validation.labels == 0] == 1.0)
    assert np.ptp(model.weights_) > 0
    assert 0.05 <= model.temperature_ <= 5.0
    # no test data is used: the temperature is the same for every sample
    sample, _ = draw(250, 0.2)
    out = model.calibrate(sample, context_for(setting))
    np.testing.assert_allclose(out, special.softmax(sample.posteriors / model.temperature_, axis=1))
    reduced = Head2Tail(logits="P", pca_components=3).fit(setting)
    assert reduced.temperature_ != model.temperature_
    again = Head2Tail(logits="P", pca_components=3).fit(setting)
    assert again.temperature_ == reduced.temperature_  # seeded PCA


def test_registry_entries():
    names = {
        "Head2Tail": ("reference", "Head2Tail", {"label": "P", "covariate": "S"}),
        "CPCS": ("reference", "CPCS", {"label": "P", "covariate": "L"}),
        "TransCal": ("reference", "TransCal", {"label": "S", "covariate": "L"}),
        "LasCal": ("reference", "LasCal", {"label": "P", "covariate": "L"}),
        "EMQ_TransCal": ("adapted", r"EMQ$^{\text{TransCal}}$", {"covariate": "L"}),
        "EMQ_LasCal": ("adapted", r"EMQ$^{\text{LasCal}}$", {"label": "S"}),
    }
    for name, (group, display, conventions) in names.items():
        spec = get_method("calibration", name)
        assert (spec.group, spec.display) == (group, display)
        # compound shift runs on the covariate data with the covariate conventions
        covariate = ("covariate", "compound") if "covariate" in conventions else ()
        assert spec.shifts == ("label",) * ("label" in conventions) + covariate
        for shift, convention in conventions.items():
            assert spec.build(shift, 2).logits == convention
    for name, display in [
        ("EMQ", "EMQ"),
        ("EMQ_BCTS", r"EMQ$^{\text{BCTS}}$"),
        ("PacCal_sigma", r"PacCal$^{\sigma}$"),
        ("DMCal", "DMCal"),
    ]:
        spec = get_method("calibration", name)
        assert (spec.group, spec.display, spec.shifts) == (
            "adapted",
            display,
            ("label", "covariate", "compound"),
        )
    assert "EMQ_TransCal" not in method_names("calibration", "label")
    assert "EMQ_LasCal" not in method_names("calibration", "covariate")
    assert get_method("calibration", "DMCal").build("label", 2).n_bins == 8
    assert get_method("calibration", "EMQ").build("covariate", 2).train_prevalence == "training"
