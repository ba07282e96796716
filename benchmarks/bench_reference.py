"""CPU seconds of the reference implementation (REF, AlexMoreo/UnifyingProblems) and of unishift on the
same label-shift work, single-threaded, measured by ``getrusage`` of each side's process.

The work: REF's label-shift scripts (``tools/reference_check.py``'s ``--script``) on some data sets
and classifiers, that is every column of the script (calibration: 16 methods; quantification: 14,
PCC included) on every (data set, classifier) setup, 100 UPP samples of 250 items, seed 0. unishift
does the same through the library as the workflow's jobs do (``prepare_splits`` ->
``label_shift_samples`` -> ``train_and_predict`` -> ``load_label_setup`` -> ``evaluate_method`` of
each column), in one fresh process per script, as REF runs one process per script. Both sides: one
thread (``OMP/OPENBLAS/MKL_NUM_THREADS=1``) and the AVX2 kernels of ``cpu_kernels: avx2``
(docs/determinism.md; REF's NumPy 2.2 names its AVX2 target differently, see ``REF_NUMPY``), under
``nice``. Each side's CPU time is user + system of its process and everything it waited for
(``os.wait4``), start-up and imports included; the breakdown of unishift's process is printed too.

Two steps, because REF needs its own Python environment (docs/reproduction.md, "How the numbers
were checked"; ``tools/reference_check.py``'s docstring says how to build it):

1. ``reference`` -- run REF (through ``tools/reference_check.py run``, REF's scripts unchanged) in a
   fresh folder and write its timing, with the load average before, during and after::

       python benchmarks/bench_reference.py reference --ref-python /tmp/refenv/bin/python \\
           --ref /tmp/ref --work /tmp/refbench --scripts calibration,quantification \\
           --datasets cmc.3,yeast --classifiers LR --data-root ../shared/data

   ``--memoise-rlls`` keeps ``reference_check.py``'s memo of abstention's RLLS solve (a time saver
   for the comparison runs, not part of REF); by default REF runs as published.

2. ``unishift`` -- read that timing, do the same work here and print the ratio (also written to
   ``benchmarks/output/reference_ratio.json``)::

       python benchmarks/bench_reference.py unishift --work /tmp/refbench --data-root ../shared/data

Check that both sides compute the same numbers first: ``tools/reference_check.py compare --out
<work>/<script> ...`` on the CSVs step 1 leaves. It is a script, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = Path(__file__).resolve().parent / "output"
TIMING = "reference_timing.json"

# REF's column names -> our registry's (tools/reference_check.py's NAMES), plus the one REF column
# the comparison tool leaves out (quantification's PCC), so that both sides do the same methods.
EXTRA_COLUMNS = {"quantification": {"PCC": "PCC"}}
REF_CLASSIFIERS = {"LR": "lr", "NB": "nb", "kNN": "knn", "MLP": "mlp"}
THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# NumPy 2.2 (REF's) does not know 2.4's target name X86_V3: its AVX2 set under the old names.
REF_NUMPY = "SSE SSE2 SSE3 SSSE3 SSE41 POPCNT SSE42 AVX F16C FMA3 AVX2"


def _reference_check():
    sys.path.insert(0, str(ROOT / "tools"))
    import reference_check

    return reference_check


def columns(script: str, skip: str | list[str] = ()) -> dict[str, str]:
    """REF's columns of a script and our method of each, less those in ``skip``."""
    skip = skip.split(",") if isinstance(skip, str) else skip
    every = {**_reference_check().NAMES[script], **EXTRA_COLUMNS.get(script, {})}
    unknown = set(filter(None, skip)) - set(every)
    if unknown:
        raise SystemExit(f"no REF column {sorted(unknown)} in {script}; columns: {sorted(every)}")
    return {ref: ours for ref, ours in every.items() if ref not in skip}


def environment(reference: bool) -> dict[str, str]:
    """The environment of a timed process: one thread, the avx2 kernels."""
    from unishift import cpu_kernels

    env = dict(os.environ)
    cpu_kernels.pin(cpu_kernels.DEFAULT_PROFILE, env)
    if reference:
        env[cpu_kernels.NUMPY_VARIABLE] = REF_NUMPY
    env.update({name: "1" for name in THREADS})
    return env


