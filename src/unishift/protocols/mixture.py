"""Covariate-shift test samples: mixtures of source and target test items as indices into ``[source
test ; target test]``, counts rounded as the authors' reference implementation or the paper's
formula (docs/protocols.md §3.7).
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from unishift.option_checks import check_choice
from unishift.protocols.sampling import stream_state_arrays

COUNT_RULES = ("round", "ceil")


def target_counts(sample_size: int = 250, repeats: int = 100, counts: str = "round") -> np.ndarray:
    check_choice("counts", counts, COUNT_RULES)
    if repeats < 2:
        raise ValueError(
            "the mixture protocol needs at least two samples (from pure source to pure target)"
        )
    if counts == "round":
        # numpy's round is half-to-even, like the reference code's np.round on linspace
        return np.round(np.linspace(0, sample_size, repeats)).astype(np.int64)
    n_source = np.ceil(sample_size * (1 - np.arange(repeats) / (repeats - 1)))
    return sample_size - n_source.astype(np.int64)


@contextmanager
def _legacy_seed(seed: int):
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def mixture_indices(
    n_source: int,
    n_target: int,
    sample_size: int = 250,
    repeats: int = 100,
    seed: int = 0,
    counts: str = "round",
) -> dict[str, np.ndarray]:
    """``indices`` (repeats x sample_size into [source ; target]), ``target_counts``,
    ``shift_intensity``, the pool sizes and the ``stream_*`` state after the draws."""
    if n_source < 1 or n_target < 1:
        raise ValueError(
            f"both test pools must be non-empty (source {n_source}, target {n_target})"
        )
    m = target_counts(sample_size, repeats, counts)
    rows = []
    with _legacy_seed(seed):
        for m_k in m:
            from_source = np.random.choice(n_source, sample_size - m_k, replace=True)
            from_target = np.random.choice(n_target, m_k, replace=True)
            rows.append(np.concatenate([from_source, n_source + from_target]))
        state = np.random.get_state()
    return {
        "indices": np.asarray(rows, dtype=np.int64),
        "target_counts": m,
        "shift_intensity": m / sample_size,
        "n_source": np.int64(n_source),
        "n_target": np.int64(n_target),
        **stream_state_arrays(state),
    }
