"""Time per sample of every registered method, on one label-shift and one covariate-shift setup.

* label shift: yeast / LR, the workflow's own data path (``prepare_splits`` -> ``train_and_predict``
  -> ``label_shift_samples`` -> ``load_label_setup``), UPP samples of 250 items;
* covariate shift: a synthetic stand-in of a fine-tuned language model, 768-d hidden states and
  2-class logits, 5,000 classifier-training rows, 1,000 validation rows, 250-item samples drawn from
  a pool that mixes source-like and shifted items.

Each method is fitted once on the setup (as the workflow's evaluate job does) and applied to every
sample; BLAS/OpenMP pools are capped at one thread, as in the workflow's single-threaded jobs. Wall
times (perf_counter) grow when other processes share the cores; the process CPU time per sample
(fit included) does much less.
Writes ``benchmarks/output/methods_<shift>.csv`` and prints a Markdown table.

Run: ``python benchmarks/bench_methods.py [--shift label|covariate|both] [--label-samples 20]``.
``--field`` times only the non-adapted methods (the paper's and the field group's, docs/methods.md
§6) and adds each field method's CPU time per sample over the slowest paper method of its task.
It is a script, not a test.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from unishift.data.containers import LabelledSet, Setting
from unishift.data.label_shift import (
    label_shift_samples,
    load_label_setup,
    prepare_splits,
    train_and_predict,
)
from unishift.evaluation.evaluate import SetupData, evaluate_setup
from unishift.methods.registry import all_methods

OUTPUT = Path(__file__).resolve().parent / "output"


def label_setup(n_samples: int, dataset: str = "yeast", classifier: str = "LR", seed: int = 0):
    with tempfile.TemporaryDirectory() as home:
        splits, _ = prepare_splits(dataset, home, None, seed)
    samples = label_shift_samples(splits, 250, n_samples, seed)
    _, posteriors = train_and_predict(splits, classifier, seed, samples=samples)
    return load_label_setup(splits, posteriors, samples, dataset, classifier, seed)


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)


def covariate_setup(
    n_samples: int,
    dim: int = 768,
    n_train: int = 5000,
    n_val: int = 1000,
    n_pool: int = 2000,
    sample_size: int = 250,
    seed: int = 0,
) -> SetupData:
    """Gaussian hidden states; a linear head gives the logits; the target half is moved off-manifold."""
    rng = np.random.default_rng(seed)
    head = rng.normal(size=(dim, 2)) / np.sqrt(dim)
    class_shift = rng.normal(size=dim) * 0.08

    def draw(n: int, positive_rate: float, domain_offset: float) -> LabelledSet:
        labels = (rng.random(n) < positive_rate).astype(np.int64)
        hidden = rng.normal(size=(n, dim)) + np.outer(2 * labels - 1, class_shift)
        hidden += domain_offset * rng.normal(size=dim)
        logits = hidden @ head * 4.0
        return LabelledSet(_softmax(logits), labels, hidden.astype(np.float32), logits)

    training, validation = draw(n_train, 0.5, 0.0), draw(n_val, 0.5, 0.0)
    source, target = draw(n_pool // 2, 0.5, 0.0), draw(n_pool // 2, 0.35, 0.3)
    pool = LabelledSet(
        np.vstack([source.posteriors, target.posteriors]),
        np.concatenate([source.labels, target.labels]),
        np.vstack([source.features, target.features]),
        np.vstack([source.logits, target.logits]),
    )
    # sample i takes a fraction i / (n - 1) of its items from the target half
    indices, intensity = [], []
    for i in range(n_samples):
        share = i / max(1, n_samples - 1)
        n_target = int(round(share * sample_size))
        picked = np.concatenate(
            [
                rng.choice(n_pool // 2, sample_size - n_target, replace=False),
                n_pool // 2 + rng.choice(n_pool // 2, n_target, replace=False),
            ]
        )
        indices.append(picked)
        intensity.append(share)
    setting = Setting(validation, training, "covariate", key="synthetic/768d", seed=seed)
    return SetupData(
        shift="covariate",
        classifier="synthetic",
        dataset="768d",
        setting=setting,
        pool=pool,
        sample_indices=np.array(indices),
        shift_intensity=np.array(intensity),
        # the generator's state after the indices, which the domain-classifier draws continue
        stream_state=np.random.RandomState(seed).get_state(),
    )


def bench(shift: str, setup: SetupData, field: bool = False) -> pd.DataFrame:
    rows = []
    specs = sorted(
        (
            spec
            for spec in all_methods().values()
            if shift in spec.shifts and not (field and spec.inner is not None)
        ),
        key=lambda s: (s.task, s.name),
    )
    for spec in specs:
        started, cpu_started = time.perf_counter(), time.process_time()
        records, timing = evaluate_setup(
            spec.task, spec.name, lambda spec=spec: spec.build(shift, 2), setup
        )
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
        statuses = pd.Series([r["status"] for r in records]).value_counts().to_dict()
        n = timing["n_samples"]
        rows.append(
            {
                "shift": shift,
                "task": spec.task,
                "method": spec.name,
                "group": spec.group,
                "n_samples": n,
                "fit_s": timing["fit_seconds"],
                "apply_s_per_sample": timing["apply_seconds"] / n,
                "total_s_per_sample": wall / n,
                "cpu_s_per_sample": cpu / n,
                "status": ", ".join(f"{k}={v}" for k, v in sorted(statuses.items())),
            }
        )
        print(
            f"{shift:9s} {spec.task:14s} {spec.name:16s} fit {timing['fit_seconds']:8.3f} s "
            f"apply {timing['apply_seconds'] / n:8.4f} s/sample  CPU {cpu / n:8.4f} s/sample  "
            f"[{rows[-1]['status']}]",
            flush=True,
        )
    return pd.DataFrame(rows)


def markdown(frame: pd.DataFrame) -> str:
    lines = [
        "| task | method | fit (s) | apply (s/sample) | fit+apply (s/sample) | CPU (s/sample) "
        "| status |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for row in frame.itertuples():
        lines.append(
            f"| {row.task} | {row.method} | {row.fit_s:.3f} | {row.apply_s_per_sample:.4f} | "
            f"{row.total_s_per_sample:.4f} | {row.cpu_s_per_sample:.4f} | {row.status} |"
        )
    return "\n".join(lines)


def field_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Each field method's CPU time per sample over the slowest paper (non-field) method of its task."""
    paper = frame[frame["group"] != "field"]
    slowest = paper.loc[paper.groupby("task")["cpu_s_per_sample"].idxmax(), ["task", "method"]]
    slowest = slowest.set_index("task")["method"]
    limit = paper.groupby("task")["cpu_s_per_sample"].max()
    field = frame[frame["group"] == "field"].copy()
    field["slowest_paper_method"] = field["task"].map(slowest)
    field["ratio"] = field["cpu_s_per_sample"] / field["task"].map(limit)
    return field


