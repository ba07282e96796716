"""The error measures of :mod:`unishift.evaluation.metrics` for any number of classes: literal loops, closed
forms and library oracles (scikit-learn, QuaPy); the two-class closed forms (brier's mean
(y - p_1)^2, AE's |p_1 - p_hat_1|) against the k-class formulas; bad input refused, never scored.
The float32 arithmetic against PyTorch: tests/evaluation/test_ece_precision.py."""

from __future__ import annotations

import numpy as np
import pytest
import quapy as qp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import brier_score_loss

from unishift.evaluation.metrics import (
    absolute_error,
    accuracy,
    brier,
    check_prevalence,
    ece_classwise,
    ece_positive_class,
    ece_top_label,
    quantification_ae,
    quantification_rae,
)

# Both arithmetics of the top-label ECE (the float32 default and the float64 option) must satisfy the
# definition's tests; none of the inputs below lies between a float32 and a float64 bin edge.
PRECISIONS = pytest.mark.parametrize("precision", ["float32", "float64"])


@PRECISIONS
def test_top_label_ece_by_hand(precision):
    # confidences 0.9 (right), 0.9 (wrong), 0.6 (right): bins (13/15, 14/15] and (8/15, 9/15]
    P = np.array([[0.1, 0.9], [0.9, 0.1], [0.4, 0.6]])
    y = np.array([1, 1, 0])
    expected = (2 / 3) * (0.9 - 0.5) ** 2 + (1 / 3) * (0.6 - 0.0) ** 2
    assert ece_top_label(P, y, precision=precision) == pytest.approx(round(expected, 4) * 100)


@PRECISIONS
def test_top_label_ece_pools_both_classes_positive_does_not(precision):
    # items with positive posterior 0.2 and 0.8 share a top-label bin but not a positive-class bin
    P = np.array([[0.8, 0.2], [0.2, 0.8]])
    y = np.array([0, 1])
    assert ece_top_label(P, y, precision=precision) == pytest.approx(
        4.0
    )  # confidence 0.8, accuracy 1
    assert ece_positive_class(P, y) == pytest.approx(100 * (0.5 * 0.2**2 + 0.5 * 0.2**2))


@PRECISIONS
def test_exact_zero_posteriors_are_handled(precision):
    P = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert ece_top_label(P, np.array([0, 1]), precision=precision) == pytest.approx(0.0)
    # a tie is predicted as class 0 with confidence 0.5: right for label 0, gap 0.5 in its bin
    P = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    assert ece_top_label(P, np.array([0, 1, 0]), precision=precision) == pytest.approx(
        round(0.25 / 3, 4) * 100
    )


def test_brier_and_absolute_error():
    P = np.array([[0.25, 0.75], [0.5, 0.5]])
    assert brier(P, np.array([1, 0])) == pytest.approx((0.25**2 + 0.5**2) / 2)
    assert absolute_error(0.3, 0.45) == pytest.approx(0.15)


# ------------------------------------------------------------------------------------------------
# Inputs that tell the variants apart. Every confidence below is either exact in any floating-point
# arithmetic (0.5 from a tie, 1.0 from a zero posterior) or at least 1e-3 away from a bin edge, so
# the expected values hold whether the ECE is computed in float32 or float64.


def ece_oracle(scores, targets, n_bins, right_closed):
    """A literal loop over the bins: (lo, hi] (right_closed) or [lo, hi), the last bin closed."""
    scores, targets = np.asarray(scores, float), np.asarray(targets, float)
    total = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        if right_closed:
            inside = (scores > lo) & (scores <= hi)
        else:
            inside = (scores >= lo) & ((scores < hi) | ((b == n_bins - 1) & (scores == hi)))
        if inside.any():
            gap = scores[inside].mean() - targets[inside].mean()
            total += inside.sum() / len(scores) * gap**2
    return total


def top_label_oracle(posteriors, labels, n_bins=15):
    posteriors = np.asarray(posteriors, float)
    predicted = (posteriors[:, 1] > posteriors[:, 0]).astype(int)  # a tie is class 0
    confidence = posteriors.max(axis=1)
    correct = (predicted == np.asarray(labels)).astype(float)
    return round(ece_oracle(confidence, correct, n_bins, right_closed=True), 4) * 100


