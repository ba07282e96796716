"""Seconds per method of a finished label-shift grid, from its Snakemake benchmark files.

Reads ``results/benchmarks/eval/label/<task>/<method>/<classifier>/<dataset>.tsv`` (one per evaluate
job, i.e. per method and setup, written by the rule's ``benchmark:`` directive; docs/evaluation-jobs.md)
and prints, per task and method, the summed wall seconds and CPU seconds of its jobs and their peak
memory, then the totals: the sum of job seconds (the serial cost) and the stage's wall span, from the
earliest job start (file time minus its seconds) to the last job end. The span is what ``--cores N``
achieved; sum / N is its lower bound.

Only the methods a config lists count (``--configfile``, default config/paper.yaml): files left by
earlier runs with other method lists are ignored.

Run: ``python benchmarks/summarise_grid.py [--results results] [--configfile config/paper.yaml]
[--csv out.csv]``. It is a script,
not a test.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import yaml


def read_benchmarks(results: Path, shift: str, methods: dict[str, list[str]]) -> pd.DataFrame:
    """One row per evaluate job (method x setup)."""
    rows = []
    root = results / "benchmarks" / "eval" / shift
    for path in sorted(root.glob("*/*/**/*.tsv")):
        task, method = path.relative_to(root).parts[:2]
        if method not in methods.get(task, []):
            continue
        table = pd.read_csv(path, sep="\t")
        if table.empty:
            continue
        first = table.iloc[0]
        rows.append(
            {
                "task": task,
                "method": method,
                "setup": "/".join(path.relative_to(root).with_suffix("").parts[2:]),
                "seconds": float(first["s"]),
                "cpu_seconds": float(first.get("cpu_time", float("nan"))),
                "max_rss_mb": float(first.get("max_rss", float("nan"))),
                "end": path.stat().st_mtime,
            }
        )
    return pd.DataFrame(rows)


def per_method(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.groupby(["task", "method"], as_index=False).agg(
        jobs=("setup", "count"),
        seconds=("seconds", "sum"),
        cpu_seconds=("cpu_seconds", "sum"),
        max_rss_mb=("max_rss_mb", "max"),
    )


def summarise(frame: pd.DataFrame) -> dict[str, float]:
    start = (frame["end"] - frame["seconds"]).min()
    return {
        "jobs": len(frame),
        "sum_seconds": float(frame["seconds"].sum()),
        "sum_cpu_seconds": float(frame["cpu_seconds"].sum()),
        "wall_span_seconds": float(frame["end"].max() - start),
        "longest_job_seconds": float(frame["seconds"].max()),
    }


def markdown(frame: pd.DataFrame) -> str:
    lines = [
        "| task | method | jobs | wall (s) | CPU (s) | peak RSS (MB) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in frame.sort_values(["task", "seconds"], ascending=[True, False]).itertuples():
        lines.append(
            f"| {row.task} | {row.method} | {row.jobs} | {row.seconds:.1f} | "
            f"{row.cpu_seconds:.1f} | {row.max_rss_mb:.0f} |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--shift", default="label")
    parser.add_argument("--configfile", type=Path, default=Path("config/paper.yaml"))
    parser.add_argument("--cores", type=int, default=2, help="for the sum / cores lower bound")
    parser.add_argument("--csv", type=Path, help="also write the per-method table here")
    args = parser.parse_args()
    methods = yaml.safe_load(args.configfile.read_text())["methods"].get(args.shift, {})
    frame = read_benchmarks(args.results, args.shift, methods)
    expected = sum(len(names) for names in methods.values())
    methods_found = frame[["task", "method"]].drop_duplicates() if not frame.empty else frame
    print(
        f"{len(methods_found)} of the {expected} methods of {args.configfile} have benchmark files "
        f"({len(frame)} evaluate jobs)\n"
    )
    if frame.empty:
        raise SystemExit(f"no benchmark files under {args.results}/benchmarks/eval/{args.shift}")
    summary = per_method(frame)
    print(markdown(summary))
    per_task = summary.groupby("task")["seconds"].agg(["count", "sum"])
    print("\n| task | methods | sum of job seconds |\n|---|---:|---:|")
    for task, row in per_task.iterrows():
        print(f"| {task} | {int(row['count'])} | {row['sum']:.1f} |")
    totals = summarise(frame)
    print(
        f"\n{totals['jobs']} evaluate jobs: {totals['sum_seconds']:.0f} s summed "
        f"({totals['sum_seconds'] / 60:.1f} min; / {args.cores} cores = "
        f"{totals['sum_seconds'] / args.cores / 60:.1f} min), "
        f"CPU {totals['sum_cpu_seconds']:.0f} s, longest job {totals['longest_job_seconds']:.0f} s, "
        f"wall span of the stage {totals['wall_span_seconds'] / 60:.1f} min"
    )
    if args.csv:
        summary.to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