def field_markdown(field: pd.DataFrame, frame: pd.DataFrame) -> str:
    lines = [
        "| task | method | CPU (s/sample) | slowest paper method (CPU s/sample) | ratio |",
        "|---|---|---:|---|---:|",
    ]
    cpu = frame.set_index("method")["cpu_s_per_sample"]
    for row in field.itertuples():
        lines.append(
            f"| {row.task} | {row.method} | {row.cpu_s_per_sample:.4f} | "
            f"{row.slowest_paper_method} ({cpu[row.slowest_paper_method]:.4f}) | {row.ratio:.2f} |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shift", choices=("label", "covariate", "both"), default="both")
    parser.add_argument("--label-samples", type=int, default=20)
    parser.add_argument("--covariate-samples", type=int, default=20)
    parser.add_argument(
        "--field", action="store_true", help="non-adapted methods only, with the field's ratios"
    )
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    OUTPUT.mkdir(exist_ok=True)
    shifts = ("label", "covariate") if args.shift == "both" else (args.shift,)
    with threadpool_limits(limits=1):
        for shift in shifts:
            if shift == "label":
                setup = label_setup(args.label_samples)
            else:
                setup = covariate_setup(args.covariate_samples)
            frame = bench(shift, setup, field=args.field)
            suffix = "_field" if args.field else ""
            frame.to_csv(OUTPUT / f"methods_{shift}{suffix}.csv", index=False)
            print(f"\n{shift} shift, {setup.key}, {frame['n_samples'].iloc[0]} samples\n")
            print(markdown(frame))
            if args.field:
                print(f"\nfield methods against the slowest paper method ({shift} shift)\n")
                print(field_markdown(field_ratios(frame), frame))
            print()


if __name__ == "__main__":
    main()
