"""Atomic writing of result artifacts, and reading that reports a damaged file with its path and the
fix instead of half-reading it."""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
import zlib
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

# What to do with a damaged file. Snakemake rebuilds a deleted target at once, but a deleted
# intermediate only when a job needs it again: what was made from it before the damage stands.
REBUILD = (
    "delete it and rerun snakemake: a table, diagram, plot or report is rebuilt; a deleted "
    "intermediate is rebuilt when a job needs it again (what was made from it before the damage "
    "is kept), or at once with `snakemake <its path>`"
)


class DamagedFileError(ValueError):
    """An intermediate artifact cannot be read, or lacks what it must hold."""

    def __init__(self, path, problem: str, fix: str = REBUILD):
        self.path, self.problem = path, problem  # what a caller that recovers from it reports
        super().__init__(f"{path} is damaged or incomplete ({problem}); {fix}")


@contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path next to ``path`` (named by the process, so that two jobs never share
    one); it replaces ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        yield partial
        os.replace(partial, path)
    finally:
        if partial.exists():
            partial.unlink()


def file_sha256(path: str | os.PathLike) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def write_npz(path, **arrays) -> None:
    with atomic_path(path) as partial, open(partial, "wb") as handle:
        np.savez(handle, **arrays)


def read_npz(path, required: Iterable[str] = ()) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file; :class:`DamagedFileError` if cut, corrupt or incomplete."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, OSError, KeyError) as err:
        raise DamagedFileError(path, f"{type(err).__name__}: {one_line(str(err))}") from err
    missing = [key for key in required if key not in arrays]
    if missing:
        raise DamagedFileError(path, f"no array named {', '.join(missing)}")
    return arrays


def npz_problem(path) -> str | None:
    """A cheap check (the zip directory only) that an ``.npz`` file is complete; None when it is."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as err:
        return f"{type(err).__name__}: {one_line(str(err))}"
    return None if names and all(n.endswith(".npy") for n in names) else "not an array archive"


def write_csv(path, frame: pd.DataFrame) -> None:
    with atomic_path(path) as partial:
        frame.to_csv(partial, index=False, lineterminator="\n")


def concat_csv(paths: Iterable[str | os.PathLike], path: str | os.PathLike) -> int:
    """Join CSVs written by :func:`write_csv` into ``path`` (the bytes :func:`write_csv` of the
    concatenated frames writes); the number of rows. A cut file or another header is damaged."""
    paths = [Path(p) for p in paths]
    if not paths:
        raise ValueError(f"nothing to concatenate into {path}")
    header, bodies = None, []
    for part in paths:
        problem = csv_problem(part)
        if problem:
            raise DamagedFileError(part, problem)
        head, _, body = part.read_bytes().partition(b"\n")
        if header is None:
            header = head
        elif head != header:
            raise DamagedFileError(
                part, f"its header {head.decode()!r} differs from {paths[0]}'s {header.decode()!r}"
            )
        bodies.append(body)
    with atomic_path(path) as partial:
        Path(partial).write_bytes(header + b"\n" + b"".join(bodies))
    return sum(body.count(b"\n") for body in bodies)


def csv_problem(path) -> str | None:
    """Why a CSV written by :func:`write_csv` is incomplete (empty, or no final newline), else None."""
    size = os.path.getsize(path)
    if size == 0:
        return "empty file"
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        if handle.read(1) != b"\n":
            return "the last line is cut off (no final newline)"
    return None


def write_text(path, text: str) -> None:
    with atomic_path(path) as partial:
        Path(partial).write_text(text, encoding="utf-8")


def write_json(path, payload) -> None:
    write_text(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")


def one_line(text: str, limit: int = 200) -> str:
    """The first non-empty line of ``text``, cut to ``limit`` characters (reasons, messages)."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    more = len(lines) > 1
    if len(first) > limit:
        first, more = first[: limit - 1].rstrip(), True
    return first + (" ..." if more else "")
