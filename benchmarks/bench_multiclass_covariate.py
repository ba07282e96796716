"""The multiclass covariate shift end to end, outside the workflow: three-class tweet domains,
all-MiniLM-L6-v2 encodings, a 3-class head per source trained on the cached encodings with the
embedded default's schedule, mixture samples, and every covariate-shift method with a k-class form
(records in the k-class layout, per-sample seeds).

    python benchmarks/bench_multiclass_covariate.py --out /tmp/mc_cs --domains airline apple coachella

Prints the CPU seconds of each stage and method (the run-time budget of config/multiclass.yaml) and
writes the per-sample records. The head training composes the library's class-generic pieces
(load_classifier(num_labels=3), freeze_backbone, train_head_on_cache, head_logits) the way
unishift.lm.pipeline.run_finetune does in cached mode.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import pandas as pd

from unishift.data.covariate import accuracy, load_covariate_setup
from unishift.data.text import load_tweet_domain, read_tweet_corpus
from unishift.evaluation.evaluate import evaluate_setup
from unishift.evaluation.records import COLUMNS, K_CLASS
from unishift.lm.finetune import FinetuneSettings, train_head_on_cache
from unishift.lm.models import freeze_backbone, head_logits, load_classifier
from unishift.lm.pipeline import encode_domain
from unishift.methods.registry import all_methods
from unishift.protocols.mixture import mixture_indices

# the embedded default's covariate_shift.lm section (config/config.yaml)
SETTINGS = dict(
    mode="cached", epochs=20, learning_rate=5e-3, batch_size=64, eval_batch_size=256, eval_steps=20,
    early_stopping_patience=5, warmup_ratio=0.1, seed=42, precision="fp32", max_length=128,
    padding="longest", extract_batch_size=128, logging_steps=10, train_subset=5000, device="cpu",
)  # fmt: skip


def head_input(arrays):
    return arrays["head_input"] if "head_input" in arrays else arrays["hidden"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--domains", nargs="+", default=["airline", "apple", "coachella"])
    parser.add_argument("--n-samples", type=int, default=100)
    parser.add_argument("--sample-size", type=int, default=250)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train-subset", type=int, default=5000, help="the methods' training rows")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # the workflow's thread counts: 2 for the language-model rules, 1 for every evaluation job
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(2)
    limits = threadpool_limits(limits=2)
    settings = FinetuneSettings(**{**SETTINGS, "train_subset": args.train_subset})
    stages = {}
    corpus = read_tweet_corpus()
    encoded = {}
    for domain in args.domains:
        cpu = time.process_time()
        splits = load_tweet_domain(domain, args.seed, corpus=corpus, classes=3)
        encoded[domain], _ = encode_domain("all-MiniLM-L6-v2", splits, settings, "cpu")
        stage = f"encode {domain} ({sum(len(f) for f in splits.values())} texts)"
        stages[stage] = time.process_time() - cpu
        print(json.dumps({"stage": stage, "cpu_seconds": stages[stage]}), flush=True)
    specs = [s for s in all_methods().values() if "covariate" in s.shifts and not s.binary_only]
    limits.restore_original_limits()
    records, timings, accuracies = [], [], {}
    for source in args.domains:
        cpu = time.process_time()
        threadpool_limits(limits=2)
        torch.set_num_threads(2)
        _, model = load_classifier("all-MiniLM-L6-v2", settings.seed, num_labels=3)
        freeze_backbone(model)
        train = {
            "head_input": head_input(encoded[source]["train"]),
            "labels": encoded[source]["train"]["labels"],
        }
        validation = {
            "head_input": head_input(encoded[source]["validation"]),
            "labels": encoded[source]["validation"]["labels"],
        }
        with tempfile.TemporaryDirectory() as scratch:
            train_head_on_cache(model, train, validation, settings, scratch, "cpu")
        sets = {}
        named = {
            "train": {k: v[: settings.train_subset] for k, v in encoded[source]["train"].items()},
            "validation": encoded[source]["validation"],
            "test": encoded[source]["test"],
            **{f"target_{t}": encoded[t]["test"] for t in args.domains if t != source},
        }
        for name, arrays in named.items():
            sets[name] = {
                "logits": head_logits(model, head_input(arrays), "cpu"),
                "hidden": arrays["hidden"],
                "labels": arrays["labels"],
            }
        accuracies[source] = {name: accuracy(arrays) for name, arrays in sets.items()}
        stages[f"head {source}"] = time.process_time() - cpu
        print(
            json.dumps({"stage": f"head {source}", "cpu_seconds": stages[f"head {source}"]}),
            flush=True,
        )
        for target in args.domains:
            if target == source:
                continue
            samples = mixture_indices(
                len(sets["test"]["labels"]),
                len(sets[f"target_{target}"]["labels"]),
                args.sample_size,
                args.n_samples,
                args.seed,
            )
            setup = load_covariate_setup(sets, samples, "MiniLM", source, target, args.seed, 3)
            threadpool_limits(limits=1)
            torch.set_num_threads(1)
            for spec in specs:
                cpu = time.process_time()
                rows, timing = evaluate_setup(
                    spec.task,
                    spec.name,
                    lambda spec=spec, k=setup.n_classes: spec.build("covariate", k),
                    setup,
                    domain_stream="per_sample",
                    layout=K_CLASS,
                )
                timing.update(
                    task=spec.task,
                    method=spec.name,
                    dataset=setup.dataset,
                    cpu_seconds=time.process_time() - cpu,
                )
                records.extend(rows)
                timings.append(timing)
                print(
                    json.dumps(
                        {k: timing[k] for k in ("task", "method", "dataset", "cpu_seconds")}
                    ),
                    flush=True,
                )
            print(
                f"{setup.dataset}: {sum(t['cpu_seconds'] for t in timings if t['dataset'] == setup.dataset):.1f} cpu-s",
                flush=True,
            )
    pd.DataFrame.from_records(records, columns=list(COLUMNS[K_CLASS])).to_csv(
        out / "records.csv", index=False
    )
    frame = pd.DataFrame.from_records(timings)
    frame.to_csv(out / "timings.csv", index=False)
    (out / "stages.json").write_text(
        json.dumps({"stages": stages, "accuracy": accuracies}, indent=1)
    )
    print(json.dumps(stages, indent=1))
    print(json.dumps(accuracies, indent=1))
    print(frame.groupby(["task", "method"])["cpu_seconds"].sum().sort_values().to_string())
    print("methods total CPU seconds", frame["cpu_seconds"].sum())


if __name__ == "__main__":
    main()
