"""Shift descriptors of one test sample, for any k >= 2: the true intensities and the unsupervised
estimates, plain functions on NumPy arrays (docs/regimes.md §1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from unishift.data.quapy_loader import load_quapy
from unishift.evaluation.metrics import check_prevalence

N_FOLDS = 5  # domain_auc's cross-validation folds


def _posteriors(posteriors, n_classes: int | None = None, name: str = "posteriors") -> np.ndarray:
    p = np.asarray(posteriors, dtype=float)
    if p.ndim != 2 or p.shape[1] < 2:
        raise ValueError(f"{name} must be an n x k matrix with k >= 2, got shape {p.shape}")
    if n_classes is not None and p.shape[1] != n_classes:
        raise ValueError(f"{name} has {p.shape[1]} columns, expected {n_classes} classes")
    if len(p) == 0:
        raise ValueError(f"{name} is empty")
    if not np.all(np.isfinite(p)):
        raise ValueError(f"{name} contains non-finite values")
    return p


def _labels(labels, n_classes: int, name: str = "labels") -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim != 1 or len(y) == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array, got shape {y.shape}")
    if not np.issubdtype(y.dtype, np.integer) and not np.all(np.equal(np.mod(y, 1), 0)):
        raise ValueError(f"{name} must be integer class indices 0..{n_classes - 1}")
    y = y.astype(np.int64)
    if y.min() < 0 or y.max() >= n_classes:
        raise ValueError(
            f"{name} must lie in 0..{n_classes - 1}, got values in [{y.min()}, {y.max()}]"
        )
    return y


def l1(p: np.ndarray, q: np.ndarray) -> float:
    """sum_c |p_c - q_c|, in [0, 2] for two prevalence vectors of one length."""
    return float(np.abs(p - q).sum())


def true_label_shift(train_prevalence, sample_labels) -> float:
    """L1 distance between the training prevalence vector and the sample's true prevalence vector."""
    train = check_prevalence(train_prevalence, name="train_prevalence")
    y = _labels(sample_labels, len(train), "sample_labels")
    return l1(train, np.bincount(y, minlength=len(train)) / len(y))


def true_mixture(sample_is_target) -> float:
    """Share of target-domain items in the sample (the covariate protocol's m_k / sample_size)."""
    mask = np.asarray(sample_is_target)
    if mask.ndim != 1 or len(mask) == 0 or not np.all(np.isin(mask, (0, 1))):
        raise ValueError("sample_is_target must be a non-empty 1-d array of booleans (or 0/1)")
    return float(mask.astype(bool).mean())


def fit_prevalence_estimator(validation_posteriors, validation_labels):
    """QuaPy's PACC fitted on the validation posteriors and labels (docs/regimes.md §1.2); its
    ``predict(posteriors)`` is a length-k vector."""
    load_quapy()
    from quapy.method.aggregative import PACC

    # here, not at the top: the records' columns come from this module, and a job that reads
    # them (a language-model job among them) needs no scikit-learn
    from unishift.methods.quapy_adapter import PosteriorPassthrough, quiet

    p = _posteriors(validation_posteriors, name="validation_posteriors")
    k = p.shape[1]
    y = _labels(validation_labels, k, "validation_labels")
    if len(y) != len(p):
        raise ValueError(f"{len(p)} validation posteriors but {len(y)} validation labels")
    missing = [c for c in range(k) if not np.any(y == c)]
    if missing:
        raise ValueError(f"PACC needs validation items of every class; class {missing} has none")
    quantifier = PACC(PosteriorPassthrough(k), fit_classifier=False, val_split=None)
    quiet(quantifier.fit, p, y)
    return quantifier


def est_prevalence_shift(train_prevalence, quantifier, sample_posteriors) -> float:
    """L1 between the training prevalence and PACC's estimate on the sample (estimates
    :func:`true_label_shift`)."""
    from unishift.methods.quapy_adapter import quiet  # see fit_prevalence_estimator

    train = check_prevalence(train_prevalence, name="train_prevalence")
    p = _posteriors(sample_posteriors, len(train), "sample_posteriors")
    return l1(train, np.asarray(quiet(quantifier.predict, p), dtype=float))


