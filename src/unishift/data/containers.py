"""The data every method receives, for any number of classes k >= 2: a :class:`Setting` (what a
method is fitted on), :class:`LabelledSet` (items with labels 0..k-1 and their n x k posteriors) and
:class:`Sample` (one unlabelled test sample). Crisp predictions: docs/methods.md §0.2; for two
classes column 1 is the positive class and a prevalence is the vector (1 - p, p).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from unishift.evaluation.metrics import argmax_predictions
from unishift.option_checks import check_choice

# Where a method takes a class prior from: the classifier-training set or the validation set.
PREVALENCE_SOURCES = ("training", "validation")


def derive_seed(*parts: Any) -> int:
    """A stable 32-bit seed from any printable parts (independent of Python's hash randomisation)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "little")


def _subset(array, mask):
    return None if array is None else array[mask]


def _check_matrix(name: str, matrix, n_items: int, n_classes: int) -> None:
    if matrix is None:
        return
    shape = np.shape(matrix)
    if shape != (n_items, n_classes):
        raise ValueError(
            f"{name} must be {n_items} x {n_classes} (items x classes), got shape {shape}; "
            f"a classifier of a {n_classes}-class problem must output {n_classes} columns"
        )


@dataclass(frozen=True)
class LabelledSet:
    """Items with their labels 0..k-1: the validation set, the classifier-training set or a pool;
    ``logits`` only for language models, ``n_classes`` from the posteriors (or logits) by default."""

    posteriors: np.ndarray | None
    labels: np.ndarray
    features: np.ndarray | None = None
    logits: np.ndarray | None = None
    n_classes: int | None = None

    def __post_init__(self):
        labels = np.asarray(self.labels)
        if labels.ndim != 1:
            raise ValueError(f"labels must be a vector, got shape {labels.shape}")
        k = self.n_classes
        if k is None:
            k = next(
                (np.shape(m)[1] for m in (self.posteriors, self.logits) if np.ndim(m) == 2), None
            )
        if k is None:
            k = max(2, int(labels.max()) + 1) if len(labels) else 2
        if k < 2:
            raise ValueError(f"n_classes={k} must be at least 2")
        object.__setattr__(self, "n_classes", int(k))
        if len(labels) and (labels.min() < 0 or labels.max() >= k):
            raise ValueError(f"labels must lie in 0..{k - 1}, got {np.unique(labels)}")
        _check_matrix("posteriors", self.posteriors, len(labels), k)
        _check_matrix("logits", self.logits, len(labels), k)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def predictions(self) -> np.ndarray:
        return argmax_predictions(self.posteriors)

    @property
    def prevalence(self) -> np.ndarray:
        """The share of each class (NaNs for an empty set); for two classes (1 - p, p), the prior
        the binary tables' EM started from (1 - p and the class-0 share can differ in the last bit)."""
        if not len(self.labels):
            return np.full(self.n_classes, np.nan)
        counts = np.bincount(np.asarray(self.labels, dtype=np.int64), minlength=self.n_classes)
        if self.n_classes == 2:
            positive = counts[1] / len(self.labels)
            return np.array([1.0 - positive, positive])
        return counts / len(self.labels)

    @property
    def confusion(self) -> np.ndarray:
        """Counts, rows = true class, columns = predicted class."""
        table = np.zeros((self.n_classes, self.n_classes))
        np.add.at(table, (np.asarray(self.labels, dtype=np.int64), self.predictions), 1.0)
        return table

    def subset(self, mask: np.ndarray) -> LabelledSet:
        return LabelledSet(
            posteriors=_subset(self.posteriors, mask),
            labels=np.asarray(self.labels)[mask],
            features=_subset(self.features, mask),
            logits=_subset(self.logits, mask),
            n_classes=self.n_classes,
        )


@dataclass(frozen=True)
class Sample:
    """One unlabelled test sample; ``posteriors`` is n x k."""

    posteriors: np.ndarray
    features: np.ndarray | None = None
    logits: np.ndarray | None = None

    def __post_init__(self):
        shape = np.shape(self.posteriors)
        if len(shape) != 2 or shape[1] < 2:
            raise ValueError(f"posteriors must be n x k with k >= 2, got shape {shape}")
        _check_matrix("logits", self.logits, *shape)

    @property
    def n_classes(self) -> int:
        return int(np.shape(self.posteriors)[1])

    def __len__(self) -> int:
        return len(self.posteriors)

    @property
    def predictions(self) -> np.ndarray:
        return argmax_predictions(self.posteriors)

    def subset(self, mask: np.ndarray) -> Sample:
        return Sample(
            posteriors=np.asarray(self.posteriors)[mask],
            features=_subset(self.features, mask),
            logits=_subset(self.logits, mask),
        )


@dataclass(frozen=True)
class Setting:
    """What a method may learn from for one trained classifier: the ``validation`` set every method
    is fitted on and the classifier's ``training`` set; ``key`` (e.g. ``"yeast/LR"``) feeds seeds."""

    validation: LabelledSet
    training: LabelledSet
    shift: str
    key: str = ""
    seed: int = 0

    def __post_init__(self):
        if self.validation.n_classes != self.training.n_classes:
            raise ValueError(
                f"validation has {self.validation.n_classes} classes, training "
                f"{self.training.n_classes}"
            )

    @property
    def n_classes(self) -> int:
        return self.validation.n_classes

    @property
    def train_prevalence(self) -> np.ndarray:
        return self.training.prevalence

    def prevalence_of(self, source: str, parameter: str = "train_prevalence") -> np.ndarray:
        check_choice(parameter, source, PREVALENCE_SOURCES)
        return self.train_prevalence if source == "training" else self.validation.prevalence

    def restrict_validation(self, mask: np.ndarray, tag: str) -> Setting:
        """The same setting with the validation set reduced to ``mask`` (e.g. one predicted class)."""
        return replace(self, validation=self.validation.subset(mask), key=f"{self.key}|{tag}")

    def derive_seed(self, *parts: Any) -> int:
        return derive_seed(self.seed, self.key, *parts)
