"""LasCal's temperature search in the reference's arithmetic (torch softmax, float32 loss sums).

``tests/fixtures/reference_lascal_cmc3_LR_sample20.npz`` holds the inputs of one search as the
reference code saw them (cmc.3, Logistic Regression, validation posteriors and the posteriors of
UPP sample 20) and the 100 float32 losses its own LasCal loop computed on them (see
``tests/fixtures/README.md``). On this sample a float64 sum picks another temperature.
"""

from pathlib import Path

import numpy as np
import pytest
import torch

from unishift.methods.calibration.lascal import (
    LasCal,
    _torch_scaled_softmaxes,
    ece_label_shift_loop,
    ece_label_shift_vectorised,
    lascal_losses,
    lascal_temperature,
    torch_log,
)
from unishift.methods.calibration.shared import temperature_grid

FIXTURE = Path(__file__).parents[2] / "fixtures" / "reference_lascal_cmc3_LR_sample20.npz"


@pytest.fixture(scope="module")
def reference_search():
    with np.load(FIXTURE) as data:
        return {k: data[k] for k in data.files}


def test_the_reference_losses_are_reproduced_bit_for_bit(reference_search):
    f = reference_search
    losses = lascal_losses(
        f["validation_posteriors"], f["validation_labels"], f["sample_posteriors"]
    )
    assert losses.dtype == np.float32
    np.testing.assert_array_equal(losses, f["reference_losses"])
    T, _ = lascal_temperature(
        f["validation_posteriors"], f["validation_labels"], f["sample_posteriors"]
    )
    assert T == float(temperature_grid()[np.argmin(f["reference_losses"])])


def test_float64_arithmetic_picks_another_temperature_here(reference_search):
    f = reference_search
    args = (f["validation_posteriors"], f["validation_labels"], f["sample_posteriors"])
    faithful, _ = lascal_temperature(*args)
    plain, losses = lascal_temperature(*args, arithmetic="float64")
    assert losses.dtype == np.float64 and plain != faithful
    # the two criteria agree to ~1e-4: a near-tie that the last bits decide
    np.testing.assert_allclose(losses, f["reference_losses"], atol=1e-3)


def test_softmax_and_log_are_torchs():
    rng = np.random.default_rng(0)
    p = rng.dirichlet([1, 1], 2000)
    temps = temperature_grid()[:7]
    z = np.log(p)
    ours = _torch_scaled_softmaxes(z, temps)
    expected = torch.stack([torch.softmax(torch.from_numpy(z) / float(t), -1) for t in temps])
    np.testing.assert_array_equal(ours, expected.numpy())
    np.testing.assert_array_equal(torch_log(p), torch.log(torch.from_numpy(p)).numpy())
    # and NumPy's differ in the last bits on some entries (why the switch exists)
    numpy_softmax = np.exp(z / float(temps[3]))
    numpy_softmax /= numpy_softmax.sum(axis=1, keepdims=True)
    assert np.any(numpy_softmax != ours[3])


def test_s_logits_follow_the_arithmetic():
    from unishift.data.containers import Sample

    p = np.random.default_rng(1).dirichlet([1, 1], 50)
    sample = Sample(p)
    logits = {
        (convention, arithmetic): LasCal(convention, arithmetic=arithmetic)._logits(sample)
        for convention, arithmetic in [("S", "reference"), ("S", "float64"), ("P", "reference")]
    }
    np.testing.assert_array_equal(logits["S", "reference"], torch_log(p))
    np.testing.assert_array_equal(logits["S", "float64"], np.log(p))
    np.testing.assert_array_equal(logits["P", "reference"], p)


def _tied_confidences(rng, n):
    # few distinct values, so equal-count edges fall on ties
    return rng.choice(np.linspace(0.05, 0.95, 7), n) + rng.integers(0, 2, n) * 1e-17


@pytest.mark.parametrize("arithmetic", ["reference", "float64"])
def test_vectorised_estimator_equals_the_loop(arithmetic):
    """Bit for bit in REF's arithmetic (a float32 sum in REF's order); float64 sums pairwise."""
    rng = np.random.default_rng(2)
    n_temps, n_s, n_t = 6, 140, 90
    source = np.vstack([_tied_confidences(rng, n_s) for _ in range(n_temps)])
    target = np.vstack([_tied_confidences(rng, n_t) for _ in range(n_temps)])
    is_class = rng.integers(0, 2, n_s).astype(bool)
    weights = rng.uniform(0.5, 2.0, n_temps)
    vectorised = ece_label_shift_vectorised(
        source, target, is_class, weights, arithmetic=arithmetic
    )
    loop = [
        ece_label_shift_loop(source[r], target[r], is_class, weights[r], arithmetic=arithmetic)
        for r in range(n_temps)
    ]
    loop = np.asarray(loop, dtype=vectorised.dtype)
    if arithmetic == "reference":
        np.testing.assert_array_equal(vectorised, loop)
    else:
        np.testing.assert_allclose(vectorised, loop, rtol=1e-13)


def test_the_float32_loop_is_a_torch_accumulation():
    rng = np.random.default_rng(3)
    source, target = _tied_confidences(rng, 120), _tied_confidences(rng, 80)
    is_class = rng.integers(0, 2, 120).astype(bool)
    ours = ece_label_shift_loop(source, target, is_class, 1.3, arithmetic="reference")
    # oracle: the same bins and expected rates, with the sum left to a float32 torch tensor
    edges = np.interp(np.linspace(0, 80, 16), np.arange(80), np.sort(target))
    total = torch.zeros(1)
    for lower, upper in zip(edges[:-1], edges[1:]):
        in_t = (target > lower) & (target <= upper)
        in_s = (source > lower) & (source <= upper)
        if in_t.sum() > 1:
            count = torch.tensor(float(is_class[in_s].sum()), dtype=torch.float32)
            expected = (79 / 120) * (1.3 * count) / (int(in_t.sum()) - 1)
            for point in target[in_t]:
                total += torch.abs(torch.tensor(point, dtype=torch.float64) - expected) ** 2
    assert ours == (total / 80).item()
