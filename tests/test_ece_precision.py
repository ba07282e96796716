"""The faithful (float32) top-label ECE against an oracle that lets PyTorch do the arithmetic the
reference describes (reporting.md §1.1), and the float64 switch."""

import numpy as np
import pytest
import torch

from unishift.data.containers import LabelledSet, Setting
from unishift.evaluation import SetupData, evaluate_setup
from unishift.methods.base import Calibrator
from unishift.metrics import ece_top_label


def torch_oracle(posteriors, labels, n_bins=15):
    """Top-label ECE x 100 computed by torch with its default dtype for bins and sums."""
    p = torch.softmax(torch.log(torch.from_numpy(posteriors)), dim=1)  # float64
    confidence, predicted = torch.max(p, dim=1)
    correct = predicted.eq(torch.from_numpy(labels))
    edges = torch.linspace(0, 1, n_bins + 1)  # float32
    total = torch.zeros(1)  # float32 accumulator
    for lower, upper in zip(edges[:-1].tolist(), edges[1:].tolist()):
        member = (confidence > lower) & (confidence <= upper)
        share = member.float().mean()
        if share.item() > 0:
            gap = torch.abs(confidence[member].mean() - correct[member].float().mean())
            total += share * gap**2
    return torch.round(total, decimals=4).item() * 100


def _rows(positive):
    positive = np.asarray(positive, dtype=float)
    return np.column_stack([1 - positive, positive])


@pytest.fixture(scope="module")
def knn_like():
    rng = np.random.default_rng(3)
    # k-NN with 10 neighbours: confidences on k/10, i.e. on and next to the bin edges 0.6, 0.8, 1
    return _rows(rng.integers(0, 11, 250) / 10), rng.integers(0, 2, 250)


def test_float32_equals_the_torch_oracle_on_many_samples():
    rng = np.random.default_rng(4)
    for trial in range(120):
        n = int(rng.integers(1, 260))
        kind = trial % 3
        if kind == 0:
            positive = rng.integers(0, 11, n) / 10
        elif kind == 1:
            positive = np.round(rng.random(n), 2)
        else:
            positive = rng.choice([2 / 3, 1 / 3, 0.6, 0.4, 0.8, 14 / 15, 0.5, 1.0], n)
        P, y = _rows(positive), rng.integers(0, 2, n)
        assert ece_top_label(P, y) == torch_oracle(P, y), (trial, positive[:5])


def test_a_confidence_of_0_6_is_binned_as_the_reference_bins_it():
    # Confidence 0.6 (a k-NN vote of 6/10): above torch's float32 edge 0.59999996, so in bin
    # (0.6, 0.667]; with float64 edges it is in (0.533, 0.6]. With one item at 0.6 (correct) and one
    # at 0.65 (wrong) they share a bin in float32 and sit in separate bins in float64.
    P, y = _rows([0.6, 0.65]), np.array([1, 0])
    shared_bin = 0.5 * 2 * (0.625 - 0.5) ** 2  # one bin holding both
    separate = 0.5 * (0.6 - 1) ** 2 + 0.5 * (0.65 - 0) ** 2
    assert ece_top_label(P, y) == pytest.approx(round(shared_bin, 4) * 100, abs=1e-6)
    assert ece_top_label(P, y, precision="float64") == pytest.approx(round(separate, 4) * 100)
    assert ece_top_label(P, y) == torch_oracle(P, y)


def test_the_float32_value_is_a_float32_number(knn_like):
    P, y = knn_like
    value = ece_top_label(P, y)
    # REF returns float32(ece rounded to 4 decimals) * 100: not a multiple of 0.01 in float64
    assert value / 100 == float(np.float32(value / 100))
    assert value == pytest.approx(ece_top_label(P, y, precision="float64"), abs=0.02)


def test_precision_is_checked():
    with pytest.raises(ValueError, match="precision='half'.*float32"):
        ece_top_label(_rows([0.7]), np.array([1]), precision="half")


class Shrink(Calibrator):
    """Pulls every posterior halfway to 0.5 (a calibrator whose ECE we can predict)."""

    def fit(self, setting):
        return self

    def calibrate(self, sample, context):
        return 0.5 + (sample.posteriors - 0.5) / 2


def test_the_driver_uses_the_chosen_precision():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 80)
    P = _rows(np.clip(np.where(y == 1, 0.7, 0.3) + rng.choice([-0.1, 0, 0.1, 0.2], 80), 0, 1))
    setting = Setting(LabelledSet(P, y), LabelledSet(P, y), shift="label", key="toy/NB")
    setup = SetupData("label", "NB", "toy", setting, LabelledSet(P, y),
                      rng.integers(0, 80, (4, 30)), np.zeros(4))  # fmt: skip
    rows = {
        precision: evaluate_setup("calibration", "Shrink", Shrink, setup, ece_precision=precision)[
            0
        ]
        for precision in ("float32", "float64")
    }
    for sample_id, (r32, r64) in enumerate(zip(rows["float32"], rows["float64"])):
        sample, labels = setup.sample(sample_id)
        calibrated = 0.5 + (sample.posteriors - 0.5) / 2
        assert r32["ece"] == ece_top_label(calibrated, labels) == torch_oracle(calibrated, labels)
        assert r64["ece"] == ece_top_label(calibrated, labels, precision="float64")
    with pytest.raises(ValueError, match="ece_precision"):
        evaluate_setup("calibration", "Shrink", Shrink, setup, ece_precision="double")
