"""The Hybrid: a method built from the candidates, trained leave one group out exactly as the
Selector, with its variant (and shrinkage threshold) chosen by a nested leave-one-group-out split
inside the training groups (docs/regimes.md §4.6).

Variants, fixed in advance and listed in order of preference on ties:

- ``BestSingle``: the best single method of the training groups;
- ``BestPerClassifier``: per sample, the best single method of the training groups' samples of the
  sample's classifier (known at deployment), BestSingle for a classifier they lack;
- ``Shrink(t)``: per sample the method with the lowest predicted per-setup-normalised error
  (descriptors, the candidates' disagreement and the setup facts known at deployment as inputs),
  taken only where its predicted gain over BestSingle's predicted error exceeds the share ``t``
  (:data:`THRESHOLDS`), BestSingle elsewhere;
- ``TopKMedian``: the median of the estimates of the :data:`TOP_K` methods best on the training
  groups, scored by the absolute error of the median (only where every record's error is the
  absolute difference of its estimate and true value: two-class quantification and CAP).

Other pools (``hybrid_records(variants=...)``, :func:`check_variants`) may also hold ``Top{k}Median``
and ``Top{k}TrimmedMean`` for any k (the mean of the k estimates without the lowest and the
highest): the pool's sensitivity analysis, :mod:`unishift.report.hybrid_pool`, uses them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from unishift.classifiers import one_thread
from unishift.evaluation.stats import MIN_COVERAGE
from unishift.regimes import selector as _selector
from unishift.regimes.selector import SAMPLE_KEY, best_method, complete_errors, eligible_methods

THRESHOLDS = (0.0, 0.1, 0.25)
TOP_K = 3
VARIANTS = (
    "BestSingle",
    "BestPerClassifier",
    *(f"Shrink({t:g})" for t in THRESHOLDS),
    f"Top{TOP_K}Median",
)
SETUP = ["classifier", "dataset"]
COMBINATIONS = ("Median", "TrimmedMean")


def parse_variant(name: str) -> tuple[str, float | int | str | None]:
    """(kind, parameter) of a variant's name: ("BestSingle", None), ("BestPerClassifier", None),
    ("Shrink", t) or ("Median" | "TrimmedMean", k); a ValueError naming the accepted forms for
    any other name."""
    if name in ("BestSingle", "BestPerClassifier"):
        return name, None
    if name.startswith("Shrink(") and name.endswith(")"):
        try:
            threshold = float(name[len("Shrink(") : -1])
        except ValueError:
            threshold = float("nan")
        if np.isfinite(threshold) and threshold >= 0:
            return "Shrink", threshold
    for how in COMBINATIONS:
        digits = name[len("Top") : -len(how)]
        if name.startswith("Top") and name.endswith(how) and digits.isdigit() and int(digits) >= 1:
            if how == "TrimmedMean" and int(digits) < 3:
                break
            return how, int(digits)
    raise ValueError(
        f"unknown Hybrid variant {name!r}: use BestSingle, BestPerClassifier, Shrink(t) with t >= 0, "
        "Top{k}Median with k >= 1 or Top{k}TrimmedMean with k >= 3"
    )


def check_variants(variants) -> tuple[str, ...]:
    """``variants`` as a tuple, each name checked (:func:`parse_variant`), none twice, at least one."""
    variants = tuple(variants)
    for name in variants:
        parse_variant(name)
    if not variants or len(set(variants)) != len(variants):
        raise ValueError(f"a Hybrid pool needs distinct variants, at least one; got {variants}")
    return variants


def trimmed_mean(values: np.ndarray) -> np.ndarray:
    """Per row, the mean of the finite values without the lowest and the highest one; the mean of
    the finite values where fewer than three are; NaN where none is."""
    values = np.asarray(values, dtype=float)
    ordered = np.sort(values, axis=1)  # NaN last
    count = np.isfinite(values).sum(axis=1)
    position = np.arange(values.shape[1])[None, :]
    trim = (count >= 3)[:, None]
    keep = (position < count[:, None]) & ~(
        trim & ((position == 0) | (position == count[:, None] - 1))
    )
    kept = np.where(keep, ordered, 0.0).sum(axis=1)
    n_kept = keep.sum(axis=1)
    with np.errstate(all="ignore"):
        return np.where(n_kept > 0, kept / n_kept, np.nan)


def hybrid_model(seed: int):
    """The Hybrid's regressor: smaller gradient-boosted trees than the Selector's (50 rounds at twice
    the rate), since the nested split fits one per method and inner fold."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(
        max_iter=50,
        learning_rate=0.1,
        min_samples_leaf=20,
        l2_regularization=1.0,
        early_stopping=False,
        random_state=seed,
    )


