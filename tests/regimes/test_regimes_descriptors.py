"""Shift descriptors (docs/regimes.md §1) against literal loops and closed forms."""

import numpy as np
import pytest

from unishift.protocols.mixture import mixture_indices
from unishift.regimes import descriptors as D


def _loop_l1(p, q):
    total = 0.0
    for a, b in zip(p, q, strict=True):
        total += abs(a - b)
    return total


def _loop_prevalence(labels, k):
    counts = [0] * k
    for y in labels:
        counts[y] += 1
    return [c / len(labels) for c in counts]


@pytest.mark.parametrize("k", [2, 3, 5])
def test_true_label_shift_is_the_l1_between_prevalence_vectors(k):
    rng = np.random.default_rng(k)
    train = rng.dirichlet(np.ones(k))
    labels = rng.integers(0, k, 97)
    expected = _loop_l1(train, _loop_prevalence(labels, k))
    assert D.true_label_shift(train, labels) == pytest.approx(expected, abs=1e-15)


def test_true_label_shift_tells_the_classes_apart_and_is_twice_the_binary_intensity():
    # all items of class 0 against a 70/30 training prevalence: |0.7 - 1| + |0.3 - 0|
    assert D.true_label_shift([0.7, 0.3], np.zeros(10, dtype=int)) == pytest.approx(0.6)
    assert D.true_label_shift([0.7, 0.3], np.ones(10, dtype=int)) == pytest.approx(1.4)
    labels = np.array([1] * 3 + [0] * 7)
    assert D.true_label_shift([0.6, 0.4], labels) == pytest.approx(2 * abs(0.3 - 0.4))
    # a class missing from the sample still counts
    assert D.true_label_shift([0.2, 0.3, 0.5], np.array([0, 1])) == pytest.approx(0.3 + 0.2 + 0.5)


def test_true_mixture_is_the_mixture_protocols_intensity():
    out = mixture_indices(50, 40, sample_size=20, repeats=6, seed=2)
    for row, intensity in zip(out["indices"], out["shift_intensity"], strict=True):
        assert D.true_mixture(row >= 50) == pytest.approx(intensity)
    assert D.true_mixture([0, 1, 1, 1]) == 0.75
    with pytest.raises(ValueError, match="booleans"):
        D.true_mixture([0, 2])


def _posteriors(rng, labels, k, strength=2.0):
    logits = rng.normal(size=(len(labels), k))
    logits[np.arange(len(labels)), labels] += strength
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_est_prevalence_shift_binary_is_the_closed_form_pacc():
    rng = np.random.default_rng(0)
    yv = rng.integers(0, 2, 400)
    pv = _posteriors(rng, yv, 2)
    ys = (rng.random(250) < 0.3).astype(int)
    ps = _posteriors(rng, ys, 2)
    tpr = pv[yv == 1, 1].mean()
    fpr = pv[yv == 0, 1].mean()
    p_hat = float(np.clip((ps[:, 1].mean() - fpr) / (tpr - fpr), 0, 1))
    train = np.array([0.55, 0.45])
    q = D.fit_prevalence_estimator(pv, yv)
    assert q.predict(ps)[1] == pytest.approx(p_hat, abs=1e-4)
    expected = abs(0.55 - (1 - p_hat)) + abs(0.45 - p_hat)
    assert D.est_prevalence_shift(train, q, ps) == pytest.approx(expected, abs=2e-4)


def test_est_prevalence_shift_multiclass_solves_the_mean_posterior_system():
    rng = np.random.default_rng(1)
    k = 3
    yv = rng.integers(0, k, 900)
    pv = _posteriors(rng, yv, k, strength=2.5)
    ys = rng.choice(k, 300, p=[0.5, 0.3, 0.2])
    ps = _posteriors(rng, ys, k, strength=2.5)
    # M[:, j] = mean posterior vector of the validation items of class j; PACC solves M p = mean(ps)
    M = np.column_stack([pv[yv == j].mean(axis=0) for j in range(k)])
    p_exact = np.linalg.solve(M, ps.mean(axis=0))
    assert np.all(p_exact > 0)  # interior: the simplex-constrained solver must find the same point
    q = D.fit_prevalence_estimator(pv, yv)
    assert np.allclose(q.predict(ps), p_exact, atol=1e-3)
    train = np.array([0.2, 0.3, 0.5])
    assert D.est_prevalence_shift(train, q, ps) == pytest.approx(_loop_l1(train, p_exact), abs=3e-3)


