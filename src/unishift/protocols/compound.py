"""Compound-shift test samples: a source/target mixture with a drawn class prevalence, for any
k >= 2 classes (the steps, the replacement rules and the draw order: docs/regimes.md §2).
"""

from __future__ import annotations

import numpy as np

from unishift.data.quapy_loader import load_quapy
from unishift.option_checks import check_choice
from unishift.protocols.mixture import _legacy_seed, target_counts
from unishift.protocols.sampling import stream_state_arrays

MIXTURE_RULES = ("round", "ceil", "uniform")
REPLACE_RULES = ("as_needed", "always", "never")


def largest_remainder(total: int, weights) -> np.ndarray:
    """Integer counts summing to ``total``, proportional to ``weights`` (which sum to 1): the floors
    of ``total * weights``, plus one for the largest remainders (ties: lower index first)."""
    w = np.asarray(weights, dtype=float)
    if np.any(w < 0) or not np.isclose(w.sum(), 1.0, atol=1e-9):
        raise ValueError(f"weights must be non-negative and sum to 1, got {w.tolist()}")
    exact = total * w
    counts = np.floor(exact).astype(np.int64)
    left = int(total - counts.sum())
    if left:
        # stable sort: among equal remainders the lower index comes first
        order = np.argsort(-(exact - counts), kind="stable")
        counts[order[:left]] += 1
    return counts


def compound_indices(
    source_labels,
    target_labels,
    n_classes: int,
    sample_size: int = 250,
    repeats: int = 100,
    seed: int = 0,
    mixture: str = "round",
    replace: str = "as_needed",
) -> dict[str, np.ndarray]:
    """Index sets of ``repeats`` compound-shift samples into [source ; target] and what was drawn
    (the steps and the returned arrays: docs/regimes.md §2)."""
    check_choice("mixture", mixture, MIXTURE_RULES)
    check_choice("replace", replace, REPLACE_RULES)
    if n_classes < 2:
        raise ValueError(f"n_classes must be at least 2, got {n_classes}")
    if sample_size < 1 or repeats < 1:
        raise ValueError(f"sample_size and repeats must be positive ({sample_size}, {repeats})")
    pools = {}
    for name, labels in (("source", source_labels), ("target", target_labels)):
        y = np.asarray(labels)
        if y.ndim != 1 or len(y) == 0:
            raise ValueError(f"the {name} pool must be a non-empty 1-d label array")
        if y.min() < 0 or y.max() >= n_classes:
            raise ValueError(f"{name} labels must lie in 0..{n_classes - 1}")
        pools[name] = y.astype(np.int64)
    n_source, n_target = len(pools["source"]), len(pools["target"])
    by_class = [
        [offset + np.flatnonzero(pools[name] == c) for c in range(n_classes)]
        for name, offset in (("source", 0), ("target", n_source))
    ]
    available = np.array([[len(p) for p in domain] for domain in by_class])  # 2 x k

    load_quapy()
    from quapy.functional import uniform_prevalence_sampling

    with _legacy_seed(seed):
        if mixture == "uniform":
            drawn_mixture = np.random.rand(repeats)
            m = np.round(drawn_mixture * sample_size).astype(np.int64)
        else:
            m = target_counts(sample_size, repeats, mixture)
            drawn_mixture = m / sample_size
        prevalence = np.asarray(uniform_prevalence_sampling(n_classes, repeats), dtype=float)
        prevalence = prevalence.reshape(repeats, n_classes)

        counts = np.zeros((repeats, 2, n_classes), dtype=np.int64)
        for r in range(repeats):
            total = largest_remainder(sample_size, prevalence[r])
            counts[r, 1] = largest_remainder(int(m[r]), total / sample_size)
            counts[r, 0] = total - counts[r, 1]
        short = counts > available[None]
        empty = (counts > 0) & (available[None] == 0)
        refused = empty if np.any(empty) else short & (replace == "never")
        if np.any(refused):
            r, d, c = np.argwhere(refused)[0]
            fix = "use replace='as_needed' (or 'always'), a smaller sample_size or larger pools"
            raise ValueError(
                f"sample {r} needs {counts[r, d, c]} items of class {c} from the "
                f"{('source', 'target')[d]} pool, which has {available[d, c] or 'none'}; "
                + ("every class drawn must have items in both pools" if empty[r, d, c] else fix)
            )

        rows = []
        for r in range(repeats):
            parts = []
            for d in (0, 1):
                for c in range(n_classes):
                    n = int(counts[r, d, c])
                    if n == 0:
                        continue
                    with_replacement = replace == "always" or bool(short[r, d, c])
                    parts.append(np.random.choice(by_class[d][c], n, replace=with_replacement))
            rows.append(np.concatenate(parts))
        state = np.random.get_state()

    return {
        "indices": np.asarray(rows, dtype=np.int64),
        "mixture": np.asarray(drawn_mixture, dtype=float),
        "realised_mixture": m / sample_size,
        "target_counts": m,
        "prevalence": prevalence,
        "realised_prevalence": counts.sum(axis=1) / sample_size,
        "class_counts": counts,
        "short": short,
        "n_source": np.int64(n_source),
        "n_target": np.int64(n_target),
        **stream_state_arrays(state),
    }


__all__ = ["MIXTURE_RULES", "REPLACE_RULES", "compound_indices", "largest_remainder"]
