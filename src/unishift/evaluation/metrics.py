"""Error measures computed on one test sample, for any number of classes k >= 2: the top-label,
positive-class and class-wise ECEs, Brier, QuaPy's AE and RAE and the CAP error, with the reference
implementation's float32 ECE arithmetic (``precision``, docs/reproduction.md, "Arithmetic") and the
binary tables' two-class forms (docs/reporting.md §1, docs/multiclass.md §5). Every measure refuses
what it cannot score instead of dropping items.
"""

from __future__ import annotations

import numpy as np

from unishift.numerics import (
    PRECISIONS,
    float32_running_sum,
    round_float32,
    torch_linspace_float32,
)
from unishift.option_checks import check_choice

N_BINS = 15
# The one tolerance of probabilities, posterior rows and prevalence vectors, and of a CAP method's
# accuracy (docs/reporting.md §1.8): float32 rounding (2**-23 per entry, a few entries
# per row; the language models' posteriors are float32) and a solver's stop near a face of the
# simplex. Within it a value is clipped into [0, 1] and its row renormalised; beyond it the sample
# fails with the reason. No metric sees a negative, NaN or above-1 entry.
OUTPUT_TOLERANCE = 1e-6


def clean_probabilities(values, what: str = "posteriors") -> np.ndarray:
    """``values`` (rows of class probabilities, 2-d) with every entry in [0, 1]: entries outside
    it by at most :data:`OUTPUT_TOLERANCE` clipped and their rows renormalised; a ValueError naming
    the worst entry or row sum beyond the tolerance, or a NaN / infinite entry. Rows within [0, 1]
    are returned as they are (a renormalisation would move their last digits)."""
    values = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{what} hold NaN or infinite values")
    low, high = float(values.min(initial=0.0)), float(values.max(initial=0.0))
    if low < -OUTPUT_TOLERANCE or high > 1 + OUTPUT_TOLERANCE:
        raise ValueError(
            f"{what} must lie in [0, 1] within {OUTPUT_TOLERANCE:g}, got values in "
            f"[{low:.6g}, {high:.6g}]"
        )
    sums = values.sum(axis=1)
    off = np.abs(sums - 1.0)
    if values.size and float(off.max()) > OUTPUT_TOLERANCE:
        worst = float(sums[np.argmax(off)])
        raise ValueError(
            f"{what} rows do not sum to 1 within {OUTPUT_TOLERANCE:g} (one sums to {worst!r})"
        )
    outside = ((values < 0.0) | (values > 1.0)).any(axis=1)
    if outside.any():
        values = values.copy()
        clipped = np.clip(values[outside], 0.0, 1.0)
        values[outside] = clipped / clipped.sum(axis=1, keepdims=True)
    return values


def check_posteriors(posteriors) -> np.ndarray:
    """An n x k float matrix (k >= 2) of probabilities whose rows sum to 1 within
    :data:`OUTPUT_TOLERANCE` (entries outside [0, 1] within it clipped and their rows renormalised:
    :func:`clean_probabilities`), or an error naming why."""
    posteriors = np.asarray(posteriors, dtype=float)
    if posteriors.ndim != 2 or posteriors.shape[1] < 2:
        raise ValueError(f"posteriors must be an n x k matrix with k >= 2, got {posteriors.shape}")
    return clean_probabilities(posteriors, "posteriors")


def check_labels(labels, n_classes: int) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be a vector, got shape {labels.shape}")
    labels = labels.astype(np.int64)
    if len(labels) and (labels.min() < 0 or labels.max() >= n_classes):
        raise ValueError(f"labels must lie in 0..{n_classes - 1}, got {np.unique(labels)}")
    return labels


def argmax_predictions(posteriors: np.ndarray) -> np.ndarray:
    """Argmax of each row, ties to the lowest class index (the binary "ties to class 0" rule;
    docs/methods.md §0.2): the crisp predictions of every layer above."""
    return np.argmax(np.asarray(posteriors), axis=1)


def prevalence_vector(labels, n_classes: int) -> np.ndarray:
    """Share of each class 0..k-1 among ``labels`` (NaNs for an empty set)."""
    labels = check_labels(labels, n_classes)
    if len(labels) == 0:
        return np.full(n_classes, np.nan)
    return np.bincount(labels, minlength=n_classes) / len(labels)