def domain_auc(reference_features, sample_features, seed: int) -> float:
    """Cross-validated AUC of a domain classifier telling reference items from sample items: 0.5
    when indistinguishable (docs/regimes.md §1.2)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    ref = np.asarray(reference_features, dtype=float)
    smp = np.asarray(sample_features, dtype=float)
    if ref.ndim != 2 or smp.ndim != 2 or ref.shape[1] != smp.shape[1]:
        raise ValueError(
            f"reference and sample features must be matrices with the same columns, got "
            f"{ref.shape} and {smp.shape}"
        )
    if not (np.all(np.isfinite(ref)) and np.all(np.isfinite(smp))):
        raise ValueError("features contain non-finite values")
    if len(smp) < len(ref):  # as many reference items as the sample has
        draw = np.random.default_rng(seed).choice(len(ref), len(smp), replace=False)
        ref = ref[np.sort(draw)]
    X = np.vstack([ref, smp])
    y = np.r_[np.zeros(len(ref), dtype=int), np.ones(len(smp), dtype=int)]
    # copies of one item share a fold, or the model recognises held-out copies (docs/regimes.md §1.2)
    _, copies = np.unique(X, axis=0, return_inverse=True)
    distinct = [len(np.unique(copies[y == side])) for side in (0, 1)]
    if min(distinct) < N_FOLDS:
        raise ValueError(
            f"domain_auc needs at least {N_FOLDS} distinct items on each side, got "
            f"{distinct[0]} in the reference and {distinct[1]} in the sample"
        )
    aucs = []
    # one BLAS thread: the same last bits on any machine (as the classifiers, docs/protocols.md §2.3)
    with threadpool_limits(limits=1):
        for train, test in stratified_group_folds(y, copies.ravel(), N_FOLDS, seed):
            model = make_pipeline(StandardScaler(), LogisticRegression(random_state=seed))
            if len(np.unique(y[test])) < 2 or len(np.unique(y[train])) < 2:
                raise ValueError(
                    "a cross-validation fold of domain_auc holds items of one side only; use "
                    "fewer folds or more distinct items"
                )
            model.fit(X[train], y[train])
            aucs.append(roc_auc_score(y[test], model.decision_function(X[test])))
    return float(np.mean(aucs))


def stratified_group_folds(
    y, groups, n_splits: int, seed: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (train, test) index pairs of scikit-learn's
    ``StratifiedGroupKFold(n_splits, shuffle=True, random_state=seed).split(X, y, groups)``, the
    same folds computed about ten times faster (its greedy assignment of groups to folds costs
    domain_auc most of its time): the same shuffle, the same order of groups, and the same
    floating-point operations in the same order for each candidate fold's score, so that every tie
    and near-tie is broken as scikit-learn breaks it. Exact for fewer than eight classes (NumPy
    sums eight or more values pairwise); tests/test_regimes_descriptors.py checks it against
    scikit-learn."""
    y = np.asarray(y)
    _, y_inv, y_cnt = np.unique(y, return_inverse=True, return_counts=True)
    _, groups_inv, groups_cnt = np.unique(groups, return_inverse=True, return_counts=True)
    n_groups, n_classes = len(groups_cnt), len(y_cnt)
    if n_classes >= 8 or n_classes < 2:
        raise ValueError(f"stratified_group_folds needs 2 to 7 classes, got {n_classes}")
    if n_splits > n_groups or np.all(n_splits > y_cnt):
        raise ValueError(f"{n_splits} folds need as many groups and members of a class")
    counts = np.zeros((n_groups, n_classes))
    np.add.at(counts, (groups_inv, y_inv), 1)
    permutation = np.arange(n_groups)
    np.random.RandomState(seed).shuffle(permutation)
    counts = counts[permutation]
    inverse = np.empty_like(permutation)
    inverse[permutation] = np.arange(n_groups)
    groups_inv = inverse[groups_inv]
    order = np.argsort(-np.std(counts, axis=1), kind="stable")
    totals = [float(c) for c in y_cnt]
    per_fold = [[0.0] * n_classes for _ in range(n_splits)]
    shares = [[0.0] * n_classes for _ in range(n_splits)]  # per_fold / totals, as NumPy divides
    fold_of = np.empty(n_groups, dtype=np.intp)
    rows = counts.tolist()
    for group in order.tolist():
        added = rows[group]
        best, min_eval, min_size = 0, math.inf, math.inf
        for i in range(n_splits):
            candidate = [(per_fold[i][c] + added[c]) / totals[c] for c in range(n_classes)]
            std_sum = 0.0
            for c in range(n_classes):
                column = [candidate[c] if f == i else shares[f][c] for f in range(n_splits)]
                total = 0.0
                for value in column:
                    total += value
                mean = total / n_splits
                total = 0.0
                for value in column:
                    total += (value - mean) * (value - mean)
                std_sum += math.sqrt(total / n_splits)
            fold_eval = std_sum / n_classes
            size = sum(per_fold[i])
            # np.isclose(fold_eval, min_eval) with its default tolerances; never close to inf
            close = min_eval != math.inf and abs(fold_eval - min_eval) <= 1e-08 + 1e-05 * abs(
                min_eval
            )
            if fold_eval < min_eval or (close and size < min_size):
                best, min_eval, min_size = i, fold_eval, size
        for c in range(n_classes):
            per_fold[best][c] += added[c]
            shares[best][c] = per_fold[best][c] / totals[c]
        fold_of[group] = best
    item_fold = fold_of[groups_inv]
    items = np.arange(len(y))
    return [(items[item_fold != i], items[item_fold == i]) for i in range(n_splits)]


