"""The embedded default from empty on a fresh clone, measured by stage (issue 35).

Clones a commit of this repository into a temporary folder, runs the README's main command there
(``snakemake --cores N`` on config/config.yaml, this interpreter's environment, the clone's
``src`` first on the path), and reports:

* the CPU of everything it started (user + system of Snakemake and every process it waited for:
  job processes, the job server and its forks), the wall time, and the machine's load each second;
* Snakemake's own process apart (planning and scheduling), sampled each second from /proc, and the
  CPU of a dry run on the empty results folder (planning alone);
* per rule: the jobs, the CPU of their work (each job's log ends with ``job CPU: ...``, written by
  ``unishift.workflow.jobs.start_job``; a job run in a fork of the job server also logs its own
  process's CPU, the client that waited for the fork) and the CPU per job.

Run: ``python benchmarks/bench_default_run.py [--commit HEAD] [--cores 2] [--keep DIR]``; it prints a
Markdown table for benchmarks/RESULTS.md and writes the raw figures to ``--json``. The results of
the run are hashed (sha256 of every file under results/eval and results/tables) into the JSON, so
that two commits can be compared for identical bytes. It is a script, not a test.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
TICK = os.sysconf("SC_CLK_TCK")
RULE = re.compile(r"^(?:local)?rule (\w+):$")
LOG = re.compile(r"^\s+log: (.+)$")
JOB_CPU = re.compile(r"job CPU: ([0-9.]+) s")
FORK_CPU = re.compile(
    r"job server: ran in a fork, CPU ([0-9.]+) s user, ([0-9.]+) s sys"
    r"(?:; this job's process ([0-9.]+) s)?"
)


def process_cpu(pid: int) -> float | None:
    """User + system seconds of one live process (not its children)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


def children_of(pid: int) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == pid:
                found.append((int(entry.name), (entry / "cmdline").read_text()))
        except (OSError, IndexError, ValueError):
            continue
    return found


