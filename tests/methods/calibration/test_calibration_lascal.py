"""LasCal: the temperature search's fast pieces against the straightforward ones (issue 3); for k
classes, the RLLS weights against independent solutions and the exact label-shift weights, the
search against a literal loop over temperatures and classes, and properties of the four LasCal
columns. Their numbers to the last bit: tests/methods/test_method_regression.py."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from tests.k_class_problems import replicated, samples, synthetic_problem
from unishift.evaluation.metrics import check_prevalence
from unishift.methods.base import fresh_context
from unishift.methods.calibration import lascal as L
from unishift.methods.calibration.lascal import (
    LasCal,
    ece_label_shift_loop,
    lascal_losses,
    rlls_closed_form,
    rlls_cvxpy,
    rlls_lambda,
    rlls_objective,
    rlls_system,
    rlls_weights,
    torch_log,
)
from unishift.methods.calibration.shared import first_strict_minimum, softmax, temperature_grid
from unishift.methods.registry import get_method


def _confidences(rng, n_temps, n, discrete=False):
    if discrete:  # kNN-like: few distinct values, many ties and edges that coincide
        values = rng.integers(0, 6, size=(n_temps, n)) / 5.0
    else:
        values = rng.random((n_temps, n))
    return values


@pytest.mark.parametrize("discrete", [False, True])
def test_vectorised_estimator_equals_loop(discrete):
    rng = np.random.default_rng(3)
    n_temps, n_s, n_t = 12, 700, 250
    conf_s, conf_t = (
        _confidences(rng, n_temps, n_s, discrete),
        _confidences(rng, n_temps, n_t, discrete),
    )
    is_class = rng.random(n_s) < 0.4
    weights = rng.uniform(0.2, 3.0, n_temps)
    fast = L.ece_label_shift_vectorised(conf_s, conf_t, is_class, weights)
    loop = [
        L.ece_label_shift_loop(conf_s[r], conf_t[r], is_class, weights[r]) for r in range(n_temps)
    ]
    assert np.all(fast > 0)
    np.testing.assert_allclose(fast, loop, rtol=0, atol=1e-10)


def _direct_classwise_ece(conf_target, target_is_class, n_bins=15):
    """Squared class-wise ECE with the target's own labels, on the estimator's bins."""
    n = len(conf_target)
    edges = np.interp(np.linspace(0, n, n_bins + 1), np.arange(n), np.sort(conf_target))
    total = 0.0
    for lower, upper in zip(edges[:-1], edges[1:]):
        members = (conf_target > lower) & (conf_target <= upper)
        if members.sum() > 1:
            total += np.sum((conf_target[members] - target_is_class[members].mean()) ** 2)
    return total / n


def test_estimator_with_exact_weights_equals_the_direct_ece():
    # Target = source with every positive replicated three times: the exact class weights are known
    # and the estimator must reproduce the ECE computed with the target labels (up to its
    # leave-one-out factors (n_t - 1)/(n_bin - 1), which vanish as the bins grow).
    rng = np.random.default_rng(5)
    n_s = 6000
    labels = (rng.random(n_s) < 0.3).astype(int)
    conf = np.clip(0.5 + 0.25 * (2 * labels - 1) + rng.normal(0, 0.2, n_s), 0.001, 0.999)
    conf = conf * 0.8  # miscalibrated on purpose: the ECE must be clearly non-zero
    replicate = np.where(labels == 1, 3, 1)
    conf_t, labels_t = np.repeat(conf, replicate), np.repeat(labels, replicate)
    exact_w = labels_t.mean() / labels.mean()
    estimate = L.ece_label_shift_loop(conf, conf_t, labels == 1, exact_w)
    direct = _direct_classwise_ece(conf_t, labels_t == 1)
    assert direct > 0.01
    assert estimate == pytest.approx(direct, rel=0.01)
    # and the weights matter: without the label-shift correction the estimate is far off
    assert abs(L.ece_label_shift_loop(conf, conf_t, labels == 1, 1.0) - direct) > 0.1 * direct


def _rlls_instances():
    rng = np.random.default_rng(6)
    for _ in range(40):
        n_s, n_t = int(rng.integers(40, 800)), 250
        labels = rng.integers(0, 2, n_s)
        accuracy = rng.uniform(0.5, 1.0)
        source_pred = np.where(rng.random(n_s) < accuracy, labels, 1 - labels)
        target_pred = (rng.random(n_t) < rng.uniform(0, 1)).astype(int)
        yield source_pred, labels, target_pred
    labels = rng.integers(0, 2, 300)
    source_pred = np.where(rng.random(300) < 0.8, labels, 1 - labels)
    for target_pred in (np.zeros(250, int), np.ones(250, int)):  # constraint theta >= -1 binds
        yield source_pred, labels, target_pred
    yield labels.copy(), labels, rng.integers(0, 2, 250)  # perfect source predictions


def _tight_cvxpy(C, b, lam):
    import cvxpy as cp

    warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)

    theta = cp.Variable(2)
    problem = cp.Problem(cp.Minimize(cp.norm(C @ theta - b) + lam * cp.norm(theta)), [theta >= -1])
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-14, tol_gap_rel=1e-14, tol_feas=1e-14)
    return np.asarray(theta.value)


def test_rlls_closed_form_is_the_exact_optimum():
    rng = np.random.default_rng(7)
    bound_hit = 0
    for source_pred, labels, target_pred in _rlls_instances():
        C, b = L.rlls_system(source_pred, labels, target_pred)
        lam = L.rlls_lambda(len(labels))
        theta = L.rlls_closed_form(C, b, lam)
        f = L.rlls_objective(theta, C, b, lam)
        assert np.all(theta >= -1)
        bound_hit += np.any(theta == -1)
        # optimality: no feasible perturbation improves the objective
        for _ in range(50):
            step = rng.normal(size=2) * 10.0 ** rng.uniform(-9, -3)
            moved = np.maximum(theta + step, -1)
            assert L.rlls_objective(moved, C, b, lam) >= f - 1e-15
        # cvxpy (interior point) agrees at its tolerance and is never better
        reference = _tight_cvxpy(C, b, lam)
        assert f <= L.rlls_objective(np.maximum(reference, -1), C, b, lam) + 1e-12
        np.testing.assert_allclose(theta, reference, atol=1e-6)
    assert bound_hit >= 2


def test_rlls_weights_match_abstentions_adapter_at_its_solver_tolerance():
    from abstention.label_shift import RLLSImbalanceAdapter

    for k, (source_pred, labels, target_pred) in enumerate(_rlls_instances()):
        if k % 5:
            continue
        onehot = np.eye(2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            adapter = RLLSImbalanceAdapter()(
                valid_labels=onehot[labels],
                tofit_initial_posterior_probs=onehot[target_pred],
                valid_posterior_probs=onehot[source_pred],
            )
        ours = L.rlls_weights(source_pred, labels, target_pred)
        # cvxpy's default solver stops at ~1e-8 duality gap, i.e. ~1e-4 on w here
        np.testing.assert_allclose(ours, adapter.multipliers, atol=1e-3)


def _problem(seed, n_s=300, n_t=250):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n_s)
    score = rng.normal(0, 1, n_s) + 1.2 * (2 * y - 1)
    y_t = (rng.random(n_t) < 0.8).astype(int)
    score_t = rng.normal(0, 1, n_t) + 1.2 * (2 * y_t - 1)
    p, p_t = 1 / (1 + np.exp(-score)), 1 / (1 + np.exp(-score_t))
    return np.column_stack([1 - p, p]), y, np.column_stack([1 - p_t, p_t])


@pytest.mark.parametrize("convention", ["P", "S"])
def test_fast_search_equals_the_straightforward_search(convention):
    P, y, P_t = _problem(8)
    z, z_t = (P, P_t) if convention == "P" else (np.log(P), np.log(P_t))
    fast_T, fast = L.lascal_temperature(z, y, z_t)
    loop_T, loop = L.lascal_temperature(z, y, z_t, estimator="loop", solver="closed_form")
    np.testing.assert_allclose(fast, loop, rtol=0, atol=1e-10)
    assert fast_T == loop_T
    if convention == "P":  # REF's path (cvxpy per temperature) once: same T, losses at solver tol.
        ref_T, ref = L.lascal_temperature(z, y, z_t, estimator="loop", solver="cvxpy")
        assert ref_T == fast_T
        np.testing.assert_allclose(fast, ref, rtol=1e-3)


def test_temperature_grid_and_first_strict_minimum():
    grid = temperature_grid()
    assert grid.dtype == np.float32 and len(grid) == 100
    assert grid[0] == np.float32(0.1) and grid[-1] == np.float32(20.0)
    reference = np.linspace(0.1, 20.0, 100, dtype=np.float32)
    assert np.all(np.abs(grid - reference) <= np.spacing(reference))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        assert np.array_equal(grid, torch.linspace(0.1, 20.0, steps=100).numpy())
    assert first_strict_minimum(np.array([np.nan, 3.0, 1.0, 1.0, np.inf])) == 2
    assert first_strict_minimum(np.array([np.inf, np.nan])) is None
    assert first_strict_minimum(np.array([4e38, 5.0])) == 1


def test_estimator_reproduces_torch_scalar_arithmetic():
    # REF evaluates the estimator with torch tensors, where the expected positive rate is a float32
    # scalar; our loop rounds it the same way, so the two agree to float64 summation order.
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    conf_s, conf_t = rng.random(900), rng.random(250)
    is_class = rng.random(900) < 0.35
    weight = np.float64(1.2345678901)
    src, tgt, lab = torch.from_numpy(conf_s), torch.from_numpy(conf_t), torch.from_numpy(is_class)
    edges = np.interp(np.linspace(0, 250, 16), np.arange(250), np.sort(conf_t))
    total = torch.zeros(1, dtype=torch.float64)
    for lower, upper in zip(edges[:-1], edges[1:]):
        in_s = src.gt(float(lower)) * src.le(float(upper))
        in_t = tgt.gt(float(lower)) * tgt.le(float(upper))
        if in_t.sum() > 1:
            expected = (249 / 900) * (weight * lab[in_s].float().sum()) / (in_t.sum() - 1)
            total += ((tgt[in_t] - expected).abs() ** 2).sum()
    reference = float(total / 250)
    assert L.ece_label_shift_loop(conf_s, conf_t, is_class, weight) == pytest.approx(
        reference, rel=1e-14
    )
    # computed in float64 throughout, the estimator would differ at the float32 level
    assert abs(_float64_estimate(conf_s, conf_t, is_class, weight) - reference) > 1e-12


def _float64_estimate(conf_s, conf_t, is_class, weight):
    edges = np.interp(np.linspace(0, 250, 16), np.arange(250), np.sort(conf_t))
    total = 0.0
    for lower, upper in zip(edges[:-1], edges[1:]):
        in_s, in_t = (conf_s > lower) & (conf_s <= upper), (conf_t > lower) & (conf_t <= upper)
        if in_t.sum() > 1:
            expected = (249 / 900) * weight * is_class[in_s].sum() / (in_t.sum() - 1)
            total += np.sum((conf_t[in_t] - expected) ** 2)
    return total / 250


def test_hard_predictions_break_ties_towards_the_lowest_class():
    # kNN's exact 0.5 posteriors stay ties at every temperature; RLLS must count them as class 0
    # (abstention's np.argmax), which the oracle below writes out as p_1 > p_0
    P, y, P_t = _problem(11)
    P[:40], P_t[:60] = 0.5, 0.5
    temps = temperature_grid()[::20]
    losses = L.lascal_losses(P, y, P_t, temps=temps, arithmetic="float64")
    expected = []
    for T in temps:
        s, s_t = L.softmax(P / float(T)), L.softmax(P_t / float(T))
        assert np.all(s[:40, 0] == s[:40, 1])
        pred, pred_t = (s[:, 1] > s[:, 0]).astype(int), (s_t[:, 1] > s_t[:, 0]).astype(int)
        w = L.rlls_weights(pred, y, pred_t)
        per_class = [
            L.ece_label_shift_loop(s[:, c], s_t[:, c], y == c, w[c], arithmetic="float64")
            for c in (0, 1)
        ]
        expected.append((per_class[0] + per_class[1]) / 2)
    np.testing.assert_allclose(losses, expected, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------------
# k classes


def random_rlls(seed, k):
    rng = np.random.default_rng(seed)
    n = 300
    labels = rng.integers(0, k, n)
    pred = np.where(rng.random(n) < 0.7, labels, rng.integers(0, k, n))
    target = rng.integers(0, k, 200)
    return rlls_system(pred, labels, target, k), rlls_lambda(n, k)


def rlls_scipy(C, b, lam):
    """The same problem in epigraph form with smooth constraints, by SLSQP from several starts:
    min s + lam t  s.t.  s^2 >= ||C theta - b||^2, t^2 >= ||theta||^2, s, t >= 0, theta >= -1."""
    k = C.shape[0]

    def constraints(v):
        theta, s, t = v[:k], v[k], v[k + 1]
        return np.array([s * s - np.sum((C @ theta - b) ** 2), t * t - np.sum(theta**2)])

    best = None
    for start in (np.zeros(k), np.full(k, -0.5), np.linalg.pinv(C) @ b):
        v0 = np.concatenate(
            [start, [np.linalg.norm(C @ start - b) + 0.1, np.linalg.norm(start) + 0.1]]
        )
        result = optimize.minimize(
            lambda v: v[k] + lam * v[k + 1],
            v0,
            method="SLSQP",
            bounds=[(-1, None)] * k + [(0, None), (0, None)],
            constraints=[{"type": "ineq", "fun": constraints}],
            options={"ftol": 1e-14, "maxiter": 1000},
        )
        theta = result.x[:k]
        if best is None or rlls_objective(theta, C, b, lam) < rlls_objective(best, C, b, lam):
            best = theta
    return best


def test_rlls_system_is_the_literal_joint_and_marginal_shares():
    rng = np.random.default_rng(0)
    pred, labels, target = rng.integers(0, 3, 50), rng.integers(0, 3, 50), rng.integers(0, 3, 40)
    C, b = rlls_system(pred, labels, target, 3)
    for i in range(3):
        for j in range(3):
            assert C[i, j] == sum(1 for p, y in zip(pred, labels) if p == i and y == j) / 50
        assert b[i] == pytest.approx(
            sum(t == i for t in target) / 40 - sum(p == i for p in pred) / 50
        )


@pytest.mark.parametrize("k", [3, 4, 5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_k_class_rlls_matches_an_independent_solver(seed, k):
    (C, b), lam = random_rlls(seed, k)
    theta = rlls_cvxpy(C, b, lam)
    other = rlls_scipy(C, b, lam)
    assert np.all(theta >= -1 - 1e-8)
    assert rlls_objective(theta, C, b, lam) <= rlls_objective(other, C, b, lam) + 1e-7
    np.testing.assert_allclose(theta, other, atol=2e-3)
    # no feasible perturbation does better (first-order optimality, tested directly)
    rng = np.random.default_rng(seed)
    f = rlls_objective(theta, C, b, lam)
    for _ in range(200):
        probe = np.maximum(theta + rng.normal(scale=1e-3, size=k), -1)
        assert rlls_objective(probe, C, b, lam) >= f - 1e-8


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_cvxpy_agrees_with_the_binary_closed_form_for_two_classes(seed):
    (C, b), lam = random_rlls(seed, 2)
    np.testing.assert_allclose(rlls_cvxpy(C, b, lam), rlls_closed_form(C, b, lam), atol=1e-5)


@pytest.mark.parametrize("k", [3, 4])
def test_unregularised_rlls_recovers_exact_label_shift_weights(k):
    """Under exact label shift (each validation class repeated m_c times) C w = mu_target holds with
    w the true class ratios, so RLLS without its penalty returns them."""
    setting, _ = synthetic_problem(seed=k, k=k, n_val=600, scale=1.0, spread=0.5)
    validation = setting.validation
    test = replicated(validation, [1, 3, 2, 1][:k])
    C, b = rlls_system(validation.predictions, validation.labels, test.predictions, k)
    truth = test.prevalence / validation.prevalence
    np.testing.assert_allclose(1 + rlls_cvxpy(C, b, 0.0), truth, atol=1e-5)
    # the weights are a per-class ratio: the transposed system does not give them
    assert np.abs(1 + rlls_cvxpy(C.T, b, 0.0) - truth).max() > 1e-2
    # LasCal's own call (with its penalty) stays close
    weights = rlls_weights(validation.predictions, validation.labels, test.predictions, k)
    np.testing.assert_allclose(weights, truth, atol=0.1)


def test_rlls_weights_use_the_k_class_penalty():
    """lambda = 0.01 rho(n, K) with abstention's rho = 3 (2 ln(2K/delta) / (3n) + sqrt(2 ln(2K/delta)
    / n)), delta = 0.05, K the number of classes."""
    rng = np.random.default_rng(3)
    n, k = 80, 4
    labels = rng.integers(0, k, n)
    pred = np.where(rng.random(n) < 0.6, labels, rng.integers(0, k, n))
    target = rng.choice(k, 60, p=[0.55, 0.3, 0.1, 0.05])
    C, b = rlls_system(pred, labels, target, k)
    log_term = np.log(2 * k / 0.05)
    lam = 0.01 * 3 * (2 * log_term / (3 * n) + np.sqrt(2 * log_term / n))
    weights = rlls_weights(pred, labels, target, k)
    np.testing.assert_allclose(weights, 1 + rlls_cvxpy(C, b, lam), atol=1e-7)
    assert np.abs(weights - (1 + rlls_cvxpy(C, b, rlls_lambda(n, 2)))).max() > 1e-5


def literal_lascal_temperature(z_source, y_source, z_target, k):
    """The search written out: for each grid T, the k-class RLLS weights from hard predictions and
    the mean over classes of the binary module's literal estimator loop (float64 arithmetic)."""
    temps = temperature_grid()
    losses = []
    for T in temps:
        s_src, s_tgt = softmax(z_source / float(T)), softmax(z_target / float(T))
        w = rlls_weights(np.argmax(s_src, 1), y_source, np.argmax(s_tgt, 1), k, "cvxpy")
        per_class = [
            ece_label_shift_loop(s_src[:, c], s_tgt[:, c], y_source == c, w[c]) for c in range(k)
        ]
        losses.append(np.mean(per_class))
    best = first_strict_minimum(np.array(losses))
    return float(temps[best]), np.array(losses)


