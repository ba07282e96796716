import numpy as np
import pytest

from unishift.metrics import absolute_error, brier, ece_positive_class, ece_top_label


def test_top_label_ece_by_hand():
    # confidences 0.9 (right), 0.9 (wrong), 0.6 (right): bins (13/15, 14/15] and (8/15, 9/15]
    P = np.array([[0.1, 0.9], [0.9, 0.1], [0.4, 0.6]])
    y = np.array([1, 1, 0])
    expected = (2 / 3) * (0.9 - 0.5) ** 2 + (1 / 3) * (0.6 - 0.0) ** 2
    assert ece_top_label(P, y) == pytest.approx(round(expected, 4) * 100)


def test_top_label_ece_pools_both_classes_positive_does_not():
    # items with positive posterior 0.2 and 0.8 share a top-label bin but not a positive-class bin
    P = np.array([[0.8, 0.2], [0.2, 0.8]])
    y = np.array([0, 1])
    assert ece_top_label(P, y) == pytest.approx(4.0)  # confidence 0.8, accuracy 1
    assert ece_positive_class(P, y) == pytest.approx(100 * (0.5 * 0.2**2 + 0.5 * 0.2**2))


def test_exact_zero_posteriors_are_handled():
    P = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert ece_top_label(P, np.array([0, 1])) == pytest.approx(0.0)
    # a tie is predicted as class 0 with confidence 0.5: right for label 0, gap 0.5 in its bin
    P = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    assert ece_top_label(P, np.array([0, 1, 0])) == pytest.approx(round(0.25 / 3, 4) * 100)


def test_ece_rejects_non_stochastic_rows():
    with pytest.raises(ValueError, match="sum to 1"):
        ece_top_label(np.array([[0.3, 0.3]]), np.array([0]))


def test_brier_and_absolute_error():
    P = np.array([[0.25, 0.75], [0.5, 0.5]])
    assert brier(P, np.array([1, 0])) == pytest.approx((0.25**2 + 0.5**2) / 2)
    assert absolute_error(0.3, 0.45) == pytest.approx(0.15)