def predicted_distribution(posteriors) -> np.ndarray:
    """Share of items predicted (argmax, ties to the lowest class index: docs/methods.md §0.2) as
    each class."""
    p = _posteriors(posteriors)
    return np.bincount(np.argmax(p, axis=1), minlength=p.shape[1]) / len(p)


@dataclass(frozen=True)
class Reference:
    """What the unsupervised descriptors learn from, computed once per setup."""

    train_prevalence: np.ndarray
    quantifier: object
    validation_confidence: float
    validation_predicted: np.ndarray


def make_reference(validation_posteriors, validation_labels, train_prevalence) -> Reference:
    """The per-setup part of the descriptors (docs/regimes.md §1)."""
    v = _posteriors(validation_posteriors, name="validation_posteriors")
    return Reference(
        train_prevalence=check_prevalence(train_prevalence, v.shape[1], "train_prevalence"),
        quantifier=fit_prevalence_estimator(v, validation_labels),
        validation_confidence=float(v.max(axis=1).mean()),
        validation_predicted=predicted_distribution(v),
    )


@dataclass(frozen=True)
class SampleInputs:
    """What one sample's descriptors are computed from: its posteriors, and, where the setup has
    them, its labels, which of its items come from the target domain, its features with the
    reference items' features (the domain classifier's), and the sample's seed."""

    posteriors: np.ndarray
    labels: np.ndarray | None = None
    is_target: np.ndarray | None = None
    features: np.ndarray | None = None
    reference_features: np.ndarray | None = None
    seed: int | None = None


