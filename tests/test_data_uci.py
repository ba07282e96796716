import pickle

import numpy as np
import pytest

from unishift.data import uci
from unishift.data.label_shift import label_shift_samples, prepare_splits, train_and_predict

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


def test_unknown_dataset_names_the_valid_ones():
    with pytest.raises(ValueError, match="valid ones are .*pageblocks.5"):
        uci.check_dataset_name("iris.9")


def test_offline_seed_builds_quapy_pickle_from_package_copy(tmp_path):
    source = uci.seed_quapy_cache("cmc.3", tmp_path, None)
    assert source.startswith("offline copy")
    with open(tmp_path / "uci_datasets" / "cmc.pkl", "rb") as handle:
        content = pickle.load(handle)
    assert content["X"].shape == (1473, 9) and set(np.unique(content["y"])) == {1, 2, 3}
    assert uci.seed_quapy_cache("cmc.3", tmp_path, None).startswith("existing QuaPy cache")


def test_wrong_checksum_fails_clearly(tmp_path, monkeypatch):
    (tmp_path / "uci").mkdir()
    (tmp_path / "uci" / "spambase.csv").write_text("1,2,3\n")
    with pytest.raises(uci.ChecksumError, match="spambase.csv has sha256"):
        uci.seed_quapy_cache("spambase", tmp_path / "home", tmp_path)


def test_unobtainable_dataset_names_the_file_to_provide(tmp_path, monkeypatch):
    import quapy as qp

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(qp.datasets, "fetch_UCIBinaryDataset", offline)
    monkeypatch.setattr(qp.datasets, "fetch_UCIBinaryLabelledCollection", offline)
    with pytest.raises(uci.DataUnavailableError, match=r"<data_root>/uci/CTG.xls \(sha256 8a37"):
        uci.fetch_binary_dataset("ctg.1", tmp_path, None)


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


def test_splits_and_samples_follow_the_protocol(tmp_path):
    splits, _ = prepare_splits("yeast", tmp_path)
    n = len(splits["y_h"]) + len(splits["y_val"]) + len(splits["y_test"])
    assert n == 1484 and abs(len(splits["y_test"]) - 0.3 * 1484) < 1
    assert abs(len(splits["y_h"]) - len(splits["y_val"])) <= 1
    assert np.allclose(np.r_[splits["X_h"], splits["X_val"]].mean(axis=0), 0, atol=1e-9)
    samples = label_shift_samples(splits, sample_size=250, n_samples=100, seed=0)
    assert samples["indices"].shape == (100, 250)
    expected = np.abs(samples["prevalence"] - float(splits["prevalence_full"]))
    assert np.allclose(samples["shift_intensity"], expected)


def test_the_halves_follow_the_seed_and_the_prevalence_is_the_70_percent_portions(tmp_path):
    from sklearn.model_selection import train_test_split

    dataset, _ = uci.fetch_binary_dataset("cmc.3", tmp_path)
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
