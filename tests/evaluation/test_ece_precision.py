"""The faithful (float32) ECEs against an oracle that lets PyTorch do the arithmetic the reference
describes (docs/reporting.md §1.1): the top-label ECE for two and more classes, the class-wise ECE (the
mean of its float32 per-class sums, rounded as a float32), and the float64 switch."""

import numpy as np
import pytest
import torch

from unishift.data.containers import LabelledSet, Setting
from unishift.evaluation.evaluate import SetupData, evaluate_setup
from unishift.evaluation.metrics import ece_classwise, ece_top_label
from unishift.methods.base import Calibrator


def torch_binned_gap(scores, targets, n_bins=15):
    """The unrounded float32 sum over bins (l, u] of share * gap^2, computed by torch with its
    default dtype for the edges, the shares, the target means and the accumulator."""
    edges = torch.linspace(0, 1, n_bins + 1)  # float32
    total = torch.zeros(1)  # float32 accumulator
    for lower, upper in zip(edges[:-1].tolist(), edges[1:].tolist()):
        member = (scores > lower) & (scores <= upper)
        share = member.float().mean()
        if share.item() > 0:
            gap = torch.abs(scores[member].mean() - targets[member].float().mean())
            total += share * gap**2
    return total


def torch_oracle(posteriors, labels, n_bins=15):
    """Top-label ECE x 100 computed by torch with its default dtype for bins and sums."""
    p = torch.softmax(torch.log(torch.from_numpy(posteriors)), dim=1)  # float64
    confidence, predicted = torch.max(p, dim=1)
    correct = predicted.eq(torch.from_numpy(labels))
    return torch.round(torch_binned_gap(confidence, correct, n_bins), decimals=4).item() * 100


def torch_classwise_oracle(posteriors, labels, n_bins=15):
    """Class-wise ECE x 100: torch's float32 gap of (p_k, [y = k]) per class, their float32 mean,
    rounded as a float32."""
    p, y = torch.from_numpy(posteriors), torch.from_numpy(labels)
    per_class = [torch_binned_gap(p[:, k], y.eq(k), n_bins) for k in range(p.shape[1])]
    return torch.round(torch.cat(per_class).mean(), decimals=4).item() * 100


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


def k_class_cases(seed, min_classes, trials=60):
    """(trial, posteriors, labels): odd trials on a grid of the simplex (confidences on and next to
    the bin edges, many ties), even ones from a Dirichlet (no score near an edge)."""
    rng = np.random.default_rng(seed)
    for trial in range(trials):
        k = int(rng.integers(min_classes, 6))
        n = int(rng.integers(1, 260))
        if trial % 2:
            resolution = int(rng.choice([5, 10, 15]))
            P = rng.multinomial(resolution, np.ones(k) / k, size=n) / resolution
        else:
            P = rng.dirichlet(np.ones(k), size=n)
        yield trial, P, rng.integers(0, k, n)


def test_k_class_float32_top_label_equals_the_torch_oracle():
    for trial, P, y in k_class_cases(6, min_classes=3):
        assert ece_top_label(P, y) == torch_oracle(P, y), trial


def test_float32_classwise_ece_equals_the_torch_oracle():
    for trial, P, y in k_class_cases(7, min_classes=2):
        value = ece_classwise(P, y)
        assert value == torch_classwise_oracle(P, y), trial
        assert value / 100 == float(np.float32(value / 100))  # a float32 number
        if trial % 2 == 0:  # no score near an edge: the float64 definition up to the rounding
            assert value == pytest.approx(ece_classwise(P, y, precision="float64"), abs=0.02)


def test_a_class_score_of_0_6_is_binned_as_the_reference_bins_it():
    # p_0 = 0.6 lies above torch's float32 edge 0.59999996: in float32 it shares the bin (0.6, 0.667]
    # with p_0 = 0.65; in float64 it is in (0.533, 0.6]. Class 1's scores 0.4 and 0.35 share the bin
    # (0.333, 0.4] in both arithmetics.
    P = np.array([[0.6, 0.4], [0.65, 0.35]])
    y = np.array([0, 1])
    class_1 = 0.5 * 2 * (0.375 - 0.5) ** 2
    shared = 0.5 * 2 * (0.625 - 0.5) ** 2
    separate = 0.5 * (0.6 - 1) ** 2 + 0.5 * (0.65 - 0) ** 2
    assert ece_classwise(P, y) == pytest.approx(round((shared + class_1) / 2, 4) * 100, abs=1e-5)
    assert ece_classwise(P, y, precision="float64") == pytest.approx(
        round((separate + class_1) / 2, 4) * 100
    )
    assert ece_classwise(P, y) == torch_classwise_oracle(P, y)


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
