"""QuaPy's two UCI benchmarks loaded offline through the one data layer, and the label-shift protocol
(splits, classifiers, UPP samples) for two and for k classes."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from unishift.data import uci
from unishift.data.label_shift import (
    label_pool_size,
    label_shift_samples,
    load_label_setup,
    pool_size_of,
    prepare_splits,
    train_and_predict,
)
from unishift.protocols.sampling import upp_indices

MULTI = {"collection": "uci_multiclass"}

# The paper's appendix table "Classifiers accuracy on UCI Machine Learning datasets" (LR, NB, kNN are
# deterministic given the data, splits and seeds).
PAPER_ACCURACY = {
    "cmc.3": (0.663, 0.649, 0.667),
    "ctg.1": (0.918, 0.897, 0.911),
    "ctg.2": (0.918, 0.743, 0.908),
    "ctg.3": (0.972, 0.958, 0.955),
    "pageblocks.5": (0.981, 0.976, 0.982),
    "semeion": (0.962, 0.793, 0.964),
    "spambase": (0.927, 0.826, 0.896),
    "wine-q-red": (0.758, 0.742, 0.723),
    "wine-q-white": (0.739, 0.684, 0.761),
    "yeast": (0.771, 0.300, 0.749),
}
PACKAGE_DATASETS = ("cmc.3", "yeast", "wine-q-red", "wine-q-white")


@pytest.fixture
def no_network(monkeypatch):
    """QuaPy's multiclass download path fails loudly: a test passes only if the cache was used."""
    import quapy.data.datasets as qd

    def offline(*args, **kwargs):
        raise ConnectionError("no network in this test")

    monkeypatch.setattr(qd, "_fetch_ucirepo", offline)


# --------------------------------------------------------------------------------------------------
# names, offline copies, QuaPy's caches


def test_unknown_dataset_names_the_valid_ones():
    with pytest.raises(ValueError, match="valid ones are .*pageblocks.5"):
        uci.uci_spec("iris.9")
    with pytest.raises(ValueError, match="unknown uci_multiclass data set 'iris'"):
        uci.seed_quapy_cache("iris", "/nonexistent", None, "uci_multiclass")
    with pytest.raises(ValueError, match="not a UCI collection"):
        uci.uci_spec("imdb", "hf")


def test_offline_seed_builds_quapy_pickle_from_package_copy(tmp_path):
    source = uci.seed_quapy_cache("cmc.3", tmp_path, None)
    assert source.startswith("offline copy")
    with open(tmp_path / "uci_datasets" / "cmc.pkl", "rb") as handle:
        content = pickle.load(handle)
    assert content["X"].shape == (1473, 9) and set(np.unique(content["y"])) == {1, 2, 3}
    assert uci.seed_quapy_cache("cmc.3", tmp_path, None).startswith("existing QuaPy cache")


def test_multiclass_seeded_pickle_is_what_quapy_would_store(tmp_path):
    source = uci.seed_quapy_cache("yeast", tmp_path, None, "uci_multiclass")
    assert source.startswith("offline copy")
    with open(tmp_path / "uci_multiclass" / "yeast.pkl", "rb") as handle:
        collection = pickle.load(handle)
    assert collection.X.shape == (1484, 8) and collection.X.dtype == np.float64
    # ten localisation sites, numbered by their sorted names: CYT ERL EXC ME1 ME2 ME3 MIT NUC POX VAC
    assert np.bincount(collection.y).tolist() == [463, 5, 35, 44, 51, 163, 244, 429, 20, 30]
    again = uci.seed_quapy_cache("yeast", tmp_path, None, "uci_multiclass")
    assert again.startswith("existing QuaPy cache")
    # the binary yeast is another data set of the same raw file, with its own pickle
    assert uci.seed_quapy_cache("yeast", tmp_path, None).startswith("offline copy")
    assert (tmp_path / "uci_datasets" / "yeast.pkl").is_file()


def test_build_collection_ranks_the_sorted_raw_labels():
    collection = uci.build_collection(np.zeros((4, 1)), np.array(["b", "a", "c", "a"]))
    assert collection.y.tolist() == [1, 0, 2, 0]