@PRECISIONS
def test_top_label_bins_are_closed_on_the_right(precision):
    # with 2 bins the tie's confidence 0.5 is an edge: (0, .5] holds it alone, [.5, 1) would pool it
    P = np.array([[0.5, 0.5], [0.1, 0.9]])
    y = np.array([1, 1])  # the tie is predicted 0 (wrong), the other item is right
    assert ece_top_label(P, y, n_bins=2, precision=precision) == pytest.approx(
        100 * (0.5 * 0.5**2 + 0.5 * 0.1**2)
    )
    assert ece_top_label(P, y, n_bins=2, precision=precision) != pytest.approx(
        100 * 0.2**2
    )  # the [l, u) value


@PRECISIONS
def test_top_label_tie_is_predicted_as_class_zero(precision):
    # the tie (confidence .5) shares the bin (7/15, 8/15] with a right prediction at .52
    P = np.array([[0.5, 0.5], [0.48, 0.52]])
    y = np.array([1, 1])
    # tie wrong: accuracy 1/2 against confidence .51 (a tie read as class 1 would give .49**2)
    assert ece_top_label(P, y, precision=precision) == pytest.approx(100 * 0.01**2, abs=1e-9)


@PRECISIONS
def test_a_confidence_of_one_shares_the_last_bin(precision):
    # a wrong prediction made with certainty and a right one at .95 share the bin (14/15, 1]
    P = np.array([[0.0, 1.0], [0.05, 0.95]])
    y = np.array([0, 1])
    assert ece_top_label(P, y, precision=precision) == pytest.approx(100 * round(0.475**2, 4))
    # positive-class ECE: 1.0 and .95 share the last, closed bin [14/15, 1]
    assert ece_positive_class(P, y) == pytest.approx(100 * 0.475**2)


def test_positive_class_bins_are_closed_on_the_left():
    edges = np.linspace(0, 1, 16)
    on_edge = edges[5]  # exactly the lower edge of bin 5
    scores = np.array([on_edge, on_edge + 0.03, on_edge - 0.03])
    P = np.column_stack([1 - scores, scores])
    y = np.array([1, 0, 1])
    # the edge score pools with the score above it, not with the one below it
    expected = 100 * ece_oracle(scores, y, 15, right_closed=False)
    assert ece_positive_class(P, y) == pytest.approx(expected)
    assert ece_positive_class(P, y) != pytest.approx(100 * ece_oracle(scores, y, 15, True))


@PRECISIONS
@pytest.mark.parametrize("seed", range(5))
def test_top_label_ece_equals_a_literal_loop_with_fifteen_bins(seed, precision):
    rng = np.random.default_rng(seed)
    positive = rng.uniform(0, 1, 200)
    # keep every confidence at least 1e-3 away from a bin edge (see the note above)
    confidence = np.maximum(positive, 1 - positive)
    distance = np.abs(confidence * 15 - np.round(confidence * 15)) / 15
    positive = positive[distance > 1e-3]
    P = np.column_stack([1 - positive, positive])
    y = (rng.uniform(0, 1, len(positive)) < positive).astype(int)
    y[::7] = 1 - y[::7]  # a miscalibrated share so that the gaps are not all tiny
    assert ece_top_label(P, y, precision=precision) == pytest.approx(
        top_label_oracle(P, y), abs=0.011
    )
    assert ece_top_label(P, y, precision=precision) != pytest.approx(
        top_label_oracle(P, y, n_bins=10), abs=0.011
    )


@pytest.mark.parametrize("seed", range(3))
def test_positive_class_ece_equals_a_literal_loop(seed):
    rng = np.random.default_rng(100 + seed)
    positive = rng.uniform(0, 1, 300)
    P = np.column_stack([1 - positive, positive])
    y = (rng.uniform(0, 1, 300) < positive**2).astype(int)
    assert ece_positive_class(P, y) == pytest.approx(100 * ece_oracle(positive, y, 15, False))


def test_brier_uses_the_positive_column():
    P = np.array([[0.9, 0.1], [0.2, 0.8]])
    assert brier(P, np.array([1, 1])) == pytest.approx((0.9**2 + 0.2**2) / 2)


