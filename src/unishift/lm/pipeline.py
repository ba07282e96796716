"""Fine-tune one model on one source domain and cache what the methods need (docs/protocols.md §3.4,
§3.6; the cache's layout: :mod:`unishift.lm.cache`).
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from dataclasses import asdict

import numpy as np
import pandas as pd

from unishift.lm.device import Workload, cpu_threads, finetune_passes, tokens_per_text
from unishift.lm.finetune import accuracy, train_faithful, train_head_on_cache
from unishift.lm.models import (
    HEAD_MODULES,
    encode_texts,
    encoder_parameters,
    freeze_backbone,
    head_logits,
    load_classifier,
)

log = logging.getLogger("unishift.lm")


def encode_workload(model_name, frames, settings, revision=None, passes=None) -> Workload:
    """Forward passes through the model of the texts of ``frames``: each once (as
    :func:`encode_domain`), or ``passes`` in all."""
    texts = pd.concat([frame["text"] for frame in frames])
    tokens = tokens_per_text(texts, settings.max_length, settings.padding)
    n_passes = float(len(texts)) if passes is None else passes
    return Workload(encoder_parameters(model_name, revision), tokens, n_passes)


def finetune_workload(model_name, inputs: dict, target_inputs: dict, settings, revision=None):
    """Forward passes of a ``faithful`` fine-tuning (None in ``cached`` mode: only the head trains,
    on encoder outputs computed by lm_encode)."""
    if settings.mode == "cached":
        return None
    n_train, n_validation = len(inputs["train"]), len(inputs["validation"])
    others = [inputs["validation"], inputs["test"], *target_inputs.values()]
    n_extracted = min(settings.train_subset, n_train) + sum(len(frame) for frame in others)
    passes = finetune_passes(settings, n_train, n_validation, n_extracted)
    frames = [inputs["train"], inputs["validation"]]
    return encode_workload(model_name, frames, settings, revision, passes)


def encode_domain(
    model_name: str, splits: dict[str, pd.DataFrame], settings, device, revision=None
) -> tuple[dict, dict]:
    """Head inputs and first-token vectors of every split of a domain (``cached`` mode's encoder
    pass, one per (model, domain): the frozen backbone is the same for every source)."""
    with cpu_threads(settings.cpu_threads):
        tokenizer, model = load_classifier(model_name, settings.seed, revision=revision)
        freeze_backbone(model)
        sets, speed = {}, {}
        for split in ("train", "validation", "test"):
            frame = splits[split]
            out = encode_texts(model, tokenizer, frame["text"], settings, device, f"encode {split}")
            speed[split] = out["speed"]
            arrays = {"hidden": out["hidden"], "labels": frame["label"].to_numpy(np.int64)}
            # only BERT's head reads something other than the first-token vector (the pooled output)
            if model.config.model_type == "bert":
                arrays["head_input"] = out["head_input"]
            sets[split] = arrays
    return sets, {"architecture": model.config.model_type, "encode": speed}


def _head_input(arrays: dict) -> np.ndarray:
    return arrays["head_input"] if "head_input" in arrays else arrays["hidden"]


def run_finetune(
    model_name,
    source,
    inputs: dict,
    target_inputs: dict,
    settings,
    device,
    workdir=None,
    revision=None,
    num_labels: int = 2,
):
    """Train the head with ``num_labels`` classes on the cache or through the full model
    (``settings.mode``) on ``settings.cpu_threads`` CPU threads, then every set's logits; returns
    (sets, model, report with accuracies)."""
    started = time.perf_counter()
    cached = settings.mode == "cached"
    train, validation = inputs["train"], inputs["validation"]
    subset = slice(settings.train_subset)
    named = {
        "train": {key: v[subset] for key, v in train.items()} if cached else train.iloc[subset],
        "validation": validation,
        "test": inputs["test"],
        **{f"target_{name}": value for name, value in target_inputs.items()},
    }
    sets, speed = {}, {}
    with cpu_threads(settings.cpu_threads):
        tokenizer, model = load_classifier(model_name, settings.seed, num_labels, revision)
        report = {"frozen": freeze_backbone(model)}
        with tempfile.TemporaryDirectory(dir=workdir) as scratch:
            if cached:
                rows = [
                    {"head_input": _head_input(s), "labels": s["labels"]}
                    for s in (train, validation)
                ]
                report["training"] = train_head_on_cache(model, *rows, settings, scratch, device)
            else:
                report["training"] = train_faithful(
                    model, tokenizer, train, validation, settings, scratch, device
                )
        model.to(device)
        for name, value in named.items():
            if cached:
                logits, hidden = head_logits(model, _head_input(value), device), value["hidden"]
                labels = value["labels"]
            else:
                out = encode_texts(
                    model, tokenizer, value["text"], settings, device, f"extract {name}"
                )
                speed[name] = out["speed"]
                logits, hidden, labels = out["logits"], out["hidden"], value["label"].to_numpy()
            sets[name] = {
                "logits": logits,
                "hidden": hidden.astype(np.float32),
                "labels": labels.astype(np.int64),
            }
    if not cached:
        report["extract"] = speed
    train_labels = sets["train"]["labels"]
    report.update(
        model=model_name,
        revision=revision,
        source=source,
        device=device,
        settings=asdict(settings),
        seconds=time.perf_counter() - started,
        accuracy={name: accuracy(a["logits"], a["labels"]) for name, a in sets.items()},
        sizes={name: int(len(arrays["labels"])) for name, arrays in sets.items()},
        train_subset_prevalence=float(np.mean(train_labels)) if len(train_labels) else None,
    )
    log.info(
        "accuracy per set: %s; prevalence of the %d-row training subset: %s",
        json.dumps({k: round(v, 4) for k, v in report["accuracy"].items()}),
        len(train_labels),
        report["train_subset_prevalence"],
    )
    return sets, model, report


def save_head(model, path) -> None:
    """The trained head's weights (the frozen backbone is the published checkpoint)."""
    from safetensors.torch import save_file

    from unishift.io import atomic_path

    prefixes = HEAD_MODULES[model.config.model_type]
    state = {
        k: v.detach().cpu().contiguous()
        for k, v in model.state_dict().items()
        if k.split(".")[0] in prefixes
    }
    with atomic_path(path) as partial:
        save_file(state, str(partial))
