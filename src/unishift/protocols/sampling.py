"""QuaPy's uniform- and natural-prevalence protocols, returning sample indices (protocols.md §2.4, §4).

Both draw with replacement inside a temporary seeding of NumPy's legacy global RNG, exactly as QuaPy
does, and generate every index set before the first one is used.
"""

from __future__ import annotations

import numpy as np


def _collection(labels: np.ndarray):
    from quapy.data import LabelledCollection

    labels = np.asarray(labels).astype(int)
    return LabelledCollection(np.zeros((len(labels), 1)), labels, classes=[0, 1])


def upp_indices(labels: np.ndarray, sample_size: int, repeats: int, seed: int) -> np.ndarray:
    """UPP (paper: "APP"): uniform positive prevalence per sample, per-class draws with replacement.

    Raises ``ValueError`` if a class with a requested count has no items (UPP cannot draw from it).
    """
    from quapy.protocol import UPP

    labels = np.asarray(labels).astype(int)
    missing = [c for c in (0, 1) if not np.any(labels == c)]
    if missing:
        raise ValueError(f"UPP needs items of both classes; class {missing} has none")
    protocol = UPP(
        _collection(labels),
        sample_size=sample_size,
        repeats=repeats,
        random_state=seed,
        return_type="index",
    )
    return np.array(list(protocol()), dtype=np.int64)


def npp_indices(n_items: int, sample_size: int, repeats: int, seed: int) -> np.ndarray:
    """NPP: ``repeats`` uniform draws with replacement of ``sample_size`` items from ``n_items``."""
    from quapy.protocol import NPP

    protocol = NPP(
        _collection(np.zeros(n_items, dtype=int)),
        sample_size=sample_size,
        repeats=repeats,
        random_state=seed,
        return_type="index",
    )
    return np.array(list(protocol()), dtype=np.int64)
