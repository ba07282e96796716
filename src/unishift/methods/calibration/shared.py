"""Pieces shared by the temperature-type calibrators and by the adaptations built on them.

* the L / S / P logit conventions (docs/methods.md §0.3) and the softmax REF applies to them;
* the temperature grid of the LasCal code base and its "first strict improvement" search (B6);
* the domain-classifier importance weights (B5), a per-sample artifact that several methods need
  and that is computed once per sample: it is stored in the :class:`SampleContext` under the key
  built by :func:`domain_weights_key`; other methods (e.g. the calibration->quantification / ->CAP
  adaptations) obtain it through :func:`domain_weights` so that they share it. LasCal's temperature
  search, shared the same way, lives with LasCal (:mod:`unishift.methods.calibration.lascal`).

This module imports nothing above :mod:`unishift.methods.base`; the calibrators import it.

A shared artifact carries its own fallback reason (or ``None``) so that every method that consumes it
records the fallback in its own result, not only the first method that computed it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from unishift.methods.base import LabelledSet, Sample, SampleContext, Setting, check_choice
from unishift.methods.domain_weights import (
    MEMO_KEY,
    call_key,
    stream_fingerprint,
    upsampling_indices,
)
from unishift.numerics import torch_linspace_float32

LOGIT_CONVENTIONS = ("L", "S", "P")
WEIGHT_SOURCES = ("domain_classifier", "uniform")
FLOAT32_MAX = float(np.finfo(np.float32).max)


def as_logits(convention: str, data: LabelledSet | Sample, clip: float | None = None) -> np.ndarray:
    """The matrix a temperature-type calibrator treats as logits (docs/methods.md §0.3).

    ``L``: the true logits (language models only); ``S``: log-posteriors, which are -inf where a
    posterior is exactly 0 unless ``clip`` (lower bound applied to the posteriors first) is given;
    ``P``: the posteriors themselves.
    """
    check_choice("logits", convention, LOGIT_CONVENTIONS)
    if convention == "L":
        if data.logits is None:
            raise ValueError(
                "logits='L' needs true logits, which only the language models provide; "
                "use logits='S' (log-posteriors) or 'P' (posteriors as logits)"
            )
        return np.asarray(data.logits, dtype=float)
    posteriors = np.asarray(data.posteriors, dtype=float)
    if convention == "P":
        return posteriors
    if clip is not None:
        posteriors = np.clip(posteriors, clip, 1.0 - clip)
    with np.errstate(divide="ignore"):
        return np.log(posteriors)


def softmax(z: np.ndarray) -> np.ndarray:
    """Row softmax with max-subtraction, as torch computes it (a +inf entry gives a NaN row)."""
    z = np.asarray(z, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        if z.shape[-1] == 2:
            # Same operations as the generic branch (bit-identical), without slow length-2 reductions.
            a, b = z[..., 0], z[..., 1]
            peak = np.maximum(a, b)
            ea, eb = np.exp(a - peak), np.exp(b - peak)
            total = ea + eb
            return np.stack([ea / total, eb / total], axis=-1)
        shifted = z - np.max(z, axis=-1, keepdims=True)
        e = np.exp(shifted)
        return e / np.sum(e, axis=-1, keepdims=True)


def scaled_softmax(z: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(z / T); T = -1 (REF's sentinel) flips the logits exactly as REF does."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return softmax(np.asarray(z, dtype=float) / float(temperature))


def temperature_grid(start: float = 0.1, end: float = 20.0, steps: int = 100) -> np.ndarray:
    """``torch.linspace(0.1, 20.0, 100)`` (float32) of the LasCal code (B6), bit for bit."""
    return torch_linspace_float32(start, end, steps)


def first_strict_minimum(losses: np.ndarray) -> int | None:
    """Index REF's grid loop keeps: the first strict improvement on a running best that starts at
    float32's maximum. NaN and infinite losses never qualify; ``None`` means the sentinel -1 stays."""
    losses = np.asarray(losses, dtype=float)
    valid = losses < FLOAT32_MAX
    if not valid.any():
        return None
    return int(np.argmin(np.where(valid, losses, np.inf)))


def cross_entropy_grid(z: np.ndarray, labels: np.ndarray, temps: np.ndarray) -> np.ndarray:
    """Mean cross-entropy of softmax(z / T) against ``labels`` for every T of ``temps``."""
    scaled = np.asarray(z, dtype=float)[None, :, :] / temps.astype(float)[:, None, None]
    with np.errstate(invalid="ignore"):
        peak = np.max(scaled, axis=2, keepdims=True)
        log_norm = peak[..., 0] + np.log(np.sum(np.exp(scaled - peak), axis=2))
    picked = scaled[:, np.arange(len(labels)), np.asarray(labels, dtype=int)]
    return np.mean(log_norm - picked, axis=1)