# ---------------------------------------------------------------------------------------------
# k classes: independent oracles (a confidence on a bin edge is binned as the float64 definition
# says, so these compare with precision="float64"; the float32 arithmetic: test_ece_precision.py)


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


@pytest.mark.parametrize("n_classes", [3, 4, 7])
def test_k_class_top_label_ece_matches_a_literal_loop(n_classes):
    rng = np.random.default_rng(n_classes)
    for _ in range(20):
        posteriors, labels = dirichlet_sample(rng, 200, n_classes, concentration=0.5)
        assert ece_top_label(posteriors, labels, precision="float64") == pytest.approx(
            top_label_loop(posteriors, labels), abs=1e-9
        )
        # the float32 arithmetic computes the same definition (bins move only at their edges)
        assert ece_top_label(posteriors, labels) == pytest.approx(
            top_label_loop(posteriors, labels), abs=0.011
        )


@PRECISIONS
def test_k_class_top_label_ties_go_to_the_lowest_class_and_edges_close_on_the_right(precision):
    # a row [0.4, 0.4, 0.2] predicts class 0; a confidence of exactly 0.4 = 6/15 sits in bin (5/15, 6/15]
    posteriors = np.array([[0.4, 0.4, 0.2], [0.2, 0.4, 0.4]])
    labels_first = np.array([0, 1])  # both correct under the lowest-index rule
    assert ece_top_label(posteriors, labels_first, precision=precision) == pytest.approx(
        round(0.6**2, 4) * 100, abs=1e-5
    )
    labels_other = np.array([1, 2])  # both wrong: gap 0.4
    assert ece_top_label(posteriors, labels_other, precision=precision) == pytest.approx(
        round(0.4**2, 4) * 100, abs=1e-5
    )


def test_k_class_top_label_bins_are_closed_on_the_right():
    # confidences 0.6 and just above 0.6 = 9/15 fall in different bins: (8/15, 9/15] and (9/15, 10/15]
    posteriors = np.array([[0.6, 0.3, 0.1], [0.6 + 1e-9, 0.3, 0.1 - 1e-9]])
    labels = np.array([0, 1])
    separate = 0.5 * (0.6 - 1) ** 2 + 0.5 * (0.6 + 1e-9) ** 2
    assert ece_top_label(posteriors, labels, precision="float64") == pytest.approx(
        round(separate, 4) * 100
    )
    pooled = (0.6 + 5e-10 - 0.5) ** 2
    assert round(pooled, 4) * 100 != pytest.approx(round(separate, 4) * 100)


@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_classwise_ece_matches_a_literal_loop(n_classes):
    rng = np.random.default_rng(10 + n_classes)
    posteriors, labels = dirichlet_sample(rng, 150, n_classes)
    expected = np.mean(
        [binned_gap_loop(posteriors[:, k], (labels == k).astype(float)) for k in range(n_classes)]
    )
    assert ece_classwise(posteriors, labels, precision="float64") == pytest.approx(
        round(expected, 4) * 100
    )
    assert ece_classwise(posteriors, labels) == pytest.approx(round(expected, 4) * 100, abs=0.011)


@pytest.mark.parametrize("n_classes", [2, 3, 6])
def test_brier_follows_scikit_learn(n_classes):
    rng = np.random.default_rng(n_classes)
    posteriors, labels = dirichlet_sample(rng, 80, n_classes)
    expected = brier_score_loss(labels, posteriors, labels=list(range(n_classes)))
    assert brier(posteriors, labels) == pytest.approx(expected, abs=1e-12)
    # halved for two classes only (scikit-learn's scale_by_half="auto")
    unscaled = brier_score_loss(
        labels, posteriors, labels=list(range(n_classes)), scale_by_half=False
    )
    halved = n_classes == 2
    assert brier(posteriors, labels) == pytest.approx(unscaled / 2 if halved else unscaled)


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
    assert quantification_ae(true_prevalence, estimate) == pytest.approx(
        qp.error.ae(true_prevalence, estimate), abs=1e-14
    )
    assert quantification_rae(true_prevalence, estimate, sample_size) == pytest.approx(
        qp.error.rae(true_prevalence, estimate, eps=eps), rel=1e-12
    )


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_classes=st.integers(2, 6))
def test_eces_are_bounded_and_invariant_to_relabelling_the_classes(seed, n_classes):
    rng = np.random.default_rng(seed)
    posteriors, labels = dirichlet_sample(rng, 120, n_classes)
    for precision in ("float32", "float64"):
        top = ece_top_label(posteriors, labels, precision=precision)
        classwise = ece_classwise(posteriors, labels, precision=precision)
        assert 0.0 <= top <= 100.0 and 0.0 <= classwise <= 100.0
        permutation = rng.permutation(n_classes)
        relabelled = np.argsort(permutation)[labels]
        # continuous Dirichlet rows have no ties, so the argmax follows the permutation
        permuted = posteriors[:, permutation]
        assert ece_top_label(permuted, relabelled, precision=precision) == pytest.approx(top)
        assert ece_classwise(permuted, relabelled, precision=precision) == pytest.approx(classwise)


