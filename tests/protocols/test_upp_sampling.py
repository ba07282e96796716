import itertools

import numpy as np
import pytest

from unishift.protocols.sampling import app_indices, npp_indices, upp_indices


def test_upp_prevalences_follow_legacy_rng_and_round_rule():
    labels = np.array([0] * 300 + [1] * 100)
    indices = upp_indices(labels, sample_size=250, repeats=100, seed=0)
    assert indices.shape == (100, 250)
    state = np.random.RandomState(0)
    u = state.rand(100)  # QuaPy's two-class simplex sampler under a temporary legacy seed
    positives = labels[indices].sum(axis=1)
    # Python's round with QuaPy's remainder rule: counts differ from round(250 u) only at .5 ties
    assert np.all(np.abs(positives - np.round(250 * u)) <= 1)
    assert np.array_equal(indices, upp_indices(labels, 250, 100, 0))
    assert not np.array_equal(indices, upp_indices(labels, 250, 100, 1))


def test_upp_draws_with_replacement_from_small_classes():
    labels = np.array([0] * 5 + [1] * 3)
    indices = upp_indices(labels, sample_size=50, repeats=10, seed=0)
    assert indices.max() < 8 and indices.shape == (10, 50)


def test_upp_refuses_a_single_class_pool():
    with pytest.raises(ValueError, match=r"every one of the 2 classes; class \[1\] has none"):
        upp_indices(np.zeros(10, dtype=int), 5, 3, 0)


def test_npp_is_uniform_with_replacement_and_seeded():
    a = npp_indices(20, sample_size=250, repeats=4, seed=0)
    assert a.shape == (4, 250) and a.max() < 20
    assert np.array_equal(a, npp_indices(20, 250, 4, 0))


@pytest.mark.parametrize("seed", [0, 7, 12345])
def test_npp_equals_seeded_uniform_draws_with_replacement(seed):
    # QuaPy's NPP: under a temporary legacy seed, one uniform draw with replacement per sample
    state = np.random.RandomState(seed)
    expected = np.array([state.choice(30, 12, replace=True) for _ in range(6)])
    np.testing.assert_array_equal(npp_indices(30, sample_size=12, repeats=6, seed=seed), expected)


def test_upp_depends_on_its_seed_only():
    labels = np.array([0] * 40 + [1] * 20)
    first, again = upp_indices(labels, 25, 8, seed=3), upp_indices(labels, 25, 8, seed=3)
    np.testing.assert_array_equal(first, again)
    state = np.random.RandomState(3)
    positives = labels[first].sum(axis=1)
    assert np.all(np.abs(positives - np.round(25 * state.rand(8))) <= 1)


def test_k_class_upp_draws_its_prevalences_uniformly_from_the_simplex():
    labels = np.repeat([0, 1, 2], [100, 60, 40])
    indices = upp_indices(labels, 90, 30, seed=4, n_classes=3)
    assert indices.shape == (30, 90)
    # QuaPy's Kraemer sampler under a temporary legacy seed: sorted uniforms, their spacings
    cuts = np.sort(np.random.RandomState(4).rand(30, 2), axis=1)
    shares = np.diff(np.hstack([np.zeros((30, 1)), cuts, np.ones((30, 1))]), axis=1)
    counts = np.stack([np.bincount(labels[row], minlength=3) for row in indices])
    assert np.all(np.abs(counts - 90 * shares) <= 1)
    assert np.array_equal(indices, upp_indices(labels, 90, 30, seed=4, n_classes=3))
    with pytest.raises(ValueError, match=r"class \[3\] has none"):
        upp_indices(labels, 90, 30, seed=4, n_classes=4)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_app_visits_every_point_of_the_prevalence_grid(n_classes):
    labels = np.repeat(np.arange(n_classes), 30)
    indices = app_indices(labels, 40, 2, seed=0, n_prevalences=5, n_classes=n_classes)
    grid = {
        p for p in itertools.product(range(5), repeat=n_classes) if sum(p) == 4
    }  # shares in quarters that sum to one
    assert indices.shape == (2 * len(grid), 40)
    seen = [tuple(np.bincount(labels[row], minlength=n_classes) // 10) for row in indices]
    assert set(seen) == grid and all(seen.count(p) == 2 for p in grid)
