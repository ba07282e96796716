"""Per-sample posteriors: each test sample predicted as one batch, as the reference's scripts do, for
two classes and for three."""

import numpy as np
import pytest

from unishift.classifiers import make_classifier
from unishift.data.label_shift import label_shift_samples, load_label_setup, train_and_predict


@pytest.fixture(scope="module", params=[2, 3], ids=["two_classes", "three_classes"])
def toy(request):
    k = request.param
    rng = np.random.default_rng(0)

    def part(n):
        y = rng.integers(0, k, n)
        return rng.normal(size=(n, 6)) + y[:, None] * 0.8, y

    X_h, y_h = part(300)
    X_val, y_val = part(200)
    X_test, y_test = part(150)
    splits = dict(X_h=X_h, y_h=y_h, X_val=X_val, y_val=y_val, X_test=X_test, y_test=y_test)
    if k == 2:
        splits["prevalence_full"] = np.array(0.5)
    else:
        splits.update(n_classes=np.array(k), prevalence_full=np.full(k, 1 / k))
    samples = label_shift_samples(splits, 40, 6, seed=0)
    return splits, samples


@pytest.mark.parametrize("classifier", ["LR", "NB", "kNN"])
def test_each_sample_is_predicted_as_one_batch(toy, classifier):
    splits, samples = toy
    model, posteriors = train_and_predict(splits, classifier, seed=0, samples=samples)
    assert posteriors["P_samples"].shape == (6, 40, len(np.unique(splits["y_h"])))
    for k, idx in enumerate(samples["indices"]):
        np.testing.assert_array_equal(
            posteriors["P_samples"][k], model.predict_proba(splits["X_test"][idx])
        )
        # the same numbers as the pool's rows up to the last bit
        np.testing.assert_allclose(
            posteriors["P_samples"][k], posteriors["P_test"][idx], atol=1e-15
        )
    reference = make_classifier(classifier, 0).fit(splits["X_h"], splits["y_h"])
    np.testing.assert_array_equal(reference.predict_proba(splits["X_val"]), posteriors["P_val"])


def test_the_setup_hands_out_the_chosen_posteriors(toy):
    splits, samples = toy
    _, posteriors = train_and_predict(splits, "LR", seed=0, samples=samples)
    posteriors = dict(posteriors)
    posteriors["P_samples"] = posteriors["P_samples"] + 1e-3  # distinguishable from the pool rows
    per_sample = load_label_setup(splits, posteriors, samples, "toy", "LR", 0)
    pool = load_label_setup(splits, posteriors, samples, "toy", "LR", 0, sample_posteriors="pool")
    sample, labels = per_sample.sample(3)
    np.testing.assert_array_equal(sample.posteriors, posteriors["P_samples"][3])
    np.testing.assert_array_equal(labels, splits["y_test"][samples["indices"][3]])
    np.testing.assert_array_equal(
        pool.sample(3)[0].posteriors, posteriors["P_test"][samples["indices"][3]]
    )
    np.testing.assert_array_equal(sample.features, pool.sample(3)[0].features)


def test_missing_or_mismatched_per_sample_posteriors_are_errors(toy):
    splits, samples = toy
    _, posteriors = train_and_predict(splits, "NB", seed=0)
    assert "P_samples" not in posteriors
    with pytest.raises(ValueError, match="P_samples.*sample_posteriors: pool"):
        load_label_setup(splits, posteriors, samples, "toy", "NB", 0)
    load_label_setup(splits, posteriors, samples, "toy", "NB", 0, sample_posteriors="pool")
    other = label_shift_samples(splits, 40, 4, seed=1)
    _, posteriors = train_and_predict(splits, "NB", seed=0, samples=other)
    with pytest.raises(ValueError, match="per-sample posteriors of shape .* for samples of shape"):
        load_label_setup(splits, posteriors, samples, "toy", "NB", 0)
    with pytest.raises(ValueError, match="sample_posteriors='batch'"):
        load_label_setup(splits, posteriors, samples, "toy", "NB", 0, sample_posteriors="batch")
