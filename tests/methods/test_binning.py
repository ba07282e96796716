"""B1-B3 of the binned calibration maps: bin membership at the edges, the post-processing by hand."""

import numpy as np
import pytest

from unishift.methods.binning import (
    apply_map,
    bin_membership,
    isometric_edges,
    postprocess_map,
)


def edge_scores(edges):
    """0, 1, every edge inside [0, 1] and points just around each of them."""
    inside = edges[(edges >= 0) & (edges <= 1)]
    around = np.concatenate([inside, np.nextafter(inside, -1), np.nextafter(inside, 2)])
    return np.unique(np.clip(np.concatenate([[0.0, 1.0], around]), 0, 1))


@pytest.mark.parametrize(
    "edges", [isometric_edges(5), isometric_edges(8), isometric_edges(6, lower_first=False)]
)
def test_every_score_in_the_unit_interval_is_in_exactly_one_bin(edges):
    scores = edge_scores(edges)
    counts = np.sum(bin_membership(scores, edges), axis=0)
    assert counts.tolist() == [1] * len(scores)


@pytest.mark.parametrize("edges", [isometric_edges(5), isometric_edges(6, lower_first=False)])
def test_bins_are_closed_on_the_left(edges):
    # an interior edge belongs to the bin it opens, the score just below it to the previous bin
    for i in range(1, len(edges) - 1):
        masks = bin_membership(np.array([edges[i], np.nextafter(edges[i], 0)]), edges)
        assert masks[i].tolist() == [True, False]
        assert masks[i - 1].tolist() == [False, True]


def test_edges_by_hand():
    np.testing.assert_array_equal(
        isometric_edges(5), [-1e-5, 0.2, 0.4, 0.6000000000000001, 0.8, 1 + 1e-5]
    )
    np.testing.assert_array_equal(
        isometric_edges(4, lower_first=False), [0.0, 0.25, 0.5, 0.75, 1 + 1e-5]
    )
    # 1.0 is inside the last bin of both, 0.0 inside the first
    assert bin_membership(np.array([1.0]), isometric_edges(4, lower_first=False))[-1].all()
    assert bin_membership(np.array([0.0]), isometric_edges(5))[0].all()


def test_running_maximum_compares_with_the_updated_previous_value():
    x, y = postprocess_map([0.2, 0.5, 0.8], [0.6, 0.3, 0.5], "running_max", smooth=False)
    np.testing.assert_array_equal(y, [0.0, 0.6, 0.6, 0.6, 1.0])
    _, pairwise = postprocess_map([0.2, 0.5, 0.8], [0.6, 0.3, 0.5], "pairwise", smooth=False)
    np.testing.assert_array_equal(pairwise, [0.0, 0.6, 0.6, 0.5, 1.0])  # the paper's text
    np.testing.assert_array_equal(x, [0.0, 0.2, 0.5, 0.8, 1.0])


def test_smoothing_is_the_centred_three_point_mean():
    _, y = postprocess_map([0.1, 0.4, 0.9], [0.1, 0.2, 0.7], "none", smooth=True)
    padded = [0.0, 0.1, 0.2, 0.7, 1.0]
    expected = [0.0] + [(padded[i - 1] + padded[i] + padded[i + 1]) / 3 for i in (1, 2, 3)] + [1.0]
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-15)


def test_missing_ordinates_are_interpolated_along_the_abscissae():
    # unequal spacing: 0.1 -> 0.2 at x = .1 and .7; the gap at x = .2 is 1/6 of the way
    _, y = postprocess_map([0.1, 0.2, 0.7], [0.1, np.nan, 0.7], "none", smooth=False)
    assert y[2] == pytest.approx(0.1 + 0.6 * (0.2 - 0.1) / (0.7 - 0.1))


def test_apply_map_interpolates_the_positive_column():
    x, y = np.array([0.0, 0.5, 1.0]), np.array([0.0, 0.2, 1.0])
    out = apply_map(x, y, np.array([0.25, 0.75, 1.0]))
    np.testing.assert_allclose(out[:, 1], [0.1, 0.6, 1.0])
    np.testing.assert_allclose(out[:, 0], 1 - out[:, 1])
