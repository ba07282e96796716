"""Domain-classifier weights computed once and shared across evaluation jobs (docs/domain-weights.md).

The B5 importance weights (:func:`unishift.methods.calibration.shared.domain_weights`) are the
costly step of CPCS, TransCal, EMQ^TransCal and their adaptations. An upstream workflow rule computes
them once per (setup, sample, feature set) and every job whose method needs them reads them instead
of fitting its own domain classifier.

Why a memo keyed by the random stream: under ``domain_stream: reference`` the up-sampling draw of a
call continues a stream that each (method, setup) evaluation starts afresh, so the weights of sample
``i`` depend on the draws the method made before it. A stored weight vector is therefore keyed by
what determines it: the setting (its key names the validation part), the sample, the feature set, a
fingerprint of the random state the call starts from and a digest of the sample's features. A
consumer whose call matches an entry replays the up-sampling draw (cheap: it advances its stream
exactly as the fit would have) and takes the stored weights; any other call, e.g. one the artifact
did not foresee, fits the domain classifier itself. Results are identical with and without the
artifact by construction.

Which calls a method makes is its *domain-weight plan*, declared by the method
(:meth:`Method.domain_weight_plan`): :data:`SAMPLE` (one call per sample on the whole sample and the
whole setting: CPCS, TransCal, EMQ^TransCal, the ζ2ρ and EMQ adaptations of those),
:data:`PREDICTED_CLASSES` (one call per non-empty predicted-class part, positives first, with the
validation set restricted the same way: the ζ2α adaptations), :data:`UNSHARED` (calls in another
pattern, computed in the job), or ``None`` (no domain classifier).

This module imports nothing above :mod:`unishift.methods.base`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from unishift.methods.base import PRECOMPUTED, Sample, SampleContext, Setting

SAMPLE = "sample"
PREDICTED_CLASSES = "predicted_classes"
UNSHARED = "unshared"
SHARED_PLANS = (SAMPLE, PREDICTED_CLASSES)
PLANS = (*SHARED_PLANS, UNSHARED)

# Context store key of the precomputed weights (SampleContext.child passes PRECOMPUTED keys on).
MEMO_KEY = (PRECOMPUTED, "domain_weights")


def domain_weight_plan(method) -> str | None:
    """The domain-weight plan a method instance declares (``None`` when it declares none)."""
    hook = getattr(method, "domain_weight_plan", None)
    plan = hook() if callable(hook) else None
    if plan is not None and plan not in PLANS:
        raise ValueError(
            f"{type(method).__qualname__} declares domain-weight plan {plan!r}; not one of {PLANS}"
        )
    return plan


def upsampling_indices(
    n_train: int, n_target: int, rng: np.random.RandomState
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """B5's balancing draw: indices that up-sample the smaller of train and target (one ``choice``
    call, none when the sizes are equal; a ``ValueError`` when the smaller one is empty)."""
    if n_train < n_target:
        return rng.choice(n_train, n_target, replace=True), None
    if n_train > n_target:
        return None, rng.choice(n_target, n_train, replace=True)
    return None, None


def stream_fingerprint(rng: np.random.RandomState) -> str:
    """A digest of a legacy RandomState's full state (what its next draws will be)."""
    name, keys, pos, has_gauss, cached = rng.get_state()
    digest = hashlib.sha256(np.ascontiguousarray(keys, dtype=np.uint32).tobytes())
    digest.update(f"{name}|{pos}|{has_gauss}|{float(cached)!r}".encode())
    return digest.hexdigest()[:32]


def array_digest(values: np.ndarray | None) -> str:
    if values is None:
        return "none"
    values = np.ascontiguousarray(values)
    digest = hashlib.sha256(f"{values.dtype.str}|{values.shape}".encode())
    digest.update(values.tobytes())
    return digest.hexdigest()[:32]


@dataclass(frozen=True)
class CallKey:
    """What determines one domain-classifier call's weights."""

    setting_key: str
    sample_id: int
    feature_set: str
    stream_before: str
    sample_digest: str
    n_training: int
    n_validation: int


def call_key(
    setting: Setting,
    sample: Sample,
    context: SampleContext,
    feature_set: str,
    rng: np.random.RandomState,
) -> CallKey:
    return CallKey(
        setting.key,
        int(context.sample_id),
        feature_set,
        stream_fingerprint(rng),
        array_digest(sample.features),
        len(setting.training),
        len(setting.validation),
    )


@dataclass
class Entry:
    weights: np.ndarray
    fallback: str | None
    stream_after: str


@dataclass
class DomainWeightMemo:
    """Precomputed weights of one setup, keyed by :class:`CallKey`.

    ``recording``: the upstream rule's mode, in which each computed call is added. ``hits`` counts
    the calls answered from the memo.
    """

    entries: dict = field(default_factory=dict)
    recording: bool = False
    hits: int = 0

    def add(
        self, key: CallKey, weights: np.ndarray, fallback: str | None, stream_after: str
    ) -> None:
        self.entries[key] = Entry(np.asarray(weights, dtype=float), fallback, stream_after)

    def take(
        self,
        key: CallKey,
        n_target: int,
        rng: np.random.RandomState,
    ) -> Entry | None:
        """The entry of ``key`` with ``rng`` advanced as the fit's draw would have, or None (and
        ``rng`` untouched) when there is none or the replayed draw does not land where it did."""
        entry = self.entries.get(key)
        if entry is None:
            return None
        before = rng.get_state()
        try:
            upsampling_indices(key.n_training, n_target, rng)
        except ValueError:
            pass  # the recorded call raised at its draw too (its entry holds the unit fallback)
        if stream_fingerprint(rng) != entry.stream_after:
            rng.set_state(before)
            return None
        self.hits += 1
        return entry


__all__ = [
    "MEMO_KEY",
    "PLANS",
    "PREDICTED_CLASSES",
    "SAMPLE",
    "SHARED_PLANS",
    "UNSHARED",
    "CallKey",
    "DomainWeightMemo",
    "call_key",
    "domain_weight_plan",
    "stream_fingerprint",
    "upsampling_indices",
]