def accuracy(posteriors, labels) -> float:
    """Share of items whose argmax prediction (ties to the lowest class) is their label."""
    posteriors = check_posteriors(posteriors)
    labels = check_labels(labels, posteriors.shape[1])
    return float(np.mean(argmax_predictions(posteriors) == labels))


# Binned gaps: sum over non-empty bins of |B|/n (mean score - mean target)^2


def _binned_gap_float64(scores: np.ndarray, targets: np.ndarray, edges, right_closed: bool):
    index = np.searchsorted(edges, scores, side="left" if right_closed else "right") - 1
    index = np.clip(index, 0, len(edges) - 2)
    n = len(scores)
    counts = np.bincount(index, minlength=len(edges) - 1)
    score_sums = np.bincount(index, weights=scores, minlength=len(edges) - 1)
    target_sums = np.bincount(index, weights=targets, minlength=len(edges) - 1)
    filled = counts > 0
    gaps = score_sums[filled] / counts[filled] - target_sums[filled] / counts[filled]
    return float(np.sum(counts[filled] / n * gaps**2))


def _binned_gap_float32(scores: np.ndarray, targets: np.ndarray, n_bins: int) -> np.float32:
    """The reference implementation's arithmetic (docs/reproduction.md, "Arithmetic"): float32
    edges, item shares, mean targets and running sum; float64 scores, mean scores and squared
    gaps."""
    edges = torch_linspace_float32(0.0, 1.0, n_bins + 1).astype(np.float64)
    n = np.float32(len(scores))
    terms = []
    for lower, upper in zip(edges[:-1], edges[1:]):
        in_bin = (scores > lower) & (scores <= upper)
        count = int(np.count_nonzero(in_bin))
        if count == 0:
            continue
        share = np.float32(count) / n
        target = np.float32(np.count_nonzero(targets[in_bin])) / np.float32(count)
        gap = abs(float(np.mean(scores[in_bin])) - float(target))
        terms.append(float(share) * gap**2)
    return float32_running_sum(np.asarray(terms))


def _ece_percent(pairs, n_bins: int, precision: str) -> float:
    """The mean binned gap of (scores, targets) pairs on bins (l, u], rounded to 4 decimals, x 100
    (float32: the float32 mean of the float32 gaps, rounded as a float32)."""
    check_choice("precision", precision, PRECISIONS)
    if precision == "float32":
        gaps = [_binned_gap_float32(scores, targets, n_bins) for scores, targets in pairs]
        return float(round_float32(np.mean(np.asarray(gaps, np.float32)), 4)) * 100
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    gaps = [_binned_gap_float64(scores, targets, edges, True) for scores, targets in pairs]
    return round(float(np.mean(gaps)), 4) * 100


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


def ece_top_label(posteriors, labels, n_bins: int = N_BINS, precision: str = "float32") -> float:
    """Top-label ECE x 100 (docs/reporting.md §1.1); ``precision="float32"`` reproduces the
    reference implementation's arithmetic bit for bit (docs/reproduction.md, "Arithmetic")."""
    confidence, predicted = top_label_confidence(posteriors)  # checks the posteriors
    labels = check_labels(labels, np.shape(posteriors)[1])
    return _ece_percent([(confidence, (predicted == labels).astype(float))], n_bins, precision)


def ece_classwise(posteriors, labels, n_bins: int = N_BINS, precision: str = "float32") -> float:
    """Class-wise ECE x 100: the mean over classes of the binned squared gap of (p_k, [y = k])."""
    posteriors = check_posteriors(posteriors)
    labels = check_labels(labels, posteriors.shape[1])
    pairs = [(posteriors[:, k], (labels == k).astype(float)) for k in range(posteriors.shape[1])]
    return _ece_percent(pairs, n_bins, precision)


