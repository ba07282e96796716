"""One workflow run at a time per results folder: an exclusive ``flock`` on ``<results>/.run.lock``
held by the snakemake process until it ends (docs/evaluation-jobs.md, "One run at a time")."""

from __future__ import annotations

import datetime
import os
import sys
from pathlib import Path

LOCK_NAME = ".run.lock"
_held: dict[str, int] = {}


class RunLockError(RuntimeError):
    """Another run holds the results folder."""


def hold_run_lock(results: str | os.PathLike) -> Path:
    """Take the run lock of ``results`` for this process's life; :class:`RunLockError` if held."""
    path = Path(results) / LOCK_NAME
    try:
        import fcntl
    except ImportError:  # not POSIX: Snakemake's own lock is all there is
        return path
    key = str(path.resolve())
    if key in _held:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = path.read_text(encoding="utf-8", errors="replace").strip() or "another process"
        os.close(descriptor)
        raise RunLockError(
            f"another snakemake run is writing to {results}/ ({holder}); no job was started. Wait "
            "for it to end, or give this run another `results` folder"
        ) from None
    started = datetime.datetime.now().isoformat(timespec="seconds")
    os.ftruncate(descriptor, 0)
    os.write(descriptor, f"pid {os.getpid()}, started {started}: {' '.join(sys.argv)}\n".encode())
    _held[key] = descriptor  # kept open: closing it would release the lock
    return path
