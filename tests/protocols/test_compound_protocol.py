"""Compound-shift samples (docs/regimes.md §2): realised mixture and prevalence against the pool
labels, rounding bounds, seeding, replacement rules."""

import numpy as np
import pytest
from scipy import stats

from unishift.protocols.compound import compound_indices, largest_remainder
from unishift.protocols.mixture import target_counts


def _pools(k, n_source=400, n_target=300, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, k, n_source), rng.integers(0, k, n_target)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_realised_mixture_and_prevalence_are_the_drawn_ones_up_to_rounding(k):
    source, target = _pools(k)
    S, R = 60, 25
    out = compound_indices(source, target, k, sample_size=S, repeats=R, seed=4)
    pool = np.concatenate([source, target])
    assert out["indices"].shape == (R, S)
    assert np.array_equal(out["target_counts"], target_counts(S, R, "round"))
    for r in range(R):
        row = out["indices"][r]
        is_target = row >= len(source)
        # oracle: the pool's own labels and the index ranges, counted by loops
        counts = [0] * k
        for i in row:
            counts[pool[i]] += 1
        realised = np.array(counts) / S
        assert np.allclose(out["realised_prevalence"][r], realised)
        assert out["realised_mixture"][r] == is_target.sum() / S
        assert out["mixture"][r] == out["target_counts"][r] / S  # the grid: drawn = realised
        assert np.all(np.abs(realised - out["prevalence"][r]) < 1 / S)
        # each domain's share has the sample's prevalence up to rounding
        m = is_target.sum()
        for c in range(k):
            t_c = np.sum(pool[row[is_target]] == c)
            assert abs(t_c - m * counts[c] / S) < 1
        # source items first, then target items
        assert np.all(np.diff(is_target.astype(int)) >= 0)
    assert np.allclose(out["prevalence"].sum(axis=1), 1)


def test_prevalences_are_quapys_uniform_simplex_draw_after_the_mixtures():
    from quapy.functional import uniform_prevalence_sampling

    source, target = _pools(3)
    out = compound_indices(source, target, 3, sample_size=40, repeats=10, seed=11)
    state = np.random.get_state()
    np.random.seed(11)
    expected = uniform_prevalence_sampling(3, 10)
    np.random.set_state(state)
    assert np.array_equal(out["prevalence"], expected)
    uniform = compound_indices(
        source, target, 3, sample_size=40, repeats=10, seed=11, mixture="uniform"
    )
    np.random.seed(11)
    u = np.random.rand(10)
    expected = uniform_prevalence_sampling(3, 10)
    np.random.set_state(state)
    assert np.array_equal(uniform["mixture"], u)
    assert np.array_equal(uniform["target_counts"], np.round(u * 40).astype(int))
    assert np.array_equal(uniform["prevalence"], expected)


def test_prevalences_are_uniform_on_the_simplex():
    k = 4
    source, target = _pools(k)
    out = compound_indices(source, target, k, sample_size=20, repeats=2000, seed=0)
    # a coordinate of the uniform distribution on the simplex is Beta(1, k - 1)
    for c in range(k):
        assert stats.kstest(out["prevalence"][:, c], stats.beta(1, k - 1).cdf).pvalue > 0.001


def test_same_seed_same_indices_other_seed_other_indices_global_rng_untouched():
    source, target = _pools(3)
    np.random.seed(5)
    before = np.random.random()
    np.random.seed(5)
    a = compound_indices(source, target, 3, sample_size=30, repeats=8, seed=1)
    assert np.random.random() == before
    b = compound_indices(source, target, 3, sample_size=30, repeats=8, seed=1)
    c = compound_indices(source, target, 3, sample_size=30, repeats=8, seed=2)
    for key in a:
        assert np.array_equal(a[key], b[key]), key
    assert not np.array_equal(a["indices"], c["indices"])


def test_without_replacement_unless_a_class_runs_short():
    source, target = _pools(2, n_source=500, n_target=500)
    out = compound_indices(source, target, 2, sample_size=50, repeats=20, seed=0)
    assert not out["short"].any()
    for row in out["indices"]:
        assert len(np.unique(row)) == len(row)
    # a target pool with 3 items of class 1: samples needing more draw them with replacement
    small_target = np.array([0] * 200 + [1] * 3)
    out = compound_indices(source, small_target, 2, sample_size=50, repeats=20, seed=0)
    needed = out["class_counts"][:, 1, 1]
    assert np.array_equal(out["short"][:, 1, 1], needed > 3)
    assert out["short"][:, 1, 1].any() and not out["short"][:, 0].any()
    for r, row in enumerate(out["indices"]):
        cell = row[row >= 500]
        cell = cell[small_target[cell - 500] == 1]
        if not out["short"][r, 1, 1]:
            assert len(np.unique(cell)) == len(cell)
        else:
            assert len(np.unique(cell)) <= 3 < len(cell)
    with pytest.raises(ValueError, match="class 1 from the target pool, which has 3"):
        compound_indices(
            source, small_target, 2, sample_size=50, repeats=20, seed=0, replace="never"
        )
    always = compound_indices(
        source, target, 2, sample_size=50, repeats=20, seed=0, replace="always"
    )
    assert any(len(np.unique(row)) < len(row) for row in always["indices"])


def test_a_class_missing_from_a_pool_is_refused():
    source = np.array([0, 1, 2] * 30)
    target = np.array([0, 1] * 40)
    with pytest.raises(ValueError, match="class 2 from the target pool, which has none"):
        compound_indices(source, target, 3, sample_size=30, repeats=10, seed=0)


def test_bad_arguments_are_refused():
    source, target = _pools(2)
    with pytest.raises(ValueError, match="mixture"):
        compound_indices(source, target, 2, mixture="linear")
    with pytest.raises(ValueError, match="replace"):
        compound_indices(source, target, 2, replace="sometimes")
    with pytest.raises(ValueError, match="0..1"):
        compound_indices(source, np.array([0, 3]), 2)


def test_largest_remainder_against_hand_counts():
    assert largest_remainder(3, [1 / 3] * 3).tolist() == [1, 1, 1]
    assert largest_remainder(1, [0.5, 0.5]).tolist() == [1, 0]  # tie: lower index
    assert largest_remainder(5, [0.1, 0.45, 0.45]).tolist() == [1, 2, 2]
    assert largest_remainder(10, [0.14, 0.26, 0.6]).tolist() == [1, 3, 6]
    assert largest_remainder(0, [0.3, 0.7]).tolist() == [0, 0]
    rng = np.random.default_rng(0)
    for _ in range(200):
        w = rng.dirichlet(np.ones(4))
        total = int(rng.integers(0, 300))
        counts = largest_remainder(total, w)
        assert counts.sum() == total and np.all(np.abs(counts - total * w) < 1)