class Watch:
    """The 1-minute load average every ``period`` seconds while a process runs, and, when given a
    folder, the process's own CPU seconds (``/proc/<pid>/stat``) when each new CSV appears there:
    REF writes one CSV per column and setup, so the differences are its CPU per column."""

    def __init__(self, period: float = 2.0, folder: Path | None = None):
        self.samples, self.columns, self._stop = [os.getloadavg()[0]], {}, threading.Event()
        self.folder, self.pid, self._last = folder, None, time.monotonic()
        self._thread = threading.Thread(target=self._watch, args=(period,), daemon=True)
        self._thread.start()

    def _cpu(self) -> float | None:
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, TypeError):
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _watch(self, period):
        while not self._stop.wait(period):
            if time.monotonic() - self._last >= 10:
                self.samples.append(os.getloadavg()[0])
                self._last = time.monotonic()
            if self.folder is not None and self.pid is not None:
                for path in sorted(self.folder.glob("**/*.csv"), key=os.path.getmtime):
                    if path.stem not in self.columns and (cpu := self._cpu()) is not None:
                        self.columns[path.stem] = cpu

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])
        return {
            "load_start": self.samples[0],
            "load_end": self.samples[-1],
            "load_min": min(self.samples),
            "load_max": max(self.samples),
            "load_mean": sum(self.samples) / len(self.samples),
            "cpu_s_at_csv": self.columns,
        }


def timed(
    command: list[str], env: dict, cwd=None, log: Path | None = None, folder: Path | None = None
) -> dict:
    """Run ``command`` under ``nice``; its CPU seconds (itself and what it waited for), wall and
    load, and (``folder``) its CPU when each CSV appeared there."""
    started_at = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    watch, tick = Watch(folder=folder), time.perf_counter()
    out = open(log, "w") if log else subprocess.DEVNULL
    try:
        process = subprocess.Popen(["nice", *command], env=env, cwd=cwd, stdout=out, stderr=out)
        watch.pid = process.pid  # nice execs the command: same process
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        if log:
            out.close()
    wall = time.perf_counter() - tick
    load = watch.stop()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(command)} failed with exit code {code} (log: {log})")
    return {
        "started": started_at,
        "user_s": usage.ru_utime,
        "sys_s": usage.ru_stime,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "wall_s": wall,
        **load,
    }


def seed_cache(datasets: list[str], data_home: Path, data_root: str | None) -> None:
    """QuaPy's UCI cache for REF, built from the verified offline copies (no download)."""
    from unishift.data.uci import seed_quapy_cache

    for dataset in datasets:
        print(f"{dataset}: {seed_quapy_cache(dataset, data_home / 'quapy_data', data_root)}")


