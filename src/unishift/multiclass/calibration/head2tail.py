"""Head2Tail for k classes (Chen & Su 2023): importance-weighted temperature scaling on validation.

The paper's transfer is multiclass by design. Each class c is a diagonal Gaussian of the
classifier-training features (mean μ_c, standard deviations σ_c, variances floored at 1e-6). The head
classes H are ceil(0.2 k) classes; every tail class c borrows from them through the transfer row

    M[c, j] = softmax_j( -W(c, j) / sqrt(d) ) over j in H, j != c,   W(c, j) = ||μ_c - μ_j||² + ||σ_c - σ_j||²

(W the squared 2-Wasserstein distance of the two diagonal Gaussians, d the feature dimension). A
validation item of tail class c gets the density ratio of the shifted Gaussian
N(α μ_c + (1 - α) Σ_j M[c, j] μ_j, (α σ_c + (1 - α) Σ_j M[c, j] σ_j)²) over N(μ_c, σ_c²) at its features,
clipped to [0.3, 5]; head items weigh 1. The temperature minimises the weighted validation
cross-entropy (the binary ``head2tail_temperature``, class-generic). No test data is used.

``head`` says which classes are the head: ``"frequency"`` (default; the paper's definition, the
ceil(0.2 k) most frequent classes of the classifier-training set, ties to the lower index) or
``"index"`` (the LasCal code's rule, the first ceil(0.2 k) class indices, which assumes classes
sorted by frequency). For k = 2 the single head class has transfer row M[1, 0] = 1 and the weights
are the binary closed form; with ``head="index"`` (class 0 the head, as the binary method) the
numbers are the binary Head2Tail's (tests/test_multiclass_binary_invariant.py).
"""

from __future__ import annotations

import math

import numpy as np

from unishift.methods.base import check_choice
from unishift.methods.calibration.head2tail import (
    check_pca_components,
    diagonal_gaussian_logpdf,
    head2tail_temperature,
    pca_reduced,
)
from unishift.methods.calibration.shared import LOGIT_CONVENTIONS, as_logits, scaled_softmax
from unishift.multiclass.base import MulticlassCalibrator

HEAD_RULES = ("frequency", "index")
HEAD_SHARE = 0.2
VARIANCE_FLOOR = 1e-6
WEIGHT_CLIP = (0.3, 5.0)


def head_classes(train_labels, n_classes: int, rule: str = "frequency") -> np.ndarray:
    """The ceil(0.2 k) head classes, by training frequency (ties to the lower index) or by index."""
    check_choice("head", rule, HEAD_RULES)
    n_head = math.ceil(n_classes * HEAD_SHARE)
    if rule == "index":
        return np.arange(n_head)
    counts = np.bincount(np.asarray(train_labels, dtype=int), minlength=n_classes)
    return np.sort(np.argsort(-counts, kind="stable")[:n_head])


def class_gaussians(train_features, train_labels, n_classes: int):
    """(means, standard deviations), k x d, of the diagonal Gaussian of each class."""
    means, stds = [], []
    for c in range(n_classes):
        part = train_features[train_labels == c]
        var = np.var(part, axis=0)
        var[var < VARIANCE_FLOOR] = VARIANCE_FLOOR
        means.append(np.mean(part, axis=0))
        stds.append(np.sqrt(var))
    return np.array(means), np.array(stds)


def transfer_matrix(means: np.ndarray, stds: np.ndarray, head: np.ndarray) -> np.ndarray:
    """M[c, j]: the share of head class j in tail class c's transfer (rows of head classes that have
    no other head class are zero; they are never used)."""
    k, d = means.shape
    M = np.zeros((k, k))
    for c in range(k):
        donors = [j for j in head if j != c]
        if not donors:
            continue
        scores = np.array(
            [
                -(np.sum((means[c] - means[j]) ** 2) + np.sum((stds[c] - stds[j]) ** 2))
                / math.sqrt(d)
                for j in donors
            ]
        )
        scores = np.exp(scores - scores.max())
        M[c, donors] = scores / scores.sum()
    return M


def head2tail_weights(
    train_features, train_labels, features, labels, n_classes, alpha=0.9, rule="frequency"
) -> np.ndarray:
    """Per-validation-item weights: 1 for head classes, the clipped density ratio for tail ones."""
    train_labels = np.asarray(train_labels, dtype=int)
    labels = np.asarray(labels, dtype=int)
    head = head_classes(train_labels, n_classes, rule)
    means, stds = class_gaussians(train_features, train_labels, n_classes)
    M = transfer_matrix(means, stds, head)
    weights = np.ones(len(labels))
    for c in range(n_classes):
        if c in head:
            continue
        items = labels == c
        if not items.any():
            continue
        shift_mean = (M[c] @ means) * (1 - alpha) + means[c] * alpha
        shift_var = ((M[c] @ stds) * (1 - alpha) + stds[c] * alpha) ** 2
        log_ratio = diagonal_gaussian_logpdf(
            features[items], shift_mean, shift_var
        ) - diagonal_gaussian_logpdf(features[items], means[c], stds[c] ** 2)
        weights[items] = np.clip(np.exp(log_ratio), *WEIGHT_CLIP)
    return weights


class Head2Tail(MulticlassCalibrator):
    """Head2Tail: one temperature from the transfer-weighted validation cross-entropy.

    Args:
        logits: "S" (default), "L" or "P" (the binary label-shift table's convention).
        pca_components: PCA of the features fitted on the training features when their dimension
            exceeds this (the binary method's 50); None disables it.
        alpha: the tail class's own share in its shifted Gaussian (0.9).
        head: "frequency" or "index" (see the module docstring).
    """

    name, display, binary_name = "Head2Tail", "Head2Tail", "Head2Tail"
    group = "reference"
    assumption = "none"
    calibration_notion = "canonical"
    defaults = {"logits": "S", "pca_components": 50, "alpha": 0.9, "head": "frequency"}
    description = (
        "Head2Tail (Chen & Su 2023): head-to-tail transfer weights, weighted-CE temperature"
    )

    def __init__(
        self,
        logits: str = "S",
        pca_components: int | None = 50,
        alpha: float = 0.9,
        head: str = "frequency",
    ):
        check_choice("logits", logits, LOGIT_CONVENTIONS)
        check_choice("head", head, HEAD_RULES)
        check_pca_components(pca_components)
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha={alpha!r} is not valid; choose a value in [0, 1]")
        self.logits = logits
        self.pca_components = pca_components
        self.alpha = alpha
        self.head = head

    def fit(self, setting):
        self.fit_notes = []
        training, validation = setting.training, setting.validation
        if training.features is None or validation.features is None:
            raise ValueError("Head2Tail needs training and validation features")
        train_labels = np.asarray(training.labels, dtype=int)
        missing = [c for c in range(setting.n_classes) if not np.any(train_labels == c)]
        if missing:
            raise ValueError(
                f"Head2Tail: class {missing} has no classifier-training item, so its Gaussian "
                "is undefined"
            )
        train_features, features = pca_reduced(
            setting, training.features, validation.features, self.pca_components
        )
        self.weights_ = head2tail_weights(
            train_features,
            train_labels,
            features,
            validation.labels,
            setting.n_classes,
            self.alpha,
            self.head,
        )
        self.temperature_ = head2tail_temperature(
            as_logits(self.logits, validation), np.asarray(validation.labels, int), self.weights_
        )
        return self

    def calibrate(self, sample, context):
        return scaled_softmax(as_logits(self.logits, sample), self.temperature_)


__all__ = ["Head2Tail", "head2tail_weights", "head_classes", "transfer_matrix"]
