import numpy as np
import pandas as pd
import pytest
from datasets import Dataset, DatasetDict

from unishift.data import text
from unishift.lm.config import covariate_options, domain_pairs


def _hub(tables: dict):
    """A stand-in for datasets.load_dataset serving tiny in-memory data sets by hub id."""

    def load(hub_id, revision=None):
        return DatasetDict(
            {split: Dataset.from_dict(columns) for split, columns in tables[hub_id].items()}
        )

    return load


def test_yelp_filter_drops_three_stars_and_relabels():
    stars = [0, 1, 2, 3, 4, 2, 4, 0]
    data = Dataset.from_dict({"text": [f"review {i}" for i in range(8)], "label": stars})
    out = text.binarise_yelp(data)
    assert out["text"] == ["review 0", "review 1", "review 3", "review 4", "review 6", "review 7"]
    assert out["label"] == [0, 0, 1, 1, 1, 0]


def _yelp_tables(n_train=60, n_test=20):
    rng = np.random.default_rng(0)
    tr, te = rng.integers(0, 5, n_train), rng.integers(0, 5, n_test)
    return (
        {
            "Yelp/yelp_review_full": {
                "train": {"text": [f"tr{i}" for i in range(n_train)], "label": tr.tolist()},
                "test": {"text": [f"te{i}" for i in range(n_test)], "label": te.tolist()},
            }
        },
        tr,
        te,
    )


def test_yelp_loader_holds_out_a_stratified_seeded_validation_set():
    tables, tr, te = _yelp_tables()
    splits = text.load_hf_domain("yelp", seed=0, validation_size=10, load=_hub(tables))
    kept = tr != 2
    assert len(splits["train"]) + len(splits["validation"]) == kept.sum()
    assert len(splits["validation"]) == 10
    assert len(splits["test"]) == (te != 2).sum()
    texts = set(splits["train"]["text"]) | set(splits["validation"]["text"])
    assert texts == {f"tr{i}" for i in np.flatnonzero(kept)}
    # stratified: the held-out prevalence is the kept training prevalence up to one item
    prevalence = (tr[kept] >= 3).mean()
    assert abs(splits["validation"]["label"].mean() - prevalence) <= 0.1 + 1e-9
    # labels follow the 1-2 / 4-5 star rule
    by_text = dict(zip([f"tr{i}" for i in range(len(tr))], tr))
    assert all(
        int(by_text[t] >= 3) == y for t, y in zip(splits["train"]["text"], splits["train"]["label"])
    )
    again = text.load_hf_domain("yelp", seed=0, validation_size=10, load=_hub(tables))
    other = text.load_hf_domain("yelp", seed=1, validation_size=10, load=_hub(tables))
    assert splits["train"]["text"].tolist() == again["train"]["text"].tolist()
    assert splits["validation"]["text"].tolist() != other["validation"]["text"].tolist()


def test_yelp_paper_size_check_fails_on_other_sizes():
    tables, _, _ = _yelp_tables()
    with pytest.raises(ValueError, match="520000"):
        text.load_hf_domain("yelp", seed=0, validation_size=10, check_sizes=True, load=_hub(tables))


