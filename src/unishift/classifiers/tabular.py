"""The four scikit-learn classifiers of the label-shift experiments (docs/protocols.md §2.3)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier


@dataclass(frozen=True)
class ClassifierSpec:
    code: str
    display: str
    build: Callable[[int], object]


# REF order (lr, nb, knn, mlp) is the row-block order of every label-shift table. The MLP is the only
# stochastic one: REF left it unseeded; we seed it from the config so that one model is shared by all
# tasks and runs are reproducible.
CLASSIFIERS = {
    spec.code: spec
    for spec in (
        ClassifierSpec("LR", "Logistic Regression", lambda seed: LogisticRegression()),
        ClassifierSpec("NB", "Naïve Bayes", lambda seed: GaussianNB()),
        ClassifierSpec(
            "kNN",
            "k Nearest Neighbor",
            lambda seed: KNeighborsClassifier(n_neighbors=10, weights="uniform"),
        ),
        ClassifierSpec(
            "MLP", "Multi-layer Perceptron", lambda seed: MLPClassifier(random_state=seed)
        ),
    )
}


def make_classifier(code: str, seed: int):
    if code not in CLASSIFIERS:
        raise ValueError(f"unknown classifier {code!r}; valid ones are {list(CLASSIFIERS)}")
    return CLASSIFIERS[code].build(seed)


@contextmanager
def one_thread() -> Iterator[None]:
    """Fit and predict with one BLAS and one OpenMP thread, whatever the machine has.

    The posteriors depend on the thread count: the MLP's last bits (BLAS splits its sums across
    threads; wine-q-white, semeion), and which of two equidistant training items k-NN counts among
    the neighbours (scikit-learn's neighbour search keeps a different one with one thread than with
    several; ctg.2, docs/reproduction.md). With one thread they are the same on every machine, in
    the workflow's jobs and in a notebook alike.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield
