"""What a run does before its jobs, in one call from ``workflow/rules/common.smk``: the config
checked (YAML, schema, what the schema cannot say), the plugins registered, the CPU kernels pinned,
the results folder scanned for damaged files; when the run starts, its lock and job server; when it
ends, Snakemake's pending scheduler wake-ups cancelled."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from unishift.cpu_kernels import pin as pin_kernels
from unishift.methods.registry import use_plugins
from unishift.workflow.checks import (
    check_config,
    check_config_files,
    check_integers,
    check_intermediates,
    load_config_file,
)
from unishift.workflow.config_access import results_folder

# where the job server starts paying for its own start (about 3 CPU s; docs/evaluation-jobs.md)
JOB_SERVER_MIN_JOBS = 4


@dataclass(frozen=True)
class PreparedRun:
    """What the rules read of a prepared run."""

    results: str  # the results folder
    paper_config: dict  # config/paper.yaml, validated: the protocol a reproduction compares with


def prepare_run(
    config: dict,
    *,
    config_files: Iterable[str | os.PathLike],
    schema: str | os.PathLike,
    validate: Callable,
    repository: str | os.PathLike,
    main_process: bool,
) -> PreparedRun:
    """Check and prepare a run before any job: ``validate`` is Snakemake's
    ``snakemake.utils.validate`` (it fills in the schema's defaults), passed in so that the library
    stays free of Snakemake; ``main_process`` is False in the jobs' own parse of the workflow, which
    skips the scan of the results folder."""
    # YAML syntax and duplicate keys (with file and line), the schema, then what the schema cannot
    # say: all before any job runs
    check_config_files(config_files)
    validate(config, schema=str(schema))
    check_integers(config, str(schema))
    # plugin modules register their methods before the method names are checked, here and (through
    # the environment the jobs inherit) in every job that reads the registry
    use_plugins(config["plugins"])
    check_config(config)
    # every job computes with the same CPU kernels on any machine (docs/determinism.md): the
    # variables are set here, before any job starts, and each job checks that they took effect
    pin_kernels(config["cpu_kernels"])
    results = results_folder(config)
    # the paper's protocol, against which a reproduction page says whether its cells are
    # comparable: with the schema's defaults filled in, as in the run's own config
    paper_config = load_config_file(Path(repository) / "config" / "paper.yaml")
    validate(paper_config, schema=str(schema))
    if main_process:
        # a damaged file of a previous run would make every job reading it fail after Snakemake
        # removed that job's good outputs, or be read partially: refuse to plan on top of it
        check_intermediates(results)
    return PreparedRun(results, paper_config)


def start_run(results: str, *, lock: bool, job_server: bool, local: bool, n_jobs: int) -> None:
    """The start of a run (Snakemake's ``onstart``): one run at a time per results folder
    (:mod:`unishift.workflow.run_lock`; ``--nolock`` skips it like Snakemake's own lock), and local
    jobs forked from one process that imported the scientific stack once, from a few jobs on."""
    from unishift.workflow.job_server import start as start_job_server
    from unishift.workflow.run_lock import hold_run_lock

    if lock:
        hold_run_lock(results)
    if job_server and local and n_jobs >= JOB_SERVER_MIN_JOBS:
        os.makedirs(f"{results}/logs", exist_ok=True)
        start_job_server(f"{results}/logs/job_server.log")


def end_run() -> None:
    """The end of a run (Snakemake's ``onsuccess`` and ``onerror``): cancel the scheduler's pending
    wake-ups. With the profiles' job-rate limit (``max-jobs-per-timespan: 10000/100s``) Snakemake
    arms a timer one timespan after each scheduling round; the timer is not a daemon thread, so
    Python would wait up to 100 s for it before the process exits. Once the run is over no round is
    left to wake, and cancelling changes nothing but the exit."""
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer) and _is_scheduler_wakeup(thread.function):
            thread.cancel()


def _is_scheduler_wakeup(function) -> bool:
    # the lambda JobScheduler._schedule_reevalutation arms (Snakemake's spelling); no other timer
    return getattr(function, "__qualname__", "").startswith(
        "JobScheduler._schedule_reevalutation."
    ) and function.__module__.startswith("snakemake.")
