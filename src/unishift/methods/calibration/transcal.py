"""TransCal (Wang et al. 2020), docs/methods.md §2.4: the temperature matching the target confidence
to an importance-weighted estimate of the target accuracy."""

from __future__ import annotations

import warnings

import numpy as np
from scipy import optimize

from unishift.data.containers import Setting
from unishift.methods.calibration.shared import (
    LOGIT_CONVENTIONS,
    as_logits,
    scaled_softmax,
    softmax,
    source_temperature,
)
from unishift.methods.calibration.temperature import TemperatureCalibrator
from unishift.methods.domain_weights import SAMPLE, WEIGHT_SOURCES, importance_weights
from unishift.option_checks import check_choice

ZERO_POSTERIOR_RULES = ("faithful", "clip")
CLIP_POSTERIORS = 1e-12


def transcal_temperature(
    target_logits, weights, error, source_confidence, variance_term: bool = True
) -> float:
    """TransCal's (T, lambda) search with SLSQP from (2, 0.5), T >= 1, lambda in [0, 1]."""
    target_logits = np.asarray(target_logits, dtype=float)
    weights = np.asarray(weights, dtype=float).reshape(-1, 1)

    def loss(x):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            confidence = np.mean(np.max(softmax(target_logits / x[0]), axis=1))
            omega = weights ** x[1]
            weighted_error = omega * error
            if variance_term:
                cov_1 = np.cov(np.concatenate((weighted_error, omega), axis=1), rowvar=False)[0][1]
                eta_1 = -cov_1 / np.var(omega, ddof=1)
                cv_weighted_error = weighted_error + eta_1 * (omega - 1)
                correctness = 1 - error
                cov_2 = np.cov(
                    np.concatenate((cv_weighted_error, correctness), axis=1), rowvar=False
                )[0][1]
                eta_2 = -cov_2 / np.var(correctness, ddof=1)
                risk = (
                    np.mean(weighted_error)
                    + eta_1 * np.mean(omega)
                    - eta_1
                    + eta_2 * np.mean(correctness)
                    - eta_2 * source_confidence
                )
            else:
                risk = np.mean(weighted_error)
            return np.abs(confidence - (1.0 - risk))

    with warnings.catch_warnings():
        # NaN objectives (cases the reference implementation does not guard) make scipy warn; the
        # outcome is kept as the reference implementation's.
        warnings.simplefilter("ignore", RuntimeWarning)
        result = optimize.minimize(
            loss, np.array([2.0, 0.5]), method="SLSQP", bounds=((1.0, None), (0.0, 1.0))
        )
    return float(result.x[0])


class TransCal(TemperatureCalibrator):
    """TransCal: T >= 1 matching the target confidence to a variance-reduced importance-weighted
    estimate of the target accuracy (its switches: docs/methods.md §2.4, config/README.md)."""

    name = "TransCal"
    description = "TransCal (Wang et al. 2020) [reference code: TransCal-S / TransCal]"
    adaptations = ("c2q", "c2a")
    assumption = "covariate"
    calibration_notion = "top-label"

    def __init__(
        self,
        logits: str = "S",
        weights: str = "domain_classifier",
        zero_posteriors: str = "faithful",
        variance_term: bool = True,
    ):
        self.logits = logits
        self.weights = weights
        self.zero_posteriors = zero_posteriors
        self.variance_term = variance_term

    def check_params(self):
        check_choice("logits", self.logits, LOGIT_CONVENTIONS)
        check_choice("weights", self.weights, WEIGHT_SOURCES)
        check_choice("zero_posteriors", self.zero_posteriors, ZERO_POSTERIOR_RULES)
        check_choice("variance_term", self.variance_term, (True, False))

    def _logits(self, data):
        clip = CLIP_POSTERIORS if self.zero_posteriors == "clip" else None
        return as_logits(self.logits, data, clip=clip)

    def _fit(self, setting: Setting) -> None:
        import torch

        super()._fit(setting)
        labels = setting.validation.labels
        self.source_temperature_ = source_temperature(self.source_logits_, labels)
        if self.source_temperature_ == -1.0:
            # the note's words (the reference implementation's sentinel) are in result files
            reason = "no finite validation cross-entropy on the temperature grid (a zero posterior"
            self.fit_fallback(f"TransCal: {reason} for a true class); REF's sentinel T_s = -1 kept")
        # Per-item error (n x 1, float32 as the reference implementation's torch code) and mean
        # max-confidence at T_s, a float32 torch mean as there (docs/reproduction.md, "Arithmetic").
        # With T_s = -1 a row holding -inf becomes NaN: prediction class 0, mean confidence NaN, as
        # in the reference implementation.
        probabilities = scaled_softmax(self.source_logits_, self.source_temperature_)
        correct = np.argmax(probabilities, axis=1) == labels
        self.error_ = (1.0 - correct).astype(np.float32).reshape(-1, 1)
        confidences = np.max(probabilities, axis=1).astype(np.float32)
        self.source_confidence_ = torch.from_numpy(confidences).mean().item()

    def domain_weight_plan(self):
        return SAMPLE if self.weights == "domain_classifier" else None

    def temperature(self, sample, context):
        w = importance_weights(self.weights, self.setting_, sample, context, "TransCal")
        return transcal_temperature(
            self._logits(sample), w, self.error_, self.source_confidence_, self.variance_term
        )