@PRECISIONS
def test_a_perfectly_calibrated_discrete_output_has_zero_eces(precision):
    # four level sets, each with exactly the class distribution it predicts
    rows = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]]
    posteriors, labels = [], []
    for row in rows:
        counts = (np.array(row) * 4).astype(int)
        for k, count in enumerate(counts):
            posteriors += [row] * count
            labels += [k] * count
    posteriors, labels = np.array(posteriors), np.array(labels)
    assert ece_classwise(posteriors, labels, precision=precision) == 0.0
    assert ece_top_label(posteriors, labels, precision=precision) == 0.0


def test_accuracy_breaks_ties_towards_the_lowest_class():
    posteriors = np.array([[0.4, 0.4, 0.2], [0.2, 0.4, 0.4], [0.5, 0.5, 0.0], [0.1, 0.2, 0.7]])
    assert accuracy(posteriors, np.array([0, 1, 0, 2])) == 1.0
    assert accuracy(posteriors, np.array([1, 2, 1, 2])) == 0.25


# ---------------------------------------------------------------------------------------------
# Two classes: the closed forms the binary tables computed are the k-class formulas


TWO_CLASS_EDGE_CASES = [
    np.array([0.5, 0.5, 2 / 3, 1 / 3, 0.6, 0.4, 0.0, 1.0, 1.0, 0.0, 0.9, 0.1]).reshape(-1, 2),
    np.column_stack([1 - np.arange(11) / 10, np.arange(11) / 10]),  # the kNN grid
]


def k_class_brier(posteriors, labels):
    """sum_k (p_k - [y = k])^2 averaged over items, halved for two classes (scikit-learn)."""
    k = posteriors.shape[1]
    value = float(np.mean(np.sum((np.eye(k)[labels] - posteriors) ** 2, axis=1)))
    return value / 2 if k == 2 else value


def assert_two_class_closed_forms(posteriors, labels):
    closed = brier(posteriors, labels)
    assert closed == float(np.mean((labels - posteriors[:, 1]) ** 2))  # what the binary tables did
    assert abs(closed - k_class_brier(posteriors, labels)) <= 1e-12
    truth = np.array([1 - labels.mean(), labels.mean()])
    estimate = posteriors.mean(axis=0)
    ae = quantification_ae(truth, estimate)
    assert ae == abs(labels.mean() - estimate[1])  # |p_1 - p_hat_1|
    assert abs(ae - float(np.mean(np.abs(estimate - truth)))) <= 1e-12  # QuaPy's mean over classes
    assert abs(ae - qp.error.ae(truth, estimate)) <= 1e-12


@pytest.mark.parametrize("case", range(len(TWO_CLASS_EDGE_CASES)))
def test_two_class_closed_forms_equal_the_k_class_formulas_on_edge_values(case):
    posteriors = TWO_CLASS_EDGE_CASES[case]
    for labels in (np.zeros(len(posteriors), int), np.arange(len(posteriors)) % 2):
        assert_two_class_closed_forms(posteriors, labels)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n_items=st.integers(1, 300),
    grid=st.sampled_from([None, 10, 15, 30]),
)
def test_two_class_closed_forms_equal_the_k_class_formulas(seed, n_items, grid):
    rng = np.random.default_rng(seed)
    positive = rng.random(n_items)
    if grid:  # scores on a grid: ties at 0.5 and values on the 15 bin edges
        positive = np.round(positive * grid) / grid
    posteriors = np.column_stack([1 - positive, positive])
    assert_two_class_closed_forms(posteriors, rng.integers(0, 2, n_items))


