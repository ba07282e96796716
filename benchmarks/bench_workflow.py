"""Whole-workflow timings in a temporary copy of the workflow (results of the checkout stay untouched).

* ``default``: wall time of ``snakemake --cores N`` on the embedded default (config/config.yaml),
  end to end from an empty results/ (data, classifiers, samples, every evaluate job, the reports);
* ``incremental``: runs ``.test/config.yaml`` without one method (``--add task/method``), then adds it
  back and prints the jobs ``snakemake -n`` plans: only that method's evaluate job and the reports
  that read it should appear;
* ``plan``: wall time of ``snakemake -n`` (parsing, config and results checks, code versions,
  planning) for each config file, repeated, alternating with the same command on another checkout
  (``--against``, e.g. a ``git archive`` of an earlier commit) so that both see the same load.

Run: ``python benchmarks/bench_workflow.py default [--cores 2]`` or
``python benchmarks/bench_workflow.py incremental [--add quantification/KDEy]`` or
``python benchmarks/bench_workflow.py plan [--against /tmp/old-checkout] [--repeat 5]``.
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
WORKFLOW_FILES = (
    "Snakefile",
    "envs",
    "workflow",
    "config",
    "profiles",
    ".test",
    "requirements.lock",
)
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


def run(args: list[str], cwd: Path, env: dict | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run([*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, env=env)
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


def bench_plan(against: Path | None, repeat: int, configs: list[str]) -> None:
    import os
    import statistics

    trees = {"this checkout": (REPO, None)}
    if against:
        env = dict(os.environ, PYTHONPATH=str(against / "src"))
        trees[str(against)] = (against, env)
    with tempfile.TemporaryDirectory() as tmp:
        works = {}
        for k, (name, (tree, env)) in enumerate(trees.items()):
            work = Path(tmp) / f"wf{k}"
            for item in WORKFLOW_FILES:
                source = tree / item
                if source.is_dir():
                    shutil.copytree(source, work / item)
                elif source.exists():
                    work.mkdir(parents=True, exist_ok=True)
                    shutil.copy(source, work / item)
            works[name] = (work, env)
        for config in configs:
            times = {name: [] for name in works}
            for _ in range(repeat):
                for name, (work, env) in works.items():
                    times[name].append(run(["-n", "--configfile", config], work, env)[0])
            for name, values in times.items():
                print(
                    f"snakemake -n --configfile {config} ({name}): median "
                    f"{statistics.median(values):.1f} s of {repeat} ({', '.join(f'{v:.1f}' for v in values)})"
                )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("default", "incremental", "plan"))
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--add", default="quantification/KDEy", help="task/method (incremental)")
    parser.add_argument("--keep-benchmarks", type=Path, help="copy results/benchmarks here")
    parser.add_argument("--against", type=Path, help="another checkout to time side by side (plan)")
    parser.add_argument("--repeat", type=int, default=5, help="dry runs per config (plan)")
    parser.add_argument(
        "--configfile",
        action="append",
        help="config files to plan (plan; default .test/config.yaml and config/paper.yaml)",
    )
    args = parser.parse_args()
    if args.mode == "default":
        bench_default(args.cores, args.keep_benchmarks)
    elif args.mode == "plan":
        configs = args.configfile or [".test/config.yaml", "config/paper.yaml"]
        bench_plan(args.against, args.repeat, configs)
    else:
        bench_incremental(args.add, args.cores)


if __name__ == "__main__":
    main()
