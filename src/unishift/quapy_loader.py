"""QuaPy without PyTorch (docs/evaluation-jobs.md, "Start-up").

QuaPy's package imports its neural quantifiers (QuaNet and its relatives), which import PyTorch:
3 CPU seconds per process, paid by every evaluation job whose method uses any QuaPy quantifier
although none of them touches PyTorch. QuaPy is written to run without PyTorch installed (it then
leaves QuaNet out), so :func:`load_quapy` imports it with PyTorch hidden from that one import. A
process that has already loaded PyTorch gets QuaPy as usual. Nothing QuaPy computes changes: its
aggregative methods and protocols use NumPy, SciPy and scikit-learn only.

Call it before the first ``from quapy... import ...`` of a code path. :class:`PosteriorPassthrough`
runs QuaPy's quantifiers on cached posteriors.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class _HidePyTorch:
    """A meta-path finder that answers "not installed" for PyTorch (without a ``None`` entry in
    ``sys.modules``, which SciPy's array-API helpers would trip over)."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def load_quapy() -> ModuleType:
    """The ``quapy`` module, imported without PyTorch unless PyTorch is loaded already."""
    if "quapy" in sys.modules or "torch" in sys.modules:
        return importlib.import_module("quapy")
    hide = _HidePyTorch()
    sys.meta_path.insert(0, hide)
    try:
        return importlib.import_module("quapy")
    finally:
        sys.meta_path.remove(hide)


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
        return np.argmax(self._check(X), axis=1)  # ties to the lowest class (docs/methods.md §0.2)

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
