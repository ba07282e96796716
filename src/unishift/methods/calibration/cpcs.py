"""CPCS (Park et al. 2020), docs/methods.md §2.3: the importance-weighted Brier temperature.

The multiclass Brier score over k columns: canonical calibration for any number of classes."""

from __future__ import annotations

import numpy as np
from scipy import optimize

from unishift.methods.calibration.shared import LOGIT_CONVENTIONS, softmax
from unishift.methods.calibration.temperature import TemperatureCalibrator
from unishift.methods.domain_weights import SAMPLE, WEIGHT_SOURCES, importance_weights
from unishift.option_checks import check_choice


def cpcs_temperature(logits, labels, weights) -> float:
    """Weighted-Brier temperature by Nelder-Mead from 2.0 (scipy ``fmin`` defaults, unbounded)."""
    # float32 logits, as in the reference implementation
    z = np.asarray(logits, dtype=np.float32).astype(float)
    onehot = np.eye(z.shape[1])[labels]
    weights = np.asarray(weights, dtype=float).reshape(-1, 1)

    def loss(x):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            brier = np.sum((softmax(z / x[0]) - onehot) ** 2, axis=1, keepdims=True)
            return np.mean(brier * weights)

    return float(optimize.fmin(loss, 2.0, disp=False)[0])


class CPCS(TemperatureCalibrator):
    """CPCS: temperature minimising the importance-weighted Brier score on validation; ``weights``
    "uniform" (all ones, plain Brier temperature scaling) is an ablation and a test oracle."""

    name, description = "CPCS", "CPCS (Park et al. 2020) [reference code: CPCS-P / CPCS]"
    adaptations = ("c2q", "c2a")
    assumption = "covariate"

    def __init__(self, logits: str = "S", weights: str = "domain_classifier"):
        self.logits = logits
        self.weights = weights

    def check_params(self):
        check_choice("logits", self.logits, LOGIT_CONVENTIONS)
        check_choice("weights", self.weights, WEIGHT_SOURCES)

    def domain_weight_plan(self):
        return SAMPLE if self.weights == "domain_classifier" else None

    def temperature(self, sample, context):
        w = importance_weights(self.weights, self.setting_, sample, context, "CPCS")
        return cpcs_temperature(self.source_logits_, self.setting_.validation.labels, w)