@dataclass(frozen=True)
class Descriptor:
    """One shift descriptor: a column of the descriptor files and of every record.

    ``compute(reference, sample)`` returns its value on one sample (:class:`SampleInputs`);
    ``needs`` names the :class:`SampleInputs` fields without which it is left empty (NaN);
    ``true_intensity_of`` the shifts whose protocol sets it (a true intensity, which the regime maps
    of those shifts bin first and the Selector never reads, docs/regimes.md §4.2; empty: an
    unsupervised estimate, binned by every map and a feature of the Selector);
    ``may_fail``: a ``ValueError`` leaves it empty with its reason and the sample keeps the others
    (otherwise the error stops the job)."""

    name: str
    compute: Callable[[Reference, SampleInputs], float]
    needs: tuple[str, ...] = ()
    true_intensity_of: tuple[str, ...] = ()
    may_fail: bool = False

    def applies(self, sample: SampleInputs) -> bool:
        return all(getattr(sample, field) is not None for field in self.needs)


# Every shift descriptor, declared once, in column order: the records' and descriptor files'
# columns, the regime maps' descriptors and the Selector's features all derive from this tuple,
# so a new descriptor is one entry here (docs/developing.md, "Adding a descriptor").
REGISTRY: tuple[Descriptor, ...] = (
    Descriptor(
        "true_label_shift",
        lambda reference, s: true_label_shift(reference.train_prevalence, s.labels),
        needs=("labels",),
        true_intensity_of=("label", "compound"),
    ),
    Descriptor(
        "true_mixture",
        lambda reference, s: true_mixture(s.is_target),
        needs=("is_target",),
        true_intensity_of=("covariate", "compound"),
    ),
    Descriptor(
        "est_prevalence_shift",
        lambda reference, s: est_prevalence_shift(
            reference.train_prevalence, reference.quantifier, s.posteriors
        ),
    ),
    Descriptor(
        "domain_auc",
        lambda reference, s: domain_auc(s.reference_features, s.features, seed=s.seed),
        needs=("features", "reference_features", "seed"),
        may_fail=True,
    ),
    Descriptor(
        "confidence_drop",
        lambda reference, s: (
            reference.validation_confidence - float(s.posteriors.max(axis=1).mean())
        ),
    ),
    Descriptor(
        "prediction_shift",
        lambda reference, s: l1(
            reference.validation_predicted, predicted_distribution(s.posteriors)
        ),
    ),
)
DESCRIPTORS = tuple(d.name for d in REGISTRY)
UNSUPERVISED_DESCRIPTORS = tuple(d.name for d in REGISTRY if not d.true_intensity_of)


def true_intensities(shift: str) -> tuple[str, ...]:
    """The true intensities a shift's protocol sets, in column order."""
    return tuple(d.name for d in REGISTRY if shift in d.true_intensity_of)


def describe(reference: Reference, sample: SampleInputs) -> tuple[dict[str, float], list[str]]:
    """The descriptors ``sample`` has the inputs of, keyed by name in :data:`DESCRIPTORS` order, and
    the reasons of those left empty by an error (``may_fail``)."""
    p = _posteriors(sample.posteriors, len(reference.train_prevalence), "sample_posteriors")
    for field, what in (("labels", "sample labels"), ("is_target", "domain flags")):
        given = getattr(sample, field)
        if given is not None and len(given) != len(p):
            raise ValueError(f"{len(p)} sample posteriors but {len(given)} {what}")
    sample = SampleInputs(
        p, sample.labels, sample.is_target, sample.features, sample.reference_features, sample.seed
    )
    values: dict[str, float] = {}
    reasons: list[str] = []
    for descriptor in REGISTRY:
        if not descriptor.applies(sample):
            continue
        try:
            values[descriptor.name] = descriptor.compute(reference, sample)
        except ValueError as err:
            if not descriptor.may_fail:
                raise
            reasons.append(f"{descriptor.name} left empty ({err})")
    return values, reasons


def describe_sample(
    reference: Reference, sample_posteriors, *, sample_labels=None, sample_is_target=None
) -> dict[str, float]:
    """The descriptors its inputs allow of one sample but ``domain_auc`` (:func:`domain_auc`, which
    needs features), keyed by column name in :data:`DESCRIPTORS` order (docs/regimes.md §1)."""
    values, _ = describe(
        reference,
        SampleInputs(sample_posteriors, labels=sample_labels, is_target=sample_is_target),
    )
    return values
