"""Process-level set-up shared by the workflow's scripts (no Snakemake imports here)."""

from __future__ import annotations

import atexit
import logging
import os
import resource
import sys
from pathlib import Path

from unishift.output_records import verify, write_record
from unishift.workflow.config_access import results_folder


def start_job(job) -> logging.Logger:
    """Set up one workflow job (``job``: its ``snakemake`` object, or a log path alone): logging to
    its log file, thread pools capped at its threads, the CPU kernels checked, and (given the
    ``snakemake`` object) its inputs verified and its outputs recorded (:mod:`unishift.output_records`)."""
    from unishift.cpu_kernels import PROFILE_VARIABLE, assert_pinned, numpy_dispatch, thread_pools

    log_path = job if isinstance(job, (str, os.PathLike)) else job.log[0]
    thread_pools().limit(limits=max(1, int(getattr(job, "threads", 1))))
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_path, mode="w")
    layout = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    logging.basicConfig(handlers=[handler], level=logging.INFO, format=layout, force=True)
    logging.captureWarnings(True)
    sys.stderr = handler.stream
    logger = logging.getLogger("unishift")
    # registered first, so run last: the job's whole CPU, its output records included (a fork of
    # the job server starts from zero: getrusage counts from the fork)
    atexit.register(_log_cpu, logger)
    # the workflow sets the kernel profile's variables for every job (docs/determinism.md); a job
    # that computes with other kernels stops here instead of writing other last digits
    profile = os.environ.get(PROFILE_VARIABLE)
    if profile:
        architecture = assert_pinned(profile)
        dispatch = " ".join(numpy_dispatch()) or "baseline"
        logger.info("CPU kernels: %s (OpenBLAS %s, NumPy %s)", profile, architecture, dispatch)
    if isinstance(job, (str, os.PathLike)):
        return logger
    inputs = _files(job.input)
    config = getattr(job, "config", None)
    results = results_folder(config) if isinstance(config, dict) else None
    verify((p for p in inputs if Path(p).is_file()), results)
    # the outputs are recorded once the script ends without an exception (Snakemake removes the
    # outputs of a failed job)
    failed = []
    previous_hook = sys.excepthook

    def note_failure(kind, value, traceback):
        failed.append(kind)
        previous_hook(kind, value, traceback)

    def record_outputs():
        if failed:
            return
        wildcards = dict(job.wildcards.items()) if hasattr(job.wildcards, "items") else {}
        for output in _files(job.output):
            if Path(output).is_file():
                write_record(output, job.rule, wildcards, inputs, results)

    sys.excepthook = note_failure
    atexit.register(record_outputs)
    return logger


def _log_cpu(logger: logging.Logger) -> None:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, system = own.ru_utime + children.ru_utime, own.ru_stime + children.ru_stime
    logger.info("job CPU: %.3f s (%.3f s user, %.3f s sys)", user + system, user, system)


def _files(named) -> list[str]:
    return [str(p) for p in named if isinstance(p, (str, os.PathLike))]
