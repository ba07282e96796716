"""Error measures of the multiclass regime, computed on one test sample (docs/multiclass.md §5).

Every measure reduces to the binary one of :mod:`unishift.metrics.errors` when there are two classes
(the "n = 2 invariant", tested to 1e-10):

* ``ece_top_label`` is the binary tables' ECE generalised to n columns: top-label confidence (the
  largest posterior after the same log/softmax round trip) against the correctness of the argmax
  (ties to the lowest class index, as the binary rule "ties to class 0"), 15 equal-width bins closed on
  the right, squared gap, no square root, rounded to 4 decimals, times 100.
* ``ece_classwise``: the same binning and scaling applied per class to (p_k, [y = k]), averaged over
  the classes (Kull et al. 2019's class-wise ECE with the tables' squared gap).
* ``brier``: scikit-learn's convention: the mean over items of sum_k (p_k - [y = k])^2, halved for two
  classes (which gives the binary tables' (y - p_1)^2) and not halved for more.
* ``quantification_ae`` / ``quantification_rae``: QuaPy's AE and RAE over the prevalence vector, with
  QuaPy's additive smoothing eps = 1 / (2 * sample_size) for RAE.
* ``cap_absolute_error``: |acc - acc_hat|.

Arithmetic. ``ece_top_label(..., arithmetic="float32")`` is the binary tables' float32 arithmetic
(issue 10: float32 bin edges, running sum and rounding, :func:`unishift.metrics.errors._ece_float32`)
applied to the top-label confidence; ``"float64"`` (default) is the same definition in float64. Other
arithmetics of the binning step are looked up by name in ``BINNED_GAPS``
(``register_binned_gap(name, fn)``, fn(confidence, correct, n_bins) -> unrounded gap); the n = 2 tests
compare both arithmetics with the binary ECE.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from unishift.metrics.errors import N_BINS, _ece_float32

Arithmetic = str
BinnedGap = Callable[[np.ndarray, np.ndarray, int], float]


def check_posteriors(posteriors, n_classes: int | None = None) -> np.ndarray:
    """An n x k float matrix with k >= 2 columns whose rows sum to 1 (np.isclose), or a clear error."""
    posteriors = np.asarray(posteriors, dtype=float)
    if posteriors.ndim != 2 or posteriors.shape[1] < 2:
        raise ValueError(f"posteriors must be an n x k matrix with k >= 2, got {posteriors.shape}")
    if n_classes is not None and posteriors.shape[1] != n_classes:
        raise ValueError(
            f"posteriors have {posteriors.shape[1]} columns, the problem has {n_classes} classes"
        )
    if not np.allclose(posteriors.sum(axis=1), 1.0):
        raise ValueError("posterior rows do not sum to 1")
    return posteriors


def check_labels(labels, n_classes: int) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be a vector, got shape {labels.shape}")
    labels = labels.astype(np.int64)
    if len(labels) and (labels.min() < 0 or labels.max() >= n_classes):
        raise ValueError(f"labels must lie in 0..{n_classes - 1}, got {np.unique(labels)}")
    return labels


def argmax_predictions(posteriors: np.ndarray) -> np.ndarray:
    """Argmax of each row, ties to the lowest class index (the binary "ties to class 0" rule)."""
    return np.argmax(np.asarray(posteriors), axis=1)


def prevalence_vector(labels, n_classes: int) -> np.ndarray:
    """Share of each class 0..n-1 among ``labels`` (NaNs for an empty set)."""
    labels = check_labels(labels, n_classes)
    if len(labels) == 0:
        return np.full(n_classes, np.nan)
    return np.bincount(labels, minlength=n_classes) / len(labels)


def accuracy(posteriors, labels) -> float:
    posteriors = np.asarray(posteriors)
    return float(np.mean(argmax_predictions(posteriors) == np.asarray(labels)))


# ---------------------------------------------------------------------------------------------
# Binning


def _binned_gap_float64(scores: np.ndarray, targets: np.ndarray, n_bins: int) -> float:
    """Sum over non-empty bins (l, u] of linspace(0, 1, n_bins + 1) of |B|/n (mean score - mean
    target)^2, in float64; a score of exactly 0 falls in the first bin.

    The operations are those of the binary tables' metric (``metrics.errors``), so that two classes
    give bit-identical numbers.
    """
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    index = np.clip(np.searchsorted(edges, scores, side="left") - 1, 0, n_bins - 1)
    n = len(scores)
    counts = np.bincount(index, minlength=n_bins)
    score_sums = np.bincount(index, weights=scores, minlength=n_bins)
    target_sums = np.bincount(index, weights=targets, minlength=n_bins)
    filled = counts > 0
    gaps = score_sums[filled] / counts[filled] - target_sums[filled] / counts[filled]
    return float(np.sum(counts[filled] / n * gaps**2))


BINNED_GAPS: dict[str, BinnedGap] = {"float64": _binned_gap_float64}


def register_binned_gap(arithmetic: str, function: BinnedGap) -> None:
    """Make ``arithmetic`` available to the multiclass ECEs (see the module docstring)."""
    BINNED_GAPS[arithmetic] = function


def _binned_gap(arithmetic: Arithmetic) -> BinnedGap:
    if arithmetic not in BINNED_GAPS:
        raise ValueError(
            f"arithmetic={arithmetic!r} is not available; choose one of {sorted(BINNED_GAPS)}"
        )
    return BINNED_GAPS[arithmetic]


def _roundtrip(posteriors: np.ndarray) -> np.ndarray:
    """log then softmax, as the tables' metric does (log 0 = -inf maps back to exactly 0)."""
    with np.errstate(divide="ignore"):
        logits = np.log(posteriors)
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def top_label_confidence(posteriors) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, predicted class) of each row after the metric's log/softmax round trip."""
    probabilities = _roundtrip(check_posteriors(posteriors))
    return probabilities.max(axis=1), argmax_predictions(probabilities)


