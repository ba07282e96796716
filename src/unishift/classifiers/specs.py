"""Every classifier the workflow can train or name, one :class:`ClassifierSpec` each, from which the
config check, the display names and the tables' row-block order derive (registration order, the
tabular classifiers before the language models). ``tabular`` ones are the scikit-learn models of the
label-shift experiments (docs/protocols.md §2.3); ``language_model`` ones name the paper's language
models (built by :mod:`unishift.lm`). Nothing heavy is imported until a factory is called: the
workflow reads the names when it plans.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

KINDS = ("tabular", "language_model")


@dataclass(frozen=True)
class ClassifierSpec:
    name: str
    display: str
    kind: str = "tabular"
    # seed -> an unfitted scikit-learn estimator with predict_proba (tabular only)
    factory: Callable[[int], object] | None = None


_REGISTRY: dict[str, ClassifierSpec] = {}


def register_classifier(spec: ClassifierSpec) -> ClassifierSpec:
    """Add ``spec`` after the registered ones (the table order); refuses a taken name, an unknown
    kind and a tabular classifier without a factory."""
    if not spec.name or spec.name in _REGISTRY:
        raise ValueError(f"classifier {spec.name!r} is registered already")
    if spec.kind not in KINDS:
        raise ValueError(f"classifier {spec.name!r}: kind {spec.kind!r} is not one of {KINDS}")
    if spec.kind == "tabular" and spec.factory is None:
        raise ValueError(f"tabular classifier {spec.name!r} needs a factory (seed -> estimator)")
    _REGISTRY[spec.name] = spec
    return spec


def classifier_names(kind: str | None = "tabular") -> tuple[str, ...]:
    """The names of ``kind`` (None: all), in table order."""
    return tuple(n for n, s in _REGISTRY.items() if kind is None or s.kind == kind)


def classifier_display(name: str) -> str:
    """The display name (the name itself for unregistered ones, e.g. a configured language model)."""
    spec = _REGISTRY.get(name)
    return spec.display if spec else name


def order_classifiers(names) -> list[str]:
    """``names`` in table order (tabular classifiers, then language models, each in registration
    order), the unregistered ones after them, sorted."""
    names = list(dict.fromkeys(names))
    known = [n for kind in KINDS for n in classifier_names(kind) if n in names]
    return known + sorted(n for n in names if n not in _REGISTRY)


def check_classifier(name: str) -> None:
    """Refuse a name that is not a registered tabular classifier."""
    if name not in classifier_names():
        raise ValueError(f"unknown classifier {name!r}; valid ones are {list(classifier_names())}")


def make_classifier(name: str, seed: int):
    """An unfitted tabular classifier."""
    check_classifier(name)
    return _REGISTRY[name].factory(seed)


@contextmanager
def one_thread() -> Iterator[None]:
    """Fit and predict with one BLAS and one OpenMP thread: the posteriors depend on the thread
    count, so this makes them the same on every machine (docs/reproduction.md, "Threads")."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


def _sklearn(estimator: str, seeded: bool = False, **params) -> Callable[[int], object]:
    """The factory of ``sklearn.<estimator>`` with ``params`` (and the seed as ``random_state``)."""
    module, name = estimator.rsplit(".", 1)

    def factory(seed: int):
        cls = getattr(importlib.import_module(f"sklearn.{module}"), name)
        return cls(**params, random_state=seed) if seeded else cls(**params)

    return factory


for _spec in (
    ClassifierSpec(
        "LR", "Logistic Regression", factory=_sklearn("linear_model.LogisticRegression")
    ),
    ClassifierSpec("NB", "Naïve Bayes", factory=_sklearn("naive_bayes.GaussianNB")),
    ClassifierSpec(
        "kNN",
        "k Nearest Neighbor",
        factory=_sklearn("neighbors.KNeighborsClassifier", n_neighbors=10, weights="uniform"),
    ),
    ClassifierSpec(
        "MLP",
        "Multi-layer Perceptron",
        factory=_sklearn("neural_network.MLPClassifier", seeded=True),
    ),
    ClassifierSpec("BERT", "BERT", kind="language_model"),
    ClassifierSpec("DistilBERT", "DistilBERT", kind="language_model"),
    ClassifierSpec("RoBERTa", "RoBERTa", kind="language_model"),
):
    register_classifier(_spec)
