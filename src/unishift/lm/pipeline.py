"""Fine-tune one model on one source domain and cache what the methods need (docs/protocols.md §3.4, §3.6).

The cache of a (model, source) pair holds, for the sets ``train`` (the first ``train_subset`` stored
rows of the training split), ``validation``, ``test`` and ``target_<domain>`` (each other domain's test
split): ``logits`` (n x 2, float32), ``hidden`` (n x d, the last layer's first-token vector, float32,
not the pooled output) and ``labels`` (int64). Everything is extracted in eval mode without gradients.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time

import numpy as np
import pandas as pd

from unishift.lm.device import Workload, cpu_threads, finetune_passes, tokens_per_text
from unishift.lm.finetune import FinetuneSettings, train_faithful, train_head_on_cache
from unishift.lm.models import (
    encode_texts,
    encoder_parameters,
    freeze_backbone,
    head_logits,
    load_classifier,
)

log = logging.getLogger("unishift.lm")

ENCODED_SPLITS = ("train", "validation", "test")


def encode_workload(model_name, splits: dict, settings, revision=None) -> Workload:
    """Forward passes of :func:`encode_domain`: every text of every split once."""
    texts = pd.concat([frame["text"] for frame in splits.values()])
    return Workload(
        encoder_parameters(model_name, revision),
        tokens_per_text(texts, settings.max_length, settings.padding),
        float(len(texts)),
    )


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
    texts = pd.concat([inputs["train"]["text"], inputs["validation"]["text"]])
    return Workload(
        encoder_parameters(model_name, revision),
        tokens_per_text(texts, settings.max_length, settings.padding),
        finetune_passes(settings, n_train, n_validation, n_extracted),
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
    """Head inputs and first-token vectors of every split of a domain (``cached`` mode's encoder pass).

    The backbone is frozen and identical for every source, so one pass per (model, domain) serves all
    fine-tunings; the fresh head's logits are not stored. Runs on ``settings.cpu_threads`` CPU
    threads.
    """
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


def finetune_cached(model_name, source_sets, target_tests, settings, device, workdir, revision, k):
    """Train the head on the encoded source training split; logits for every cached set."""
    _, model = load_classifier(model_name, settings.seed, num_labels=k, revision=revision)
    frozen = freeze_backbone(model)
    train, validation = (
        {"head_input": _head_input(source_sets[s]), "labels": source_sets[s]["labels"]}
        for s in ("train", "validation")
    )
    with tempfile.TemporaryDirectory(dir=workdir) as scratch:
        history = train_head_on_cache(model, train, validation, settings, scratch, device)
    model.to(device)
    sets = {}
    named = {
        "train": {key: rows[: settings.train_subset] for key, rows in source_sets["train"].items()},
        "validation": source_sets["validation"],
        "test": source_sets["test"],
        **{f"target_{name}": arrays for name, arrays in target_tests.items()},
    }
    for name, arrays in named.items():
        sets[name] = {
            "logits": head_logits(model, _head_input(arrays), device),
            "hidden": arrays["hidden"].astype(np.float32),
            "labels": arrays["labels"].astype(np.int64),
        }
    return sets, model, {"frozen": frozen, "training": history}


def finetune_faithful(model_name, splits, target_tests, settings, device, workdir, revision, k):
    """Train through the full model, then extract every set in eval mode."""
    tokenizer, model = load_classifier(model_name, settings.seed, num_labels=k, revision=revision)
    frozen = freeze_backbone(model)
    with tempfile.TemporaryDirectory(dir=workdir) as scratch:
        train, validation = splits["train"], splits["validation"]
        history = train_faithful(model, tokenizer, train, validation, settings, scratch, device)
    frames = {
        "train": splits["train"].iloc[: settings.train_subset],
        "validation": splits["validation"],
        "test": splits["test"],
        **{f"target_{name}": frame for name, frame in target_tests.items()},
    }
    sets, speed = {}, {}
    for name, frame in frames.items():
        out, speed[name] = _encode(model, tokenizer, frame, settings, device, f"extract {name}")
        sets[name] = {
            "logits": out["logits"],
            "hidden": out["hidden"],
            "labels": frame["label"].to_numpy(np.int64),
        }
    return sets, model, {"frozen": frozen, "training": history, "extract": speed}


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
    """Dispatch on ``settings.mode``; returns (sets, model, report) with accuracies in the report.
    ``num_labels``: the head's classes (the multiclass branch's tweets have three). Trains and
    predicts on ``settings.cpu_threads`` CPU threads."""
    started = time.perf_counter()
    run = finetune_cached if settings.mode == "cached" else finetune_faithful
    with cpu_threads(settings.cpu_threads):
        sets, model, report = run(
            model_name, inputs, target_inputs, settings, device, workdir, revision, num_labels
        )
    report.update(
        model=model_name,
        revision=revision,
        source=source,
        device=device,
        settings=settings.as_dict(),
        seconds=time.perf_counter() - started,
        accuracy={name: _accuracy(arrays) for name, arrays in sets.items()},
        sizes={name: int(len(arrays["labels"])) for name, arrays in sets.items()},
        train_subset_prevalence=float(np.mean(sets["train"]["labels"]))
        if len(sets["train"]["labels"])
        else None,
    )
    log.info(
        "accuracy per set: %s", json.dumps({k: round(v, 4) for k, v in report["accuracy"].items()})
    )
    log.info(
        "prevalence of the %d-row training subset: %.4f",
        len(sets["train"]["labels"]),
        report["train_subset_prevalence"],
    )
    return sets, model, report


def save_head(model, path) -> None:
    """The trained head's weights (the frozen backbone is the published checkpoint)."""
    from safetensors.torch import save_file

    from unishift.io import atomic_path
    from unishift.lm.models import HEAD_MODULES

    prefixes = HEAD_MODULES[model.config.model_type]
    state = {
        k: v.detach().cpu().contiguous()
        for k, v in model.state_dict().items()
        if k.split(".")[0] in prefixes
    }
    with atomic_path(path) as partial:
        save_file(state, str(partial))
