"""The ``.<name>.made.json`` record of what made each intermediate file, and the checks that nothing
is read that its job did not write (docs/evaluation-jobs.md, "What made a file")."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from unishift.io import REBUILD as FIX
from unishift.io import file_sha256, write_text

FORMAT = 1


class ProvenanceError(ValueError):
    """A file whose record says it is not what its job wrote."""


def record_path(path: str | os.PathLike) -> Path:
    path = Path(path)
    return path.with_name(f".{path.name}.made.json")


def _stat(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns


def read_record(path: str | os.PathLike) -> dict | None:
    try:
        return json.loads(record_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def recorded_sha256(path: str | os.PathLike) -> str:
    """The sha256 of a file: its record's when the file was not touched since, else computed."""
    path = Path(path)
    record = read_record(path)
    if record and [record.get("size"), record.get("mtime_ns")] == list(_stat(path)):
        return record["sha256"]
    return file_sha256(path)


def write_record(path, rule: str, wildcards: dict, inputs: Iterable[str | os.PathLike]) -> None:
    """Record what made ``path`` (written by ``rule`` with ``wildcards`` from ``inputs``)."""
    path = Path(path)
    size, mtime = _stat(path)
    record = {
        "format": FORMAT,
        "path": os.path.normpath(path),
        "size": size,
        "mtime_ns": mtime,
        "sha256": file_sha256(path),
        "rule": rule,
        "wildcards": {str(k): str(v) for k, v in wildcards.items()},
        "inputs": {os.path.normpath(p): recorded_sha256(p) for p in inputs if Path(p).is_file()},
    }
    write_text(record_path(path), json.dumps(record, indent=1, sort_keys=True))


def problem_of(path: str | os.PathLike) -> str | None:
    """Why ``path`` is not the file its job wrote, or None when it is."""
    path = Path(path)
    record = read_record(path)
    if record is None or record.get("format") != FORMAT:
        return "no record of the job that wrote it (.made.json), so it cannot be trusted"
    if record.get("path") != os.path.normpath(path):
        return (
            f"its record says it was written as {record.get('path')} by rule {record.get('rule')}: "
            "a file of another setup copied here"
        )
    touched = [record.get("size"), record.get("mtime_ns")] != list(_stat(path))
    if touched and file_sha256(path) != record.get("sha256"):
        return f"its content changed after rule {record.get('rule')} wrote it (sha256 differs)"
    return None


def verify(paths: Iterable[str | os.PathLike]) -> None:
    """Raise :class:`ProvenanceError` for the first file that is not what its job wrote."""
    for path in paths:
        problem = problem_of(path)
        if problem:
            raise ProvenanceError(f"{path}: {problem}; {FIX}")