@pytest.mark.parametrize("k", [3, 4])
def test_the_search_is_the_literal_loop_over_temperatures_and_classes(k):
    setting, draw = synthetic_problem(seed=20 + k, k=k, scale=3.0)
    sample = samples(draw, k, np.random.default_rng(k), n=1, size=200)[0][0]
    z_src, z_tgt = np.log(setting.validation.posteriors), np.log(sample.posteriors)
    y = setting.validation.labels
    temperature, literal = literal_lascal_temperature(z_src, y, z_tgt, k)
    losses = lascal_losses(z_src, y, z_tgt, solver="cvxpy", arithmetic="float64")
    np.testing.assert_allclose(losses, literal, rtol=1e-9, atol=1e-12)
    # REF's arithmetic (torch softmax, float32 sums and mean) is the same loss to float32 precision
    reference = lascal_losses(z_src, y, z_tgt, solver="cvxpy", arithmetic="reference")
    assert reference.dtype == np.float32
    np.testing.assert_allclose(reference, literal, rtol=1e-4)
    method = LasCal(logits="S", arithmetic="float64").fit(setting)
    output = method.calibrate(sample, fresh_context(setting))
    np.testing.assert_allclose(output, softmax(z_tgt / temperature), atol=1e-12)
    assert temperature != pytest.approx(1.0, abs=0.05)  # the search moved (a scale-3 classifier)


