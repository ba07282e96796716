"""Running QuaPy 0.2.3 quantifiers on precomputed posteriors (docs/methods.md §0.5).

QuaPy's aggregative quantifiers only ever call their classifier's ``predict_proba`` / ``predict`` (or,
for the binary threshold methods MAX, T50, X, MS and MS2, ``decision_function``). An identity
classifier that returns the posterior matrix it is given lets them work on cached posteriors without
refitting anything.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from unishift.methods.base import crisp_predictions


class PosteriorPassthrough(ClassifierMixin, BaseEstimator):
    """A fitted sklearn classifier whose inputs already are the n x 2 posterior matrix."""

    def __init__(self):
        self.classes_ = np.array([0, 1])

    def fit(self, X, y=None):
        return self

    def predict_proba(self, X):
        return np.asarray(X, dtype=float)

    def predict(self, X):
        return crisp_predictions(np.asarray(X))

    def decision_function(self, X):
        """The positive posterior minus 0.5: the scores QuaPy's threshold methods sweep.

        They cut at every distinct score and count true and false positives, so any increasing map
        of the positive posterior gives them the same estimates (the shift merges only posteriors
        below 0.25 that lie within 6e-17 of each other); this one also puts the decision
        boundary at 0, as a real classifier's decision function does, because that is the threshold
        they fall back to (classify and count) when no cut qualifies (e.g. MS2 on a weak classifier).
        """
        return np.asarray(X, dtype=float)[:, 1] - 0.5

    def __sklearn_is_fitted__(self):
        return True


def quiet(fn, *args, **kwargs):
    """Call ``fn`` with QuaPy's advisory warnings (val_split resets) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def em(train_prevalence: float, posteriors: np.ndarray, epsilon: float = 1e-4):
    """Saerens et al.'s EM (docs/methods.md §0.4, B4) via QuaPy: returns (positive prior, adapted posteriors)."""
    from quapy.method.aggregative import EMQ

    prior = np.array([1.0 - train_prevalence, train_prevalence])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        priors, adapted = EMQ.EM(prior, np.asarray(posteriors, dtype=float), epsilon)
    return float(priors[1]), adapted


def positive(prevalence_vector) -> float:
    return float(np.asarray(prevalence_vector)[1])
