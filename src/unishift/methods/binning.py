"""Shared post-processing of binned calibration maps and their isometric bins (docs/methods.md
§0.4), on the positive posterior of two classes and on the top-label confidence of k classes
(docs/multiclass.md §2.3)."""

from __future__ import annotations

from functools import partial

import numpy as np

from unishift.data.containers import argmax_predictions
from unishift.option_checks import check_choice

MONOTONE_RULES = ("running_max", "pairwise", "none")


def postprocess_map(
    abscissae: np.ndarray,
    ordinates: np.ndarray,
    monotone: str = "running_max",
    smooth: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Pad a binned map with (0, 0) and (1, 1), impute NaNs, make it monotone (``running_max``: the
    reference implementation's; ``pairwise``: the paper's text; ``none``), smooth; the padded
    endpoints are kept (the post-processing of every binned map, docs/methods.md §0.4)."""
    check_choice("monotone", monotone, MONOTONE_RULES)
    x = np.concatenate([[0.0], np.asarray(abscissae, dtype=float), [1.0]])
    y = np.concatenate([[0.0], np.asarray(ordinates, dtype=float), [1.0]])
    missing = np.isnan(y)
    if missing.any():
        y[missing] = np.interp(x[missing], x[~missing], y[~missing])
    interior = slice(1, len(y) - 1)
    if monotone == "running_max":
        y[interior] = np.maximum.accumulate(y[:-1])[1:]
    elif monotone == "pairwise":
        y[1:-1] = np.maximum(y[1:-1], y[:-2])
    if smooth and len(y) > 2:
        y[interior] = (y[:-2] + y[1:-1] + y[2:]) / 3.0
    return x, y


def apply_map(x: np.ndarray, y: np.ndarray, positive_scores: np.ndarray) -> np.ndarray:
    """Piecewise-linear interpolation of the map at each score, returned as n x 2 posteriors."""
    calibrated = np.interp(positive_scores, x, y)
    return np.column_stack([1.0 - calibrated, calibrated])


def isometric_edges(bins: int, low: float = 0.0, lower_first: bool = True) -> np.ndarray:
    """``linspace(low, 1, bins + 1)`` with the last edge raised by 1e-5 and, with ``lower_first``,
    the first lowered by 1e-5 (ρ2ζ's bins; α2ζ's raise only the last; top-label cells start at low =
    1/k)."""
    edges = np.linspace(low, 1.0, bins + 1)
    if lower_first:
        edges[0] -= 1e-5
    edges[-1] += 1e-5
    return edges


def bin_membership(scores: np.ndarray, edges: np.ndarray) -> list[np.ndarray]:
    """Boolean masks, one per bin, with membership ``e[i-1] <= s < e[i]``."""
    return [(scores >= lo) & (scores < hi) for lo, hi in zip(edges[:-1], edges[1:])]


def binned_points(scores, edges, rate, at_centres: bool, within=True):
    """The points of a binned map before :func:`postprocess_map`: for each bin with items ``mask``
    (among ``within``), the abscissa (bin centre or mean score) and ``rate(b, mask)``; an empty bin
    gives a NaN at its centre."""
    abscissae = (edges[:-1] + edges[1:]) / 2
    ordinates = np.full(len(abscissae), np.nan)
    for b, mask in enumerate(bin_membership(scores, edges)):
        mask &= within
        if mask.any():
            ordinates[b] = rate(b, mask)
            if not at_centres:
                abscissae[b] = scores[mask].mean()
    return abscissae, ordinates


def replace_top(posteriors: np.ndarray, predicted: np.ndarray, top: np.ndarray) -> np.ndarray:
    """Rows whose predicted-class entry is ``top`` and whose other entries keep their proportions
    (uniform when the row had all its mass on the predicted class)."""
    posteriors = np.asarray(posteriors, dtype=float)
    n, k = posteriors.shape
    rows = np.arange(n)
    top = np.clip(np.asarray(top, dtype=float), 0.0, 1.0)
    rest = 1.0 - posteriors[rows, predicted]
    scale = np.where(rest > 0, (1.0 - top) / np.where(rest > 0, rest, 1.0), 0.0)
    out = posteriors * scale[:, None]
    uniform = rest <= 0
    if uniform.any():
        out[uniform] = ((1.0 - top[uniform]) / (k - 1))[:, None]
    out[rows, predicted] = top
    return out


def top_label_map(posteriors, bins, cell_rate, at_centres, monotone, smooth) -> np.ndarray:
    """Calibrate the top-label confidence per predicted class through its cells' rates
    ``cell_rate(cls, b, mask)`` (:func:`binned_points`, then :func:`postprocess_map` in unit
    coordinates between the anchors (1/k, 1/k) and (1, 1), the other coordinates rescaled by
    :func:`replace_top`: docs/multiclass.md §2.3)."""
    posteriors = np.asarray(posteriors, dtype=float)
    k = posteriors.shape[1]
    predicted = argmax_predictions(posteriors)
    confidence = posteriors[np.arange(len(posteriors)), predicted]
    edges = isometric_edges(bins, 1.0 / k)
    low, span = 1.0 / k, 1.0 - 1.0 / k
    top = np.empty(len(posteriors))
    for cls in range(k):
        in_class = predicted == cls
        if not in_class.any():
            continue
        abscissae, ordinates = binned_points(
            confidence, edges, partial(cell_rate, cls), at_centres, in_class
        )
        x, y = postprocess_map((abscissae - low) / span, (ordinates - low) / span, monotone, smooth)
        top[in_class] = low + span * np.interp((confidence[in_class] - low) / span, x, y)
    return replace_top(posteriors, predicted, top)
