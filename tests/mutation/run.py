"""Mutation check of the test suite: break the code on purpose, one small realistic bug at a time, and
count how many of the bugs the fast tests catch.

    .venv/bin/python -m tests.mutation.run                 # every fast mutation, one job at a time
    .venv/bin/python -m tests.mutation.run --jobs 2        # two at a time (two copies of the repo)
    .venv/bin/python -m tests.mutation.run --only C1 S2    # a few by id
    .venv/bin/python -m tests.mutation.run --slow          # also those that need a workflow run
    .venv/bin/python -m tests.mutation.run --report docs/mutation-check.md

Each mutation of ``tests/mutation/mutations.py`` replaces one exact snippet of one file in a private
copy of the repository (never the working tree), runs the tests of its area there with that copy's
``src`` first on ``PYTHONPATH``, and counts as caught when they fail. A snippet that no longer occurs
exactly once, or a replacement that does not parse, is reported as stale instead of being run: the
list must be updated with the code. The unmutated copy must pass the selected tests first.

This lives next to the tests because it measures them; it is not collected by pytest (the suite would
take an hour) and is not part of CI.
"""

from __future__ import annotations

import argparse
import ast
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tests.mutation.mutations import AREA_TESTS, MUTATIONS, Mutation

REPO = Path(__file__).resolve().parents[2]
COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "results", "__pycache__", ".snakemake", "*.egg-info", ".pytest_cache"
)


@dataclass
class Outcome:
    mutation: Mutation
    result: str  # caught | missed | stale
    seconds: float
    detail: str = ""


def tests_of(mutation: Mutation) -> list[str]:
    return list(mutation.tests or AREA_TESTS[mutation.area])


