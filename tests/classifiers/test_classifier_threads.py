"""The classifiers' posteriors are the same whatever thread count the caller's process has.

Two set-ups where scikit-learn's own result depends on it (docs/reproduction.md, "Threads"): the
MLP on wine-q-white (BLAS sums split across threads round differently) and k-NN on ctg.2 (test
item 445 has two training items at exactly the same distance as its 10th neighbour, one of each
class, and the neighbour search keeps a different one with one thread than with several). Each test
first shows the dependence with plain scikit-learn, so that it cannot pass vacuously, then that
``train_and_predict`` gives the one-thread posteriors under a two-thread pool, for the two-class
benchmark and the multiclass one (wine-quality, five classes).
"""

import warnings

import numpy as np
import pytest
from joblib import cpu_count
from threadpoolctl import threadpool_limits

from unishift.classifiers import make_classifier
from unishift.data.label_shift import label_shift_samples, prepare_splits, train_and_predict

PARTS = ("X_h", "X_val", "X_test")


def plain_posteriors(splits, classifier, threads):
    """scikit-learn fitted and predicted under a pool of ``threads``, nothing of ours around it."""
    with threadpool_limits(limits=threads):
        model = make_classifier(classifier, 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(splits["X_h"], splits["y_h"])
        return [model.predict_proba(splits[part]) for part in PARTS]


def ours_under(threads, splits, classifier):
    with threadpool_limits(limits=threads):
        _, posteriors = train_and_predict(splits, classifier, 0)
    return [posteriors[key] for key in ("P_h", "P_val", "P_test")]


def assert_same(left, right):
    for a, b in zip(left, right, strict=True):
        np.testing.assert_array_equal(a, b)


def differs(left, right) -> bool:
    return any(not np.array_equal(a, b) for a, b in zip(left, right, strict=True))


@pytest.fixture(scope="module", params=["uci_binary", "uci_multiclass"])
def wine(request, tmp_path_factory):
    name = "wine-q-white" if request.param == "uci_binary" else "wine-quality"
    home = tmp_path_factory.mktemp("quapy_home")
    splits, _ = prepare_splits(name, home, None, 0, collection=request.param)
    return splits


def test_mlp_posteriors_do_not_depend_on_the_blas_threads(wine):
    one = plain_posteriors(wine, "MLP", 1)
    assert differs(one, plain_posteriors(wine, "MLP", 2)), (
        "scikit-learn's MLP no longer depends on the BLAS thread count here: pick another set-up"
    )
    assert_same(ours_under(2, wine, "MLP"), one)
    assert_same(ours_under(1, wine, "MLP"), one)


def test_the_mlp_is_fitted_on_one_thread_too(tmp_path, data_root):
    """On semeion the MLP's weights themselves depend on the threads of its fit (on wine they do
    not): the fit must be pinned, not only the predictions."""
    splits, _ = prepare_splits("semeion", tmp_path, data_root, 0)
    fitted = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            model = make_classifier("MLP", 0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(splits["X_h"], splits["y_h"])
        with threadpool_limits(limits=1):
            fitted.append(model.predict_proba(splits["X_test"]))
    assert not np.array_equal(*fitted), "the MLP's fit no longer depends on the threads here"
    np.testing.assert_array_equal(ours_under(2, splits, "MLP")[2], fitted[0])


def test_knn_keeps_the_same_one_of_two_equidistant_neighbours(tmp_path, data_root):
    if cpu_count() < 2:
        pytest.skip("scikit-learn's neighbour search uses one thread on a one-CPU machine")
    splits, _ = prepare_splits("ctg.2", tmp_path, data_root, 0)
    one, several = plain_posteriors(splits, "kNN", 1), plain_posteriors(splits, "kNN", 2)
    # item 445 of the test pool: its 10th neighbour is training item 296 (negative) with one
    # thread, 166 (positive, at exactly the same distance) with several
    np.testing.assert_array_equal(one[2][445], [1.0, 0.0])
    np.testing.assert_array_equal(several[2][445], [0.9, 0.1])
    assert_same(ours_under(2, splits, "kNN"), one)

    # the per-sample batches too (33 of their rows change with the thread count)
    samples = label_shift_samples(splits, 250, 100, 0)
    with threadpool_limits(limits=2):
        _, posteriors = train_and_predict(splits, "kNN", 0, samples=samples)
    with threadpool_limits(limits=1):
        model = make_classifier("kNN", 0).fit(splits["X_h"], splits["y_h"])
        expected = np.stack([model.predict_proba(splits["X_test"][i]) for i in samples["indices"]])
    np.testing.assert_array_equal(posteriors["P_samples"], expected)
