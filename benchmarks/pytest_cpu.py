"""A pytest plugin that measures each test's CPU time: user + system of the pytest process and of the
children it waited for (the snakemake runs and their jobs), setup and fixtures included, so that a
session fixture is charged to the first test that uses it. The snakemake runs in forks of the tests'
warm process count as they end.

    PYTHONPATH=benchmarks .venv/bin/python -m pytest -q -p no:cacheprovider -p pytest_cpu [-m workflow]

writes the tests by CPU seconds, most first, to ``$PYTEST_CPU_OUT`` (default ``pytest_cpu.txt``):
``cpu_s wall_s test``, after a ``total`` line (which says how often the warm snakemake process
started). docs/testing.md reports its shares.
"""

from __future__ import annotations

import os
import resource
import sys
import time

import pytest

_ROWS: list[tuple[float, float, str]] = []


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    # the snakemake runs in forks of the warm process (tests/snakemake_forks.py), which this
    # process waits for only at its exit
    warm = sys.modules.get("tests.snakemake_forks")
    forked = warm.WARM.forked_cpu_s if warm is not None else 0.0
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + forked


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall = _cpu_seconds(), time.time()
    yield
    _ROWS.append((_cpu_seconds() - cpu, time.time() - wall, item.nodeid))


def pytest_sessionfinish(session):
    rows = sorted(_ROWS, reverse=True)
    with open(os.environ.get("PYTEST_CPU_OUT", "pytest_cpu.txt"), "w") as out:
        warm = sys.modules.get("tests.snakemake_forks")
        starts = f", warm process started {warm.WARM.starts} times" if warm is not None else ""
        out.write(f"total {sum(row[0] for row in rows):.1f}{starts}\n")
        for cpu, wall, nodeid in rows:
            out.write(f"{cpu:8.1f} {wall:8.1f} {nodeid}\n")
