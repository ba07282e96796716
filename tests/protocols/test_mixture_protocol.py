import numpy as np
import pytest

from unishift.protocols.mixture import mixture_indices, target_counts


def test_round_counts_are_the_reference_codes():
    m = target_counts(250, 100, "round")
    assert m[:8].tolist() == [0, 3, 5, 8, 10, 13, 15, 18]
    assert m[-4:].tolist() == [242, 245, 247, 250]
    assert len(m) == 100 and np.all(np.diff(m) >= 0)


def test_ceil_counts_are_the_papers_formula():
    m = target_counts(250, 100, "ceil")
    assert m[:8].tolist() == [0, 2, 5, 7, 10, 12, 15, 17]
    assert m[-1] == 250
    # n_A(i) = ceil(250 (1 - (i-1)/99)) for i = 1..100
    assert np.array_equal(250 - m, np.ceil(250 * (1 - np.arange(100) / 99)).astype(int))


def test_unknown_count_rule_is_rejected():
    with pytest.raises(ValueError, match="round"):
        target_counts(counts="floor")


def test_indices_follow_the_reference_draw_order():
    out = mixture_indices(40, 25, sample_size=10, repeats=5, seed=3)
    # the reference: seed the legacy global RNG once, then per sample source draws then target draws
    np.random.seed(3)
    for k, m_k in enumerate(np.round(np.linspace(0, 10, 5)).astype(int)):
        source = np.random.choice(40, 10 - m_k, replace=True)
        target = np.random.choice(25, m_k, replace=True)
        assert np.array_equal(out["indices"][k], np.concatenate([source, 40 + target]))


def test_samples_mix_source_then_target_and_intensity_is_the_target_fraction():
    out = mixture_indices(300, 200, seed=0)
    indices, m = out["indices"], out["target_counts"]
    assert indices.shape == (100, 250)
    assert indices.min() >= 0 and indices.max() < 500
    for k in (0, 1, 50, 99):
        row = indices[k]
        assert np.all(row[: 250 - m[k]] < 300) and np.all(row[250 - m[k] :] >= 300)
    assert np.array_equal(out["shift_intensity"], m / 250)
    assert out["shift_intensity"][0] == 0 and out["shift_intensity"][-1] == 1
    # with replacement: a 250-item sample from a 30-item pool must repeat items
    small = mixture_indices(30, 30, seed=0)["indices"]
    assert len(np.unique(small[0])) < 250


def test_reproducible_and_leaves_the_global_rng_alone():
    np.random.seed(123)
    before = np.random.random()
    np.random.seed(123)
    first = mixture_indices(100, 80, seed=0)
    after = np.random.random()
    assert before == after
    again = mixture_indices(100, 80, seed=0)
    other = mixture_indices(100, 80, seed=1)
    assert np.array_equal(first["indices"], again["indices"])
    assert not np.array_equal(first["indices"], other["indices"])


def test_empty_pool_is_rejected():
    with pytest.raises(ValueError, match="non-empty"):
        mixture_indices(0, 10)