def test_the_positive_class_ece_is_for_two_classes_only():
    posteriors = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
    with pytest.raises(ValueError, match="needs two classes, got 3.*top-label or the class-wise"):
        ece_positive_class(posteriors, np.array([0, 2]))


# ---------------------------------------------------------------------------------------------
# Bad input is refused with the problem named, never scored

POSTERIOR_MEASURES = [ece_top_label, ece_classwise, ece_positive_class, brier, accuracy]
BAD_POSTERIORS = {
    "nan": ([[np.nan, 1.0], [0.5, 0.5]], "NaN or infinite"),
    "inf": ([[np.inf, 0.0], [0.5, 0.5]], "NaN or infinite"),
    "range": ([[1.2, -0.2], [0.5, 0.5]], r"must lie in \[0, 1\]"),
    "sum": ([[0.3, 0.3], [0.5, 0.5]], "do not sum to 1"),
}


@pytest.mark.parametrize("problem", list(BAD_POSTERIORS))
@pytest.mark.parametrize("measure", POSTERIOR_MEASURES, ids=lambda f: f.__name__)
def test_a_measure_refuses_posteriors_it_cannot_score(measure, problem):
    rows, message = BAD_POSTERIORS[problem]
    posteriors = np.array(rows)
    with pytest.raises(ValueError, match=message):
        measure(posteriors, np.array([0, 1]))
    # the same problem in a row of three classes (the positive-class ECE has no three-class form)
    if measure is not ece_positive_class:
        wide = np.column_stack([posteriors, np.zeros(2)])
        with pytest.raises(ValueError, match=message):
            measure(wide, np.array([0, 1]))


@pytest.mark.parametrize("measure", POSTERIOR_MEASURES, ids=lambda f: f.__name__)
def test_a_measure_refuses_labels_outside_the_classes(measure):
    with pytest.raises(ValueError, match=r"lie in 0..1"):
        measure(np.array([[0.5, 0.5], [0.2, 0.8]]), np.array([0, 2]))
    with pytest.raises(ValueError, match=r"lie in 0..1"):
        measure(np.array([[0.5, 0.5], [0.2, 0.8]]), np.array([-1, 1]))


@pytest.mark.parametrize(
    "truth, estimate, problem",
    [
        ([0.5, 0.5], [np.nan, 1.0], "NaN or infinite"),
        ([0.5, 0.5], [1.2, -0.2], "not on the probability simplex"),
        ([0.5, 0.5], [0.3, 0.3], "not on the probability simplex"),
        ([0.2, 0.3, 0.5], [0.5, 0.5], "2 entries, the problem has 3"),
        ([np.nan, 0.5], [0.5, 0.5], "true prevalence holds NaN"),
        ([0.5, 0.5], 0.5, "vector of k >= 2 class shares"),
    ],
)
def test_quantification_errors_refuse_what_is_not_a_prevalence_vector(truth, estimate, problem):
    with pytest.raises(ValueError, match=problem):
        quantification_ae(truth, estimate)
    with pytest.raises(ValueError, match=problem):
        quantification_rae(truth, estimate, sample_size=10)


def test_bad_inputs_fail_clearly():
    with pytest.raises(ValueError, match="n x k matrix"):
        ece_top_label(np.ones(3), [0, 1, 0])
    with pytest.raises(ValueError, match="do not sum to 1"):
        ece_top_label(np.array([[0.5, 0.6, 0.1]]), [0])
    with pytest.raises(ValueError, match=r"lie in 0..2"):
        brier(np.array([[0.5, 0.3, 0.2]]), [3])
    with pytest.raises(ValueError, match="3 entries, the problem has 4"):
        check_prevalence([0.5, 0.3, 0.2], n_classes=4)
    for measure in (ece_top_label, ece_classwise):
        with pytest.raises(ValueError, match="precision='float16' is not valid"):
            measure(np.array([[0.5, 0.5]]), [0], precision="float16")
    with pytest.raises(ValueError, match="not finite"):
        absolute_error(0.5, np.nan)
