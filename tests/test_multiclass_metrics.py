"""The multiclass error measures: literal-loop and library oracles, and the n = 2 invariant."""

from __future__ import annotations

import numpy as np
import pytest
import quapy as qp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import brier_score_loss

from unishift.metrics import absolute_error
from unishift.metrics import brier as binary_brier
from unishift.metrics import ece_top_label as binary_ece
from unishift.metrics import multiclass as mc


def dirichlet_sample(rng, n_items, n_classes, concentration=1.0):
    posteriors = rng.dirichlet(np.full(n_classes, concentration), size=n_items)
    labels = np.array([rng.choice(n_classes, p=row) for row in posteriors])
    return posteriors, labels


def binned_gap_loop(scores, targets, n_bins=15):
    """Independent oracle: bin i holds l_i < s <= u_i (bin 0 also holds s = 0), literal loops."""
    edges = [i / n_bins for i in range(n_bins + 1)]
    total, n = 0.0, len(scores)
    for i in range(n_bins):
        members = [
            j
            for j, s in enumerate(scores)
            if (edges[i] < s <= edges[i + 1]) or (i == 0 and s == 0.0)
        ]
        if members:
            mean_score = sum(scores[j] for j in members) / len(members)
            mean_target = sum(targets[j] for j in members) / len(members)
            total += len(members) / n * (mean_score - mean_target) ** 2
    return total


def top_label_loop(posteriors, labels):
    confidences, correct = [], []
    for row, label in zip(posteriors, labels):
        best = max(range(len(row)), key=lambda k: (row[k], -k))  # first maximum
        confidences.append(row[best])
        correct.append(float(best == label))
    return round(binned_gap_loop(confidences, correct), 4) * 100


# ---------------------------------------------------------------------------------------------
# n = 2: the multiclass measures give the binary tables' numbers


BINARY_EDGE_CASES = [
    np.array([0.5, 0.5, 2 / 3, 1 / 3, 0.6, 0.4, 0.0, 1.0, 1.0, 0.0, 0.9, 0.1]).reshape(-1, 2),
    np.column_stack([1 - np.arange(11) / 10, np.arange(11) / 10]),  # the kNN grid
]


@pytest.mark.parametrize("case", range(len(BINARY_EDGE_CASES)))
def test_two_classes_reproduce_the_binary_metrics_on_edge_values(case):
    posteriors = BINARY_EDGE_CASES[case]
    for labels in (np.zeros(len(posteriors), int), np.arange(len(posteriors)) % 2):
        assert mc.ece_top_label(posteriors, labels) == binary_ece(
            posteriors, labels, precision="float64"
        )
        assert mc.ece_top_label(posteriors, labels, arithmetic="float32") == binary_ece(
            posteriors, labels, precision="float32"
        )
        assert mc.brier(posteriors, labels) == pytest.approx(
            binary_brier(posteriors, labels), abs=1e-12
        )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n_items=st.integers(1, 300),
    grid=st.sampled_from([None, 10, 15, 30]),
)
def test_two_classes_reproduce_the_binary_metrics(seed, n_items, grid):
    rng = np.random.default_rng(seed)
    positive = rng.random(n_items)
    if grid:  # scores on a grid: ties at 0.5 and values on the 15 bin edges
        positive = np.round(positive * grid) / grid
    posteriors = np.column_stack([1 - positive, positive])
    labels = rng.integers(0, 2, n_items)
    for arithmetic in ("float64", "float32"):
        ours = mc.ece_top_label(posteriors, labels, arithmetic=arithmetic)
        assert abs(ours - binary_ece(posteriors, labels, precision=arithmetic)) <= 1e-10
    assert abs(mc.brier(posteriors, labels) - binary_brier(posteriors, labels)) <= 1e-10
    prevalence = np.array([1 - labels.mean(), labels.mean()])
    estimate = np.array([1 - positive.mean(), positive.mean()])
    assert (
        abs(
            mc.quantification_ae(prevalence, estimate)
            - absolute_error(labels.mean(), positive.mean())
        )
        <= 1e-12
    )


# ---------------------------------------------------------------------------------------------
# n >= 3: independent oracles


@pytest.mark.parametrize("n_classes", [3, 4, 7])
def test_top_label_ece_matches_a_literal_loop(n_classes):
    rng = np.random.default_rng(n_classes)
    for _ in range(20):
        posteriors, labels = dirichlet_sample(rng, 200, n_classes, concentration=0.5)
        assert mc.ece_top_label(posteriors, labels) == pytest.approx(
            top_label_loop(posteriors, labels), abs=1e-9
        )


def test_top_label_ties_go_to_the_lowest_class_and_edges_close_on_the_right():
    # a row [0.4, 0.4, 0.2] predicts class 0; a confidence of exactly 0.4 = 6/15 sits in bin (5/15, 6/15]
    posteriors = np.array([[0.4, 0.4, 0.2], [0.2, 0.4, 0.4]])
    labels_first = np.array([0, 1])  # both correct under the lowest-index rule
    assert mc.ece_top_label(posteriors, labels_first) == pytest.approx(
        round(0.6**2, 4) * 100, abs=1e-12
    )
    labels_other = np.array([1, 2])  # both wrong: gap 0.4
    assert mc.ece_top_label(posteriors, labels_other) == pytest.approx(
        round(0.4**2, 4) * 100, abs=1e-12
    )


