"""QuaPy's multiclass UCI loader run offline on pre-seeded caches, and the multiclass LS protocol."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from unishift.data import uci, uci_multiclass
from unishift.data.label_shift_multiclass import (
    load_multiclass_label_setup,
    multiclass_label_shift_samples,
    prepare_multiclass_splits,
    train_and_predict_k,
)
from unishift.protocols.multiclass import upp_indices_k
from unishift.protocols.sampling import upp_indices


@pytest.fixture
def no_network(monkeypatch):
    """QuaPy's download path fails loudly: a test passes only if the cache was used."""
    import quapy.data.datasets as qd

    def offline(*args, **kwargs):
        raise ConnectionError("no network in this test")

    monkeypatch.setattr(qd, "_fetch_ucirepo", offline)


def test_seeded_pickle_is_what_quapy_would_store(tmp_path):
    source = uci_multiclass.seed_multiclass_cache("yeast", tmp_path, None)
    assert source.startswith("offline copy")
    with open(tmp_path / "uci_multiclass" / "yeast.pkl", "rb") as handle:
        collection = pickle.load(handle)
    assert collection.X.shape == (1484, 8) and collection.X.dtype == np.float64
    # ten localisation sites, numbered by their sorted names: CYT ERL EXC ME1 ME2 ME3 MIT NUC POX VAC
    assert np.bincount(collection.y).tolist() == [463, 5, 35, 44, 51, 163, 244, 429, 20, 30]
    again = uci_multiclass.seed_multiclass_cache("yeast", tmp_path, None)
    assert again.startswith("existing QuaPy cache")


def test_build_collection_ranks_the_sorted_raw_labels():
    collection = uci_multiclass.build_collection(np.zeros((4, 1)), np.array(["b", "a", "c", "a"]))
    assert collection.y.tolist() == [1, 0, 2, 0]


@pytest.mark.parametrize(
    "name, sizes, n_classes",
    [
        ("cmc", (515, 516, 442), 3),
        ("yeast", (454, 455, 390), 4),
        ("wine-quality", (2261, 2262, 1939), 5),
    ],
)
def test_quapy_loads_the_package_copies_offline(tmp_path, no_network, name, sizes, n_classes):
    splits, source = prepare_multiclass_splits(name, tmp_path)
    assert source.startswith("offline copy")
    assert int(splits["n_classes"]) == n_classes
    assert (len(splits["y_h"]), len(splits["y_val"]), len(splits["y_test"])) == sizes
    assert splits["prevalence_full"].shape == (n_classes,)
    np.testing.assert_allclose(splits["prevalence_full"].sum(), 1.0)
    # QuaPy standardised the 70 % portion it returns as training
    X_train = np.vstack([splits["X_h"], splits["X_val"]])
    np.testing.assert_allclose(X_train.mean(axis=0), 0.0, atol=1e-9)


def test_page_blocks_from_data_root(tmp_path, no_network, data_root):
    splits, source = prepare_multiclass_splits("page_block", tmp_path, data_root)
    assert "page-blocks.data" in source
    # classes 1 (text), 2 (horizontal line) and 5 (graphic) keep >= 100 items: 4913, 329, 115
    assert int(splits["n_classes"]) == 3
    total = sum(np.bincount(splits[f"y_{p}"]) for p in ("h", "val", "test"))
    assert total.tolist() == [4913, 329, 115]


def test_a_changed_offline_copy_is_refused(tmp_path):
    (tmp_path / "uci").mkdir()
    (tmp_path / "uci" / "page-blocks.data").write_text("1 2 3\n")
    with pytest.raises(uci.ChecksumError, match="page-blocks.data has sha256"):
        uci_multiclass.seed_multiclass_cache("page_block", tmp_path / "home", tmp_path)


def test_a_data_set_without_offline_copy_names_why(tmp_path, no_network):
    with pytest.raises(uci.DataUnavailableError, match="digits.*1,797-row test part"):
        uci_multiclass.fetch_multiclass_dataset("digits", tmp_path)
    with pytest.raises(ValueError, match="unknown UCI multiclass data set 'iris'"):
        uci_multiclass.seed_multiclass_cache("iris", tmp_path, None)


def test_minimum_class_support_is_checked_before_any_job(tmp_path):
    assert uci_multiclass.check_min_class_support("cmc", 300, tmp_path) == 3
    with pytest.raises(ValueError, match=r"cmc: only 2 classes .* \[629, 333, 511\]"):
        uci_multiclass.check_min_class_support("cmc", 400, tmp_path)
    # QuaPy itself refuses too, at load time
    with pytest.raises(ValueError, match="no longer multiclass"):
        uci_multiclass.fetch_multiclass_dataset("cmc", tmp_path, min_class_support=400)


def test_a_classifier_that_misses_a_class_is_refused(tmp_path):
    splits, _ = prepare_multiclass_splits("cmc", tmp_path)
    keep = splits["y_h"] != 2
    broken = dict(splits, X_h=splits["X_h"][keep], y_h=splits["y_h"][keep])
    with pytest.raises(ValueError, match="would not output 3 posterior columns"):
        train_and_predict_k(broken, "LR", seed=0)


def test_setup_samples_are_reproducible_and_span_the_simplex(tmp_path):
    splits, _ = prepare_multiclass_splits("yeast", tmp_path)
    _, posteriors = train_and_predict_k(splits, "LR", seed=0)
    assert posteriors["P_val"].shape == (455, 4)
    samples = multiclass_label_shift_samples(splits, sample_size=250, n_samples=100, seed=0)
    again = multiclass_label_shift_samples(splits, sample_size=250, n_samples=100, seed=0)
    np.testing.assert_array_equal(samples["indices"], again["indices"])
    assert samples["indices"].shape == (100, 250)
    prevalence = samples["prevalence"]
    # uniform on the simplex: each class's mean share is 1/4, and some samples nearly lack a class
    np.testing.assert_allclose(prevalence.mean(axis=0), 0.25, atol=0.05)
    assert prevalence.min() < 0.02
    expected = np.abs(prevalence - splits["prevalence_full"]).mean(axis=1)
    np.testing.assert_allclose(samples["shift_intensity"], expected)
    setup = load_multiclass_label_setup(splits, posteriors, samples, "yeast", "LR", seed=0)
    sample, labels = setup.sample(3)
    np.testing.assert_array_equal(labels, splits["y_test"][samples["indices"][3]])
    np.testing.assert_array_equal(sample.posteriors, posteriors["P_test"][samples["indices"][3]])
    assert setup.n_classes == 4 and setup.setting.key == "yeast/LR"


def test_two_class_upp_is_the_binary_protocol():
    labels = np.random.default_rng(0).integers(0, 2, 300)
    np.testing.assert_array_equal(
        upp_indices_k(labels, 2, 50, 20, seed=3), upp_indices(labels, 50, 20, seed=3)
    )
    with pytest.raises(ValueError, match=r"class \[2\] has none"):
        upp_indices_k(labels, 3, 50, 20, seed=3)
