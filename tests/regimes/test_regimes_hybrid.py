"""The selection's references and uncertainty (docs/regimes.md §4.4, §4.5) and the Hybrid
(docs/regimes.md §4.6): the cluster bootstrap against a literal two-stage loop and scipy, the
degenerate rule, the per-setup oracle against a loop, the trivial answers against their definitions,
and the Hybrid's leave-one-group-out guards (rows, features, hyper-parameters), each shown to fail
on a leak."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from tests.regimes.test_descriptor_records import _setup
from tests.regimes.test_regimes_selector import _frame, _shared_rule
from unishift.evaluation.metrics import ece_top_label
from unishift.evaluation.trivial import trivial_errors
from unishift.regimes import hybrid as H
from unishift.regimes import selector as S
from unishift.regimes.references import (
    best_per_setup,
    bootstrap_interval,
    cluster_draws,
    degenerate,
    relative_gain,
)


def _cheap(seed):
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(max_iter=20, min_samples_leaf=10, random_state=seed)


# --- cluster bootstrap -----------------------------------------------------------------------------


def test_cluster_draws_are_a_literal_two_stage_loop():
    # unequal cluster sizes and labels out of order: a draw from the pooled rows, one draw reused
    # for a cluster picked twice, or clusters numbered in order of appearance would all differ
    clusters = np.array(["b", "a", "b", "c", "a", "b", "c", "c", "c", "d"])
    draws = cluster_draws(clusters, n_resamples=50, seed=7)
    rng = np.random.default_rng(7)
    names = sorted(set(clusters))
    for drawn in draws:
        expected = []
        picked = rng.integers(0, len(names), size=len(names))
        for c in picked:
            rows = [i for i, label in enumerate(clusters) if label == names[c]]
            for r in rng.integers(0, len(rows), len(rows)):
                expected.append(rows[r])
        assert list(drawn) == expected
    assert not all(np.array_equal(a, b) for a, b in zip(draws, cluster_draws(clusters, 50, 8)))


def test_singleton_clusters_give_scipy_s_percentile_bootstrap():
    # one sample per cluster: the two-stage bootstrap is the ordinary one (an interval at
    # alpha instead of alpha / 2, or the basic instead of the percentile interval, would differ)
    values = np.random.default_rng(1).exponential(size=60)
    ours = bootstrap_interval(values, np.arange(60), n_resamples=4000, seed=0)
    theirs = scipy_stats.bootstrap(
        (values,), np.mean, n_resamples=4000, method="percentile", random_state=0
    ).confidence_interval
    assert ours == pytest.approx((theirs.low, theirs.high), abs=0.03)


def test_the_interval_follows_the_clusters_not_the_samples():
    # ten setups whose means differ much more than their samples: the interval's width is that of
    # the mean of ten cluster means (resampling the samples alone would be several times narrower)
    rng = np.random.default_rng(2)
    centres = rng.normal(0, 1, 10)
    values = np.repeat(centres, 50) + 0.01 * rng.normal(size=500)
    clusters = np.repeat(np.arange(10), 50)
    low, high = bootstrap_interval(values, clusters, n_resamples=3000, seed=0)
    se = centres.std(ddof=0) / np.sqrt(10)
    assert high - low == pytest.approx(2 * 1.96 * se, rel=0.2)
    naive_low, naive_high = bootstrap_interval(values, np.arange(500), n_resamples=500, seed=0)
    assert naive_high - naive_low < (high - low) / 3
    assert bootstrap_interval(values, clusters, seed=3) == bootstrap_interval(
        values, clusters, seed=3
    )


def test_relative_gain_and_the_degenerate_rule():
    pairs = np.array([[1.0, 2.0], [3.0, 2.0], [np.nan, 5.0], [2.0, 4.0]])
    assert relative_gain(pairs) == pytest.approx(1 - 6 / 8)  # the NaN row left out of both
    means = {"A": 0.3, "B": 0.2, "C": 0.1, "D": 0.25}
    assert degenerate(0.22, means) == (False, 2)  # beats exactly half: not degenerate
    assert degenerate(0.15, means) == (True, 3)
    assert degenerate(0.25, means) == (False, 1)  # a tie does not beat
    # nor a tie computed in two summation orders (Naive is the trivial CAP answer: the table's
    # mean of its errors and the trivial file's mean differed in the last bit on the default run)
    errors = np.random.default_rng(0).random(1000) / 10
    forward, backward = float(np.sum(errors) / 1000), float(sum(errors[::-1]) / 1000)
    assert forward != backward  # the two orders do differ in the last bits here
    low, high = min(forward, backward), max(forward, backward)
    tied = {"Naive": high, "A": 0.0, "B": 0.0}
    assert degenerate(low, tied) == (False, 0)
    assert degenerate(high - 1e-9, tied) == (False, 1)  # a real difference still counts
    assert degenerate(np.nan, means) == (False, 0)


def test_the_setup_oracle_is_the_best_mean_per_setup():
    rng = np.random.default_rng(4)
    index = pd.MultiIndex.from_tuples(
        [(c, d, s) for c in ("LR", "NB") for d in ("x", "y") for s in range(5)],
        names=["classifier", "dataset", "sample_id"],
    )
    errors = pd.DataFrame(rng.random((20, 3)), index=index, columns=["A", "B", "C"])
    chosen = best_per_setup(errors, ["A", "B", "C"], lambda part, m: part[m].mean().idxmin())
    for (c, d), part in errors.groupby(level=["classifier", "dataset"]):
        rows = [i for i, key in enumerate(index) if key[:2] == (c, d)]
        assert {chosen[i] for i in rows} == {part.mean().idxmin()}
    assert len(set(chosen)) > 1  # the setups' best differ: a single global pick would fail


# --- trivial answers -------------------------------------------------------------------------------


def test_trivial_answers_are_scored_as_their_definitions():
    setup, _ = _setup(k=2)
    frame = trivial_errors(setup)
    validation = setup.setting.validation
    accuracy = np.mean(validation.posteriors.argmax(axis=1) == validation.labels)
    for row in frame.itertuples():
        sample, labels = setup.sample(row.sample_id)
        true_accuracy = np.mean(sample.posteriors.argmax(axis=1) == labels)
        assert row.trivial_cap == pytest.approx(abs(true_accuracy - accuracy))
        assert row.validation_accuracy == pytest.approx(accuracy)
        # the training (not the validation) prevalence's positive share against the sample's
        assert row.trivial_quantification == pytest.approx(
            abs(labels.mean() - setup.setting.train_prevalence[1])
        )
        assert row.trivial_calibration == pytest.approx(
            ece_top_label(sample.posteriors, labels, precision="float32")
        )
    assert list(frame["sample_id"]) == list(range(len(setup.sample_indices)))


# --- the Hybrid ------------------------------------------------------------------------------------


def test_the_hybrid_beats_best_single_on_a_shared_rule_and_is_best_single_with_two_groups():
    records = _shared_rule(n_per_group=60)
    out = H.hybrid_records(records, ["est_prevalence_shift", "domain_auc"], model=_cheap)
    best = S.best_single_records(records)
    assert out["error"].mean() < best["error"].mean() - 0.1
    assert set(out["variant"]) <= set(H.VARIANTS) - {"BestSingle"}
    two = records[records["group"].isin(["g0", "g1"])]
    out = H.hybrid_records(two, ["est_prevalence_shift", "domain_auc"], model=_cheap)
    assert set(out["variant"]) == {"BestSingle"}
    np.testing.assert_array_equal(out["error"], S.best_single_records(two)["error"])


def test_a_fold_fits_its_regressors_only_when_a_shrink_variant_predicts(monkeypatch):
    """BestSingle and the median predict nothing: with two groups (every .test run's case) or
    without a Shrink variant no regressor is fitted; with G groups the inner folds' per method, one
    per pair of groups (G x (G - 1) / 2: the fold of (g, h) trains on the samples of (h, g)), plus
    one outer fold's per group where Shrink is chosen. An eager fold fails every count, a fold that
    never fits fails the last two, a fold per ordered pair (the same fits twice) the last two."""
    records = _shared_rule(n_per_group=60)
    n_methods, n_groups = records["method"].nunique(), records["group"].nunique()
    fits = []

    def counted(seed):
        model = _cheap(seed)
        fit = model.fit
        model.fit = lambda X, y: (fits.append(len(X)), fit(X, y))[1]
        return model

    def n_fits(frame):
        fits.clear()
        out = H.hybrid_records(frame, ["est_prevalence_shift", "domain_auc"], model=counted)
        return len(fits), out

    two = records[records["group"].isin(["g0", "g1"])]
    count, out = n_fits(two)
    assert count == 0 and set(out["variant"]) == {"BestSingle"}
    count, out = n_fits(records)
    shrunk = out.groupby("group")["variant"].first().str.startswith("Shrink").sum()
    assert shrunk > 0  # the shared rule rewards Shrink
    assert count == (n_groups * (n_groups - 1) // 2 + shrunk) * n_methods
    monkeypatch.setattr(H, "VARIANTS", ("BestSingle", "Top3Median"))
    assert n_fits(records)[0] == 0
    monkeypatch.setattr(H, "VARIANTS", ("Shrink(0)",))
    count, out = n_fits(records)
    assert set(out["variant"]) == {"Shrink(0)"}
    assert count == (n_groups * (n_groups - 1) // 2 + n_groups) * n_methods


def _combinable_records(seed=5):
    """Four groups of 60 samples; four unbiased noisy estimators and a biased one (E), so that the
    median of the top three beats each."""
    rng = np.random.default_rng(seed)
    n, groups = 240, np.repeat(["g0", "g1", "g2", "g3"], 60)
    truth = rng.uniform(0.2, 0.8, n)
    noise = {"A": 0.05, "B": 0.06, "C": 0.07, "D": 0.2, "E": 0.01}
    estimates = {m: truth + s * rng.normal(size=n) for m, s in noise.items()}
    estimates["E"] = truth + 0.3
    errors = {m: np.abs(e - truth) for m, e in estimates.items()}
    records = _frame(rng.random(n), rng.random(n), groups, errors)
    records["estimate"] = [
        estimates[m][s] for s, m in zip(records["sample_id"], records["method"], strict=True)
    ]
    records["true_value"] = truth[records["sample_id"]]
    return records, estimates, truth


def test_the_combination_is_the_median_of_the_top_methods_of_the_other_groups(monkeypatch):
    records, estimates, truth = _combinable_records()
    assert H.combinable(records)
    # the disagreement inputs let Shrink pick well here too: the combination alone against BestSingle
    monkeypatch.setattr(H, "VARIANTS", ("BestSingle", "Top3Median"))
    out = H.hybrid_records(records, ["est_prevalence_shift", "domain_auc"], model=_cheap)
    assert set(out["variant"]) == {"Top3Median"}
    expected = np.abs(np.median(np.column_stack([estimates[m] for m in "ABC"]), axis=1) - truth)
    np.testing.assert_allclose(out.sort_values("sample_id")["error"], expected)
    assert set(out["chosen_method"]) == {"median of A, B, C"}
    records.loc[0, "error"] += 0.5  # an error that is not |estimate - truth|: no combination
    assert not H.combinable(records)


def test_each_hybrid_model_never_sees_the_group_it_is_applied_to(monkeypatch):
    records = _shared_rule(n_per_group=30)
    codes = {"g0": 10.0, "g1": 11.0, "g2": 12.0, "g3": 13.0}
    records["domain_auc"] = records["group"].map(codes)
    log = []

    class Spy:
        def fit(self, X, y):
            self.trained_on = set(X[:, 1])
            return self

        def predict(self, X):
            log.append((self.trained_on, set(X[:, 1])))
            return np.zeros(len(X))

    def run():
        log.clear()
        H.hybrid_records(records, ["est_prevalence_shift", "domain_auc"], model=lambda s: Spy())
        # outer folds train on three groups, inner folds on two: never the group predicted
        assert log and all(not (trained & applied) for trained, applied in log)
        assert {len(trained) for trained, _ in log} == {2, 3}

    # one Shrink variant only: the outer folds predict too (with the Spy's ties every variant
    # would fall back to BestSingle, which predicts nothing)
    monkeypatch.setattr(H, "VARIANTS", ("Shrink(0)",))
    run()
    monkeypatch.setattr(S, "training_mask", lambda groups, held_out: np.ones(len(groups), bool))
    with pytest.raises(AssertionError):
        run()


def _choices_for_g0(records):
    out = H.hybrid_records(records, ["est_prevalence_shift", "domain_auc"], model=_cheap)
    g0 = out[out["group"] == "g0"].sort_values("sample_id")
    return list(g0["variant"]), list(g0["chosen_method"])


def test_the_held_out_group_s_errors_choose_nothing_for_it(monkeypatch):
    # g0's own errors (its labels) must leave g0's variant, threshold and choices unchanged; made
    # to favour C, the worst method elsewhere, they would move BestSingle and the variant to C if
    # g0 were trained on or tuned on
    records = _shared_rule(n_per_group=40)
    perturbed = records.copy()
    in_g0 = perturbed["group"] == "g0"
    perturbed.loc[in_g0, "error"] = np.where(perturbed.loc[in_g0, "method"] == "C", 0.0, 5.0)

    def same():
        assert _choices_for_g0(records) == _choices_for_g0(perturbed)

    same()
    monkeypatch.setattr(S, "training_mask", lambda groups, held_out: np.ones(len(groups), bool))
    with pytest.raises(AssertionError):
        same()


def _per_classifier_rule(n_per_group=40, seed=3):
    """LR samples: A best; NB samples: B best; C worst on both. Over both classifiers B is
    BestSingle (A 0.35, B 0.30 on average), so a per-classifier choice beats it on LR."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(["g0", "g1", "g2", "g3"], n_per_group)
    n = len(groups)
    lr = np.arange(n) % 2 == 0
    a = np.where(lr, 0.2, 0.5) + 0.01 * rng.random(n)
    b = np.where(lr, 0.4, 0.2) + 0.01 * rng.random(n)
    c = np.full(n, 0.6) + 0.01 * rng.random(n)
    records = _frame(rng.random(n), rng.random(n), groups, {"A": a, "B": b, "C": c})
    records["classifier"] = np.where(lr[records["sample_id"]], "LR", "NB")
    return records


def test_best_per_classifier_takes_each_classifier_s_best_of_the_other_groups(monkeypatch):
    records = _per_classifier_rule()
    monkeypatch.setattr(H, "VARIANTS", ("BestSingle", "BestPerClassifier"))
    out = H.hybrid_records(records, ["est_prevalence_shift", "domain_auc"], model=_cheap)
    assert set(out["variant"]) == {"BestPerClassifier"}
    # a literal loop: per held-out group and classifier, the method of lowest mean error over the
    # other groups' samples of that classifier
    expected = {}
    for g, c in out.groupby(["group", "classifier"]).groups:
        train = records[(records["group"] != g) & (records["classifier"] == c)]
        expected[(g, c)] = train.groupby("method")["error"].mean().idxmin()
    assert {k: v for k, v in expected.items() if k[1] == "LR"} == {
        (g, "LR"): "A" for g in ("g0", "g1", "g2", "g3")
    }
    for row in out.itertuples():
        assert row.chosen_method == expected[(row.group, row.classifier)]
        own = records[
            (records["sample_id"] == row.sample_id) & (records["method"] == row.chosen_method)
        ]
        assert row.error == own["error"].item()
    best = S.best_single_records(records)
    assert out["error"].mean() < best["error"].mean() - 0.05


def test_best_per_classifier_falls_back_to_best_single_and_never_reads_the_held_out_group(
    monkeypatch,
):
    monkeypatch.setattr(H, "VARIANTS", ("BestPerClassifier",))
    records = _per_classifier_rule()
    # a classifier only g0 has: no training sample of it, so BestSingle (B) for those samples
    only_g0 = (records["group"] == "g0") & (records["classifier"] == "NB")
    records.loc[only_g0, "classifier"] = "kNN"
    out = H.hybrid_records(records, ["est_prevalence_shift", "domain_auc"], model=_cheap)
    assert set(out.loc[out["classifier"] == "kNN", "chosen_method"]) == {"B"}
    # g0's own errors made to favour C on LR would move g0's LR choice to C if g0 were read
    perturbed = records.copy()
    in_g0 = (perturbed["group"] == "g0") & (perturbed["classifier"] == "LR")
    perturbed.loc[in_g0, "error"] = np.where(perturbed.loc[in_g0, "method"] == "C", 0.0, 5.0)

    def g0_choices(frame):
        out = H.hybrid_records(frame, ["est_prevalence_shift", "domain_auc"], model=_cheap)
        return list(out[out["group"] == "g0"].sort_values("sample_id")["chosen_method"])

    assert g0_choices(records) == g0_choices(perturbed)
    monkeypatch.setattr(S, "training_mask", lambda groups, held_out: np.ones(len(groups), bool))
    with pytest.raises(AssertionError):
        assert g0_choices(records) == g0_choices(perturbed)


# --- the pool's forms (docs/regimes.md §4.6, "Sensitivity to the pool") ------------------------------


def test_variant_names_are_parsed_and_bad_ones_named():
    assert H.parse_variant("BestSingle") == ("BestSingle", None)
    assert H.parse_variant("Shrink(0.25)") == ("Shrink", 0.25)
    assert H.parse_variant("Top5Median") == ("Median", 5)
    assert H.parse_variant("Top12TrimmedMean") == ("TrimmedMean", 12)
    for bad in ("Top2TrimmedMean", "Shrink(-1)", "Shrink(x)", "TopMedian", "Top0Median", "Best"):
        with pytest.raises(ValueError, match="unknown Hybrid variant"):
            H.parse_variant(bad)
    assert H.check_variants(["Shrink(0)", "BestSingle"]) == ("Shrink(0)", "BestSingle")
    for bad in ((), ("BestSingle", "BestSingle")):
        with pytest.raises(ValueError, match="distinct variants"):
            H.check_variants(bad)
    assert all(H.parse_variant(v) for v in H.VARIANTS)


def test_the_trimmed_mean_drops_the_lowest_and_the_highest_finite_value():
    rng = np.random.default_rng(3)
    values = rng.normal(size=(200, 5))
    values[rng.random(values.shape) < 0.3] = np.nan
    values[0] = [1.0, 1.0, 5.0, np.nan, 1.0]  # ties: one copy of the extreme dropped, not all
    expected = []
    for row in values:
        finite = sorted(v for v in row if np.isfinite(v))
        kept = finite[1:-1] if len(finite) >= 3 else finite
        expected.append(sum(kept) / len(kept) if kept else np.nan)
    np.testing.assert_allclose(H.trimmed_mean(values), expected, rtol=0, atol=1e-12)
    assert H.trimmed_mean(values[:1])[0] == 1.0


def test_a_pool_of_one_combination_is_it_on_every_group_and_scored_as_a_loop():
    records, estimates, truth = _combinable_records()
    out = H.hybrid_records(
        records, ["est_prevalence_shift", "domain_auc"], model=_cheap, variants=("Top5TrimmedMean",)
    )
    assert set(out["variant"]) == {"Top5TrimmedMean"}
    expected = []
    for s in range(len(truth)):
        middle = sorted(estimates[m][s] for m in "ABCDE")[1:-1]
        expected.append(abs(sum(middle) / 3 - truth[s]))
    np.testing.assert_allclose(out.sort_values("sample_id")["error"], expected, atol=1e-12)
    # the top five in order of the training groups' mean error: E (biased) is last
    assert set(out["chosen_method"]) == {"trimmed mean of A, B, C, D, E"}
    # two groups: no inner split, the pool's first variant
    two = records[records["group"].isin(["g0", "g1"])]
    out = H.hybrid_records(
        two, ["est_prevalence_shift", "domain_auc"], model=_cheap, variants=("Top3Median",)
    )
    assert set(out["variant"]) == {"Top3Median"}
    records.loc[0, "error"] += 0.5  # not combinable: a pool of combinations alone cannot run
    with pytest.raises(ValueError, match="holds only combinations"):
        H.hybrid_records(
            records, ["est_prevalence_shift", "domain_auc"], model=_cheap, variants=("Top3Median",)
        )
