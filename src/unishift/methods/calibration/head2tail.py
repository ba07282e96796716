"""Head2Tail (Chen & Su 2023, docs/methods.md §2.2): importance-weighted temperature scaling on
validation for any number of classes, no test data used (the transfer, the weights and the ``head``
rules: docs/multiclass.md §4, Head2Tail).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from unishift.data.containers import Setting
from unishift.methods.calibration.shared import LOGIT_CONVENTIONS
from unishift.methods.calibration.temperature import TemperatureCalibrator
from unishift.option_checks import check_choice, check_positive_int

HEAD_RULES = ("frequency", "index")
HEAD_SHARE = 0.2
VARIANCE_FLOOR = 1e-6
WEIGHT_CLIP = (0.3, 5.0)


def diagonal_gaussian_logpdf(x: np.ndarray, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    return -0.5 * np.sum(np.log(2 * np.pi * var) + (x - mean) ** 2 / var, axis=-1)


def head_classes(train_labels, n_classes: int, rule: str = "frequency") -> np.ndarray:
    """The ceil(0.2 k) head classes, by training frequency (ties to the lower index) or by index."""
    check_choice("head", rule, HEAD_RULES)
    n_head = math.ceil(n_classes * HEAD_SHARE)
    if rule == "index":
        return np.arange(n_head)
    counts = np.bincount(np.asarray(train_labels, dtype=int), minlength=n_classes)
    return np.sort(np.argsort(-counts, kind="stable")[:n_head])


def transfer_matrix(means: np.ndarray, stds: np.ndarray, head: np.ndarray) -> np.ndarray:
    """M[c, j]: the share of head class j in tail class c's transfer (rows of head classes that have
    no other head class are zero; they are never used)."""
    k, d = means.shape
    M = np.zeros((k, k))
    for c in range(k):
        donors = [j for j in head if j != c]
        if not donors:
            continue
        w2 = [np.sum((means[c] - means[j]) ** 2) + np.sum((stds[c] - stds[j]) ** 2) for j in donors]
        scores = -np.array(w2) / math.sqrt(d)
        scores = np.exp(scores - scores.max())
        M[c, donors] = scores / scores.sum()
    return M


def head2tail_weights(
    train_features, train_labels, features, labels, n_classes=2, alpha=0.9, rule="frequency"
) -> np.ndarray:
    """Per-validation-item weights: 1 for head classes, the clipped density ratio for tail ones."""
    train_labels = np.asarray(train_labels, dtype=int)
    labels = np.asarray(labels, dtype=int)
    head = head_classes(train_labels, n_classes, rule)
    # the diagonal Gaussian of each class: means and standard deviations, k x d
    parts = [train_features[train_labels == c] for c in range(n_classes)]
    var = np.array([np.var(part, axis=0) for part in parts])
    var[var < VARIANCE_FLOOR] = VARIANCE_FLOOR
    means, stds = np.array([np.mean(part, axis=0) for part in parts]), np.sqrt(var)
    M = transfer_matrix(means, stds, head)
    weights = np.ones(len(labels))
    for c in np.setdiff1d(np.arange(n_classes), head):  # tail classes
        items = labels == c
        shift_mean = (M[c] @ means) * (1 - alpha) + means[c] * alpha
        shift_var = ((M[c] @ stds) * (1 - alpha) + stds[c] * alpha) ** 2
        log_ratio = diagonal_gaussian_logpdf(
            features[items], shift_mean, shift_var
        ) - diagonal_gaussian_logpdf(features[items], means[c], stds[c] ** 2)
        weights[items] = np.clip(np.exp(log_ratio), *WEIGHT_CLIP)
    return weights


def head2tail_temperature(logits, labels, weights) -> float:
    """Weighted cross-entropy temperature on [0.05, 5] by L-BFGS-B from 1 (the reference
    implementation's arithmetic: no max-subtraction, exp clipped at 1e20, probabilities clipped to
    [1e-20, 1 - 1e-20])."""
    onehot = np.eye(logits.shape[1])[labels]

    def loss(t):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            e = np.clip(np.exp(logits / t), -1e20, 1e20)
            p = np.clip(e / np.sum(e, 1)[:, None], 1e-20, 1 - 1e-20)
            return -np.sum(onehot * np.log(p) * weights[:, None]) / p.shape[0]

    result = optimize.minimize(loss, 1.0, method="L-BFGS-B", bounds=((0.05, 5.0),), tol=1e-12)
    return float(result.x[0])


class Head2Tail(TemperatureCalibrator):
    """Head2Tail: one temperature from the transfer-weighted validation cross-entropy (no test data;
    ``pca_components`` and ``alpha`` as in docs/multiclass.md §4, Head2Tail)."""

    name = "Head2Tail"
    description = "Head2Tail (Chen & Su 2023) [reference code: Head2Tail-P / Head2Tail]"
    adaptations = ("c2q",)

    def __init__(
        self,
        logits: str = "S",
        pca_components: int | None = 50,
        alpha: float = 0.9,
        head: str = "frequency",
    ):
        self.logits = logits
        self.pca_components = pca_components
        self.alpha = alpha
        self.head = head

    def check_params(self):
        check_choice("logits", self.logits, LOGIT_CONVENTIONS)
        check_choice("head", self.head, HEAD_RULES)
        check_positive_int("pca_components", self.pca_components, none=True)
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha={self.alpha!r} is not valid; choose a value in [0, 1]")

    def _fit(self, setting: Setting) -> None:
        super()._fit(setting)
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
        train_x = np.asarray(training.features, dtype=float)
        x = np.asarray(validation.features, dtype=float)
        if self.pca_components is not None and train_x.shape[1] > self.pca_components:
            from sklearn.decomposition import PCA

            # seeded from the setting (the reference implementation's PCA was not)
            pca = PCA(self.pca_components, random_state=setting.derive_seed("Head2Tail", "pca"))
            train_x, x = pca.fit_transform(train_x), pca.transform(x)
        labels = np.asarray(validation.labels, dtype=int)
        self.weights_ = head2tail_weights(
            train_x, train_labels, x, labels, setting.n_classes, self.alpha, self.head
        )
        self.temperature_ = head2tail_temperature(self.source_logits_, labels, self.weights_)

    def temperature(self, sample, context):
        return self.temperature_
