"""Every classifier the workflow can train or name, described once: one :class:`ClassifierSpec`
each, from which the config check (valid names), the row-block order of the tables, the display
names and the factory derive. ``tabular`` classifiers are the scikit-learn models of the label-shift
experiments (which, in which order, the seeded MLP: docs/protocols.md §2.3), built by
:func:`make_classifier`; ``language_model`` entries name the paper's language models (built by
:mod:`unishift.lm`) so that the tables order and print them. Adding a classifier is one
:func:`register_classifier` call below; the registration order of each kind is the tables' row-block
order, the language models after the tabular classifiers.

The factories import scikit-learn when called: the workflow reads the names when it plans.
"""

from __future__ import annotations

from collections.abc import Callable
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


def classifier_spec(name: str, kind: str | None = "tabular") -> ClassifierSpec:
    if name not in classifier_names(kind):
        raise ValueError(
            f"unknown classifier {name!r}; valid ones are {list(classifier_names(kind))}"
        )
    return _REGISTRY[name]


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


def make_classifier(name: str, seed: int):
    """An unfitted tabular classifier."""
    return classifier_spec(name).factory(seed)


def _logistic_regression(seed: int):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression()


def _naive_bayes(seed: int):
    from sklearn.naive_bayes import GaussianNB

    return GaussianNB()


def _k_nearest_neighbours(seed: int):
    from sklearn.neighbors import KNeighborsClassifier

    return KNeighborsClassifier(n_neighbors=10, weights="uniform")


def _multi_layer_perceptron(seed: int):
    from sklearn.neural_network import MLPClassifier

    return MLPClassifier(random_state=seed)


for _spec in (
    ClassifierSpec("LR", "Logistic Regression", factory=_logistic_regression),
    ClassifierSpec("NB", "Naïve Bayes", factory=_naive_bayes),
    ClassifierSpec("kNN", "k Nearest Neighbor", factory=_k_nearest_neighbours),
    ClassifierSpec("MLP", "Multi-layer Perceptron", factory=_multi_layer_perceptron),
    ClassifierSpec("BERT", "BERT", kind="language_model"),
    ClassifierSpec("DistilBERT", "DistilBERT", kind="language_model"),
    ClassifierSpec("RoBERTa", "RoBERTa", kind="language_model"),
):
    register_classifier(_spec)
