"""The temperature-type calibrators' shared pieces: the L / S / P logit conventions (docs/methods.md
§0.3), the softmax and the temperature grid search of the authors' reference implementation
(docs/methods.md §0.4, the temperature grid). Imports no method module."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import LabelledSet, Sample
from unishift.numerics import torch_linspace_float32

LOGIT_CONVENTIONS = ("L", "S", "P")


def as_logits(convention: str, data: LabelledSet | Sample, clip: float | None = None) -> np.ndarray:
    """The matrix a temperature-type calibrator treats as logits (docs/methods.md §0.3); S-logits
    are -inf at a zero posterior unless ``clip`` clips the posteriors to [clip, 1 - clip] first."""
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
    """softmax(z / T); T = -1 (the reference implementation's sentinel) flips the logits exactly as
    the reference implementation does."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return softmax(np.asarray(z, dtype=float) / float(temperature))


def temperature_grid(start: float = 0.1, end: float = 20.0, steps: int = 100) -> np.ndarray:
    """``torch.linspace(0.1, 20.0, 100)`` (float32) of the LasCal code (the temperature grid,
    docs/methods.md §0.4), bit for bit."""
    return torch_linspace_float32(start, end, steps)


def first_strict_minimum(losses: np.ndarray) -> int | None:
    """Index the reference implementation's grid loop keeps: the first strict improvement on a
    running best that starts at float32's maximum. NaN and infinite losses never qualify; ``None``
    means the sentinel -1 stays."""
    losses = np.asarray(losses, dtype=float)
    valid = losses < float(np.finfo(np.float32).max)
    if not valid.any():
        return None
    return int(np.argmin(np.where(valid, losses, np.inf)))


def source_temperature(z: np.ndarray, labels: np.ndarray) -> float:
    """The reference implementation's grid-search temperature scaling on the source (the temperature
    grid, docs/methods.md §0.4), by the mean cross-entropy of softmax(z / T) at every grid T; -1.0
    when no loss is finite."""
    temps = temperature_grid()
    scaled = np.asarray(z, dtype=float)[None, :, :] / temps.astype(float)[:, None, None]
    with np.errstate(invalid="ignore"):
        peak = np.max(scaled, axis=2, keepdims=True)
        log_norm = peak[..., 0] + np.log(np.sum(np.exp(scaled - peak), axis=2))
    picked = scaled[:, np.arange(len(labels)), np.asarray(labels, dtype=int)]
    best = first_strict_minimum(np.mean(log_norm - picked, axis=1))
    return -1.0 if best is None else float(temps[best])


def one_vs_rest(columns: np.ndarray) -> np.ndarray:
    """Posteriors from per-class one-vs-rest calibrated scores (n x k), scikit-learn's rule for its
    calibrators: for two classes p_0 = 1 - p_1 (only the positive column was calibrated), for more
    each row divided by its sum, a row summing to 0 uniform."""
    columns = np.asarray(columns, dtype=float)
    k = columns.shape[1]
    if k == 2:
        return np.column_stack([1.0 - columns[:, 1], columns[:, 1]])
    total = columns.sum(axis=1, keepdims=True)
    return np.divide(columns, total, out=np.full_like(columns, 1.0 / k), where=total != 0)


def one_vs_rest_columns(n_classes: int) -> range:
    """The columns a one-vs-rest calibrator calibrates: p_1 alone for two classes, else each."""
    return range(1, 2) if n_classes == 2 else range(n_classes)
