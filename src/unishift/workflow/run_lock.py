"""One workflow run at a time per results folder: an exclusive ``flock`` on ``<results>/.run.lock``
held by the snakemake process until it ends (docs/evaluation-jobs.md, "One run at a time")."""

from __future__ import annotations

import datetime
import os
import stat
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
    # a link planted at the lock's name would have this run truncate and write its target
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as err:
        if not path.is_symlink():
            raise
        raise RunLockError(
            f"{path} is a symbolic link (to {os.readlink(path)}), not a lock file; no job was "
            f"started. Delete the link (rm {path}) and rerun"
        ) from err
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise RunLockError(f"{path} is not a regular file; no job was started. Delete it and rerun")
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
