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
from unishift.lm.finetune import FinetuneSettings, train_faithful, train_head_on_cache
from unishift.lm.models import (
    HEAD_MODULES,
    encode_texts,
    encoder_parameters,
    freeze_backbone,
    head_logits,
    load_classifier,
)

log = logging.getLogger("unishift.lm")

ENCODED_SPLITS = ("train", "validation", "test")


def _workload(model_name, frames, settings, revision, passes=None) -> Workload:
    texts = pd.concat([frame["text"] for frame in frames])
    tokens = tokens_per_text(texts, settings.max_length, settings.padding)
    n_passes = float(len(texts)) if passes is None else passes
    return Workload(encoder_parameters(model_name, revision), tokens, n_passes)


def encode_workload(model_name, splits: dict, settings, revision=None) -> Workload:
    """Forward passes of :func:`encode_domain`: every text of every split once."""
    return _workload(model_name, splits.values(), settings, revision)


def finetune_workload(model_name, inputs: dict, target_inputs: dict, settings, revision=None):
    """Forward passes of a ``faithful`` fine-tuning (None in ``cached`` mode: only the head trains,
    on encoder outputs computed by lm_encode)."""
    if settings.mode == "cached":
        return None
    n_train, n_validation = len(inputs["train"]), len(inputs["validation"])
    n_extracted = (
        min(settings.train_subset, n_train)
        + n_validation
        + len(inputs["test"])
        + sum(len(frame) for frame in target_inputs.values())
    )
    passes = finetune_passes(settings, n_train, n_validation, n_extracted)
    return _workload(
        model_name, [inputs["train"], inputs["validation"]], settings, revision, passes
    )


def _encode(model, tokenizer, frame, settings: FinetuneSettings, device: str, desc: str):
    """Every text of ``frame`` through the model, with its speed (rows, examples per second)."""
    out = encode_texts(
        model,
        tokenizer,
        frame["text"],
        desc=desc,
        batch_size=settings.extract_batch_size,
        max_length=settings.max_length,
        padding=settings.padding,
        device=device,
    )
    return out, {"rows": len(frame), "examples_per_second": out["examples_per_second"]}


def encode_domain(
    model_name: str, splits: dict[str, pd.DataFrame], settings, device, revision=None
) -> tuple[dict, dict]:
    """Head inputs and first-token vectors of every split of a domain (``cached`` mode's encoder
    pass, one per (model, domain): the frozen backbone is the same for every source)."""
    with cpu_threads(settings.cpu_threads):
        tokenizer, model = load_classifier(model_name, settings.seed, revision=revision)
        freeze_backbone(model)
        sets, speed = {}, {}
        for split in ENCODED_SPLITS:
            frame = splits[split]
            out, speed[split] = _encode(
                model, tokenizer, frame, settings, device, f"encode {split}"
            )
            arrays = {"hidden": out["hidden"], "labels": frame["label"].to_numpy(np.int64)}
            # only BERT's head reads something other than the first-token vector (the pooled output)
            if model.config.model_type == "bert":
                arrays["head_input"] = out["head_input"]
            sets[split] = arrays
    return sets, {"architecture": model.config.model_type, "encode": speed}


def _head_input(arrays: dict) -> np.ndarray:
    return arrays["head_input"] if "head_input" in arrays else arrays["hidden"]


def _accuracy(arrays: dict) -> float:
    return (
        float(np.mean(np.argmax(arrays["logits"], axis=1) == arrays["labels"]))
        if len(arrays["labels"])
        else float("nan")
    )


def _finetune(model_name, inputs, target_inputs, settings, device, workdir, revision, k):
    """Train the head (on the cache or through the full model), then every set's logits."""
    tokenizer, model = load_classifier(model_name, settings.seed, num_labels=k, revision=revision)
    report = {"frozen": freeze_backbone(model)}
    cached = settings.mode == "cached"
    train, validation = inputs["train"], inputs["validation"]
    with tempfile.TemporaryDirectory(dir=workdir) as scratch:
        if cached:
            rows = (
                {"head_input": _head_input(s), "labels": s["labels"]} for s in (train, validation)
            )
            report["training"] = train_head_on_cache(model, *rows, settings, scratch, device)
        else:
            report["training"] = train_faithful(
                model, tokenizer, train, validation, settings, scratch, device
            )
    subset = slice(settings.train_subset)
    named = {
        "train": {key: v[subset] for key, v in train.items()} if cached else train.iloc[subset],
        "validation": validation,
        "test": inputs["test"],
        **{f"target_{name}": value for name, value in target_inputs.items()},
    }
    model.to(device)
    sets, speed = {}, {}
    for name, value in named.items():
        if cached:
            logits, hidden = head_logits(model, _head_input(value), device), value["hidden"]
            labels = value["labels"]
        else:
            out, speed[name] = _encode(model, tokenizer, value, settings, device, f"extract {name}")
            logits, hidden, labels = out["logits"], out["hidden"], value["label"].to_numpy()
        sets[name] = {
            "logits": logits,
            "hidden": hidden.astype(np.float32),
            "labels": labels.astype(np.int64),
        }
    if not cached:
        report["extract"] = speed
    return sets, model, report


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
    """Train on the cache or through the full model (``settings.mode``) with ``num_labels`` classes
    on ``settings.cpu_threads`` CPU threads; returns (sets, model, report with accuracies)."""
    started = time.perf_counter()
    with cpu_threads(settings.cpu_threads):
        sets, model, report = _finetune(
            model_name, inputs, target_inputs, settings, device, workdir, revision, num_labels
        )
    report.update(
        model=model_name,
        revision=revision,
        source=source,
        device=device,
        settings=asdict(settings),
        seconds=time.perf_counter() - started,
        accuracy={name: _accuracy(arrays) for name, arrays in sets.items()},
        sizes={name: int(len(arrays["labels"])) for name, arrays in sets.items()},
        train_subset_prevalence=float(np.mean(sets["train"]["labels"]))
        if len(sets["train"]["labels"])
        else None,
    )
    log.info(
        "accuracy per set: %s; prevalence of the %d-row training subset: %s",
        json.dumps({k: round(v, 4) for k, v in report["accuracy"].items()}),
        len(sets["train"]["labels"]),
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