def test_closed_form_is_refused_for_more_than_two_classes():
    setting, _ = synthetic_problem(k=3)
    with pytest.raises(ValueError, match="two-class RLLS only"):
        LasCal(solver="closed_form").fit(setting)


def test_the_reference_arithmetic_uses_torch_log_and_is_close_to_float64():
    setting, draw = synthetic_problem(seed=3, k=3, scale=3.0)
    sample = samples(draw, 3, np.random.default_rng(5), n=1, size=200)[0][0]
    z = torch_log(sample.posteriors)
    reference = LasCal().fit(setting).calibrate(sample, fresh_context(setting))
    plain = LasCal(arithmetic="float64").fit(setting).calibrate(sample, fresh_context(setting))
    assert np.isfinite(z).all()
    np.testing.assert_allclose(reference, plain, atol=1e-6)


LASCAL_COLUMNS = [
    ("calibration", "LasCal"),
    ("calibration", "EMQ_LasCal"),
    ("quantification", "LasCal_c2q"),
    ("quantification", "EMQ_LasCal"),
    ("cap", "LasCal_c2a"),
]


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 4))
def test_lascal_columns_return_valid_outputs(seed, k):
    setting, draw = synthetic_problem(seed, k, n_val=150, n_train=150, scale=3.0)
    rng = np.random.default_rng(seed)
    methods = {
        (task, name): get_method(task, name).build("label", k).fit(setting)
        for task, name in LASCAL_COLUMNS
    }
    for sample_id, (sample, _) in enumerate(samples(draw, k, rng, n=2, size=80)):
        context = fresh_context(setting, sample_id)
        for (task, name), method in methods.items():
            output = method.apply(sample, context)
            if task == "calibration":
                output = np.asarray(output)
                assert output.shape == sample.posteriors.shape and np.all(output >= 0)
                np.testing.assert_allclose(output.sum(axis=1), 1.0, atol=1e-9)
            elif task == "quantification":
                check_prevalence(output, k, name)
            else:
                assert 0.0 <= float(output) <= 1.0