def test_wrong_checksum_fails_clearly(tmp_path):
    (tmp_path / "uci").mkdir()
    (tmp_path / "uci" / "spambase.csv").write_text("1,2,3\n")
    with pytest.raises(uci.ChecksumError, match="spambase.csv has sha256"):
        uci.seed_quapy_cache("spambase", tmp_path / "home", tmp_path)
    (tmp_path / "uci" / "page-blocks.data").write_text("1 2 3\n")
    with pytest.raises(uci.ChecksumError, match="page-blocks.data has sha256"):
        uci.seed_quapy_cache("page_block", tmp_path / "home", tmp_path, "uci_multiclass")


def test_unobtainable_dataset_names_the_file_to_provide(tmp_path, monkeypatch, no_network):
    import quapy as qp

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(qp.datasets, "fetch_UCIBinaryDataset", offline)
    monkeypatch.setattr(qp.datasets, "fetch_UCIBinaryLabelledCollection", offline)
    with pytest.raises(uci.DataUnavailableError, match=r"<data_root>/uci/CTG.xls \(sha256 8a37"):
        uci.fetch_dataset("ctg.1", tmp_path, None)
    with pytest.raises(uci.DataUnavailableError, match="digits.*1,797-row test part"):
        uci.fetch_dataset("digits", tmp_path, **MULTI)


def test_a_multiclass_cache_must_match_the_content_checksum(tmp_path, monkeypatch, no_network):
    uci.seed_quapy_cache("cmc", tmp_path, None, "uci_multiclass")
    monkeypatch.setattr(uci, "locate_offline_files", lambda spec, data_root: None)
    dataset, source = uci.fetch_dataset("cmc", tmp_path, **MULTI)
    assert source.startswith("existing QuaPy cache") and dataset.n_classes == 3
    cache = uci.cache_path(uci.uci_spec("cmc", "uci_multiclass"), tmp_path)
    collection = pickle.loads(cache.read_bytes())
    collection.instances[0, 0] += 1  # e.g. a download with another value
    cache.write_bytes(pickle.dumps(collection))
    with pytest.raises(uci.ChecksumError, match=rf"cmc: the data QuaPy loaded.*delete {cache}"):
        uci.fetch_dataset("cmc", tmp_path, **MULTI)


def test_minimum_class_support_is_checked_before_any_job(tmp_path):
    assert uci.kept_classes("cmc", 300, tmp_path) == 3
    with pytest.raises(ValueError, match=r"cmc: only 2 classes .* \[629, 333, 511\]"):
        uci.kept_classes("cmc", 400, tmp_path)
    # QuaPy itself refuses too, at load time
    with pytest.raises(ValueError, match="no longer multiclass"):
        uci.fetch_dataset("cmc", tmp_path, collection="uci_multiclass", min_class_support=400)


# --------------------------------------------------------------------------------------------------
# splits and classifiers


@pytest.mark.parametrize("name", PACKAGE_DATASETS)
def test_package_datasets_reproduce_the_paper_accuracies(name, tmp_path):
    splits, _ = prepare_splits(name, tmp_path)
    ours = [
        round(float(train_and_predict(splits, c, seed=0)[1]["test_accuracy"]), 3)
        for c in ("LR", "NB", "kNN")
    ]
    assert tuple(ours) == PAPER_ACCURACY[name]


@pytest.mark.needs_shared_data
@pytest.mark.parametrize("name", sorted(set(PAPER_ACCURACY) - set(PACKAGE_DATASETS)))
def test_shared_datasets_reproduce_the_paper_accuracies(name, tmp_path, data_root):
    splits, source = prepare_splits(name, tmp_path, data_root)
    assert "offline copy" in source
    ours = [
        round(float(train_and_predict(splits, c, seed=0)[1]["test_accuracy"]), 3)
        for c in ("LR", "NB", "kNN")
    ]
    assert tuple(ours) == PAPER_ACCURACY[name]


@pytest.mark.parametrize(
    "name, sizes, n_classes",
    [
        ("cmc", (515, 516, 442), 3),
        ("yeast", (454, 455, 390), 4),
        ("wine-quality", (2261, 2262, 1939), 5),
    ],
)
def test_quapy_loads_the_multiclass_package_copies_offline(
    tmp_path, no_network, name, sizes, n_classes
):
    splits, source = prepare_splits(name, tmp_path, **MULTI)
    assert source.startswith("offline copy")
    assert int(splits["n_classes"]) == n_classes
    assert (len(splits["y_h"]), len(splits["y_val"]), len(splits["y_test"])) == sizes
    assert splits["prevalence_full"].shape == (n_classes,)
    np.testing.assert_allclose(splits["prevalence_full"].sum(), 1.0)
    # QuaPy standardised the 70 % portion it returns as training
    X_train = np.vstack([splits["X_h"], splits["X_val"]])
    np.testing.assert_allclose(X_train.mean(axis=0), 0.0, atol=1e-9)