def combinable(records: pd.DataFrame) -> bool:
    """Whether every finite error of ``records`` is |estimate - true_value| (to 1e-9), so that a
    combined estimate can be scored as the methods are."""
    finite = records[np.isfinite(records["error"].to_numpy(dtype=float))]
    if finite.empty or "estimate" not in finite or "true_value" not in finite:
        return False
    gap = np.abs(
        finite["estimate"].to_numpy(dtype=float) - finite["true_value"].to_numpy(dtype=float)
    )
    return bool(np.allclose(gap, finite["error"].to_numpy(dtype=float), rtol=0, atol=1e-9))


def hybrid_features(info: pd.DataFrame, estimates: np.ndarray, facts: list[str]) -> np.ndarray:
    """Per sample: the descriptors and ``facts`` columns of ``info``, the classifier's code, the
    spread of the candidates' estimates (standard deviation) and each candidate's deviation from
    their median. Every input is known at deployment: no label of the sample enters."""
    with np.errstate(all="ignore"):
        finite_rows = np.isfinite(estimates).any(axis=1)
        median = np.full(len(estimates), np.nan)
        spread = np.full(len(estimates), np.nan)
        median[finite_rows] = np.nanmedian(estimates[finite_rows], axis=1)
        spread[finite_rows] = np.nanstd(estimates[finite_rows], axis=1)
    classifiers = sorted(pd.unique(info["classifier"].astype(str)))
    code = info["classifier"].astype(str).map({c: i for i, c in enumerate(classifiers)})
    columns = [
        info[facts].to_numpy(dtype=float),
        code.to_numpy(dtype=float)[:, None],
        spread[:, None],
        estimates - median[:, None],
    ]
    return np.hstack(columns)


