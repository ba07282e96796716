"""Nuclear Norm (Deng et al. 2023, "Confidence and dispersity speak"): the score ||P||_* /
sqrt(n min(n, k)) of the sample's n x k posterior matrix, high when the predictions are both
confident and spread over the classes, mapped to an accuracy by a linear regression on validation
samples (docs/methods.md §6.3)."""

from __future__ import annotations

import numpy as np

from unishift.methods.cap.score_regression import ScoreRegression


def nuclear_norm_score(posteriors: np.ndarray) -> float:
    posteriors = np.asarray(posteriors, dtype=float)
    n, k = posteriors.shape
    singular_values = np.linalg.svd(posteriors, compute_uv=False)
    return float(singular_values.sum() / np.sqrt(n * min(n, k)))


class NuclearNorm(ScoreRegression):
    name, group, description = "NuclearNorm", "field", "nuclear norm of the posteriors, regressed"
    display = "NuclearNorm"
    assumption = "covariate"

    def __init__(
        self,
        protocol: str = "upp",
        sample_size: int = 250,
        repeats: int = 100,
        seed: int = 0,
        clip: bool = True,
    ):
        self.protocol = protocol
        self.sample_size = sample_size
        self.repeats = repeats
        self.seed = seed
        self.clip = clip

    def score(self, posteriors, logits) -> float:
        return nuclear_norm_score(posteriors)
