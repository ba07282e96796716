"""Domain-classifier importance weights (docs/methods.md §0.4): computed once per sample context, or
taken from the memo an upstream rule filled (plans, memo keys: docs/domain-weights.md). A shared
result carries its fallback reason, so that every method that consumes it records the fallback."""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.methods.base import PRECOMPUTED, SampleContext
from unishift.option_checks import check_choice

SAMPLE = "sample"
PREDICTED_CLASSES = "predicted_classes"
UNSHARED = "unshared"
SHARED_PLANS = (SAMPLE, PREDICTED_CLASSES)
PLANS = (*SHARED_PLANS, UNSHARED)

WEIGHT_SOURCES = ("domain_classifier", "uniform")
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
    """The domain classifier's balancing draw: indices that up-sample the smaller of train and
    target (one ``choice`` call, none when the sizes are equal; a ``ValueError`` when the smaller
    one is empty)."""
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


def array_digest(values: np.ndarray) -> str:
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


@dataclass(frozen=True)
class DomainWeights:
    """Weights at the validation items (n x 1) and the reason of a fallback to unit weights; in a
    memo, the stream's state after the call too."""

    weights: np.ndarray
    fallback: str | None = None
    stream_after: str = ""


@dataclass
class DomainWeightMemo:
    """Precomputed weights of one setup, keyed by :class:`CallKey`; ``recording``: the upstream
    rule's mode, which adds each computed call; ``hits`` counts the calls answered."""

    entries: dict = field(default_factory=dict)
    recording: bool = False
    hits: int = 0

    def add(
        self, key: CallKey, weights: np.ndarray, fallback: str | None, stream_after: str
    ) -> None:
        self.entries[key] = DomainWeights(np.asarray(weights, dtype=float), fallback, stream_after)

    def take(self, key: CallKey, n_target: int, rng: np.random.RandomState) -> DomainWeights | None:
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


def domain_weights_key(setting: Setting) -> tuple:
    """Context key of the domain-classifier weights of one (setup, validation set)."""
    return ("domain_weights", setting.key, "features")


def fit_domain_weights(
    train_features: np.ndarray,
    target_features: np.ndarray,
    source_features: np.ndarray,
    seed: int | np.random.RandomState,
) -> np.ndarray:
    """Importance weights P(target | x) / P(train | x) at ``source_features``; ``seed`` is an
    integer or a legacy ``RandomState`` whose stream the up-sampling continues."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    train_features = np.asarray(train_features)
    target_features = np.asarray(target_features)
    n_tr, n_t = len(train_features), len(target_features)
    rng = seed if isinstance(seed, np.random.RandomState) else np.random.RandomState(seed)
    train_rows, target_rows = upsampling_indices(n_tr, n_t, rng)
    if train_rows is not None:
        train_features = train_features[train_rows]
    if target_rows is not None:
        target_features = target_features[target_rows]
    size = max(n_tr, n_t)
    combined = np.concatenate((train_features, target_features))
    domain = np.asarray([1] * size + [0] * size, dtype=np.int32)
    with warnings.catch_warnings():
        # The reference implementation used sklearn's defaults (100 lbfgs iterations) and ignored
        # non-convergence.
        warnings.simplefilter("ignore", ConvergenceWarning)
        classifier = LogisticRegression().fit(combined, domain)
    proba = classifier.predict_proba(np.asarray(source_features))
    return proba[:, :1] / proba[:, 1:]


def domain_weights(setting: Setting, sample: Sample, context: SampleContext) -> DomainWeights:
    """The domain-classifier weights of ``setting.validation`` for ``sample``, once per context;
    on a ``ValueError`` (e.g. an empty sample) unit weights, as the reference implementation
    falls back to, with the reason."""
    for name, part in (("training", setting.training), ("validation", setting.validation)):
        if part.features is None:
            raise ValueError(f"the domain classifier needs {name} features; the setting has none")
    if sample.features is None:
        raise ValueError("the domain classifier needs the test sample's features; it has none")

    key = domain_weights_key(setting)
    if key in context.store:
        return context.store[key]
    # Outside the try: a missing stream is a set-up error, not the reference implementation's
    # ValueError fallback.
    rng = context.random_state("domain_classifier", setting.key, "features")
    # Weights computed once by the upstream rule (docs/domain-weights.md), if this call matches one.
    memo = context.store.get(MEMO_KEY)
    if memo is not None:
        call = CallKey(
            setting.key,
            int(context.sample_id),
            "features",
            stream_fingerprint(rng),
            array_digest(sample.features),
            len(setting.training),
            len(setting.validation),
        )
    if memo is not None and not memo.recording:
        entry = memo.take(call, len(sample), rng)
        if entry is not None:
            context.store[key] = entry
            return entry
    try:
        result = DomainWeights(
            fit_domain_weights(
                setting.training.features, sample.features, setting.validation.features, seed=rng
            )
        )
    except ValueError as err:
        unit = np.ones((len(setting.validation), 1), dtype=float)
        result = DomainWeights(unit, f"domain classifier raised ValueError ({err}); unit weights")
    if memo is not None and memo.recording:
        memo.add(call, result.weights, result.fallback, stream_fingerprint(rng))
    return context.cached(key, lambda: result)


def importance_weights(
    source: str, setting: Setting, sample: Sample, context: SampleContext, method: str
) -> np.ndarray:
    """Weights for CPCS / TransCal: the domain classifier's (faithful) or all ones; records its
    fallback as a note."""
    check_choice("weights", source, WEIGHT_SOURCES)
    if source == "uniform":
        return np.ones((len(setting.validation), 1), dtype=float)
    result = domain_weights(setting, sample, context)
    if result.fallback:
        context.note("fallback", f"{method}: {result.fallback}")
    return result.weights
