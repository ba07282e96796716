"""The reference calibrators of the LasCal code base: Head2Tail, CPCS, TransCal and LasCal.

Each treats a matrix as logits and returns softmax(logits_test / T); which matrix is chosen by the
``logits`` argument (docs/methods.md §0.3): ``"L"`` true logits (language models only), ``"S"``
log-posteriors, ``"P"`` posteriors used as logits. The registry sets the convention of each paper
table (docs/methods.md §5); the calibration->quantification / ->CAP adaptations construct these classes
directly with their own convention (e.g. ``CPCS(logits="P")`` for ζ2ρ, ``TransCal(logits="S")`` for ζ2α).

The labelled source of every calibrator is ``setting.validation``; CPCS and TransCal also use
``setting.training.features`` and the sample's features for the domain classifier (B5), which is
fitted once per sample and shared through the :class:`SampleContext` (see ``shared.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import optimize

from unishift.methods.base import Calibrator, Sample, SampleContext, Setting, check_choice
from unishift.methods.calibration.lascal import (
    ARITHMETICS,
    SOLVERS,
    lascal_logits,
    lascal_search,
    torch_scaled_softmax,
    uncalibrated_like_ref,
)
from unishift.methods.calibration.shared import (
    LOGIT_CONVENTIONS,
    WEIGHT_SOURCES,
    as_logits,
    importance_weights,
    scaled_softmax,
    softmax,
    source_temperature,
)
from unishift.methods.domain_weights import SAMPLE

ZERO_POSTERIOR_RULES = ("faithful", "clip")
CLIP_POSTERIORS = 1e-12


def _check_positive_int_or_none(name: str, value) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ValueError(f"{name}={value!r} is not valid; choose a positive integer or None")


class _TemperatureCalibrator(Calibrator):
    """Stores the setting and the validation 'logits'; subclasses pick the temperature."""

    logits: str
    fit_notes: list

    def _logits(self, data) -> np.ndarray:
        return as_logits(self.logits, data)

    def fit(self, setting: Setting):
        self.fit_notes = []
        self.setting_ = setting
        self.source_logits_ = self._logits(setting.validation)
        return self

    def temperature(self, sample: Sample, context: SampleContext) -> float:
        raise NotImplementedError

    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        return scaled_softmax(self._logits(sample), self.temperature(sample, context))


# ---------------------------------------------------------------------------------------------
# Head2Tail (Chen & Su 2023), docs/methods.md §2.2


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


class Head2Tail(_TemperatureCalibrator):
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
        _check_positive_int_or_none("pca_components", pca_components)
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
        train_features = np.asarray(training.features, dtype=float)
        features = np.asarray(validation.features, dtype=float)
        if self.pca_components is not None and train_features.shape[1] > self.pca_components:
            from sklearn.decomposition import PCA

            # REF's PCA was unseeded (its solver may be randomized on large inputs).
            pca = PCA(self.pca_components, random_state=setting.derive_seed("Head2Tail", "pca"))
            train_features = pca.fit_transform(train_features)
            features = pca.transform(features)
        self.weights_ = head2tail_weights(
            train_features, training.labels, features, validation.labels, self.alpha
        )
        self.temperature_ = head2tail_temperature(
            self.source_logits_, validation.labels, self.weights_
        )
        return self

    def temperature(self, sample, context):
        return self.temperature_


# ---------------------------------------------------------------------------------------------
# CPCS (Park et al. 2020), docs/methods.md §2.3


def cpcs_temperature(logits, labels, weights) -> float:
    """Weighted-Brier temperature by Nelder-Mead from 2.0 (scipy ``fmin`` defaults, unbounded).

    REF cast the logits to float32 before dividing by the float64 temperature; so do we.
    """
    z = np.asarray(logits, dtype=np.float32).astype(float)
    onehot = np.eye(z.shape[1])[labels]
    weights = np.asarray(weights, dtype=float).reshape(-1, 1)

    def loss(x):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            brier = np.sum((softmax(z / x[0]) - onehot) ** 2, axis=1, keepdims=True)
            return np.mean(brier * weights)

    return float(optimize.fmin(loss, 2.0, disp=False)[0])


class CPCS(_TemperatureCalibrator):
    """CPCS: temperature minimising the importance-weighted Brier score on validation.

    Args:
        logits: "L" | "S" | "P"; tables: CS "L", LS "P", ζ2ρ "P", ζ2α "S".
        weights: "domain_classifier" (B5, REF) or "uniform" (all ones: plain Brier temperature
            scaling on validation; an ablation and a test oracle).
    """

    name, description = "CPCS", "CPCS (Park et al. 2020) [REF CPCS-P / CPCS]"
    shift_defaults = {"label": {"logits": "P"}, "covariate": {"logits": "L"}}
    adaptations = ("c2q", "c2a")

    def __init__(self, logits: str = "P", weights: str = "domain_classifier"):
        check_choice("logits", logits, LOGIT_CONVENTIONS)
        check_choice("weights", weights, WEIGHT_SOURCES)
        self.logits = logits
        self.weights = weights

    def domain_weight_plan(self):
        return SAMPLE if self.weights == "domain_classifier" else None

    def temperature(self, sample, context):
        w = importance_weights(self.weights, self.setting_, sample, context, "CPCS")
        return cpcs_temperature(self.source_logits_, self.setting_.validation.labels, w)


# ---------------------------------------------------------------------------------------------
# TransCal (Wang et al. 2020), docs/methods.md §2.4


def transcal_source_statistics(logits, labels, source_temperature_value):
    """Per-item error (n x 1, float32 as REF's torch code) and mean max-confidence at T_s.

    The confidences are averaged as REF does, as a float32 torch tensor: torch's float32 sum
    differs from NumPy's in the last bit, and that bit can move TransCal's SLSQP search elsewhere
    (docs/reproduction.md, "Arithmetic"). With REF's sentinel T_s = -1 the logits are flipped; a
    row holding -inf then becomes NaN (torch's softmax), its prediction is class 0 and the mean
    confidence is NaN, as in REF.
    """
    import torch

    probabilities = scaled_softmax(logits, source_temperature_value)
    confidences = np.max(probabilities, axis=1)
    predictions = np.argmax(probabilities, axis=1)
    error = (1.0 - (predictions == labels)).astype(np.float32).reshape(-1, 1)
    confidence = torch.from_numpy(confidences.astype(np.float32)).mean().item()
    return error, confidence


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
        # NaN objectives (REF's unguarded cases) make scipy warn; the outcome is kept as REF's.
        warnings.simplefilter("ignore", RuntimeWarning)
        result = optimize.minimize(
            loss, np.array([2.0, 0.5]), method="SLSQP", bounds=((1.0, None), (0.0, 1.0))
        )
    return float(result.x[0])


class TransCal(_TemperatureCalibrator):
    """TransCal: T >= 1 matching the target confidence to a variance-reduced importance-weighted
    estimate of the target accuracy.

    Args:
        logits: "L" | "S" | "P"; tables: CS "L", LS "S", ζ2ρ "P", ζ2α "S".
        weights: "domain_classifier" (B5, REF) or "uniform".
        zero_posteriors: "faithful" keeps REF's behaviour when the S-logits of a validation item
            are -inf for its true class (no finite source cross-entropy: sentinel T_s = -1, which
            flips the logits; recorded as a fallback note); "clip" clips posteriors to
            [1e-12, 1 - 1e-12] before taking logs (only affects logits="S").
        variance_term: REF's control-variate correction (True); False uses the plain weighted error.
    """

    name, description = "TransCal", "TransCal (Wang et al. 2020) [REF TransCal-S / TransCal]"
    shift_defaults = {"label": {"logits": "S"}, "covariate": {"logits": "L"}}
    adaptations = ("c2q", "c2a")

    def __init__(
        self,
        logits: str = "S",
        weights: str = "domain_classifier",
        zero_posteriors: str = "faithful",
        variance_term: bool = True,
    ):
        check_choice("logits", logits, LOGIT_CONVENTIONS)
        check_choice("weights", weights, WEIGHT_SOURCES)
        check_choice("zero_posteriors", zero_posteriors, ZERO_POSTERIOR_RULES)
        check_choice("variance_term", variance_term, (True, False))
        self.logits = logits
        self.weights = weights
        self.zero_posteriors = zero_posteriors
        self.variance_term = variance_term

    def _logits(self, data):
        clip = CLIP_POSTERIORS if self.zero_posteriors == "clip" else None
        return as_logits(self.logits, data, clip=clip)

    def fit(self, setting: Setting):
        super().fit(setting)
        labels = setting.validation.labels
        self.source_temperature_ = source_temperature(self.source_logits_, labels)
        if self.source_temperature_ == -1.0:
            self.fit_notes.append(
                (
                    "fallback",
                    "TransCal: no finite validation cross-entropy on the temperature grid "
                    "(a zero posterior for a true class); REF's sentinel T_s = -1 kept",
                )
            )
        self.error_, self.source_confidence_ = transcal_source_statistics(
            self.source_logits_, labels, self.source_temperature_
        )
        return self

    def domain_weight_plan(self):
        return SAMPLE if self.weights == "domain_classifier" else None

    def temperature(self, sample, context):
        w = importance_weights(self.weights, self.setting_, sample, context, "TransCal")
        return transcal_temperature(
            self._logits(sample), w, self.error_, self.source_confidence_, self.variance_term
        )


# ---------------------------------------------------------------------------------------------
# LasCal (Popordanoska et al. 2024), docs/methods.md §2.5


class LasCal(_TemperatureCalibrator):
    """LasCal: the grid temperature minimising the label-shift ECE estimate with RLLS weights.

    The search is shared per sample through the context (``lascal.lascal_search``). REF returned
    the uncalibrated posteriors on any exception; that fallback is kept and recorded.

    Args:
        logits: "L" | "S" | "P"; tables: CS "L", LS "P", ζ2ρ "P", ζ2α "P", inside EMQ^LasCal "S".
        solver: RLLS solver, "closed_form" (exact, fast) or "cvxpy" (abstention's formulation).
        arithmetic: "reference" (REF's: PyTorch's log and softmax, float32 loss sums; decides the
            temperature on near-ties) or "float64" (NumPy, float64 sums).
    """

    name, description = "LasCal", "LasCal (Popordanoska et al. 2024) [REF LasCal-P / LasCal]"
    shift_defaults = {"label": {"logits": "P"}, "covariate": {"logits": "L"}}
    adaptations = ("c2q", "c2a", "emq")

    def __init__(self, logits: str = "P", solver: str = "closed_form", arithmetic="reference"):
        check_choice("logits", logits, LOGIT_CONVENTIONS)
        check_choice("solver", solver, SOLVERS)
        check_choice("arithmetic", arithmetic, ARITHMETICS)
        self.logits = logits
        self.solver = solver
        self.arithmetic = arithmetic

    def _logits(self, data):
        return lascal_logits(self.logits, data, self.arithmetic)

    def calibrate(self, sample, context):
        target = self._logits(sample)
        search = lascal_search(
            self.logits, self.setting_, sample, context, self.solver, self.arithmetic
        )
        if search.temperature is None:
            context.note("fallback", f"{search.failure}; uncalibrated posteriors returned")
            return uncalibrated_like_ref(target)
        if search.temperature == -1.0:
            context.note(
                "fallback", "LasCal: no finite loss on the grid; REF's sentinel T = -1 kept"
            )
        if self.arithmetic == "reference":
            return torch_scaled_softmax(target, search.temperature)
        return scaled_softmax(target, search.temperature)


__all__ = ["Head2Tail", "CPCS", "TransCal", "LasCal"]