def kernels_of(python: str, env: dict) -> dict:
    """The OpenBLAS core type, thread counts and NumPy dispatch a process of ``python`` gets."""
    probe = (
        "import json, numpy; from threadpoolctl import threadpool_info as t;"
        "from numpy._core import _multiarray_umath as u;"
        "print(json.dumps({'numpy': numpy.__version__, 'dispatch': [n for n in u.__cpu_dispatch__"
        " if u.__cpu_features__.get(n)], 'pools': [(p['internal_api'], p.get('architecture'),"
        " p['num_threads']) for p in t()]}))"
    )
    out = subprocess.run([python, "-c", probe], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def reference(args) -> None:
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    datasets, scripts = args.datasets.split(","), args.scripts.split(",")
    home = work / "home"
    seed_cache(datasets, home, args.data_root)
    env = {**environment(reference=True), "HOME": str(home)}
    commit = subprocess.run(
        ["git", "-C", args.ref, "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    timing = {
        "ref_commit": commit,
        "ref_python": args.ref_python,
        "datasets": datasets,
        "classifiers": args.classifiers.split(","),
        "memoise_rlls": args.memoise_rlls,
        "skipped_columns": list(filter(None, args.skip.split(","))),
        "kernels": kernels_of(args.ref_python, env),
        "scripts": {},
    }
    ref_classifiers = ",".join(REF_CLASSIFIERS[c] for c in timing["classifiers"])
    for script in scripts:
        out = work / script
        if out.exists():  # REF skips every column whose CSV exists: a timing needs an empty folder
            shutil.rmtree(out)
        command = [args.ref_python, str(ROOT / "tools" / "reference_check.py"), "run"]
        command += ["--ref", args.ref, "--out", str(out), "--script", script]
        command += ["--datasets", args.datasets, "--classifiers", ref_classifiers]
        if not args.memoise_rlls:
            command.append("--as-published")
        if args.skip:
            command += ["--skip", args.skip]
        print(f"reference {script}: {' '.join(command)}", flush=True)
        result = timed(command, env, log=work / f"reference_{script}.log", folder=out)
        produced = sorted(p.name for p in out.glob("results/*/label_shift/*/*.csv"))
        expected = len(columns(script)) * len(datasets) * len(timing["classifiers"])
        if len(produced) != expected:
            raise SystemExit(f"REF wrote {len(produced)} CSVs of {script}, expected {expected}")
        timing["scripts"][script] = {**result, "csv_files": len(produced)}
        print(f"  {result['cpu_s']:.1f} CPU s, {result['wall_s']:.1f} s wall, "
              f"load {result['load_min']:.1f}-{result['load_max']:.1f}", flush=True)  # fmt: skip
    (work / TIMING).write_text(json.dumps(timing, indent=2) + "\n")
    print(f"wrote {work / TIMING}")


def work(args) -> None:
    """The unishift side of one script, in this (timed) process: prints its CPU breakdown."""
    start = time.process_time()
    import tempfile

    from unishift import cpu_kernels
    from unishift.data.label_shift import (
        label_shift_samples,
        load_label_setup,
        prepare_splits,
        train_and_predict,
    )
    from unishift.evaluation.evaluate import evaluate_method
    from unishift.methods.registry import get_method

    methods = list(columns(args.script, args.skip).values())
    for method in methods:
        get_method(args.script, method, "label")  # imports every method's module, refuses a typo
    cpu_kernels.assert_pinned(cpu_kernels.DEFAULT_PROFILE)
    imported = time.process_time()
    data_seconds, per_method, records = 0.0, {}, 0
    with tempfile.TemporaryDirectory() as home:
        for dataset in args.datasets.split(","):
            tick = time.process_time()
            splits, _ = prepare_splits(dataset, home, args.data_root, seed=0)
            samples = label_shift_samples(splits, 250, 100, 0)
            data_seconds += time.process_time() - tick
            for classifier in args.classifiers.split(","):
                tick = time.process_time()
                _, posteriors = train_and_predict(splits, classifier, 0, samples=samples)
                setup = load_label_setup(splits, posteriors, samples, dataset, classifier, 0)
                data_seconds += time.process_time() - tick
                for method in methods:
                    tick = time.process_time()
                    frame, _ = evaluate_method(args.script, method, "label", [setup])
                    per_method[method] = per_method.get(method, 0.0) + time.process_time() - tick
                    failed = frame[frame["status"] == "error"]
                    if len(failed):
                        raise SystemExit(f"{method} on {dataset}/{classifier}: {failed.iloc[0]}")
                    records += len(frame)
    print(json.dumps({"imports_s": imported - start, "data_s": data_seconds,
                      "methods_s": per_method, "records": records}))  # fmt: skip


def unishift(args) -> None:
    work_dir = Path(args.work).resolve()
    timing = json.loads((work_dir / TIMING).read_text())
    env = environment(reference=False)
    classifiers = ",".join(timing["classifiers"])
    datasets = ",".join(timing["datasets"])
    rows, report = [], {"reference": timing, "unishift": {}}
    for script, ref in timing["scripts"].items():
        log = work_dir / f"unishift_{script}.log"
        command = [sys.executable, __file__, "work", "--script", script, "--datasets", datasets]
        command += ["--classifiers", classifiers]
        if not args.every_column:
            command += ["--skip", ",".join(timing.get("skipped_columns", []))]
        command += ["--data-root", args.data_root] if args.data_root else []
        runs = []
        for _ in range(args.repeat):
            result = timed(command, env, cwd=ROOT, log=log)
            result["breakdown"] = json.loads(log.read_text().strip().splitlines()[-1])
            runs.append(result)
            print(f"unishift {script}: {result['cpu_s']:.2f} CPU s, {result['wall_s']:.1f} s wall, "
                  f"load {result['load_min']:.1f}-{result['load_max']:.1f}", flush=True)  # fmt: skip
        median = sorted(runs, key=lambda r: r["cpu_s"])[(len(runs) - 1) // 2]
        report["unishift"][script] = {**median, "runs_cpu_s": [r["cpu_s"] for r in runs]}
        rows.append((script, ref, median))
    ref_total = sum(r["cpu_s"] for _, r, _ in rows)
    ours_total = sum(o["cpu_s"] for _, _, o in rows)
    comparable = not (args.every_column and timing.get("skipped_columns"))
    report["ratio"] = ref_total / ours_total if comparable else None
    report["kernels"] = kernels_of(sys.executable, env)
    skipped = timing.get("skipped_columns") or "none"
    print(f"\nwork: {datasets} x {classifiers}, 100 samples of 250 per setup, one thread; "
          f"REF columns left out: {skipped}{'' if comparable else ' (by REF only)'}\n")  # fmt: skip
    print("| script | REF CPU s | REF load | unishift CPU s | unishift load | ratio |")
    print("|---|---|---|---|---|---|")
    for script, ref, ours in rows:
        ratio = f"{ref['cpu_s'] / ours['cpu_s']:.1f}x" if comparable else "n/a"
        print(f"| {script} | {ref['cpu_s']:.1f} | {ref['load_min']:.1f}-{ref['load_max']:.1f} | "
              f"{ours['cpu_s']:.2f} | {ours['load_min']:.1f}-{ours['load_max']:.1f} | {ratio} |")  # fmt: skip
    if comparable:
        print(f"| total | {ref_total:.1f} | | {ours_total:.2f} | | **{report['ratio']:.1f}x** |")
    for script, ref, ours in rows:
        b = ours["breakdown"]
        print(f"\n{script}: unishift's imports {b['imports_s']:.2f} s, data and classifier "
              f"{b['data_s']:.2f} s; per column (REF: its CPU between its CSVs, that column's fit "
              "included; the first also REF's start-up):\n")  # fmt: skip
        print("| REF column | REF CPU s | unishift method | unishift CPU s |")
        print("|---|---|---|---|")
        at_csv, previous = ref.get("cpu_s_at_csv", {}), 0.0
        names = columns(script)
        for stem, cpu in sorted(at_csv.items(), key=lambda kv: kv[1]):
            column = stem.split("_")[0]
            if column in timing.get("skipped_columns", []):  # written at REF's start
                previous = cpu
                continue
            method = names.get(column, "?")
            print(f"| {column} | {cpu - previous:.2f} | {method} | "
                  f"{b['methods_s'].get(method, float('nan')):.2f} |")  # fmt: skip
            previous = cpu
    OUTPUT.mkdir(exist_ok=True)
    (OUTPUT / "reference_ratio.json").write_text(json.dumps(report, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ref = sub.add_parser("reference", help="run REF and write its timing")
    ref.add_argument("--ref-python", required=True, help="the Python of REF's environment")
    ref.add_argument("--ref", required=True, help="a checkout of AlexMoreo/UnifyingProblems")
    ref.add_argument("--scripts", default="calibration,quantification")
    ref.add_argument("--datasets", default="cmc.3,yeast")
    ref.add_argument("--classifiers", default="LR", help="our names: LR,NB,kNN,MLP")
    ref.add_argument("--memoise-rlls", action="store_true", help="see the module docstring")
    ref.add_argument(
        "--skip",
        default="",
        help="REF columns left out on both sides (REF's names, comma-separated)",
    )
    ours = sub.add_parser("unishift", help="time unishift on REF's work and print the ratio")
    ours.add_argument("--repeat", type=int, default=1, help="runs per script; the median counts")
    ours.add_argument(
        "--every-column",
        action="store_true",
        help="also the columns REF's timing left out (--skip): unishift's CPU of the whole script, "
        "for a comparison with REF's per-column CPU of several runs",
    )
    one = sub.add_parser("work", help="(internal) the timed unishift process of one script")
    one.add_argument("--script", required=True)
    one.add_argument("--datasets", required=True)
    one.add_argument("--classifiers", required=True)
    one.add_argument("--skip", default="", help="REF columns left out")
    for p in (ref, ours, one):
        p.add_argument("--data-root", default=None, help="offline copies of the data sets")
    for p in (ref, ours):
        p.add_argument("--work", required=True, help="folder of REF's output and timing")
    args = parser.parse_args()
    {"reference": reference, "unishift": unishift, "work": work}[args.command](args)


if __name__ == "__main__":
    main()
