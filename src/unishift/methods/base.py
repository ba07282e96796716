"""The three task interfaces, for any number of classes k >= 2: a method is fitted once per
:class:`~unishift.data.containers.Setting` and applied to many unlabelled samples, each with a
:class:`SampleContext` that shares per-sample artifacts (docs/methods.md §0.1)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from unishift.data.containers import Sample, Setting, derive_seed

TASKS = ("calibration", "quantification", "cap")
SHIFTS = ("label", "covariate", "compound")
# A shift that reuses another's data, methods and parameters (docs/regimes.md §2, §5.2.1; resolved
# in unishift.methods.spec.MethodSpec).
DERIVED_SHIFTS = {"compound": "covariate"}
# "field": the strongest methods of the literature beside the paper's (docs/methods.md §6), kept apart in
# the tables from the paper's reference methods.
GROUPS = ("baseline", "reference", "adapted", "field")
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


class Method(BaseEstimator, ABC):
    """Base of all methods, a scikit-learn estimator: the constructor stores its hyper-parameters
    as given (``get_params``, ``set_params``, ``sklearn.base.clone`` and the ``repr`` follow from
    its signature), :meth:`fit` checks them and learns from a setting; the class attributes below
    describe the method (docs/methods.md, "Adding a method")."""

    task: ClassVar[str]
    entry_point: ClassVar[str]
    name: ClassVar[str] = ""
    group: ClassVar[str] = "reference"
    display: ClassVar[str] = ""
    shifts: ClassVar[tuple[str, ...]] = SHIFTS
    # a plugin's own per-shift arguments; the paper's are in unishift.methods.adapt.table
    shift_defaults: ClassVar[dict[str, dict[str, Any]]] = {}
    binary_defaults: ClassVar[dict[str, dict[str, Any]]] = {}
    description: ClassVar[str] = ""
    adaptations: ClassVar[tuple[str, ...] | None] = None
    # why the method needs two classes ("" when it runs for any number); :meth:`skip` reads it
    binary_only: ClassVar[str] = ""
    assumption: ClassVar[str] = "none"

    def fit(self, setting: Setting) -> Method:
        """Check the hyper-parameters, refuse a setting the method cannot run on, and learn from
        ``setting`` (:meth:`_fit`); the documented fallbacks of the fit go to ``fit_notes``."""
        self.fit_notes = []
        self.check_params()
        reason = self.skip(setting)
        if reason:
            raise ValueError(reason)
        self.context_key_ = (setting.key, setting.seed)
        self._fit(setting)
        return self

    def _fit(self, setting: Setting) -> None:
        """The method's own fitting (nothing to learn by default)."""

    def check_params(self) -> None:
        """Raise a ValueError naming a hyper-parameter whose value is not valid (``fit`` calls it;
        the registry calls it when it builds a method, so that a config fails before any job)."""

    def skip(self, setting: Setting) -> str | None:
        """Why the method cannot run on ``setting`` (None when it can)."""
        if self.binary_only and setting.n_classes != 2:
            return (
                f"{self.name or type(self).__name__} is binary-only ({self.binary_only}); "
                f"this setting has {setting.n_classes} classes"
            )
        return None

    @property
    def fit_notes(self) -> list[tuple[str, str]]:
        """The documented fallbacks of the last fit, as (status, reason) pairs (empty before it)."""
        return self.__dict__.setdefault("_fit_notes", [])

    @fit_notes.setter
    def fit_notes(self, notes) -> None:
        self.__dict__["_fit_notes"] = list(notes)

    def fit_fallback(self, reason: str) -> None:
        """Record a documented fallback of the fit in ``fit_notes``."""
        self.fit_notes.append(("fallback", reason))

    def context_for(self, context: SampleContext | None) -> SampleContext:
        """``context``, or a fresh one of the fitted setting when the caller gave none."""
        if context is not None:
            return context
        key, seed = getattr(self, "context_key_", ("", 0))
        return SampleContext(setting_key=key, sample_id=0, seed=seed)

    def apply(self, sample: Sample, context: SampleContext | None = None) -> Any:
        """The task's entry point (``calibrate``, ``quantify``, ``predict_accuracy``)."""
        return getattr(self, self.entry_point)(sample, context)

    def domain_weight_plan(self) -> str | None:
        """How the method uses the domain-classifier weights shared across jobs (one of
        :data:`unishift.methods.domain_weights.PLANS`), or None when it uses none."""
        return None


class Calibrator(Method):
    task = "calibration"
    entry_point = "calibrate"
    calibration_notion: ClassVar[str] = "canonical"

    @abstractmethod
    def calibrate(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        """Calibrated posteriors, n x k, rows summing to 1."""


class Quantifier(Method):
    task = "quantification"
    entry_point = "quantify"

    @abstractmethod
    def quantify(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        """Estimated prevalence vector of the sample (length k, on the simplex)."""


class AccuracyPredictor(Method):
    task = "cap"
    entry_point = "predict_accuracy"

    @abstractmethod
    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        """Estimated accuracy of the classifier's argmax predictions on the sample."""


def as_posteriors(positive: np.ndarray) -> np.ndarray:
    """Two-class posteriors ``[1 - p, p]`` from the positive-class column."""
    positive = np.asarray(positive, dtype=float)
    return np.column_stack([1.0 - positive, positive])