def test_lascal_columns_run_for_any_number_of_classes_with_their_conventions():
    for task, name in LASCAL_COLUMNS:
        assert not get_method(task, name).binary_only
    lascal = get_method("calibration", "LasCal")
    assert lascal.params("covariate", 3)["logits"] == lascal.params("covariate", 2)["logits"] == "L"
    assert (lascal.params("label", 3)["logits"], lascal.params("label", 2)["logits"]) == ("S", "P")
    assert get_method("quantification", "EMQ_LasCal").shifts == ("label",)


def test_the_source_softmaxes_kept_across_samples_belong_to_the_last_fit():
    """LasCal keeps the source's softmaxes at every grid temperature from its first sample to the
    next (they depend on the source alone): its temperatures and outputs are those of a fresh
    method on each sample, and a refit on another setting computes them anew (a cache kept
    across fits would calibrate the second setting with the first one's source)."""
    from tests.calibration_settings import make_setting

    first, _, draw_first = make_setting(seed=1, train_prevalence=0.5)
    second, _, draw_second = make_setting(seed=2, train_prevalence=0.2, separation=2.0)
    kept = LasCal()
    for setting, draw in ((first, draw_first), (second, draw_second)):
        kept.fit(setting)
        for sample_seed, prevalence in ((3, 0.2), (4, 0.8)):
            sample, _ = draw(250, prevalence, sample_seed=sample_seed)
            fresh = LasCal().fit(setting)
            expected = fresh.calibrate(sample, fresh_context(setting, sample_seed))
            got = kept.calibrate(sample, fresh_context(setting, sample_seed))
            assert np.array_equal(got, expected)
    temps = temperature_grid()
    z_source = torch_log(second.validation.posteriors)
    sample, _ = draw_second(250, 0.8, sample_seed=5)
    z_target = torch_log(sample.posteriors)
    given_softmaxes = lascal_losses(
        z_source,
        second.validation.labels,
        z_target,
        temps=temps,
        source_softmaxes=L.scaled_softmaxes(z_source, temps, "reference"),
    )
    plain = lascal_losses(z_source, second.validation.labels, z_target, temps=temps)
    assert np.array_equal(given_softmaxes, plain, equal_nan=True)
