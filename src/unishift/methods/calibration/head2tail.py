"""Head2Tail (Chen & Su 2023), docs/methods.md §2.2: importance-weighted temperature scaling."""

from __future__ import annotations

import numpy as np
from scipy import optimize

from unishift.methods.base import Setting, check_choice
from unishift.methods.calibration.shared import LOGIT_CONVENTIONS
from unishift.methods.calibration.temperature import TemperatureCalibrator


def check_pca_components(value) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ValueError(
            f"pca_components={value!r} is not valid; choose a positive integer or None"
        )


def pca_reduced(setting: Setting, train_features, features, n_components: int | None):
    """The training and validation features in the space of a PCA fitted on the training features
    when their dimension exceeds ``n_components`` (REF: 50), else unchanged; shared by the binary
    and the multiclass Head2Tail. REF's PCA was unseeded (its solver may be randomized on large
    inputs); ours takes a seed derived from the setting."""
    train_features = np.asarray(train_features, dtype=float)
    features = np.asarray(features, dtype=float)
    if n_components is None or train_features.shape[1] <= n_components:
        return train_features, features
    from sklearn.decomposition import PCA

    pca = PCA(n_components, random_state=setting.derive_seed("Head2Tail", "pca"))
    return pca.fit_transform(train_features), pca.transform(features)


def diagonal_gaussian_logpdf(x: np.ndarray, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    return -0.5 * np.sum(np.log(2 * np.pi * var) + (x - mean) ** 2 / var, axis=-1)


def head2tail_weights(train_features, train_labels, features, labels, alpha=0.9) -> np.ndarray:
    """Per-validation-item weights: 1 for the head class 0; for class 1 the density ratio of the
    Gaussian shifted towards the head class over the class-1 Gaussian, clipped to [0.3, 5].

    With two classes and ceil(0.2 K) = 1 head class, the Wasserstein-softmax transfer of the
    original code puts all the transfer mass on class 0, which gives the closed form below.
    """
    means, stds = [], []
    for c in (0, 1):
        part = train_features[train_labels == c]
        var = np.var(part, axis=0)
        var[var < 1e-6] = 1e-6
        means.append(np.mean(part, axis=0))
        stds.append(np.sqrt(var))
    shift_mean = means[0] * (1 - alpha) + means[1] * alpha
    shift_var = (stds[0] * (1 - alpha) + stds[1] * alpha) ** 2
    weights = np.ones(len(labels))
    tail = labels == 1
    log_ratio = diagonal_gaussian_logpdf(
        features[tail], shift_mean, shift_var
    ) - diagonal_gaussian_logpdf(features[tail], means[1], stds[1] ** 2)
    weights[tail] = np.clip(np.exp(log_ratio), 0.3, 5)
    return weights


def head2tail_temperature(logits, labels, weights) -> float:
    """Weighted cross-entropy temperature on [0.05, 5] by L-BFGS-B from 1 (REF's arithmetic: no
    max-subtraction, exp clipped at 1e20, probabilities clipped to [1e-20, 1 - 1e-20])."""
    onehot = np.eye(logits.shape[1])[labels]

    def loss(t):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            e = np.clip(np.exp(logits / t), -1e20, 1e20)
            p = np.clip(e / np.sum(e, 1)[:, None], 1e-20, 1 - 1e-20)
            return -np.sum(onehot * np.log(p) * weights[:, None]) / p.shape[0]

    result = optimize.minimize(loss, 1.0, method="L-BFGS-B", bounds=((0.05, 5.0),), tol=1e-12)
    return float(result.x[0])


class Head2Tail(TemperatureCalibrator):
    """Head2Tail: importance-weighted temperature scaling fitted on validation (no test data used).

    Args:
        logits: "L" | "S" | "P" (docs/methods.md §0.3); tables: LS "P", CS "S", ζ2ρ "P".
        pca_components: reduce the training/validation features with PCA fitted on the training
            features when their dimension exceeds this (REF: 50); None disables it.
        alpha: share of the tail class in the shifted Gaussian (REF: 0.9).
    """

    name, description = "Head2Tail", "Head2Tail (Chen & Su 2023) [REF Head2Tail-P / Head2Tail]"
    defaults = {"pca_components": 50}
    shift_defaults = {"label": {"logits": "P"}, "covariate": {"logits": "S"}}
    adaptations = ("c2q",)

    def __init__(self, logits: str = "P", pca_components: int | None = 50, alpha: float = 0.9):
        check_choice("logits", logits, LOGIT_CONVENTIONS)
        check_pca_components(pca_components)
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha={alpha!r} is not valid; choose a value in [0, 1]")
        self.logits = logits
        self.pca_components = pca_components
        self.alpha = alpha

    def fit(self, setting: Setting):
        super().fit(setting)
        training, validation = setting.training, setting.validation
        if training.features is None or validation.features is None:
            raise ValueError("Head2Tail needs training and validation features")
        train_features, features = pca_reduced(
            setting, training.features, validation.features, self.pca_components
        )
        self.weights_ = head2tail_weights(
            train_features, training.labels, features, validation.labels, self.alpha
        )
        self.temperature_ = head2tail_temperature(
            self.source_logits_, validation.labels, self.weights_
        )
        return self

    def temperature(self, sample, context):
        return self.temperature_


__all__ = ["Head2Tail", "check_pca_components", "pca_reduced"]
