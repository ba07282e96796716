"""The three task interfaces of the multiclass regime and the data every method receives.

The binary interfaces (:mod:`unishift.methods.base`) hard-code two columns: the crisp rule
``p_1 > p_0``, a scalar prevalence, calibrated output ``[1 - p, p]``. Here the same roles hold for
n >= 2 classes:

* a :class:`MulticlassSample` carries an n x k posterior matrix (k = the number of classes);
* a :class:`MulticlassCalibrator` returns an n x k row-stochastic matrix;
* a :class:`MulticlassQuantifier` returns a prevalence vector of length k (on the simplex);
* a :class:`MulticlassAccuracyPredictor` returns one accuracy in [0, 1] (of the argmax predictions).

Crisp predictions are the argmax with ties to the lowest class index, which for k = 2 is the binary
rule "ties to class 0". The per-sample scratch space is the binary :class:`SampleContext` unchanged.

Every concrete method states, as class attributes, what a registry needs to list it: ``name`` (as in a
table column), ``task``, ``group`` (baseline / reference / adapted), ``display`` (LaTeX), ``shifts``,
``defaults`` (constructor parameters), ``assumption`` (the shift its guarantee needs) and
``binary_name`` (the binary method it generalises, whose numbers it reproduces for k = 2, or None).
Calibrators also state ``calibration_notion`` (docs/multiclass.md §3).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from unishift.methods.base import (
    TASKS,
    LabelledSet,
    Sample,
    SampleContext,
    Setting,
    check_choice,
    derive_seed,
)

REGIME = "multiclass"
GROUPS = ("baseline", "reference", "adapted")
ASSUMPTIONS = ("label", "covariate", "none")
CALIBRATION_NOTIONS = ("canonical", "class-wise", "top-label", "predicted-label")


def argmax_predictions(posteriors: np.ndarray) -> np.ndarray:
    """Argmax of each row, ties to the lowest class index."""
    return np.argmax(np.asarray(posteriors), axis=1)


def _subset(array, mask):
    return None if array is None else array[mask]


def _check_matrix(name: str, matrix, n_items: int, n_classes: int) -> None:
    if matrix is None:
        return
    matrix = np.asarray(matrix)
    if matrix.ndim != 2 or matrix.shape != (n_items, n_classes):
        raise ValueError(
            f"{name} must be {n_items} x {n_classes} (items x classes), got shape {matrix.shape}; "
            f"a classifier of a {n_classes}-class problem must output {n_classes} columns"
        )


@dataclass(frozen=True)
class MulticlassLabelledSet:
    """Items with labels 0..n_classes-1: the validation set or the classifier-training set."""

    posteriors: np.ndarray | None
    labels: np.ndarray
    n_classes: int
    features: np.ndarray | None = None
    logits: np.ndarray | None = None

    def __post_init__(self):
        if self.n_classes < 2:
            raise ValueError(f"n_classes={self.n_classes} must be at least 2")
        labels = np.asarray(self.labels)
        if labels.ndim != 1:
            raise ValueError(f"labels must be a vector, got shape {labels.shape}")
        if len(labels) and (labels.min() < 0 or labels.max() >= self.n_classes):
            raise ValueError(f"labels must lie in 0..{self.n_classes - 1}, got {np.unique(labels)}")
        _check_matrix("posteriors", self.posteriors, len(labels), self.n_classes)
        _check_matrix("logits", self.logits, len(labels), self.n_classes)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def predictions(self) -> np.ndarray:
        return argmax_predictions(self.posteriors)

    @property
    def prevalence(self) -> np.ndarray:
        if not len(self.labels):
            return np.full(self.n_classes, np.nan)
        return np.bincount(np.asarray(self.labels, dtype=int), minlength=self.n_classes) / len(
            self.labels
        )

    @property
    def confusion(self) -> np.ndarray:
        """Counts, rows = true class, columns = predicted class."""
        table = np.zeros((self.n_classes, self.n_classes))
        np.add.at(table, (np.asarray(self.labels, dtype=int), self.predictions), 1.0)
        return table

    def subset(self, mask: np.ndarray) -> MulticlassLabelledSet:
        return MulticlassLabelledSet(
            posteriors=_subset(self.posteriors, mask),
            labels=np.asarray(self.labels)[mask],
            n_classes=self.n_classes,
            features=_subset(self.features, mask),
            logits=_subset(self.logits, mask),
        )


@dataclass(frozen=True)
class MulticlassSample:
    """One unlabelled test sample; ``posteriors`` is n x k."""

    posteriors: np.ndarray
    features: np.ndarray | None = None
    logits: np.ndarray | None = None

    def __post_init__(self):
        posteriors = np.asarray(self.posteriors)
        if posteriors.ndim != 2 or posteriors.shape[1] < 2:
            raise ValueError(f"posteriors must be n x k with k >= 2, got shape {posteriors.shape}")
        _check_matrix("logits", self.logits, *posteriors.shape)

    @property
    def n_classes(self) -> int:
        return int(np.asarray(self.posteriors).shape[1])

    def __len__(self) -> int:
        return len(self.posteriors)

    @property
    def predictions(self) -> np.ndarray:
        return argmax_predictions(self.posteriors)

    def subset(self, mask: np.ndarray) -> MulticlassSample:
        return MulticlassSample(
            posteriors=np.asarray(self.posteriors)[mask],
            features=_subset(self.features, mask),
            logits=_subset(self.logits, mask),
        )


@dataclass(frozen=True)
class MulticlassSetting:
    """What a method may learn from for one trained classifier (see :class:`Setting`)."""

    validation: MulticlassLabelledSet
    training: MulticlassLabelledSet
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

    def restrict_validation(self, mask: np.ndarray, tag: str) -> MulticlassSetting:
        return replace(self, validation=self.validation.subset(mask), key=f"{self.key}|{tag}")

    def derive_seed(self, *parts: Any) -> int:
        return derive_seed(self.seed, self.key, *parts)


def fresh_context(setting: MulticlassSetting, sample_id: int = 0) -> SampleContext:
    return SampleContext(setting_key=setting.key, sample_id=sample_id, seed=setting.seed)


# ---------------------------------------------------------------------------------------------
# Bridges from the binary containers (the n = 2 invariant runs both code paths on the same data)


def from_binary_set(data: LabelledSet) -> MulticlassLabelledSet:
    return MulticlassLabelledSet(
        posteriors=data.posteriors,
        labels=np.asarray(data.labels, dtype=np.int64),
        n_classes=2,
        features=data.features,
        logits=data.logits,
    )


def from_binary_sample(sample: Sample) -> MulticlassSample:
    return MulticlassSample(sample.posteriors, sample.features, sample.logits)


def from_binary_setting(setting: Setting) -> MulticlassSetting:
    return MulticlassSetting(
        validation=from_binary_set(setting.validation),
        training=from_binary_set(setting.training),
        shift=setting.shift,
        key=setting.key,
        seed=setting.seed,
    )


# ---------------------------------------------------------------------------------------------
# Method interfaces


class MulticlassMethod(ABC):
    """Base of all multiclass methods. Constructors only store hyper-parameters."""

    regime: ClassVar[str] = REGIME
    task: ClassVar[str]
    name: ClassVar[str] = ""
    display: ClassVar[str] = ""
    group: ClassVar[str] = "reference"
    shifts: ClassVar[tuple[str, ...]] = ("label", "covariate")
    defaults: ClassVar[dict[str, Any]] = {}
    shift_defaults: ClassVar[dict[str, dict[str, Any]]] = {}
    assumption: ClassVar[str] = "none"
    binary_name: ClassVar[str | None] = None
    description: ClassVar[str] = ""

    @abstractmethod
    def fit(self, setting: MulticlassSetting) -> MulticlassMethod: ...

    def apply(self, sample: MulticlassSample, context: SampleContext) -> Any:
        raise NotImplementedError


class MulticlassCalibrator(MulticlassMethod):
    task = "calibration"
    calibration_notion: ClassVar[str] = "canonical"

    @abstractmethod
    def calibrate(self, sample: MulticlassSample, context: SampleContext) -> np.ndarray:
        """Calibrated posteriors, n x k, rows summing to 1."""

    def apply(self, sample, context):
        return self.calibrate(sample, context)


class MulticlassQuantifier(MulticlassMethod):
    task = "quantification"

    @abstractmethod
    def quantify(self, sample: MulticlassSample, context: SampleContext) -> np.ndarray:
        """Estimated prevalence vector of the sample (length k, on the simplex)."""

    def apply(self, sample, context):
        return self.quantify(sample, context)


class MulticlassAccuracyPredictor(MulticlassMethod):
    task = "cap"

    @abstractmethod
    def predict_accuracy(self, sample: MulticlassSample, context: SampleContext) -> float:
        """Estimated accuracy of the argmax predictions on the sample."""

    def apply(self, sample, context):
        return self.predict_accuracy(sample, context)


def describe(method_class) -> dict[str, Any]:
    """The registry-facing description of a method class (its class attributes)."""
    if method_class.task not in TASKS:
        raise ValueError(f"{method_class.__name__}: task {method_class.task!r} not in {TASKS}")
    check_choice("group", method_class.group, GROUPS)
    check_choice("assumption", method_class.assumption, ASSUMPTIONS)
    info = {
        "name": method_class.name,
        "task": method_class.task,
        "regime": method_class.regime,
        "group": method_class.group,
        "display": method_class.display or method_class.name,
        "shifts": tuple(method_class.shifts),
        "defaults": dict(method_class.defaults),
        "shift_defaults": {s: dict(d) for s, d in method_class.shift_defaults.items()},
        "assumption": method_class.assumption,
        "binary_name": method_class.binary_name,
        "description": method_class.description,
    }
    if method_class.task == "calibration":
        check_choice("calibration_notion", method_class.calibration_notion, CALIBRATION_NOTIONS)
        info["calibration_notion"] = method_class.calibration_notion
    return info


def simplex_check(prevalence, n_classes: int, method: str, atol: float = 1e-8) -> np.ndarray:
    """The estimate as a float vector on the simplex, or a clear error naming the method."""
    prevalence = np.asarray(prevalence, dtype=float)
    if prevalence.shape != (n_classes,):
        raise ValueError(f"{method} returned shape {prevalence.shape}, expected ({n_classes},)")
    if not np.all(np.isfinite(prevalence)):
        raise ValueError(f"{method} returned a non-finite prevalence vector {prevalence}")
    if np.any(prevalence < -atol) or abs(prevalence.sum() - 1.0) > 1e-6:
        raise ValueError(f"{method} returned {prevalence}, which is not on the simplex")
    return prevalence


__all__ = [
    "ASSUMPTIONS",
    "CALIBRATION_NOTIONS",
    "MulticlassAccuracyPredictor",
    "MulticlassCalibrator",
    "MulticlassLabelledSet",
    "MulticlassMethod",
    "MulticlassQuantifier",
    "MulticlassSample",
    "MulticlassSetting",
    "argmax_predictions",
    "describe",
    "fresh_context",
    "from_binary_sample",
    "from_binary_set",
    "from_binary_setting",
    "simplex_check",
]