def pytest_command(tests: list[str], slow: bool) -> list[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
    if not slow:
        command += ["-m", "not workflow and not cluster"]
    return command + tests


def run_pytest(copy: Path, tests: list[str], slow: bool, timeout: int) -> tuple[int, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(copy / "src"), str(copy)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a stale .pyc must never hide a mutation
    env["HYPOTHESIS_PROFILE"] = "derandomized"  # the same property-test examples every run
    # The copy lives in a temporary folder, where the tests' default ../shared/data is absent: point
    # them at the repository's, or every test that needs the offline data skips and misses its bug.
    env.setdefault("UNISHIFT_DATA_ROOT", str(REPO.parent / "shared" / "data"))
    try:
        done = subprocess.run(
            pytest_command(tests, slow),
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {timeout} s"
    tail = (done.stdout + done.stderr).strip().splitlines()
    return done.returncode, tail[-1] if tail else ""


def apply(copy: Path, mutation: Mutation) -> str | None:
    """Write the mutated file into ``copy``; returns why it cannot be applied, or None."""
    path = copy / mutation.file
    if not path.is_file():
        return f"{mutation.file} does not exist"
    text = path.read_text()
    count = text.count(mutation.old)
    if count != 1:
        return f"the snippet occurs {count} times in {mutation.file} (must be exactly once)"
    mutated = text.replace(mutation.old, mutation.new)
    if path.suffix == ".py":
        try:
            ast.parse(mutated)
        except SyntaxError as err:
            return f"the mutated file does not parse: {err}"
    path.write_text(mutated)
    return None


def check(copy: Path, mutation: Mutation, timeout: int) -> Outcome:
    path = copy / mutation.file
    original = path.read_text() if path.is_file() else None
    started = time.perf_counter()
    problem = apply(copy, mutation)
    if problem:
        return Outcome(mutation, "stale", 0.0, problem)
    try:
        rc, last = run_pytest(copy, tests_of(mutation), mutation.slow, timeout)
    finally:
        path.write_text(original)
    seconds = time.perf_counter() - started
    if rc == 0:
        return Outcome(mutation, "missed", seconds, last)
    if rc in (4, 5):  # usage error / nothing collected: the test selection is wrong
        return Outcome(mutation, "stale", seconds, f"pytest exit {rc}: {last}")
    return Outcome(mutation, "caught", seconds, last)


def make_copy(root: Path, name: str) -> Path:
    copy = root / name
    shutil.copytree(REPO, copy, ignore=COPY_IGNORE)
    return copy


def baseline(copy: Path, mutations: list[Mutation], timeout: int) -> None:
    """The unmutated copy must pass every selected test, or no result would mean anything."""
    for slow in sorted({m.slow for m in mutations}):
        tests = sorted({t for m in mutations if m.slow == slow for t in tests_of(m)})
        rc, last = run_pytest(copy, tests, slow, timeout)
        if rc != 0:
            raise SystemExit(f"the unmutated tests fail ({last}); fix them before mutating")


def score(outcomes: list[Outcome]) -> str:
    caught = sum(o.result == "caught" for o in outcomes)
    ran = sum(o.result != "stale" for o in outcomes)
    return f"{caught} of {ran} ({100 * caught / max(ran, 1):.0f}%)"


def markdown(outcomes: list[Outcome]) -> str:
    caught = sum(o.result == "caught" for o in outcomes)
    ran = sum(o.result != "stale" for o in outcomes)
    held = [o for o in outcomes if o.mutation.held_out]
    lines = [
        f"Caught {caught} of {ran} mutations ({100 * caught / max(ran, 1):.0f}%)"
        + (f"; {len(outcomes) - ran} stale" if ran < len(outcomes) else "")
        + "."
        + (
            f" Held out (written after the tests, none written against them): {score(held)}."
            if held
            else ""
        ),
        "",
        "| id | area | file | bug | result |",
        "|---|---|---|---|---|",
    ]
    for o in outcomes:
        m = o.mutation
        result = o.result if o.result != "stale" else f"stale: {o.detail}"
        lines.append(f"| {m.id} | {m.area} | `{m.file}` | {m.description} | {result} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="mutation ids to run")
    parser.add_argument("--jobs", type=int, default=1, help="mutations checked side by side")
    parser.add_argument("--slow", action="store_true", help="include workflow-run mutations")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per mutation")
    parser.add_argument("--report", type=Path, help="write the result table (markdown) here")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument(
        "--check-only", action="store_true", help="only check that every snippet still applies"
    )
    args = parser.parse_args(argv)

    selected = [m for m in MUTATIONS if args.slow or not m.slow]
    if args.only:
        unknown = set(args.only) - {m.id for m in MUTATIONS}
        if unknown:
            parser.error(f"unknown mutation ids {sorted(unknown)}")
        selected = [m for m in MUTATIONS if m.id in args.only]
    if args.list:
        for m in selected:
            print(f"{m.id:5} {m.area:12} {m.file}: {m.description}")
        return 0

    if args.check_only:
        problems = []
        for m in selected:
            text = (REPO / m.file).read_text() if (REPO / m.file).is_file() else ""
            if text.count(m.old) != 1:
                problems.append(f"{m.id}: snippet occurs {text.count(m.old)} times in {m.file}")
            elif m.file.endswith(".py"):
                try:
                    ast.parse(text.replace(m.old, m.new))
                except SyntaxError as err:
                    problems.append(f"{m.id}: mutated {m.file} does not parse ({err})")
        print("\n".join(problems) or f"all {len(selected)} mutations apply")
        return 1 if problems else 0

    root = Path(tempfile.mkdtemp(prefix="unishift-mutation-"))
    try:
        copies = [make_copy(root, f"copy{i}") for i in range(max(1, args.jobs))]
        baseline(copies[0], selected, args.timeout)
        todo: queue.Queue[Mutation] = queue.Queue()
        for m in selected:
            todo.put(m)
        outcomes: dict[str, Outcome] = {}
        lock = threading.Lock()

        def worker(copy: Path) -> None:
            while True:
                try:
                    m = todo.get_nowait()
                except queue.Empty:
                    return
                outcome = check(copy, m, args.timeout)
                with lock:
                    outcomes[m.id] = outcome
                    print(
                        f"{m.id:5} {outcome.result:7} {outcome.seconds:6.1f} s  {m.description}",
                        flush=True,
                    )

        threads = [threading.Thread(target=worker, args=(c,)) for c in copies]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        shutil.rmtree(root, ignore_errors=True)

    ordered = [outcomes[m.id] for m in selected]
    text = markdown(ordered)
    print()
    print(text.splitlines()[0])
    for o in ordered:
        if o.result != "caught":
            print(f"  {o.mutation.id} {o.result}: {o.mutation.description} {o.detail}")
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(text)
    return 0 if all(o.result != "stale" for o in ordered) else 1


if __name__ == "__main__":
    sys.exit(main())
