"""Floating-point arithmetic of the authors' reference implementation, replicated in NumPy:
PyTorch's float32 bin edges, running sums and rounding, which move confidences on or next to a bin
edge (k-NN's 0.6, 2/3, 0.8) into another bin and flip near-ties (docs/reproduction.md,
"Arithmetic"). Each helper is checked against PyTorch itself in ``tests/test_numerics.py``.
"""

from __future__ import annotations

import numpy as np

PRECISIONS = ("float32", "float64")


def torch_linspace_float32(start: float, end: float, steps: int) -> np.ndarray:
    """``torch.linspace(start, end, steps)`` (float32), bit for bit: a float32 step, the first half
    ``start + i*step`` and the second ``end - (steps-1-i)*step``, each rounded once (torch's fused
    multiply-adds; exact in float64). ``np.linspace(..., dtype=float32)`` is one ulp off at times."""
    start32, end32 = np.float32(start), np.float32(end)
    step = np.float64((end32 - start32) / np.float32(steps - 1))
    idx = np.arange(steps)
    head = np.float64(start32) + step * idx
    tail = np.float64(end32) - step * (steps - 1 - idx)
    return np.where(idx < steps // 2, head, tail).astype(np.float32)


def float32_running_sum(terms: np.ndarray, axis: int = -1) -> np.ndarray:
    """What ``acc = torch.zeros(1); for t in terms: acc += t`` leaves in ``acc``: each (float64)
    term rounded to float32 and added in order (``np.add.accumulate``, unlike ``np.sum``, which sums
    pairwise)."""
    terms = np.asarray(terms, dtype=np.float64).astype(np.float32)
    if terms.shape[axis] == 0:
        return np.zeros(np.delete(terms.shape, axis % terms.ndim), dtype=np.float32)
    return np.take(np.add.accumulate(terms, axis=axis, dtype=np.float32), -1, axis=axis)


def round_float32(value, decimals: int) -> np.float32:
    """``torch.round(x, decimals=d)`` of a float32 ``x``: float32 product with 10^d, round half to
    even, float32 quotient."""
    scale = np.float32(10.0**decimals)
    return np.float32(np.rint(np.float32(value) * scale) / scale)
