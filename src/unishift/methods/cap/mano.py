"""MaNo (Xie et al. 2024): the entry-wise L_p norm of the sample's normalised logit matrix,
||Q||_p / (n k)^(1/p), mapped to an accuracy by a linear regression on validation samples
(docs/methods.md §6.3). Normalisation: when the sample's mean cross-entropy between the uniform
distribution and softmax(logits) is at most ``threshold`` (an uncertain model), the paper's
second-order Taylor expansion v(q) = 1 + q + q^2/2 of exp (positive everywhere) divided by its row
sum; otherwise the softmax. The authors' code also subtracts each row's minimum before dividing
(for its higher orders), which for two classes turns every row into a one-hot vector and the score
into a constant; we follow the paper's formula. The logits (``logits``): the model's where the data
carry them (the language models), else the log-posteriors (docs/methods.md §0.3's ``S``;
``"auto"``), which a softmax maps back to the posteriors."""

from __future__ import annotations

import numpy as np
from scipy.special import log_softmax, softmax

from unishift.methods.cap.score_regression import ScoreRegression
from unishift.option_checks import check_choice

LOGITS = ("auto", "L", "S")
EPS = np.finfo(float).eps


def log_posteriors(posteriors: np.ndarray) -> np.ndarray:
    return np.log(np.clip(np.asarray(posteriors, dtype=float), EPS, 1.0))


def uniform_cross_entropy(logits: np.ndarray) -> float:
    """Mean over rows of -(1/k) sum_j log softmax(q)_j."""
    return float(-np.mean(log_softmax(logits, axis=1)))


def mano_normalise(logits: np.ndarray, threshold: float) -> np.ndarray:
    logits = np.asarray(logits, dtype=float)
    if uniform_cross_entropy(logits) > threshold:
        return softmax(logits, axis=1)
    taylor = 1.0 + logits + logits**2 / 2.0  # >= 1/2: (1 + q)^2 / 2 + 1/2
    return taylor / taylor.sum(axis=1, keepdims=True)


def mano_score(logits: np.ndarray, threshold: float = 5.0, norm_order: float = 4.0) -> float:
    normalised = mano_normalise(logits, threshold)
    n, k = normalised.shape
    return float(
        np.sum(np.abs(normalised) ** norm_order) ** (1 / norm_order) / (n * k) ** (1 / norm_order)
    )


class MaNo(ScoreRegression):
    name, group, description = "MaNo", "field", "MaNo, L4 norm of normalised logits, regressed"
    assumption = "covariate"

    def __init__(
        self,
        norm_order: float = 4.0,
        threshold: float = 5.0,
        logits: str = "auto",
        protocol: str = "upp",
        sample_size: int = 250,
        repeats: int = 100,
        seed: int = 0,
        clip: bool = True,
    ):
        self.norm_order = norm_order
        self.threshold = threshold
        self.logits = logits
        self.protocol = protocol
        self.sample_size = sample_size
        self.repeats = repeats
        self.seed = seed
        self.clip = clip

    def check_params(self):
        super().check_params()
        check_choice("logits", self.logits, LOGITS)

    def score(self, posteriors, logits) -> float:
        if self.logits == "L" and logits is None:
            raise ValueError("MaNo: logits='L' needs the model's logits (language models)")
        if logits is None or self.logits == "S":
            logits = log_posteriors(posteriors)
        return mano_score(logits, self.threshold, self.norm_order)
