"""QuaPy's quantifiers on cached n x k posteriors (docs/methods.md §0.5): the identity classifier
the method containers and the shift descriptors share, and ``quiet``. Its own module, below both,
so that importing :mod:`unishift.quapy_loader` stays free of scikit-learn."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from unishift.metrics import argmax_predictions


class PosteriorPassthrough(ClassifierMixin, BaseEstimator):
    """A fitted sklearn classifier whose inputs already are the n x k posterior matrix.

    QuaPy's aggregative quantifiers only ever call their classifier's ``predict_proba`` /
    ``predict`` (or, for the binary threshold methods MAX, T50, X, MS and MS2,
    ``decision_function``) and take the class list from ``classifier.classes_``. This identity
    classifier lets them work on cached posteriors without refitting anything, and makes every
    estimate a length-k vector, also when a class is absent from the data a quantifier is fitted on
    (docs/methods.md §0.5).
    """

    def __init__(self, n_classes: int = 2):
        self.n_classes = n_classes
        self.classes_ = np.arange(n_classes)

    def fit(self, X, y=None):
        return self

    def _check(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_classes:
            raise ValueError(
                f"expected an n x {self.n_classes} posterior matrix, got shape {X.shape}"
            )
        return X

    def predict_proba(self, X):
        return self._check(X)

    def predict(self, X):
        return argmax_predictions(self._check(X))

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
    """Call ``fn`` with QuaPy's advisory warnings (val_split resets, EM iterations) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)
