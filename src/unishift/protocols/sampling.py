"""QuaPy's uniform-, artificial- and natural-prevalence protocols for any number of classes as sample
indices, drawn inside a temporary seeding of NumPy's legacy global RNG (docs/protocols.md §2.4, §4;
the state after the draws: docs/reproduction.md, "Where the reference implementation's
randomness comes from").
"""

from __future__ import annotations

import numpy as np

from unishift.data.quapy_loader import load_quapy

STREAM_KEYS = ("stream_key", "stream_pos", "stream_has_gauss", "stream_cached_gaussian")


def stream_state_arrays(state: tuple) -> dict[str, np.ndarray]:
    """A legacy ``np.random.get_state()`` tuple as arrays for an ``.npz`` artifact."""
    name, key, pos, has_gauss, cached_gaussian = state
    if name != "MT19937":
        raise ValueError(f"expected a legacy MT19937 state, got {name!r}")
    return {
        "stream_key": np.asarray(key, dtype=np.uint32),
        "stream_pos": np.int64(pos),
        "stream_has_gauss": np.int64(has_gauss),
        "stream_cached_gaussian": np.float64(cached_gaussian),
    }


def stream_state_from_arrays(arrays) -> tuple | None:
    """The legacy state persisted by :func:`stream_state_arrays`, or None if the artifact has none."""
    if not all(k in arrays for k in STREAM_KEYS):
        return None
    return (
        "MT19937",
        np.asarray(arrays["stream_key"], dtype=np.uint32),
        int(arrays["stream_pos"]),
        int(arrays["stream_has_gauss"]),
        float(arrays["stream_cached_gaussian"]),
    )


def _draw(name: str, labels, n_classes: int, seed: int, **options) -> tuple[np.ndarray, tuple]:
    """Every index set of QuaPy's protocol ``name`` and the global legacy state right after the
    first one was generated (QuaPy draws every index set before yielding the first)."""
    load_quapy()
    from quapy import protocol as protocols
    from quapy.data import LabelledCollection

    labels = np.asarray(labels).astype(int)
    missing = [c for c in range(n_classes) if not np.any(labels == c)]
    if missing and name != "NPP":
        raise ValueError(
            f"{name} needs items of every one of the {n_classes} classes; class {missing} has none"
        )
    collection = LabelledCollection(
        np.zeros((len(labels), 1)), labels, classes=list(range(n_classes))
    )
    protocol = getattr(protocols, name)(
        collection, random_state=seed, return_type="index", **options
    )
    items, state = [], None
    for item in protocol():
        if state is None:
            state = np.random.get_state()
        items.append(item)
    return np.array(items, dtype=np.int64), state


def upp_indices(
    labels: np.ndarray,
    sample_size: int,
    repeats: int,
    seed: int,
    return_state: bool = False,
    n_classes: int = 2,
):
    """UPP (paper: "APP"): each sample's prevalence vector uniform on the simplex (Kraemer's
    algorithm), the counts rounded, each class's items drawn with replacement; with ``return_state``
    also the legacy RNG state after the draws. A class without items raises ``ValueError``."""
    indices, state = _draw("UPP", labels, n_classes, seed, sample_size=sample_size, repeats=repeats)
    return (indices, state) if return_state else indices


def app_indices(
    labels: np.ndarray,
    sample_size: int,
    repeats: int,
    seed: int,
    n_prevalences: int = 21,
    n_classes: int = 2,
) -> np.ndarray:
    """QuaPy's APP: ``repeats`` samples at each point of the grid of ``n_prevalences`` evenly spaced
    values per class on the simplex, per-class draws with replacement; a class without items raises
    ``ValueError``."""
    options = {"sample_size": sample_size, "n_prevalences": n_prevalences, "repeats": repeats}
    return _draw("APP", labels, n_classes, seed, **options)[0]


def npp_indices(n_items: int, sample_size: int, repeats: int, seed: int) -> np.ndarray:
    """NPP: ``repeats`` uniform draws with replacement of ``sample_size`` items from ``n_items``."""
    return _draw("NPP", np.zeros(n_items), 2, seed, sample_size=sample_size, repeats=repeats)[0]
