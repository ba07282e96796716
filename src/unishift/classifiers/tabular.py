"""Fitting and predicting the tabular classifiers (:mod:`unishift.classifiers.specs`) on one thread."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


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
