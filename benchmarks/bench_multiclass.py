"""Run every label-shift method that runs for k classes on the offline UCI multiclass setups.

Writes the per-sample records (the k-class record layout) and per-(method, setup) timings, and
prints per-method CPU seconds and mean errors: the numbers behind the run-time budget of
config/multiclass.yaml (see the design note) and the first multiclass findings. Evaluated as
config/multiclass.yaml evaluates them: the test pool's posteriors, per-sample seeds, float32 ECE.

    python benchmarks/bench_multiclass.py --out /tmp/mc --datasets cmc yeast wine-quality
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import pandas as pd

from unishift.data.label_shift import (
    label_shift_samples,
    load_label_setup,
    prepare_splits,
    train_and_predict,
)
from unishift.evaluation.evaluate import evaluate_setup
from unishift.evaluation.records import COLUMNS, K_CLASS
from unishift.methods.registry import all_methods


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--datasets", nargs="+", default=["cmc", "yeast", "wine-quality"])
    parser.add_argument("--classifiers", nargs="+", default=["LR", "NB", "kNN", "MLP"])
    parser.add_argument("--methods", nargs="*", default=None, help="task/name; default: all")
    parser.add_argument("--sample-size", type=int, default=250)
    parser.add_argument("--n-samples", type=int, default=100)
    parser.add_argument("--data-root", default=os.environ.get("UNISHIFT_DATA_ROOT"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-class-support", type=int, default=100)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)  # one thread per evaluation job, as the workflow runs them
    specs = [s for s in all_methods().values() if "label" in s.shifts and not s.binary_only]
    if args.methods:
        specs = [s for s in specs if f"{s.task}/{s.name}" in args.methods]
    records, timings = [], []
    for dataset in args.datasets:
        splits, _ = prepare_splits(
            dataset,
            out / "quapy_home",
            args.data_root,
            args.seed,
            collection="uci_multiclass",
            min_class_support=args.min_class_support,
        )
        samples = label_shift_samples(splits, args.sample_size, args.n_samples, args.seed)
        for classifier in args.classifiers:
            _, posteriors = train_and_predict(splits, classifier, args.seed)
            # config/multiclass.yaml: the test pool's posteriors, per-sample domain draws
            setup = load_label_setup(
                splits, posteriors, samples, dataset, classifier, args.seed, "pool"
            )
            for spec in specs:
                wall, cpu = time.perf_counter(), time.process_time()
                rows, timing = evaluate_setup(
                    spec.task,
                    spec.name,
                    lambda spec=spec, k=setup.n_classes: spec.build("label", k),
                    setup,
                    domain_stream="per_sample",
                    layout=K_CLASS,
                )
                timing.update(
                    task=spec.task,
                    method=spec.name,
                    dataset=dataset,
                    classifier=classifier,
                    wall_seconds=time.perf_counter() - wall,
                    cpu_seconds=time.process_time() - cpu,
                )
                records.extend(rows)
                timings.append(timing)
                print(
                    json.dumps(
                        {
                            k: timing[k]
                            for k in ("task", "method", "dataset", "classifier", "cpu_seconds")
                        }
                    ),
                    flush=True,
                )
            pd.DataFrame.from_records(records, columns=list(COLUMNS[K_CLASS])).to_csv(
                out / "records.csv", index=False
            )
            pd.DataFrame.from_records(timings).to_csv(out / "timings.csv", index=False)
    frame = pd.DataFrame.from_records(timings)
    print(frame.groupby(["task", "method"])["cpu_seconds"].sum().sort_values().to_string())
    print("total CPU seconds", frame["cpu_seconds"].sum())


if __name__ == "__main__":
    main()
