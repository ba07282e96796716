"""The three task interfaces, for any number of classes k >= 2: a method is fitted once per
:class:`~unishift.data.containers.Setting` and applied to many unlabelled samples, each with a
:class:`SampleContext` that shares per-sample artifacts (docs/methods.md §0.1)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from unishift.data.containers import Sample, Setting, derive_seed

TASKS = ("calibration", "quantification", "cap")
SHIFTS = ("label", "covariate", "compound")
# A shift that reuses another's data, methods and parameters (docs/regimes.md §2, §5.2.1; resolved
# in unishift.methods.spec.MethodSpec).
DERIVED_SHIFTS = {"compound": "covariate"}
GROUPS = ("baseline", "reference", "adapted")
# The shift a method's guarantee needs (docs/multiclass.md §3).
ASSUMPTIONS = ("label", "covariate", "none")
CALIBRATION_NOTIONS = ("canonical", "class-wise", "top-label", "predicted-label")
# First element of the SampleContext store keys of precomputed artifacts (written by an upstream
# rule, docs/domain-weights.md): a part's child context sees them too.
PRECOMPUTED = "precomputed"


@dataclass
class SampleContext:
    """Per-sample scratch space of the methods applied to one sample in a job: ``cached`` computes
    an artifact once per key (``computations`` counts), ``note`` records a documented fallback next
    to the method's result, ``draws`` (set by the driver: docs/reproduction.md) gives an auxiliary
    draw's random state, else seeded from (seed, setting, sample, purpose)."""

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
    """Base of all methods: constructors only store hyper-parameters, whose defaults are the
    method's; the class attributes below describe it (docs/methods.md, "Adding a method")."""

    task: ClassVar[str]
    entry_point: ClassVar[str]
    name: ClassVar[str] = ""
    group: ClassVar[str] = "reference"
    display: ClassVar[str] = ""
    shifts: ClassVar[tuple[str, ...]] = SHIFTS
    shift_defaults: ClassVar[dict[str, dict[str, Any]]] = {}
    binary_defaults: ClassVar[dict[str, dict[str, Any]]] = {}
    description: ClassVar[str] = ""
    adaptations: ClassVar[tuple[str, ...] | None] = None
    binary_only: ClassVar[str] = ""
    assumption: ClassVar[str] = "none"

    @abstractmethod
    def fit(self, setting: Setting) -> Method: ...

    def apply(self, sample: Sample, context: SampleContext) -> Any:
        """The task's entry point (``calibrate``, ``quantify``, ``predict_accuracy``)."""
        return getattr(self, self.entry_point)(sample, context)

    def domain_weight_plan(self) -> str | None:
        """How the method uses the domain-classifier weights shared across jobs (one of
        :data:`unishift.methods.domain_weights.PLANS`), or None when it uses none."""
        return None

    def fit_fallback(self, reason: str) -> None:
        """Record a documented fallback of the fit in ``fit_notes``."""
        self.fit_notes.append(("fallback", reason))

    def check_classes(self, setting: Setting) -> None:
        """Refuse a setting with more than two classes when the method is binary-only."""
        if self.binary_only and setting.n_classes != 2:
            raise ValueError(
                f"{self.name or type(self).__name__} is binary-only ({self.binary_only}); "
                f"this setting has {setting.n_classes} classes"
            )


class Calibrator(Method):
    task = "calibration"
    entry_point = "calibrate"
    calibration_notion: ClassVar[str] = "canonical"

    @abstractmethod
    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        """Calibrated posteriors, n x k, rows summing to 1."""


class Quantifier(Method):
    task = "quantification"
    entry_point = "quantify"

    @abstractmethod
    def quantify(self, sample: Sample, context: SampleContext) -> np.ndarray:
        """Estimated prevalence vector of the sample (length k, on the simplex)."""


class AccuracyPredictor(Method):
    task = "cap"
    entry_point = "predict_accuracy"

    @abstractmethod
    def predict_accuracy(self, sample: Sample, context: SampleContext) -> float:
        """Estimated accuracy of the classifier's argmax predictions on the sample."""


def as_posteriors(positive: np.ndarray) -> np.ndarray:
    """Two-class posteriors ``[1 - p, p]`` from the positive-class column."""
    positive = np.asarray(positive, dtype=float)
    return np.column_stack([1.0 - positive, positive])
