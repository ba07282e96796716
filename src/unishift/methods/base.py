"""The three task interfaces and the data containers every method receives.

A method is fitted once per *setting* (one trained classifier on one data set or domain pair) on a
labelled validation set, and then applied to many unlabelled test samples. Each application gets a
:class:`SampleContext` that caches expensive per-sample artifacts (domain-classifier weights, LasCal
temperature searches, ...) so that every method of a job that needs the same artifact computes it once.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

TASKS = ("calibration", "quantification", "cap")
SHIFTS = ("label", "covariate")
# First element of the SampleContext store keys of precomputed artifacts (written by an upstream
# rule, docs/domain-weights.md): a part's child context sees them too.
PRECOMPUTED = "precomputed"
# Where a method takes a class prior from: the classifier-training set or the validation set.
PREVALENCE_SOURCES = ("training", "validation")


def crisp_predictions(posteriors: np.ndarray) -> np.ndarray:
    """Argmax of each posterior row with ties going to class 0 (docs/methods.md §0.2)."""
    posteriors = np.asarray(posteriors)
    return (posteriors[:, 1] > posteriors[:, 0]).astype(int)


def _subset(array: np.ndarray | None, mask: np.ndarray) -> np.ndarray | None:
    return None if array is None else array[mask]


@dataclass(frozen=True)
class LabelledSet:
    """Items with their labels: the validation set or the classifier-training set.

    ``posteriors`` is n x 2 (column 1 = positive class); ``logits`` (n x 2) exist only for language
    models; ``features`` are standardised covariates (label shift) or hidden states (covariate shift).
    """

    posteriors: np.ndarray | None
    labels: np.ndarray
    features: np.ndarray | None = None
    logits: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def predictions(self) -> np.ndarray:
        return crisp_predictions(self.posteriors)

    @property
    def prevalence(self) -> float:
        return float(np.mean(self.labels)) if len(self.labels) else float("nan")

    def subset(self, mask: np.ndarray) -> LabelledSet:
        return LabelledSet(
            posteriors=_subset(self.posteriors, mask),
            labels=self.labels[mask],
            features=_subset(self.features, mask),
            logits=_subset(self.logits, mask),
        )


@dataclass(frozen=True)
class Sample:
    """One unlabelled test sample (labels are never given to a method)."""

    posteriors: np.ndarray
    features: np.ndarray | None = None
    logits: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.posteriors)

    @property
    def predictions(self) -> np.ndarray:
        return crisp_predictions(self.posteriors)

    def subset(self, mask: np.ndarray) -> Sample:
        return Sample(
            posteriors=self.posteriors[mask],
            features=_subset(self.features, mask),
            logits=_subset(self.logits, mask),
        )


@dataclass(frozen=True)
class Setting:
    """What a method may learn from for one trained classifier.

    ``validation`` is the labelled held-out set every method is fitted on; ``training`` is the set the
    classifier was trained on (features and labels; used by domain classifiers, Head2Tail and as the
    source of the EM training prevalence). ``key`` identifies the setting (e.g. ``"yeast/LR"``) and feeds
    derived seeds.
    """

    validation: LabelledSet
    training: LabelledSet
    shift: str
    key: str = ""
    seed: int = 0

    @property
    def train_prevalence(self) -> float:
        return self.training.prevalence

    def prevalence_of(self, source: str, parameter: str = "train_prevalence") -> float:
        """The positive-class prevalence of the ``"training"`` or the ``"validation"`` set."""
        check_choice(parameter, source, PREVALENCE_SOURCES)
        return self.train_prevalence if source == "training" else self.validation.prevalence

    def restrict_validation(self, mask: np.ndarray, tag: str) -> Setting:
        """The same setting with the validation set reduced to ``mask`` (e.g. one predicted class)."""
        return replace(self, validation=self.validation.subset(mask), key=f"{self.key}|{tag}")

    def derive_seed(self, *parts: Any) -> int:
        return derive_seed(self.seed, self.key, *parts)


def derive_seed(*parts: Any) -> int:
    """A stable 32-bit seed from any printable parts (independent of Python's hash randomisation)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "little")


@dataclass
class SampleContext:
    """Per-sample scratch space shared by every method applied to the same sample in a job.

    ``cached(key, compute)`` returns the artifact stored under ``key`` or computes and stores it;
    ``computations`` counts how often each key was computed (tests use it to prove sharing).
    ``note(status, reason)`` records a documented fallback; the evaluation driver writes it next to the
    result of the method that raised it.

    ``draws`` gives the random state of an auxiliary random draw (the domain classifier's
    up-sampling): the evaluation driver sets it to the reference stream, i.e. the sample generator's
    legacy NumPy stream continued across the setup's samples in order (REF's behaviour, see
    docs/reproduction.md); without it each draw gets a fresh state seeded from (seed, setting,
    sample, purpose).
    """

    setting_key: str
    sample_id: int
    seed: int = 0
    store: dict = field(default_factory=dict)
    computations: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    draws: Callable[..., np.random.RandomState] | None = None

    def cached(self, key: tuple, compute: Callable[[], Any]) -> Any:
        if key not in self.store:
            self.store[key] = compute()
            self.computations[key] = self.computations.get(key, 0) + 1
        return self.store[key]

    def derive_seed(self, *parts: Any) -> int:
        return derive_seed(self.seed, self.setting_key, self.sample_id, *parts)

    def random_state(self, *parts: Any) -> np.random.RandomState:
        """The random state of one auxiliary draw identified by ``parts`` (see ``draws``)."""
        if self.draws is not None:
            return self.draws(*parts)
        return np.random.RandomState(self.derive_seed(*parts))

    def note(self, status: str, reason: str) -> None:
        self.notes.append((status, reason))

    def child(self, tag: str) -> SampleContext:
        """A context for a part of this sample (e.g. its predicted positives): its own store, shared notes."""
        return SampleContext(
            setting_key=f"{self.setting_key}|{tag}",
            sample_id=self.sample_id,
            seed=self.seed,
            # precomputed artifacts of the sample (docs/domain-weights.md) serve its parts too
            store={k: v for k, v in self.store.items() if k[:1] == (PRECOMPUTED,)},
            computations=self.computations,
            notes=self.notes,
            draws=self.draws,
        )


def fresh_context(setting: Setting, sample_id: int = 0) -> SampleContext:
    return SampleContext(setting_key=setting.key, sample_id=sample_id, seed=setting.seed)


class Method(ABC):
    """Base of all methods. Constructors only store hyper-parameters (QuaPy style).

    A method describes itself in class attributes (docs/methods.md, "Adding a method"): a class that
    sets ``name`` in its own body is registered under ``(task, name)`` when the registry scans its
    module; subclasses that do not set their own ``name`` are not registered.

    ``name`` as in the tables' columns; ``group`` one of baseline / reference / adapted; ``display``
    the LaTeX column head (``name`` when empty); ``shifts`` the shifts it runs under; ``defaults``
    constructor arguments of every shift and ``shift_defaults`` those of one shift (e.g. the logit
    convention of each paper table); ``adaptations`` the kinds of cross-task adaptation
    (:data:`unishift.methods.adapt.KINDS`) registered for it, ``None`` for every kind its task has.
    """

    task: ClassVar[str]
    name: ClassVar[str] = ""
    group: ClassVar[str] = "reference"
    display: ClassVar[str] = ""
    shifts: ClassVar[tuple[str, ...]] = SHIFTS
    defaults: ClassVar[dict[str, Any]] = {}
    shift_defaults: ClassVar[dict[str, dict[str, Any]]] = {}
    description: ClassVar[str] = ""
    adaptations: ClassVar[tuple[str, ...] | None] = None

    @abstractmethod
    def fit(self, setting: Setting) -> Method: ...

    def apply(self, sample: Sample, context: SampleContext) -> Any:
        """Task-generic entry point used by the evaluation driver."""
        raise NotImplementedError

    def domain_weight_plan(self) -> str | None:
        """How the method uses the domain-classifier weights shared across jobs (one of
        :data:`unishift.methods.domain_weights.PLANS`), or None when it uses none."""
        return None


class Calibrator(Method):
    task = "calibration"

    @abstractmethod
    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        """Calibrated posteriors, n x 2."""

    def apply(self, sample, context):
        return self.calibrate(sample, context)


class Quantifier(Method):
    task = "quantification"

    @abstractmethod
    def quantify(self, sample: Sample, context: SampleContext) -> float:
        """Estimated positive-class prevalence of the sample."""

    def apply(self, sample, context):
        return self.quantify(sample, context)


class AccuracyPredictor(Method):
    task = "cap"

    @abstractmethod
    def predict_accuracy(self, sample: Sample, context: SampleContext) -> float:
        """Estimated accuracy of the classifier's crisp predictions on the sample."""

    def apply(self, sample, context):
        return self.predict_accuracy(sample, context)


def check_choice(name: str, value: Any, valid) -> None:
    """Raise naming the valid options (QuaPy style) when ``value`` is not one of them."""
    if value not in valid:
        raise ValueError(f"{name}={value!r} is not valid; choose one of {sorted(map(str, valid))}")


def as_posteriors(positive: np.ndarray) -> np.ndarray:
    positive = np.asarray(positive, dtype=float)
    return np.column_stack([1.0 - positive, positive])
