import numpy as np
import pytest

from unishift.metrics import absolute_error, brier, ece_positive_class, ece_top_label

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


def test_ece_rejects_non_stochastic_rows():
    with pytest.raises(ValueError, match="sum to 1"):
        ece_top_label(np.array([[0.3, 0.3]]), np.array([0]))


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
