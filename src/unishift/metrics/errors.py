"""Error measures computed on one test sample (docs/reporting.md §1).

``ece_top_label`` is what produced every ECE number of the paper (REF's metric): top-label confidence
against accuracy, 15 equal-width bins closed on the right, squared gap, no square root, rounded to
4 decimals then multiplied by 100. By default it reproduces REF's float32 arithmetic (float32 bin
edges, a float32 running sum, float32 rounding; ``precision="float32"``); ``precision="float64"`` is
the same definition in float64. ``ece_positive_class`` is the formula the paper prints.
"""

from __future__ import annotations

import numpy as np

from unishift.numerics import (
    PRECISIONS,
    float32_running_sum,
    round_float32,
    torch_linspace_float32,
)

N_BINS = 15


def _check_rows(posteriors: np.ndarray) -> np.ndarray:
    posteriors = np.asarray(posteriors, dtype=float)
    if posteriors.ndim != 2 or posteriors.shape[1] != 2:
        raise ValueError(f"posteriors must be n x 2, got shape {posteriors.shape}")
    if not np.allclose(posteriors.sum(axis=1), 1.0):
        raise ValueError("posterior rows do not sum to 1")
    return posteriors


def _squared_binned_gap(scores, targets, edges, right_closed: bool) -> float:
    index = np.searchsorted(edges, scores, side="left" if right_closed else "right") - 1
    index = np.clip(index, 0, len(edges) - 2)
    n = len(scores)
    counts = np.bincount(index, minlength=len(edges) - 1)
    score_sums = np.bincount(index, weights=scores, minlength=len(edges) - 1)
    target_sums = np.bincount(index, weights=targets, minlength=len(edges) - 1)
    filled = counts > 0
    gaps = score_sums[filled] / counts[filled] - target_sums[filled] / counts[filled]
    return float(np.sum(counts[filled] / n * gaps**2))


def _ece_float32(confidence: np.ndarray, correct: np.ndarray, n_bins: int) -> float:
    """REF's arithmetic: edges of a float32 ``torch.linspace`` compared with the float64
    confidences; per bin the float32 share of items and float32 accuracy, the float64 mean
    confidence and squared gap; the bin terms summed into a float32 accumulator and the result
    rounded to 4 decimals as a float32 (docs/reproduction.md, "Arithmetic")."""
    edges = torch_linspace_float32(0.0, 1.0, n_bins + 1).astype(np.float64)
    n = np.float32(len(confidence))
    terms = []
    for lower, upper in zip(edges[:-1], edges[1:]):
        in_bin = (confidence > lower) & (confidence <= upper)
        count = int(np.count_nonzero(in_bin))
        if count == 0:
            continue
        share = np.float32(count) / n
        accuracy = np.float32(np.count_nonzero(correct[in_bin])) / np.float32(count)
        gap = abs(float(np.mean(confidence[in_bin])) - float(accuracy))
        terms.append(float(share) * gap**2)
    return float(round_float32(float32_running_sum(np.asarray(terms)), 4)) * 100


def ece_top_label(
    posteriors: np.ndarray,
    labels: np.ndarray,
    n_bins: int = N_BINS,
    precision: str = "float32",
) -> float:
    """REF's ECE x 100 (docs/reporting.md §1.1).

    ``precision="float32"`` (default) reproduces REF's arithmetic bit for bit; ``"float64"``
    computes the same definition with float64 edges and sums (values can differ where a
    confidence lies between a float64 and a float32 edge, e.g. k-NN's 0.6 or 2/3 after scaling,
    and in the 4th decimal of the rounding).
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision={precision!r} is not one of {list(PRECISIONS)}")
    posteriors = _check_rows(posteriors)
    with np.errstate(divide="ignore"):
        logits = np.log(posteriors)
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities = shifted / shifted.sum(axis=1, keepdims=True)
    confidence = probabilities.max(axis=1)
    predicted = (probabilities[:, 1] > probabilities[:, 0]).astype(int)
    correct = (predicted == np.asarray(labels)).astype(float)
    if precision == "float32":
        return _ece_float32(confidence, correct, n_bins)
    # bin (l, u] on edges linspace(0, 1, 16); a confidence of exactly 0 cannot occur (>= 0.5)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    ece = _squared_binned_gap(confidence, correct, edges, right_closed=True)
    return round(ece, 4) * 100


def ece_positive_class(posteriors: np.ndarray, labels: np.ndarray, n_bins: int = N_BINS) -> float:
    """The paper's ECE x 100: positive-class reliability on isometric bins (docs/reporting.md §1.2)."""
    posteriors = _check_rows(posteriors)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    positive = posteriors[:, 1]
    return 100 * _squared_binned_gap(
        positive, np.asarray(labels, dtype=float), edges, right_closed=False
    )


def brier(posteriors: np.ndarray, labels: np.ndarray) -> float:
    posteriors = np.asarray(posteriors, dtype=float)
    return float(np.mean((np.asarray(labels, dtype=float) - posteriors[:, 1]) ** 2))


def absolute_error(true_value: float, estimate: float) -> float:
    return float(abs(true_value - estimate))