def test_rt_keeps_its_own_splits_in_stored_order():
    tables = {
        "cornell-movie-review-data/rotten_tomatoes": {
            split: {
                "text": [f"{split}{i}" for i in range(n)],
                "label": [1] * (n // 2) + [0] * (n - n // 2),
            }
            for split, n in (("train", 8), ("validation", 4), ("test", 4))
        }
    }
    splits = text.load_hf_domain("rt", seed=0, load=_hub(tables))
    assert splits["train"]["text"].tolist() == [f"train{i}" for i in range(8)]
    assert splits["train"]["label"].tolist() == [1, 1, 1, 1, 0, 0, 0, 0]
    assert len(splits["validation"]) == 4 and len(splits["test"]) == 4


def test_imdb_ignores_the_unsupervised_split():
    n = 40
    tables = {
        "stanfordnlp/imdb": {
            "train": {"text": [f"a{i}" for i in range(n)], "label": [i % 2 for i in range(n)]},
            "test": {"text": [f"b{i}" for i in range(n)], "label": [i % 2 for i in range(n)]},
            "unsupervised": {"text": ["u"] * 5, "label": [-1] * 5},
        }
    }
    splits = text.load_hf_domain("imdb", seed=0, validation_size=10, load=_hub(tables))
    assert {len(f) for f in splits.values()} == {30, 10, 40}
    assert splits["validation"]["label"].sum() == 5
    assert set(splits["train"]["label"]) == {0, 1}


def test_split_files_round_trip(tmp_path):
    frame = pd.DataFrame({"text": ["a", "b\u00e9"], "label": [1, 0]})
    text.write_split(frame, tmp_path / "x" / "train.parquet")
    back = text.read_split(tmp_path / "x" / "train.parquet")
    assert back["text"].tolist() == ["a", "b\u00e9"] and back["label"].dtype == np.int64


def test_config_defaults_and_domain_checks():
    options = covariate_options({"seed": 0, "data_root": None})
    assert options["domains"] == ["airline", "apple", "coachella"]
    assert options["lm"]["mode"] == "cached" and options["mixture"]["counts"] == "round"
    merged = covariate_options({"covariate_shift": {"lm": {"mode": "faithful"}}})
    assert merged["lm"]["mode"] == "faithful" and merged["lm"]["learning_rate"] == 5e-3
    with pytest.raises(ValueError, match="at least two"):
        covariate_options(
            {"covariate_shift": {"text_source": "hf", "domains": ["airline", "imdb"]}}
        )
    with pytest.raises(ValueError, match="data_root"):
        covariate_options(
            {"covariate_shift": {"text_source": "data_root", "domains": ["imdb", "rt"]}}
        )
    assert domain_pairs(["imdb", "rt", "yelp"]) == [
        ("imdb", "rt"),
        ("imdb", "yelp"),
        ("rt", "imdb"),
        ("rt", "yelp"),
        ("yelp", "imdb"),
        ("yelp", "rt"),
    ]


# --------------------------------------------------------------------------------------------------
# offline copies under data_root


@pytest.mark.needs_shared_data
def test_rt_polarity_resplit_like_hugging_face(data_root):
    splits = text.load_rt_polarity(data_root, seed=0)
    assert {s: len(f) for s, f in splits.items()} == {
        "train": 8530,
        "validation": 1066,
        "test": 1066,
    }
    for frame in splits.values():
        n = len(frame) // 2
        assert frame["label"].tolist() == [1] * n + [0] * n
    texts = pd.concat(splits.values())["text"]
    assert texts.is_unique or texts.duplicated().sum() < 20  # the corpus has a few verbatim repeats
    # the 0x85 byte stays inside its sentence instead of splitting it
    assert len(texts) == 10662
    again = text.load_rt_polarity(data_root, seed=0)
    assert again["test"]["text"].tolist() == splits["test"]["text"].tolist()


@pytest.mark.needs_shared_data
@pytest.mark.parametrize("domain", ["imdb", "yelp"])
def test_sentence_domains_are_split_stratified(data_root, domain):
    splits = text.load_offline_domain(data_root, domain, seed=0)
    assert {s: len(f) for s, f in splits.items()} == {"train": 500, "validation": 200, "test": 300}
    for frame in splits.values():
        assert frame["label"].mean() == pytest.approx(0.5)
    all_texts = pd.concat(splits.values())["text"]
    assert len(all_texts) == 1000 and all_texts.str.len().min() > 0


def test_offline_files_are_checked(tmp_path):
    folder = tmp_path / "text" / "sentiment-labelled-sentences"
    folder.mkdir(parents=True)
    (folder / "imdb_labelled.txt").write_text("a tampered copy\t1\n")
    with pytest.raises(ValueError, match="sha256"):
        text.load_offline_domain(tmp_path, "imdb", seed=0)
    with pytest.raises(FileNotFoundError):
        text.load_offline_domain(tmp_path, "yelp", seed=0)
