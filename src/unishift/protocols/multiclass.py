"""QuaPy's uniform-prevalence protocol over k classes, returning sample indices (docs/multiclass.md §7).

QuaPy's UPP draws each sample's prevalence vector uniformly from the simplex (Kraemer's algorithm),
rounds the per-class counts and draws each class's items with replacement, all inside a temporary
seeding of NumPy's legacy global RNG; every index set is generated before the first is returned. For
two classes the call is exactly :func:`unishift.protocols.sampling.upp_indices`'s.
"""

from __future__ import annotations

import numpy as np


def upp_indices_k(labels, n_classes: int, sample_size: int, repeats: int, seed: int) -> np.ndarray:
    """``repeats`` x ``sample_size`` indices into ``labels`` (classes 0..n_classes-1).

    Raises ``ValueError`` naming the classes without items (UPP cannot draw from them).
    """
    from quapy.data import LabelledCollection
    from quapy.protocol import UPP

    labels = np.asarray(labels).astype(int)
    missing = [c for c in range(n_classes) if not np.any(labels == c)]
    if missing:
        raise ValueError(f"UPP needs items of every class; class {missing} has none")
    collection = LabelledCollection(
        np.zeros((len(labels), 1)), labels, classes=list(range(n_classes))
    )
    protocol = UPP(
        collection,
        sample_size=sample_size,
        repeats=repeats,
        random_state=seed,
        return_type="index",
    )
    return np.array(list(protocol()), dtype=np.int64)


__all__ = ["upp_indices_k"]
