"""Layout of the cached language-model outputs (docs/protocols.md §3.4): one npz per (model,
source), keys ``<set>__<field>``, fields ``logits``, ``hidden`` and ``labels``. Kept free of torch so
that loading a setup does not import the language-model stack.
"""

from __future__ import annotations

import numpy as np


def pack(sets: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Flatten ``{set: {field: array}}`` into npz keys ``<set>__<field>``."""
    return {
        f"{name}__{key}": value for name, arrays in sets.items() for key, value in arrays.items()
    }


def unpack(arrays: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    sets: dict[str, dict[str, np.ndarray]] = {}
    for key, value in arrays.items():
        name, _, field = key.partition("__")
        sets.setdefault(name, {})[field] = value
    return sets