def test_top_label_bins_are_closed_on_the_right():
    # confidences 0.6 and just above 0.6 = 9/15 fall in different bins: (8/15, 9/15] and (9/15, 10/15]
    posteriors = np.array([[0.6, 0.3, 0.1], [0.6 + 1e-9, 0.3, 0.1 - 1e-9]])
    labels = np.array([0, 1])
    separate = 0.5 * (0.6 - 1) ** 2 + 0.5 * (0.6 + 1e-9) ** 2
    assert mc.ece_top_label(posteriors, labels) == pytest.approx(round(separate, 4) * 100)
    pooled = (0.6 + 5e-10 - 0.5) ** 2
    assert round(pooled, 4) * 100 != pytest.approx(round(separate, 4) * 100)


@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_classwise_ece_matches_a_literal_loop(n_classes):
    rng = np.random.default_rng(10 + n_classes)
    posteriors, labels = dirichlet_sample(rng, 150, n_classes)
    expected = np.mean(
        [binned_gap_loop(posteriors[:, k], (labels == k).astype(float)) for k in range(n_classes)]
    )
    assert mc.ece_classwise(posteriors, labels) == pytest.approx(round(expected, 4) * 100)


@pytest.mark.parametrize("n_classes", [2, 3, 6])
def test_brier_follows_scikit_learn(n_classes):
    rng = np.random.default_rng(n_classes)
    posteriors, labels = dirichlet_sample(rng, 80, n_classes)
    expected = brier_score_loss(labels, posteriors, labels=list(range(n_classes)))
    assert mc.brier(posteriors, labels) == pytest.approx(expected, abs=1e-12)
    unscaled = brier_score_loss(
        labels, posteriors, labels=list(range(n_classes)), scale_by_half=False
    )
    assert mc.brier(posteriors, labels, scale_by_half=False) == pytest.approx(unscaled)


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n_classes=st.integers(2, 8),
    sample_size=st.integers(10, 1000),
)
def test_quantification_errors_follow_quapy(seed, n_classes, sample_size):
    rng = np.random.default_rng(seed)
    true_prevalence, estimate = rng.dirichlet(np.ones(n_classes), size=2)
    true_prevalence[rng.integers(n_classes)] = 0.0  # a class absent from the sample
    true_prevalence /= true_prevalence.sum()
    eps = 1.0 / (2 * sample_size)
    assert mc.quantification_ae(true_prevalence, estimate) == pytest.approx(
        qp.error.ae(true_prevalence, estimate), abs=1e-14
    )
    assert mc.quantification_rae(true_prevalence, estimate, sample_size) == pytest.approx(
        qp.error.rae(true_prevalence, estimate, eps=eps), rel=1e-12
    )


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_classes=st.integers(2, 6))
def test_eces_are_bounded_and_invariant_to_relabelling_the_classes(seed, n_classes):
    rng = np.random.default_rng(seed)
    posteriors, labels = dirichlet_sample(rng, 120, n_classes)
    top, classwise = mc.ece_top_label(posteriors, labels), mc.ece_classwise(posteriors, labels)
    assert 0.0 <= top <= 100.0 and 0.0 <= classwise <= 100.0
    permutation = rng.permutation(n_classes)
    relabelled = np.argsort(permutation)[labels]
    # continuous Dirichlet rows have no ties, so the argmax follows the permutation
    assert mc.ece_top_label(posteriors[:, permutation], relabelled) == pytest.approx(top)
    assert mc.ece_classwise(posteriors[:, permutation], relabelled) == pytest.approx(classwise)


def test_a_perfectly_calibrated_discrete_output_has_zero_eces():
    # four level sets, each with exactly the class distribution it predicts
    rows = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]]
    posteriors, labels = [], []
    for row in rows:
        counts = (np.array(row) * 4).astype(int)
        for k, count in enumerate(counts):
            posteriors += [row] * count
            labels += [k] * count
    posteriors, labels = np.array(posteriors), np.array(labels)
    assert mc.ece_classwise(posteriors, labels) == 0.0
    assert mc.ece_top_label(posteriors, labels) == 0.0


def test_bad_inputs_fail_clearly():
    with pytest.raises(ValueError, match="n x k matrix"):
        mc.ece_top_label(np.ones(3), [0, 1, 0])
    with pytest.raises(ValueError, match="do not sum to 1"):
        mc.ece_top_label(np.array([[0.5, 0.6, 0.1]]), [0])
    with pytest.raises(ValueError, match=r"lie in 0..2"):
        mc.brier(np.array([[0.5, 0.3, 0.2]]), [3])
    with pytest.raises(ValueError, match="3 columns, the problem has 4"):
        mc.check_posteriors(np.array([[0.5, 0.3, 0.2]]), n_classes=4)
    with pytest.raises(ValueError, match="arithmetic='float16' is not available"):
        mc.ece_top_label(np.array([[0.5, 0.5]]), [0], arithmetic="float16")
    with pytest.raises(ValueError, match="needs eps or the sample size"):
        mc.quantification_rae([0.5, 0.5], [0.4, 0.6])
