"""CPU seconds of the evaluation jobs of finished runs: per job, per method, and the cost of cutting
the evaluation per setup rather than per method (docs/evaluation-jobs.md, "Start-up").

Reads the Snakemake benchmark files of the evaluate jobs (``<results>/benchmarks/eval/<shift>/
<task>/<method>/<setup>.tsv``, ``cpu_time`` = user + system seconds of the job's processes) of one
or more finished runs and prints, per run: the number of jobs, their total and median CPU seconds,
the median of the cheapest method (its jobs compute almost nothing, so their CPU is the start-up),
and the median of the jobs whose method uses QuaPy. A job that ran in a fork of the job server
(``job_server: true``) adds the fork's CPU, which its log records and its benchmark file cannot see:
the benchmark file then measures only the process that handed the job over. With two runs of the
same config, one with
``evaluation_jobs: per_setup`` and one with ``per_method``, it prints the ratio of their totals.

    python benchmarks/bench_job_startup.py RESULTS_DIR [RESULTS_DIR ...] [--cheapest Naive]

It is a script, not a test.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

# Methods whose evaluation imports QuaPy (the quantifiers and what wraps them).
QUAPY_METHODS = ("CC", "PCC", "ACC", "PACC", "EMQ", "EMQ_BCTS", "KDEy", "DMCal", "PacCal_sigma")


FORK_CPU = re.compile(r"job server: ran in a fork, CPU ([0-9.]+) s user, ([0-9.]+) s sys")


def fork_cpu(log: Path) -> float:
    """The CPU seconds of the job's fork of the job server (0 where the job ran alone)."""
    found = FORK_CPU.search(log.read_text()) if log.is_file() else None
    return float(found[1]) + float(found[2]) if found else 0.0


def evaluation_jobs(results: Path) -> pd.DataFrame:
    rows = []
    root = results / "benchmarks" / "eval"
    for path in sorted(root.glob("*/*/*/**/*.tsv")):
        shift, task, method = path.relative_to(root).parts[:3]
        table = pd.read_csv(path, sep="\t")
        if table.empty:
            continue
        rows.append(
            {
                "shift": shift,
                "task": task,
                "method": method,
                "setup": "/".join(path.relative_to(root).with_suffix("").parts[3:]),
                "cpu_seconds": float(table.iloc[0]["cpu_time"])
                + fork_cpu(
                    (results / "logs" / "eval" / path.relative_to(root)).with_suffix(".log")
                ),
                "seconds": float(table.iloc[0]["s"]),
            }
        )
    return pd.DataFrame(rows)


def summary(jobs: pd.DataFrame, cheapest: str) -> dict:
    quapy = jobs["method"].isin(QUAPY_METHODS)
    return {
        "jobs": len(jobs),
        "cpu_total": round(float(jobs["cpu_seconds"].sum()), 1),
        "cpu_median": round(float(jobs["cpu_seconds"].median()), 2),
        f"cpu_median_{cheapest}": round(
            float(jobs.loc[jobs["method"] == cheapest, "cpu_seconds"].median()), 2
        ),
        "cpu_median_quapy_methods": round(float(jobs.loc[quapy, "cpu_seconds"].median()), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--cheapest", default="Naive")
    args = parser.parse_args()
    totals = []
    for results in args.results:
        row = summary(evaluation_jobs(results), args.cheapest)
        totals.append(row["cpu_total"])
        print(results, row)
    if len(totals) == 2 and min(totals) > 0:
        print(f"ratio of the total CPU seconds: {max(totals) / min(totals):.2f}")


if __name__ == "__main__":
    main()
