"""Shared post-processing of binned calibration maps (docs/methods.md §0.4, B1-B3)."""

from __future__ import annotations

import numpy as np

from unishift.methods.base import check_choice

MONOTONE_RULES = ("running_max", "pairwise", "none")


def postprocess_map(
    abscissae: np.ndarray,
    ordinates: np.ndarray,
    monotone: str = "running_max",
    smooth: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Pad a binned map with (0, 0) and (1, 1), impute NaNs, enforce monotonicity, smooth (B1).

    ``monotone``: ``running_max`` (REF, produced the tables) replaces each interior value by the maximum
    of itself and the already-updated previous one; ``pairwise`` is the paper's text (max with the
    original previous value); ``none`` skips the step. The padded endpoints are never modified.
    """
    check_choice("monotone", monotone, MONOTONE_RULES)
    x = np.concatenate([[0.0], np.asarray(abscissae, dtype=float), [1.0]])
    y = np.concatenate([[0.0], np.asarray(ordinates, dtype=float), [1.0]])
    missing = np.isnan(y)
    if missing.any():
        y[missing] = np.interp(x[missing], x[~missing], y[~missing])
    interior = slice(1, len(y) - 1)
    if monotone == "running_max":
        y[interior] = np.maximum.accumulate(y[:-1])[1:]
    elif monotone == "pairwise":
        y[1:-1] = np.maximum(y[1:-1], y[:-2])
    if smooth and len(y) > 2:
        y[interior] = (y[:-2] + y[1:-1] + y[2:]) / 3.0
    return x, y


def apply_map(x: np.ndarray, y: np.ndarray, positive_scores: np.ndarray) -> np.ndarray:
    """Piecewise-linear interpolation of the map at each score, returned as n x 2 posteriors."""
    calibrated = np.interp(positive_scores, x, y)
    return np.column_stack([1.0 - calibrated, calibrated])


def isometric_edges_q2c(bins: int) -> np.ndarray:
    """B2: ``linspace(0, 1, b+1)`` with the first edge lowered and the last raised by 1e-5."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    edges[0] -= 1e-5
    edges[-1] += 1e-5
    return edges


def isometric_edges_a2c(bins: int) -> np.ndarray:
    """B3: ``linspace(0, 1, b+1)`` with only the last edge raised by 1e-5; ``bins`` must be even."""
    if bins % 2:
        raise ValueError(f"bins={bins} must be even so that no bin straddles 0.5")
    edges = np.linspace(0.0, 1.0, bins + 1)
    edges[-1] += 1e-5
    return edges


def bin_membership(scores: np.ndarray, edges: np.ndarray) -> list[np.ndarray]:
    """Boolean masks, one per bin, with membership ``e[i-1] <= s < e[i]``."""
    return [(scores >= lo) & (scores < hi) for lo, hi in zip(edges[:-1], edges[1:])]