def _normalised(E: np.ndarray, setups: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``E`` divided, per setup, by the mean finite error of that setup's ``rows`` over every
    method: errors of setups with different scales made comparable (a common factor per sample, so
    the per-sample ranking of the methods is unchanged)."""
    out = np.full(E.shape, np.nan)
    for setup in pd.unique(setups[rows]):
        part = rows & (setups == setup)
        scale = np.nanmean(E[part])
        out[part] = E[part] / scale if np.isfinite(scale) and scale > 0 else E[part]
    return out


class _Fold:
    """What one training set teaches: BestSingle, the top-k ranking, and per-method regressors."""

    def __init__(
        self, errors, E, X, setups, classifiers, train, methods, seed, model, min_coverage, label
    ):
        self.methods = methods
        self.classifiers = classifiers
        self.best = best_method(errors[train], methods, min_coverage, label)
        # the classifier is known at deployment: its own best method on the training groups' samples
        # of it; BestSingle for a classifier they lack or where none of its samples has an error of
        # every eligible method (docs/regimes.md §4.6)
        self.best_of = {}
        for c in pd.unique(classifiers[train]):
            try:
                self.best_of[c] = best_method(
                    errors[train & (classifiers == c)], methods, min_coverage, f"{label}, {c}"
                )
            except ValueError:
                continue
        candidates = eligible_methods(errors[train], methods, min_coverage, label)
        complete = errors[train][candidates]
        complete = complete[np.isfinite(complete.to_numpy(dtype=float)).all(axis=1)]
        means = complete.mean(axis=0).round(12)
        self.ranked = sorted(candidates, key=lambda m: (means[m], candidates.index(m)))
        # inputs empty on every training row (e.g. estimates a layout does not store) carry nothing
        self.keep = np.isfinite(X[train]).any(axis=0)
        self._training = (candidates, E, X, setups, train, seed, model)
        self._models = None

    @property
    def models(self) -> dict:
        """Per candidate, its regressor of the normalised error, fitted when a Shrink variant first
        predicts: BestSingle and TopKMedian need none, and with two groups (every outer fold's
        variant is then BestSingle) no fold predicts (the same fits, in the same order, as before)."""
        if self._models is None:
            candidates, E, X, setups, train, seed, model = self._training
            target = _normalised(E, setups, train)
            X = X[:, self.keep]
            self._models = {}
            for m in candidates:
                j = self.methods.index(m)
                usable = train & np.isfinite(target[:, j])
                self._models[m] = model(seed).fit(X[usable], target[usable, j])
        return self._models

    def apply(self, variant, rows, E, X, estimates, truth):
        """(chosen label per row, error per row) of ``variant`` on ``rows``."""
        n = int(rows.sum())
        best_j = self.methods.index(self.best)
        if variant == "BestSingle":
            return [self.best] * n, E[rows, best_j]
        if variant == "BestPerClassifier":
            chosen = [self.best_of.get(c, self.best) for c in self.classifiers[rows]]
            cols = [self.methods.index(m) for m in chosen]
            return chosen, E[np.flatnonzero(rows), cols]
        kind, parameter = parse_variant(variant)
        if kind in COMBINATIONS:
            top = self.ranked[:parameter]
            values = estimates[np.ix_(rows, [self.methods.index(m) for m in top])]
            with np.errstate(all="ignore"):
                combined = (
                    np.nanmedian(values, axis=1) if kind == "Median" else trimmed_mean(values)
                )
            label = ("median" if kind == "Median" else "trimmed mean") + " of " + ", ".join(top)
            return [label] * n, np.abs(combined - truth[rows])
        threshold = parameter
        predicted = np.full((n, len(self.methods)), np.inf)
        for m, regressor in self.models.items():
            predicted[:, self.methods.index(m)] = regressor.predict(X[rows][:, self.keep])
        pick = np.argmin(predicted, axis=1)
        reference = predicted[:, best_j]
        with np.errstate(all="ignore"):
            gain = (reference - predicted[np.arange(n), pick]) / np.abs(reference)
        pick = np.where(gain > threshold, pick, best_j)
        return [self.methods[j] for j in pick], E[np.flatnonzero(rows), pick]


def hybrid_records(
    records: pd.DataFrame,
    features: list[str],
    methods: list[str] | None = None,
    seed: int = 0,
    model: Callable[[int], object] = hybrid_model,
    min_coverage: float = MIN_COVERAGE,
    facts: list[str] = (),
    variants: tuple[str, ...] | None = None,
) -> pd.DataFrame:
    """The Hybrid's per-sample rows (:data:`SAMPLE_KEY`, ``group``, ``method`` "Hybrid",
    ``chosen_method``, ``variant``, ``error``), leave-one-group-out with the variant chosen per
    held-out group by leave-one-group-out inside the other groups (needs three groups; with two,
    the variant is the pool's first). ``facts``: record columns known at deployment (e.g. the
    validation accuracy), the same on every method's row of a sample. ``variants``: the pool, in
    order of preference on ties (default :data:`VARIANTS`); the combinations are left out where
    the records are not :func:`combinable`, and a pool left empty is a ValueError."""
    features = _selector.check_features(features)
    pool = check_variants(VARIANTS if variants is None else variants)
    facts = list(facts)
    methods, info, errors = complete_errors(records, methods, ["group", *features, *facts])
    keys = errors.index.to_frame(index=False)
    info = info.reset_index(drop=True).assign(classifier=keys["classifier"].to_numpy())
    E = errors.to_numpy(dtype=float)
    wide = lambda column: (  # noqa: E731
        records.pivot(index=SAMPLE_KEY, columns="method", values=column)
        .reindex(index=errors.index, columns=methods)
        .to_numpy(dtype=float)
    )
    estimates = wide("estimate")
    truth = None
    if "true_value" in records:
        values = wide("true_value")
        known = np.isfinite(values).any(axis=1)  # none where the layout keeps no true value
        truth = np.full(len(values), np.nan)
        truth[known] = np.nanmax(values[known], axis=1)
    can_combine = combinable(records)
    variants = [v for v in pool if parse_variant(v)[0] not in COMBINATIONS or can_combine]
    if not variants:
        raise ValueError(
            f"the Hybrid's pool {pool} holds only combinations, which these records cannot score "
            "(an error that is not |estimate - true value|): add a selection variant"
        )
    X = np.hstack([info[features].to_numpy(dtype=float), hybrid_features(info, estimates, facts)])
    setups = (keys["classifier"].astype(str) + "\x00" + keys["dataset"].astype(str)).to_numpy()
    classifiers = keys["classifier"].astype(str).to_numpy()
    groups = info["group"].to_numpy()
    unique = sorted(pd.unique(groups), key=str)
    if len(unique) < 2:
        raise ValueError(f"leave-one-group-out needs at least two groups, got {unique}")
    chosen = np.empty(len(groups), dtype=object)
    variant_of = np.empty(len(groups), dtype=object)
    error = np.full(len(groups), np.nan)

    def fold(train, label):
        return _Fold(
            errors, E, X, setups, classifiers, train, methods, seed, model, min_coverage, label
        )

    # the inner fold of (g, h) trains on the samples outside both groups, as that of (h, g): one
    # fold (its regressors are fitted once) for both; its label names the pair as first met
    inner_folds = {}
    with one_thread():
        for g in unique:
            test = groups == g
            train = _selector.training_mask(groups, g)
            inner_groups = [h for h in unique if h != g]
            variant = variants[0]
            if len(inner_groups) >= 2:
                scores = {v: [] for v in variants}
                for h in inner_groups:
                    pair = frozenset((g, h))
                    if pair not in inner_folds:
                        inner_train = train & (groups != h)
                        inner_folds[pair] = fold(inner_train, f"outside groups {g!r} and {h!r}")
                    inner = inner_folds[pair]
                    for v in variants:
                        scores[v].append(inner.apply(v, groups == h, E, X, estimates, truth)[1])
                means = {v: np.nanmean(np.concatenate(s)) for v, s in scores.items()}
                variant = min(variants, key=lambda v: (round(means[v], 12), variants.index(v)))
            outer = fold(train, f"outside group {g!r}")
            labels, errs = outer.apply(variant, test, E, X, estimates, truth)
            chosen[test], error[test], variant_of[test] = labels, errs, variant
    return keys.assign(
        group=groups, method="Hybrid", chosen_method=chosen, variant=variant_of, error=error
    )
