"""COT, confidence optimal transport (Lu et al. 2023): the predicted error is the optimal-transport
cost between the sample's posteriors (mass 1/n each) and the validation label distribution (mass
pi_y at the one-hot vector e_y) under the cost ||p - e_y||_inf = 1 - p_y; the predicted accuracy
is one minus it (docs/methods.md §6.3). Solved exactly as a transportation linear programme
(SciPy's HiGHS), so non-integer masses n pi_y need no rounding."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from unishift.data.containers import Sample, Setting
from unishift.methods.base import AccuracyPredictor, SampleContext


def cot_cost(posteriors: np.ndarray, target: np.ndarray) -> float:
    """min over plans T >= 0 with rows summing to 1/n and columns to ``target`` of
    sum_iy T_iy (1 - p_iy)."""
    posteriors = np.asarray(posteriors, dtype=float)
    n, k = posteriors.shape
    cost = (1.0 - posteriors).ravel()
    rows = np.kron(np.eye(n), np.ones(k))
    columns = np.kron(np.ones(n), np.eye(k))
    result = linprog(
        cost,
        A_eq=np.vstack([rows, columns]),
        b_eq=np.concatenate([np.full(n, 1.0 / n), np.asarray(target, dtype=float)]),
        bounds=(0, None),
        method="highs",
    )
    if result.status != 0:
        raise RuntimeError(f"COT: the transport problem failed ({result.message})")
    return float(result.fun)


class COT(AccuracyPredictor):
    name, group, description = (
        "COT",
        "field",
        "confidence optimal transport to the validation labels",
    )
    assumption = "covariate"

    def _fit(self, setting: Setting) -> None:
        self.target_ = np.asarray(setting.validation.prevalence, dtype=float)

    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        return float(np.clip(1.0 - cot_cost(sample.posteriors, self.target_), 0.0, 1.0))