def ece_positive_class(posteriors, labels, n_bins: int = N_BINS) -> float:
    """The paper's ECE x 100: positive-class reliability on isometric bins [l, u) (two classes;
    docs/reporting.md §1.2)."""
    posteriors = check_posteriors(posteriors)
    if posteriors.shape[1] != 2:
        raise ValueError(
            f"the positive-class ECE needs two classes, got {posteriors.shape[1]}: use the "
            "top-label or the class-wise ECE"
        )
    labels = check_labels(labels, 2)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return 100 * _binned_gap_float64(
        posteriors[:, 1], labels.astype(float), edges, right_closed=False
    )


def brier(posteriors, labels) -> float:
    """Mean over items of sum_k (p_k - [y = k])^2, halved for two classes: mean (y - p_1)^2."""
    posteriors = check_posteriors(posteriors)
    n_classes = posteriors.shape[1]
    labels = check_labels(labels, n_classes)
    if n_classes == 2:
        return float(np.mean((labels.astype(float) - posteriors[:, 1]) ** 2))
    onehot = np.eye(n_classes)[labels]
    return float(np.mean(np.sum((onehot - posteriors) ** 2, axis=1)))


# Quantification and CAP


def check_prevalence(prevalence, n_classes: int | None = None, name: str = "prevalence"):
    """A finite length-k vector on the probability simplex within :data:`OUTPUT_TOLERANCE` (an
    entry outside [0, 1] within it clipped and the vector renormalised), or a clear error."""
    prevalence = np.asarray(prevalence, dtype=float)
    if prevalence.ndim != 1 or len(prevalence) < 2:
        raise ValueError(f"{name} must be a vector of k >= 2 class shares, got {prevalence.shape}")
    if n_classes is not None and len(prevalence) != n_classes:
        raise ValueError(f"{name} has {len(prevalence)} entries, the problem has {n_classes}")
    if not np.all(np.isfinite(prevalence)):
        raise ValueError(f"{name} holds NaN or infinite values: {prevalence}")
    try:
        return clean_probabilities(prevalence[None, :], name)[0]
    except ValueError as err:
        raise ValueError(f"{name} {prevalence} is not on the probability simplex: {err}") from None


def check_accuracy(value, name: str = "accuracy") -> float:
    """A finite number in [0, 1] within :data:`OUTPUT_TOLERANCE` (clipped into it), or an error."""
    value = float(value)
    if not -OUTPUT_TOLERANCE <= value <= 1.0 + OUTPUT_TOLERANCE:  # NaN included
        raise ValueError(
            f"{name} {value!r} is not finite or outside [0, 1] by more than {OUTPUT_TOLERANCE:g}"
        )
    return min(max(value, 0.0), 1.0)


def quantification_ae(true_prevalence, estimate) -> float:
    """QuaPy's AE: the mean over classes of |p_k - p_hat_k|; for two classes |p_1 - p_hat_1|."""
    true_prevalence = check_prevalence(true_prevalence, name="true prevalence")
    estimate = check_prevalence(estimate, len(true_prevalence), "estimated prevalence")
    if len(true_prevalence) == 2:
        return absolute_error(true_prevalence[1], estimate[1])
    return float(np.mean(np.abs(estimate - true_prevalence)))


def quantification_rae(true_prevalence, estimate, sample_size: int) -> float:
    """QuaPy's RAE: mean over classes of |p_hat_k - p_k| / p_k after smoothing both vectors."""
    true_prevalence = check_prevalence(true_prevalence, name="true prevalence")
    estimate = check_prevalence(estimate, len(true_prevalence), "estimated prevalence")
    eps = 1.0 / (2 * sample_size)
    # QuaPy's additive smoothing (p + eps) / (eps k + 1), with its eps = 1 / (2 * sample size)
    true_prevalence, estimate = (
        (p + eps) / (eps * len(p) + 1) for p in (true_prevalence, estimate)
    )
    return float(np.mean(np.abs(estimate - true_prevalence) / true_prevalence))


def absolute_error(true_value: float, estimate: float) -> float:
    """|true - estimate| of two finite numbers."""
    true_value, estimate = float(true_value), float(estimate)
    if not (np.isfinite(true_value) and np.isfinite(estimate)):
        raise ValueError(f"cannot score {estimate!r} against {true_value!r}: not finite")
    return float(abs(true_value - estimate))
