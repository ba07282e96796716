"""The reference code's float32 arithmetic, replicated in NumPy, against PyTorch itself."""

import numpy as np
import pytest
import torch

from unishift.numerics import float32_running_sum, round_float32, torch_linspace_float32


@pytest.mark.parametrize(
    "start, end, steps", [(0, 1, 16), (0, 1, 11), (0.1, 20.0, 100), (0, 1, 2), (-3, 7.5, 33)]
)
def test_linspace_is_torchs_bit_for_bit(start, end, steps):
    ours = torch_linspace_float32(start, end, steps)
    assert ours.dtype == np.float32
    np.testing.assert_array_equal(ours, torch.linspace(start, end, steps).numpy())


def test_linspace_edges_are_not_numpys():
    # The reason the faithful ECE needs them: torch's 9/15 and 10/15 lie below 0.6 and 2/3, so a
    # k-NN confidence of 0.6 (or 2/3) is in the bin above the edge, not below it as with float64.
    edges32 = torch_linspace_float32(0, 1, 16).astype(np.float64)
    edges64 = np.linspace(0, 1, 16)
    assert edges32[9] < 0.6 <= edges64[9] and edges32[10] < 2 / 3 <= edges64[10]


def _torch_accumulate(terms):
    acc = torch.zeros(1)
    for t in terms:
        acc += torch.tensor(t, dtype=torch.float64)
    return acc.item()


def test_running_sum_is_a_float32_accumulator_fed_in_order():
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 250):
        terms = rng.random(n) ** 3 * 10.0 ** rng.integers(-9, 2, n)
        assert float(float32_running_sum(terms)) == _torch_accumulate(terms)
    # order matters in float32, and the helper keeps it: a large term first swallows small ones
    terms = np.array([1.0, 5e-8, 5e-8, 5e-8, 5e-8])
    assert float(float32_running_sum(terms)) == _torch_accumulate(terms) == 1.0
    assert float(float32_running_sum(terms[::-1])) == _torch_accumulate(terms[::-1]) > 1.0
    assert float32_running_sum(np.array([])) == 0.0


def test_running_sum_along_rows():
    rng = np.random.default_rng(1)
    terms = rng.random((5, 40)) * 1e-3
    np.testing.assert_array_equal(
        float32_running_sum(terms, axis=1),
        np.array([_torch_accumulate(row) for row in terms], dtype=np.float32),
    )


def test_rounding_is_torchs_float32_rounding():
    rng = np.random.default_rng(2)
    values = np.concatenate(
        [rng.random(2000) * 0.05, np.array([0.00125, 0.00135, 0.01235, 0.0001499, 0.0])]
    ).astype(np.float32)
    expected = torch.round(torch.from_numpy(values), decimals=4).numpy()
    np.testing.assert_array_equal(np.array([round_float32(v, 4) for v in values]), expected)
