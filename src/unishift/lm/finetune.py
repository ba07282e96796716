"""Head-only fine-tuning with the paper's Trainer schedule in two modes: ``faithful`` (the whole
model at every step, as the reference code) and ``cached`` (the same Trainer and head modules
trained on a cache of the head's input); what each keeps and loses: docs/protocols.md §3.3-3.4.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import torch

from unishift.lm.config import FinetuneSettings
from unishift.lm.models import HeadOnInput

log = logging.getLogger("unishift.lm")


def training_arguments(settings: FinetuneSettings, output_dir: str | Path, device: str):
    from transformers import TrainingArguments

    return TrainingArguments(
        output_dir=str(output_dir),
        learning_rate=settings.learning_rate,
        num_train_epochs=settings.epochs,
        per_device_train_batch_size=settings.batch_size,
        per_device_eval_batch_size=settings.eval_batch_size,
        lr_scheduler_type="cosine",
        warmup_steps=settings.warmup_ratio,  # a value below 1 is a ratio of the total steps
        weight_decay=0.0,
        optim="adamw_torch",
        eval_strategy="steps",
        eval_steps=settings.eval_steps,
        eval_on_start=True,
        save_strategy="steps",
        save_steps=settings.eval_steps,
        save_total_limit=2,
        save_only_model=True,
        load_best_model_at_end=True,
        metric_for_best_model="accuracy",
        greater_is_better=True,
        logging_steps=settings.logging_steps,
        bf16=settings.precision == "bf16",
        fp16=settings.precision == "fp16",
        use_cpu=device == "cpu",
        seed=settings.seed,
        report_to="none",
        disable_tqdm=False,
        dataloader_num_workers=0,
    )


def accuracy(logits, labels) -> float:
    """Share of rows whose largest logit is the label (NaN without rows)."""
    if not len(labels):
        return float("nan")
    return float(np.mean(np.argmax(logits, axis=1) == labels))


def _run_trainer(model, train_dataset, eval_dataset, settings, workdir, device, collator=None):
    from transformers import EarlyStoppingCallback, Trainer

    trainer = Trainer(
        model=model,
        args=training_arguments(settings, workdir, device),
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        data_collator=collator,
        compute_metrics=lambda p: {"accuracy": accuracy(p.predictions, p.label_ids)},
        callbacks=[EarlyStoppingCallback(early_stopping_patience=settings.early_stopping_patience)],
    )
    started = time.perf_counter()
    output = trainer.train()
    elapsed = time.perf_counter() - started
    state = trainer.state
    evaluations = [
        {"step": entry["step"], "accuracy": entry["eval_accuracy"]}
        for entry in state.log_history
        if "eval_accuracy" in entry
    ]
    speed = float(output.metrics.get("train_samples_per_second", float("nan")))
    log.info(
        "trained %d/%d steps in %.1f s (%.1f examples/s); validation accuracy per evaluation: %s",
        state.global_step,
        state.max_steps,
        elapsed,
        speed,
        [(e["step"], round(e["accuracy"], 4)) for e in evaluations],
    )
    return {
        "seconds": elapsed,
        "global_steps": int(state.global_step),
        "max_steps": int(state.max_steps),
        "train_examples_per_second": speed,
        "evaluations": evaluations,
        "best_metric": state.best_metric,
        "best_checkpoint": state.best_model_checkpoint,
        "stopped_early": state.global_step < state.max_steps,
        "log_history": state.log_history,
    }


def _rows(**columns) -> list[dict]:
    # row i of every column, for the Trainer's collator to stack (or pad): no ``datasets`` needed
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def train_head_on_cache(model, train: dict, validation: dict, settings, workdir, device) -> dict:
    """Train the model's head modules on cached head inputs (``cached`` mode)."""
    rows = [
        _rows(
            head_input=torch.tensor(np.asarray(arrays["head_input"], dtype=np.float32)),
            labels=torch.tensor(np.asarray(arrays["labels"], dtype=np.int64)),
        )
        for arrays in (train, validation)
    ]
    return _run_trainer(HeadOnInput(model), *rows, settings, workdir, device)


def _tokenised(tokenizer, frame, settings):
    padding = "max_length" if settings.padding == "max_length" else False
    texts = [str(t) for t in frame["text"]]
    encoded = tokenizer(texts, truncation=True, max_length=settings.max_length, padding=padding)
    # token ids as python lists, as the tokenizer returns them
    return _rows(**encoded, labels=[int(y) for y in np.asarray(frame["label"], dtype=np.int64)])


def train_faithful(
    model, tokenizer, train_frame, validation_frame, settings, workdir, device
) -> dict:
    """Train through the full model with the Trainer (``faithful`` mode)."""
    from transformers import DataCollatorWithPadding

    collator = DataCollatorWithPadding(tokenizer) if settings.padding == "longest" else None
    rows = [_tokenised(tokenizer, frame, settings) for frame in (train_frame, validation_frame)]
    return _run_trainer(model, *rows, settings, workdir, device, collator)
