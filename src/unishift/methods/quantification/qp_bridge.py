"""QuaPy on precomputed posteriors (docs/methods.md §0.5): :mod:`unishift.passthrough`'s identity
classifier and ``quiet``, and Saerens et al.'s EM."""

from __future__ import annotations

import numpy as np

from unishift.passthrough import PosteriorPassthrough, quiet
from unishift.quapy_loader import load_quapy

__all__ = ["PosteriorPassthrough", "em", "quiet"]


def em(prior: np.ndarray, posteriors: np.ndarray, epsilon: float = 1e-4):
    """Saerens et al.'s EM (docs/methods.md §0.4, B4) via QuaPy: (prior vector, adapted posteriors)."""
    load_quapy()
    from quapy.method.aggregative import EMQ

    priors, adapted = quiet(
        EMQ.EM, np.asarray(prior, dtype=float), np.asarray(posteriors, dtype=float), epsilon
    )
    return np.asarray(priors, dtype=float), adapted