def source_temperature(z: np.ndarray, labels: np.ndarray) -> float:
    """REF's grid-search temperature scaling on the source (B6); -1.0 when no loss is finite."""
    temps = temperature_grid()
    best = first_strict_minimum(cross_entropy_grid(z, labels, temps))
    return -1.0 if best is None else float(temps[best])


# ---------------------------------------------------------------------------------------------
# Domain-classifier importance weights (B5)


@dataclass(frozen=True)
class DomainWeights:
    """Weights at the validation items (n x 1) and the reason of a fallback to unit weights."""

    weights: np.ndarray
    fallback: str | None = None


def domain_weights_key(setting: Setting, feature_set: str = "features") -> tuple:
    """Context key of the domain-classifier weights of one (setup, validation set, feature set)."""
    return ("domain_weights", setting.key, feature_set)


def fit_domain_weights(
    train_features: np.ndarray,
    target_features: np.ndarray,
    source_features: np.ndarray,
    seed: int | np.random.RandomState,
) -> np.ndarray:
    """B5: balance train and target by up-sampling the smaller one, fit LogisticRegression() with
    label 1 = train, 0 = target, and return P(target | x) / P(train | x) at ``source_features``.

    ``seed`` is an integer or a legacy ``RandomState`` whose stream the up-sampling continues (one
    ``choice`` call, none when the sizes are equal or the target is empty, as in REF).
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    train_features = np.asarray(train_features)
    target_features = np.asarray(target_features)
    n_tr, n_t = len(train_features), len(target_features)
    rng = seed if isinstance(seed, np.random.RandomState) else np.random.RandomState(seed)
    train_rows, target_rows = upsampling_indices(n_tr, n_t, rng)
    if train_rows is not None:
        train_features = train_features[train_rows]
    if target_rows is not None:
        target_features = target_features[target_rows]
    size = max(n_tr, n_t)
    combined = np.concatenate((train_features, target_features))
    domain = np.asarray([1] * size + [0] * size, dtype=np.int32)
    with warnings.catch_warnings():
        # REF used sklearn's defaults (100 lbfgs iterations) and ignored non-convergence.
        warnings.simplefilter("ignore", ConvergenceWarning)
        classifier = LogisticRegression().fit(combined, domain)
    proba = classifier.predict_proba(np.asarray(source_features))
    return proba[:, :1] / proba[:, 1:]


def domain_weights(
    setting: Setting, sample: Sample, context: SampleContext, feature_set: str = "features"
) -> DomainWeights:
    """The B5 weights of ``setting.validation`` for ``sample``, computed once per context.

    REF wrapped the call and used unit weights on a ``ValueError`` (e.g. an empty target sample);
    the fallback is kept and its reason returned with the weights. The up-sampling draws from
    ``context.random_state``: REF's continuing stream in the evaluation driver, a derived seed
    otherwise.
    """
    check_choice("feature_set", feature_set, ("features",))
    for name, part in (("training", setting.training), ("validation", setting.validation)):
        if part.features is None:
            raise ValueError(f"the domain classifier needs {name} features; the setting has none")
    if sample.features is None:
        raise ValueError("the domain classifier needs the test sample's features; it has none")

    key = domain_weights_key(setting, feature_set)
    if key in context.store:
        return context.store[key]
    # Outside the try: a missing stream is a set-up error, not REF's ValueError fallback.
    rng = context.random_state("domain_classifier", setting.key, feature_set)
    # Weights computed once by the upstream rule (docs/domain-weights.md), if this call matches one.
    memo = context.store.get(MEMO_KEY)
    call = call_key(setting, sample, context, feature_set, rng) if memo is not None else None
    if memo is not None and not memo.recording:
        entry = memo.take(call, len(sample), rng)
        if entry is not None:
            context.store[key] = DomainWeights(entry.weights, entry.fallback)
            return context.store[key]

    def compute() -> DomainWeights:
        try:
            weights = fit_domain_weights(
                setting.training.features, sample.features, setting.validation.features, seed=rng
            )
            result = DomainWeights(weights)
        except ValueError as err:
            unit = np.ones((len(setting.validation), 1), dtype=float)
            result = DomainWeights(
                unit, f"domain classifier raised ValueError ({err}); unit weights"
            )
        if memo is not None and memo.recording:
            memo.add(call, result.weights, result.fallback, stream_fingerprint(rng))
        return result

    return context.cached(key, compute)


def importance_weights(
    source: str, setting: Setting, sample: Sample, context: SampleContext, method: str
) -> np.ndarray:
    """Weights for CPCS / TransCal: B5 (faithful) or all ones; records a B5 fallback as a note."""
    check_choice("weights", source, WEIGHT_SOURCES)
    if source == "uniform":
        return np.ones((len(setting.validation), 1), dtype=float)
    result = domain_weights(setting, sample, context)
    if result.fallback:
        context.note("fallback", f"{method}: {result.fallback}")
    return result.weights