def test_page_blocks_from_data_root(tmp_path, no_network, data_root):
    splits, source = prepare_splits("page_block", tmp_path, data_root, **MULTI)
    assert "page-blocks.data" in source
    # classes 1 (text), 2 (horizontal line) and 5 (graphic) keep >= 100 items: 4913, 329, 115
    assert int(splits["n_classes"]) == 3
    total = sum(np.bincount(splits[f"y_{p}"]) for p in ("h", "val", "test"))
    assert total.tolist() == [4913, 329, 115]


def test_the_pool_size_is_known_before_any_job(tmp_path):
    assert pool_size_of("cmc.3") == label_pool_size(1473) == 442
    # multiclass yeast keeps CYT 463, ME3 163, MIT 244 and NUC 429 items: 1299, of which 909 train
    assert pool_size_of("yeast", "uci_multiclass", tmp_path) == 1299 - 909
    splits, _ = prepare_splits("yeast", tmp_path, **MULTI)
    assert len(splits["y_test"]) == pool_size_of("yeast", "uci_multiclass", tmp_path) == 390
    # with 400 items per class only 629 + 511 are left (a two-class set the check refuses)
    assert pool_size_of("cmc", "uci_multiclass", tmp_path, min_class_support=400) == 1140 - 798


def test_the_two_class_split_layout_has_no_class_count(tmp_path):
    splits, _ = prepare_splits("yeast", tmp_path)
    assert "n_classes" not in splits and np.ndim(splits["prevalence_full"]) == 0
    multi, _ = prepare_splits("yeast", tmp_path, **MULTI)
    assert int(multi["n_classes"]) == 4 and multi["prevalence_full"].shape == (4,)
    # the two benchmarks' yeast are different data sets of one raw file (CYT vs the rest: 463 items)
    assert len(splits["y_test"]) == 446 and len(multi["y_test"]) == 390


def test_splits_and_samples_follow_the_protocol(tmp_path):
    splits, _ = prepare_splits("yeast", tmp_path)
    n = len(splits["y_h"]) + len(splits["y_val"]) + len(splits["y_test"])
    assert n == 1484 and abs(len(splits["y_test"]) - 0.3 * 1484) < 1
    assert abs(len(splits["y_h"]) - len(splits["y_val"])) <= 1
    assert np.allclose(np.r_[splits["X_h"], splits["X_val"]].mean(axis=0), 0, atol=1e-9)
    samples = label_shift_samples(splits, sample_size=250, n_samples=100, seed=0)
    assert samples["indices"].shape == (100, 250)
    positives = splits["y_test"][samples["indices"]].sum(axis=1)
    np.testing.assert_array_equal(samples["prevalence"], positives / 250)
    expected = np.abs(samples["prevalence"] - float(splits["prevalence_full"]))
    assert np.allclose(samples["shift_intensity"], expected)


def test_the_halves_follow_the_seed_and_the_prevalence_is_the_70_percent_portions(tmp_path):
    from sklearn.model_selection import train_test_split

    dataset, _ = uci.fetch_dataset("cmc.3", tmp_path)
    splits, _ = prepare_splits("cmc.3", tmp_path, seed=3)
    # QuaPy's stratified 50/50 split of the standardised 70 % portion, with the given seed
    X_h, X_val, y_h, y_val = train_test_split(
        dataset.training.X,
        dataset.training.y,
        train_size=0.5,
        stratify=dataset.training.y,
        random_state=3,
    )
    np.testing.assert_array_equal(splits["X_h"], X_h)
    np.testing.assert_array_equal(splits["y_val"], y_val)
    assert not np.array_equal(prepare_splits("cmc.3", tmp_path, seed=0)[0]["y_h"], splits["y_h"])
    portion = np.concatenate([splits["y_h"], splits["y_val"]])
    assert float(splits["prevalence_full"]) == portion.mean()
    assert portion.mean() != splits["y_test"].mean()  # the test pool's prevalence is another number


def test_a_classifier_that_misses_a_class_is_refused(tmp_path):
    splits, _ = prepare_splits("cmc", tmp_path, **MULTI)
    keep = splits["y_h"] != 2
    broken = dict(splits, X_h=splits["X_h"][keep], y_h=splits["y_h"][keep])
    with pytest.raises(ValueError, match="would not output 3 posterior columns"):
        train_and_predict(broken, "LR", seed=0)


