"""Whole-workflow timings in a temporary copy of the workflow (results of the checkout stay untouched).

* ``default``: wall time of ``snakemake --cores N`` on the embedded default (config/config.yaml),
  end to end from an empty results/ (data, classifiers, samples, every evaluate job, the reports);
* ``incremental``: runs ``.test/config.yaml`` without one method (``--add task/method``), then adds it
  back and prints the jobs ``snakemake -n`` plans: only that method's evaluate job and the reports
  that read it should appear.

Run: ``python benchmarks/bench_workflow.py default [--cores 2]`` or
``python benchmarks/bench_workflow.py incremental [--add quantification/KDEy]``.
It is a script, not a test.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOW_FILES = ("workflow", "config", "profiles", ".test", "requirements.lock")
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def copy_workflow(target: Path) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name)
        elif source.exists():
            shutil.copy(source, target / name)
    return target


def run(args: list[str], cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run([*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return seconds, result.stdout + result.stderr


def job_stats(output: str) -> str:
    """The 'Job stats' table Snakemake prints before running (or dry-running)."""
    match = re.search(r"Job stats:\n(.*?\n)(?:\n|$)", output, re.S)
    return match.group(1).rstrip() if match else "(no job stats printed)"


def bench_default(cores: int, keep: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = copy_workflow(Path(tmp) / "wf")
        seconds, output = run(["--cores", str(cores)], work)
        print(f"default run, --cores {cores}: {seconds:.1f} s wall ({seconds / 60:.1f} min)")
        print(job_stats(output))
        if keep:
            shutil.copytree(work / "results" / "benchmarks", keep, dirs_exist_ok=True)


def bench_incremental(added: str, cores: int) -> None:
    task, method = added.split("/")
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    methods = config["methods"]["label"][task]
    if method not in methods:
        raise SystemExit(f"{method} is not in .test/config.yaml's {task} list")
    with tempfile.TemporaryDirectory() as tmp:
        work = copy_workflow(Path(tmp) / "wf")
        without = dict(config)
        without["methods"] = {
            "label": {
                t: [m for m in names if not (t == task and m == method)]
                for t, names in config["methods"]["label"].items()
            }
        }
        (work / "without.yaml").write_text(yaml.safe_dump(without, sort_keys=False))
        seconds, _ = run(["--cores", str(cores), "--configfile", "without.yaml"], work)
        print(f".test/config.yaml without {added}: {seconds:.1f} s wall")
        _, output = run(["-n", "--configfile", ".test/config.yaml"], work)
        print(f"`snakemake -n --configfile .test/config.yaml` after adding {added} back:")
        print(job_stats(output))
        for line in output.splitlines():
            if line.startswith("    reason:") or line.startswith("rule ") or "wildcards:" in line:
                print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("default", "incremental"))
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--add", default="quantification/KDEy", help="task/method (incremental)")
    parser.add_argument("--keep-benchmarks", type=Path, help="copy results/benchmarks here")
    args = parser.parse_args()
    if args.mode == "default":
        bench_default(args.cores, args.keep_benchmarks)
    else:
        bench_incremental(args.add, args.cores)


if __name__ == "__main__":
    main()
