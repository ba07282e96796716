"""Process-level set-up shared by the workflow's scripts (no Snakemake imports here)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path


def start_job(log_path: str, threads: int = 1) -> logging.Logger:
    """Send logging and warnings to the rule's log file and cap BLAS/OpenMP pools at ``threads``.

    Capping the pools keeps parallel jobs from oversubscribing the cores. Where a result would
    depend on the thread count, the library pins it itself (the classifiers fit and predict on one
    thread: :func:`unishift.classifiers.one_thread`).
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=max(1, int(threads)))
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_path, mode="w")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    sys.stderr = handler.stream
    return logging.getLogger("unishift")