def test_the_test_accuracy_is_the_argmax_rule_with_ties_to_the_lowest_class():
    class Tied:
        """Ties between classes 1 and 2 in every row, and scikit-learn's predict says 2."""

        classes_ = np.array([0, 1, 2])

        def predict_proba(self, X):
            return np.tile([0.2, 0.4, 0.4], (len(X), 1))

        def predict(self, X):
            return np.full(len(X), 2)

    from unishift.data.label_shift import predict_posteriors

    X = np.zeros((4, 1))
    splits = dict(X_h=X, X_val=X, X_test=X, y_test=np.array([1, 1, 2, 0]), n_classes=np.array(3))
    assert float(predict_posteriors(Tied(), splits)["test_accuracy"]) == 0.5


# --------------------------------------------------------------------------------------------------
# k-class samples and setups


def test_multiclass_samples_are_reproducible_and_span_the_simplex(tmp_path):
    splits, _ = prepare_splits("yeast", tmp_path, **MULTI)
    _, posteriors = train_and_predict(splits, "LR", seed=0)
    assert posteriors["P_val"].shape == (455, 4)
    samples = label_shift_samples(splits, sample_size=250, n_samples=100, seed=0)
    again = label_shift_samples(splits, sample_size=250, n_samples=100, seed=0)
    np.testing.assert_array_equal(samples["indices"], again["indices"])
    assert samples["indices"].shape == (100, 250)
    prevalence = samples["prevalence"]
    # uniform on the simplex: each class's mean share is 1/4, and some samples nearly lack a class
    np.testing.assert_allclose(prevalence.mean(axis=0), 0.25, atol=0.05)
    assert prevalence.min() < 0.02
    counts = np.stack(
        [[np.sum(splits["y_test"][row] == c) for c in range(4)] for row in samples["indices"]]
    )
    np.testing.assert_array_equal(prevalence, counts / 250)
    expected = np.abs(prevalence - splits["prevalence_full"]).mean(axis=1)
    np.testing.assert_allclose(samples["shift_intensity"], expected)
    setup = load_label_setup(
        splits, posteriors, samples, "yeast", "LR", seed=0, sample_posteriors="pool"
    )
    sample, labels = setup.sample(3)
    np.testing.assert_array_equal(labels, splits["y_test"][samples["indices"][3]])
    np.testing.assert_array_equal(sample.posteriors, posteriors["P_test"][samples["indices"][3]])
    assert setup.n_classes == 4 and setup.setting.key == "yeast/LR"
    np.testing.assert_array_equal(setup.setting.train_prevalence, np.bincount(splits["y_h"]) / 454)


def test_multiclass_setups_get_the_binary_options(tmp_path):
    """Per-sample posteriors and the persisted random stream, as the two-class setups have them."""
    splits, _ = prepare_splits("cmc", tmp_path, **MULTI)
    samples = label_shift_samples(splits, sample_size=60, n_samples=5, seed=2)
    model, posteriors = train_and_predict(splits, "NB", seed=0, samples=samples)
    assert posteriors["P_samples"].shape == (5, 60, 3)
    for i, idx in enumerate(samples["indices"]):
        np.testing.assert_array_equal(
            posteriors["P_samples"][i], model.predict_proba(splits["X_test"][idx])
        )
    setup = load_label_setup(splits, posteriors, samples, "cmc", "NB", seed=0)
    np.testing.assert_array_equal(setup.sample(4)[0].posteriors, posteriors["P_samples"][4])
    # the stream state is the legacy RNG's right after QuaPy's UPP draws
    indices, state = upp_indices(splits["y_test"], 60, 5, 2, return_state=True, n_classes=3)
    np.testing.assert_array_equal(samples["indices"], indices)
    np.testing.assert_array_equal(setup.stream_state[1], state[1])
    assert setup.stream_state[2] == state[2]


def test_two_class_upp_is_the_binary_protocol():
    labels = np.random.default_rng(0).integers(0, 2, 300)
    np.testing.assert_array_equal(
        upp_indices(labels, 50, 20, seed=3, n_classes=2), upp_indices(labels, 50, 20, seed=3)
    )
    with pytest.raises(ValueError, match=r"class \[2\] has none"):
        upp_indices(labels, 50, 20, seed=3, n_classes=3)