def test_prevalence_estimator_refuses_a_validation_set_without_a_class():
    rng = np.random.default_rng(2)
    yv = rng.integers(0, 2, 50)  # class 2 absent
    with pytest.raises(ValueError, match=r"class \[2\]"):
        D.fit_prevalence_estimator(_posteriors(rng, yv, 3), yv)


def test_domain_auc_near_half_without_shift_and_near_one_with_it():
    rng = np.random.default_rng(3)
    ref = rng.normal(size=(500, 4))
    same = rng.normal(size=(250, 4))
    moved = rng.normal(size=(250, 4)) + np.array([2.5, 0, 0, 0])
    assert abs(D.domain_auc(ref, same, seed=0) - 0.5) < 0.1
    assert D.domain_auc(ref, moved, seed=0) > 0.95


def test_domain_auc_is_out_of_fold():
    # 60 + 60 items in 40 dimensions from one distribution: a model scored on its own training
    # items separates them almost perfectly; held-out AUC stays near chance.
    rng = np.random.default_rng(4)
    ref, smp = rng.normal(size=(60, 40)), rng.normal(size=(60, 40))
    assert D.domain_auc(ref, smp, seed=0) < 0.7


def test_domain_auc_keeps_copies_of_an_item_in_one_fold():
    # a sample drawn with replacement from 40 items of the reference's distribution: with copies
    # split across folds the model recognises them (AUC near 0.85 in 100 dimensions)
    rng = np.random.default_rng(9)
    aucs = []
    for seed in range(3):
        ref = rng.normal(size=(600, 100))
        smp = rng.normal(size=(40, 100))[rng.integers(0, 40, 250)]
        aucs.append(D.domain_auc(ref, smp, seed=seed))
    assert np.mean(aucs) < 0.65
    with pytest.raises(ValueError, match="distinct items"):
        D.domain_auc(ref, smp[:1].repeat(20, axis=0), seed=0)


def test_domain_auc_is_seeded_and_matches_the_reference_to_the_sample_size():
    rng = np.random.default_rng(5)
    ref = rng.normal(size=(400, 3))
    smp = rng.normal(size=(100, 3)) + 0.3
    a = D.domain_auc(ref, smp, seed=7)
    assert a == D.domain_auc(ref, smp, seed=7)
    assert a != D.domain_auc(ref, smp, seed=8)
    # the reference is cut to the sample's size by a seeded draw without replacement
    drawn = ref[np.sort(np.random.default_rng(7).choice(400, 100, replace=False))]
    assert a == D.domain_auc(drawn, smp, seed=7)
    with pytest.raises(ValueError, match="same columns"):
        D.domain_auc(ref, smp[:, :2], seed=0)


def _loop_confidence(p):
    return sum(max(row) for row in p) / len(p)


def _loop_predicted(p):
    counts = [0] * len(p[0])
    for row in p:
        best = 0
        for c in range(1, len(row)):
            if row[c] > row[best]:
                best = c
        counts[best] += 1
    return [c / len(p) for c in counts]


