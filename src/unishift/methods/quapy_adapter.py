"""The identity classifier that runs QuaPy's quantifiers on cached posteriors (docs/methods.md §0.5)
for the methods and the shift descriptors, and ``quiet``; apart from :mod:`unishift.data.quapy_loader`,
which stays free of scikit-learn."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from unishift.evaluation.metrics import argmax_predictions


class PosteriorPassthrough(ClassifierMixin, BaseEstimator):
    """A fitted sklearn classifier whose inputs already are the n x k posterior matrix; its fixed
    ``classes_`` make every estimate a length-k vector, also when a class is absent from the data a
    quantifier is fitted on."""

    def __init__(self, n_classes: int = 2):
        self.n_classes = n_classes
        self.classes_ = np.arange(n_classes)

    def fit(self, X, y=None):
        return self

    def predict_proba(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_classes:
            raise ValueError(
                f"expected an n x {self.n_classes} posterior matrix, got shape {X.shape}"
            )
        return X

    def predict(self, X):
        return argmax_predictions(self.predict_proba(X))

    def decision_function(self, X):
        """The positive posterior minus 0.5, the scores QuaPy's threshold methods sweep (why:
        docs/methods.md §0.5)."""
        return np.asarray(X, dtype=float)[:, 1] - 0.5

    def __sklearn_is_fitted__(self):
        return True


def quiet(fn, *args, **kwargs):
    """Call ``fn`` with QuaPy's advisory warnings (val_split resets, EM iterations) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)