def measured_run(command: list[str], cwd: Path, env: dict) -> dict:
    """Run ``command``; its wall time, the CPU of it and of every process it waited for, its own
    process's CPU and its job server's (sampled each second), and the load each second."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    stdout = open(cwd / "snakemake.out", "w")
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.STDOUT)
    own, servers, load = {"main": 0.0}, {}, []

    def sample():
        while process.poll() is None:
            cpu = process_cpu(process.pid)
            if cpu is not None:
                own["main"] = cpu
            for pid, command_line in children_of(process.pid):
                if "unishift.workflow.job_server" in command_line:
                    cpu = process_cpu(pid)
                    if cpu is not None:
                        servers[pid] = max(servers.get(pid, 0.0), cpu)
            load.append((round(time.time() - started, 1), os.getloadavg()[0]))
            time.sleep(1)

    sampler = threading.Thread(target=sample)
    sampler.start()
    status = process.wait()
    sampler.join()
    stdout.close()
    wall = time.time() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "status": status,
        "wall_s": wall,
        "cpu_s": cpu,
        "snakemake_own_cpu_s": own["main"],
        "job_server_own_cpu_s": sum(servers.values()),
        "load": load,
        "output": (cwd / "snakemake.out").read_text(),
    }


def rule_of_logs(output: str, workdir: Path) -> dict[Path, str]:
    """Each job's log file and its rule, from Snakemake's printout of the jobs it ran (log paths
    relative to the working directory, whatever the config's results folder)."""
    logs, rule = {}, None
    for line in output.splitlines():
        if match := RULE.match(line):
            rule = match.group(1)
        elif (match := LOG.match(line)) and rule:
            for path in match.group(1).split(", "):
                logs[workdir / path.strip()] = rule
    return logs


def job_cpu(text: str) -> tuple[float | None, float | None]:
    """(work, client): a job's CPU from its log; the client is the process that waited for a
    fork of the job server (None where the job ran alone)."""
    if match := FORK_CPU.search(text):
        client = float(match.group(3)) if match.group(3) else None
        return float(match.group(1)) + float(match.group(2)), client
    if match := JOB_CPU.search(text):
        return float(match.group(1)), None
    return None, None


def by_rule(logs: dict[Path, str]) -> dict[str, dict]:
    table = defaultdict(lambda: {"jobs": 0, "work_s": 0.0, "client_s": 0.0, "unlogged": 0})
    for path, rule in logs.items():
        row = table[rule]
        row["jobs"] += 1
        work, client = job_cpu(path.read_text(errors="replace")) if path.is_file() else (None, None)
        if work is None:
            row["unlogged"] += 1
        else:
            row["work_s"] += work
            row["client_s"] += client or 0.0
    return dict(table)


def hashes(results: Path) -> dict[str, str]:
    digests = {}
    for folder in ("eval", "tables"):
        for path in sorted((results / folder).rglob("*")):
            if path.is_file():
                digests[str(path.relative_to(results))] = hashlib.sha256(
                    path.read_bytes()
                ).hexdigest()
    return digests


def markdown(run: dict, rules: dict[str, dict], plan: dict) -> str:
    loads = [value for _, value in run["load"]] or [float("nan")]
    jobs = sum(row["jobs"] for row in rules.values())
    work = sum(row["work_s"] for row in rules.values())
    client = sum(row["client_s"] for row in rules.values())
    lines = [
        f"wall {run['wall_s'] / 60:.1f} min; CPU {run['cpu_s'] / 60:.1f} min "
        f"({run['cpu_s']:.0f} s) over {jobs} jobs; load {min(loads):.1f}-{max(loads):.1f} "
        f"(mean {sum(loads) / len(loads):.1f})",
        "",
        "| stage | jobs | CPU s | CPU s per job |",
        "|---|---:|---:|---:|",
    ]
    for rule, row in sorted(rules.items(), key=lambda item: -item[1]["work_s"]):
        total = row["work_s"]
        flag = f" ({row['unlogged']} without a CPU line)" if row["unlogged"] else ""
        lines.append(
            f"| `{rule}`{flag} | {row['jobs']} | {total:.1f} | {total / row['jobs']:.2f} |"
        )
    rest = run["cpu_s"] - work - client - run["snakemake_own_cpu_s"] - run["job_server_own_cpu_s"]
    lines += [
        f"| the jobs' processes waiting for the job server's forks | {jobs} | {client:.1f} | "
        f"{client / max(jobs, 1):.2f} |",
        f"| the job server's own process (start-up, imports) | 1 | "
        f"{run['job_server_own_cpu_s']:.1f} | |",
        f"| Snakemake's own process (planning and scheduling) | 1 | "
        f"{run['snakemake_own_cpu_s']:.1f} | |",
        f"| of which planning (`snakemake -n` on the empty results) | | {plan['cpu_s']:.1f} | |",
        f"| not attributed (job interpreters before logging, Snakemake's helpers) | | {rest:.1f} | |",
        f"| **total** | {jobs} | **{run['cpu_s']:.1f}** | |",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--json", type=Path, default=REPO / "benchmarks/output/default_run.json")
    parser.add_argument("--keep", type=Path, help="copy the finished clone here")
    parser.add_argument("--config", nargs="*", default=[], help="extra --config KEY=VALUE items")
    parser.add_argument(
        "--configfile",
        help="another config instead of the embedded default (e.g. config/paper.yaml, with "
        "--config shifts=[label] data_root=...: the paper's label-shift grid)",
    )
    parser.add_argument(
        "--results", default="results", help="the results folder the config writes (its `results:`)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        subprocess.run(["git", "checkout", "-q", args.commit], cwd=clone, check=True)
        env = dict(os.environ, PYTHONPATH=str(clone / "src"))
        extra = ["--config", *args.config] if args.config else []
        if args.configfile:
            extra = ["--configfile", args.configfile, *extra]
        plan = measured_run([*SNAKEMAKE, "-n", "--quiet", "rules", *extra], clone, env)
        run = measured_run([*SNAKEMAKE, "--cores", str(args.cores), *extra], clone, env)
        if args.keep:  # first, so that a failed run can still be looked at
            shutil.copytree(clone, args.keep, symlinks=True, dirs_exist_ok=True)
        if run["status"] != 0:
            print(f"THE RUN FAILED (exit status {run['status']}):\n{run['output'][-3000:]}")
        results = clone / args.results
        rules = by_rule(rule_of_logs(run["output"], clone))
        report = markdown(run, rules, plan)
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True
        ).stdout.strip()
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "commit": commit,
                    "configfile": args.configfile,
                    "config": args.config,
                    "cores": args.cores,
                    "cpu": os.cpu_count(),
                    **{k: v for k, v in run.items() if k != "output"},
                    "plan_cpu_s": plan["cpu_s"],
                    "rules": rules,
                    "hashes": hashes(results),
                },
                indent=1,
            )
        )
        print(f"commit {commit}, --cores {args.cores}, exit status {run['status']}")
        print(report)


if __name__ == "__main__":
    main()