def ece_top_label(
    posteriors, labels, n_bins: int = N_BINS, arithmetic: Arithmetic = "float64"
) -> float:
    """Top-label ECE x 100 (the binary tables' metric for any number of classes)."""
    posteriors = check_posteriors(posteriors)
    labels = check_labels(labels, posteriors.shape[1])
    confidence, predicted = top_label_confidence(posteriors)
    correct = (predicted == labels).astype(float)
    if arithmetic == "float32":
        # the binary tables' float32 arithmetic (edges, running sum and rounding), on the top label
        return _ece_float32(confidence, correct, n_bins)
    return round(_binned_gap(arithmetic)(confidence, correct, n_bins), 4) * 100


def ece_classwise(
    posteriors, labels, n_bins: int = N_BINS, arithmetic: Arithmetic = "float64"
) -> float:
    """Class-wise ECE x 100: the mean over classes k of the binned squared gap of (p_k, [y = k])."""
    posteriors = check_posteriors(posteriors)
    labels = check_labels(labels, posteriors.shape[1])
    gap = _binned_gap(arithmetic)
    per_class = [
        gap(posteriors[:, k], (labels == k).astype(float), n_bins)
        for k in range(posteriors.shape[1])
    ]
    return round(float(np.mean(per_class)), 4) * 100


def brier(posteriors, labels, scale_by_half: bool | str = "auto") -> float:
    """Mean over items of sum_k (p_k - [y = k])^2; ``"auto"`` halves it for two classes only.

    This is scikit-learn's ``brier_score_loss`` convention (its ``scale_by_half``), which makes the
    two-class value the binary tables' mean (y - p_1)^2.
    """
    posteriors = check_posteriors(posteriors)
    n_classes = posteriors.shape[1]
    labels = check_labels(labels, n_classes)
    if scale_by_half not in ("auto", True, False):
        raise ValueError(f"scale_by_half={scale_by_half!r} is not one of 'auto', True, False")
    onehot = np.eye(n_classes)[labels]
    score = float(np.mean(np.sum((onehot - posteriors) ** 2, axis=1)))
    half = n_classes == 2 if scale_by_half == "auto" else scale_by_half
    return score / 2 if half else score


# ---------------------------------------------------------------------------------------------
# Quantification and CAP


def _prevalences(true_prevalence, estimate) -> tuple[np.ndarray, np.ndarray]:
    true_prevalence = np.asarray(true_prevalence, dtype=float)
    estimate = np.asarray(estimate, dtype=float)
    if true_prevalence.shape != estimate.shape or true_prevalence.ndim != 1:
        raise ValueError(
            f"prevalence vectors must be 1-d of equal length, got {true_prevalence.shape} and "
            f"{estimate.shape}"
        )
    return true_prevalence, estimate


def quantification_ae(true_prevalence, estimate) -> float:
    """QuaPy's AE: the mean over classes of |p_k - p_hat_k| (for two classes |p_1 - p_hat_1|)."""
    true_prevalence, estimate = _prevalences(true_prevalence, estimate)
    return float(np.mean(np.abs(estimate - true_prevalence)))


def smooth(prevalence: np.ndarray, eps: float) -> np.ndarray:
    """QuaPy's additive smoothing (p + eps) / (eps n + 1)."""
    return (prevalence + eps) / (eps * len(prevalence) + 1)


def quantification_rae(
    true_prevalence, estimate, sample_size: int | None = None, eps=None
) -> float:
    """QuaPy's RAE: mean over classes of |p_hat_k - p_k| / p_k after smoothing both vectors.

    ``eps`` defaults to QuaPy's 1 / (2 * sample_size); one of the two must be given.
    """
    true_prevalence, estimate = _prevalences(true_prevalence, estimate)
    if eps is None:
        if sample_size is None:
            raise ValueError("quantification_rae needs eps or the sample size (eps = 1 / (2 n))")
        eps = 1.0 / (2 * sample_size)
    true_prevalence, estimate = smooth(true_prevalence, eps), smooth(estimate, eps)
    return float(np.mean(np.abs(estimate - true_prevalence) / true_prevalence))


def cap_absolute_error(true_accuracy: float, estimate: float) -> float:
    return float(abs(float(true_accuracy) - float(estimate)))


__all__ = [
    "BINNED_GAPS",
    "accuracy",
    "argmax_predictions",
    "brier",
    "cap_absolute_error",
    "check_labels",
    "check_posteriors",
    "ece_classwise",
    "ece_top_label",
    "prevalence_vector",
    "quantification_ae",
    "quantification_rae",
    "register_binned_gap",
    "top_label_confidence",
]