@pytest.mark.parametrize("case", range(60))
def test_stratified_group_folds_are_scikit_learns_folds(case):
    """The hand-written fold assignment against the library it replaces (its oracle): tied class
    distributions (many groups of one or two items), uneven group sizes, 2 to 7 classes and the
    domain classifier's own shape (reference items 0, sample items 1, copies sharing a group)."""
    import warnings

    from sklearn.model_selection import StratifiedGroupKFold

    rng = np.random.default_rng(case)
    n = int(rng.integers(20, 400))
    k = 2 if case % 3 == 0 else int(rng.integers(2, 8))
    if case % 5 == 0:  # domain_auc's input: a reference half and a sample half with copies
        y = np.r_[np.zeros(n // 2, dtype=int), np.ones(n - n // 2, dtype=int)]
        groups = np.r_[np.arange(n // 2), n // 2 + rng.integers(0, max(5, n // 4), n - n // 2)]
    else:
        y = rng.integers(0, k, n)
        groups = rng.integers(0, int(rng.integers(10, n + 1)), n)
    seed = int(rng.integers(0, 2**31 - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a class with fewer members than folds
        try:
            expected = list(
                StratifiedGroupKFold(5, shuffle=True, random_state=seed).split(
                    np.zeros(n), y, groups
                )
            )
        except ValueError:
            pytest.skip("scikit-learn refuses this draw")
    found = D.stratified_group_folds(y, groups, 5, seed)
    assert len(found) == len(expected) == 5
    for (train, test), (train_expected, test_expected) in zip(found, expected):
        np.testing.assert_array_equal(test, test_expected)
        np.testing.assert_array_equal(train, train_expected)


def test_stratified_group_folds_refuse_what_they_cannot_reproduce():
    y = np.arange(8).repeat(10)  # eight classes: NumPy sums them pairwise
    with pytest.raises(ValueError, match="2 to 7 classes"):
        D.stratified_group_folds(y, np.arange(80), 5, 0)
    with pytest.raises(ValueError, match="5 folds"):
        D.stratified_group_folds(np.r_[np.zeros(5), np.ones(5)], np.arange(10) % 4, 5, 0)


def test_confidence_drop_and_prediction_shift_against_loops():
    rng = np.random.default_rng(6)
    k = 4
    pv = rng.dirichlet(np.ones(k), size=50)
    ps = rng.dirichlet(np.ones(k) * 0.3, size=40)
    # ties: the argmax goes to the lowest class index
    ps[0] = [0.4, 0.4, 0.1, 0.1]
    ps[1] = [0.1, 0.3, 0.3, 0.3]
    ref = D.make_reference(pv, np.arange(50) % k, np.full(k, 1 / k))
    out = D.describe_sample(ref, ps)
    expected = _loop_confidence(pv) - _loop_confidence(ps)
    assert out["confidence_drop"] == pytest.approx(expected, abs=1e-12)
    expected = _loop_l1(_loop_predicted(pv), _loop_predicted(ps))
    assert out["prediction_shift"] == pytest.approx(expected, abs=1e-12)
    assert D.predicted_distribution(ps[:2]).tolist() == [0.5, 0.5, 0, 0]


def _setup(k=3, seed=0):
    rng = np.random.default_rng(seed)
    yv = rng.integers(0, k, 300)
    xv = rng.normal(size=(300, 4)) + yv[:, None]
    pv = _posteriors(rng, yv, k)
    ys = rng.integers(0, k, 120)
    xs = rng.normal(size=(120, 4)) + ys[:, None] + 0.7
    ps = _posteriors(rng, ys, k)
    return yv, xv, pv, ys, xs, ps


def test_describe_sample_names_order_and_values():
    yv, xv, pv, ys, xs, ps = _setup()
    train = np.array([0.3, 0.3, 0.4])
    ref = D.make_reference(pv, yv, train)
    is_target = np.arange(120) < 30
    out = D.describe_sample(ref, ps, sample_labels=ys, sample_is_target=is_target)
    assert list(out) == [d for d in D.DESCRIPTORS if d != "domain_auc"]
    assert out["true_label_shift"] == D.true_label_shift(train, ys)
    assert out["true_mixture"] == 0.25
    q = D.fit_prevalence_estimator(pv, yv)
    assert out["est_prevalence_shift"] == D.est_prevalence_shift(train, q, ps)
    expected = _loop_confidence(pv) - _loop_confidence(ps)
    assert out["confidence_drop"] == pytest.approx(expected, abs=1e-12)
    expected = _loop_l1(_loop_predicted(pv), _loop_predicted(ps))
    assert out["prediction_shift"] == pytest.approx(expected, abs=1e-12)
    assert out == D.describe_sample(ref, ps, sample_labels=ys, sample_is_target=is_target)
    # unsupervised only: no labels, no domain flags
    bare = D.describe_sample(ref, ps)
    assert list(bare) == ["est_prevalence_shift", "confidence_drop", "prediction_shift"]


def test_describe_sample_rejects_inconsistent_inputs():
    yv, xv, pv, ys, xs, ps = _setup()
    ref = D.make_reference(pv, yv, [0.3, 0.3, 0.4])
    with pytest.raises(ValueError, match="3 classes"):
        D.describe_sample(ref, ps[:, :2])
    with pytest.raises(ValueError, match="labels"):
        D.describe_sample(ref, ps, sample_labels=ys[:10])
    with pytest.raises(ValueError, match="not on the probability simplex"):
        D.make_reference(pv, yv, [0.5, 0.5, 0.5])
