"""Process-level set-up shared by the workflow's scripts (no Snakemake imports here)."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path


def start_job(log_path: str, threads: int = 1) -> logging.Logger:
    """Send logging and warnings to the rule's log file, cap BLAS/OpenMP pools at ``threads`` and
    check that the job computes with the configured CPU kernels (:mod:`unishift.kernels`).

    Capping the pools keeps parallel jobs from oversubscribing the cores. Where a result would
    depend on the thread count, the library pins it itself (the classifiers fit and predict on one
    thread: :func:`unishift.classifiers.one_thread`).
    """
    from threadpoolctl import threadpool_limits

    from unishift.kernels import PROFILE_VARIABLE, assert_pinned

    threadpool_limits(limits=max(1, int(threads)))
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_path, mode="w")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    sys.stderr = handler.stream
    logger = logging.getLogger("unishift")
    # the workflow sets the kernel profile's variables for every job (docs/determinism.md); a job
    # that computes with other kernels stops here instead of writing other last digits
    profile = os.environ.get(PROFILE_VARIABLE)
    if profile:
        logger.info("CPU kernels: %s (OpenBLAS %s)", profile, assert_pinned(profile))
    return logger
