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


def _within(path, results) -> str:
    """``path`` relative to the results folder ``results``, with ``/`` separators."""
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(results))).as_posix()


def write_record(
    path,
    rule: str,
    wildcards: dict,
    inputs: Iterable[str | os.PathLike],
    results: str | os.PathLike | None = None,
) -> None:
    """Record what made ``path`` (written by ``rule`` with ``wildcards`` from ``inputs``; ``results``:
    the run's results folder, against which the file's place is recorded)."""
    path = Path(path)
    record = {
        "format": FORMAT,
        "path": os.path.normpath(path),
        "sha256": file_sha256(path),
        "rule": rule,
        "wildcards": {str(k): str(v) for k, v in wildcards.items()},
        "inputs": {os.path.normpath(p): recorded_sha256(p) for p in inputs if Path(p).is_file()},
    }
    if results is not None:
        # where the file lies in its results folder: the same whether the folder was named by a
        # relative or an absolute path, or moved since
        record["within"] = _within(path, results)
    # stat last: the hashes above read the file, which may update its times on some file systems
    record["size"], record["mtime_ns"] = _stat(path)
    write_text(record_path(path), json.dumps(record, indent=1, sort_keys=True))


def _placed_elsewhere(record: dict, path: Path, results) -> bool:
    within = record.get("within")
    if within is None:  # a record of a version that did not note the results folder
        written = str(record.get("path"))
        return written != os.path.normpath(path) and not _ends_with(path, written)
    if results is not None:
        return _within(path, results) != within
    return not _ends_with(path, within)


def _ends_with(path, tail: str) -> bool:
    """Whether the absolute ``path`` ends with the relative path ``tail``, component by component."""
    return not os.path.isabs(tail) and (Path(os.path.abspath(path)).as_posix()).endswith(
        "/" + Path(os.path.normpath(tail)).as_posix()
    )


def problem_of(path: str | os.PathLike, results: str | os.PathLike | None = None) -> str | None:
    """Why ``path`` is not the file its job wrote, or None when it is; ``results``: the results folder
    it lies in (without it, the file's place is compared by the end of its path)."""
    path = Path(path)
    record = read_record(path)
    if record is None or record.get("format") != FORMAT:
        return "no record of the job that wrote it (.made.json), so it cannot be trusted"
    if _placed_elsewhere(record, path, results):
        return (
            f"its record says it was written as {record.get('within') or record.get('path')} by "
            f"rule {record.get('rule')}: "
            "a file of another setup copied here"
        )
    stat = list(_stat(path))
    if [record.get("size"), record.get("mtime_ns")] != stat:
        if file_sha256(path) != record.get("sha256"):
            return f"its content changed after rule {record.get('rule')} wrote it (sha256 differs)"
        _note_times(path, record, stat)
    return None


def _note_times(path: Path, record: dict, stat: list[int]) -> None:
    """Record the size and mtime of a file whose content was just found unchanged: Snakemake touches
    a job's outputs after the job (to order their times), so the times the job recorded never hold,
    and without this every check would hash every file again."""
    try:
        write_text(
            record_path(path),
            json.dumps({**record, "size": stat[0], "mtime_ns": stat[1]}, indent=1, sort_keys=True),
        )
    except OSError:  # a read-only results folder: checked by hash each time
        pass


def verify(paths: Iterable[str | os.PathLike], results: str | os.PathLike | None = None) -> None:
    """Raise :class:`ProvenanceError` for the first file that is not what its job wrote."""
    for path in paths:
        problem = problem_of(path, results)
        if problem:
            raise ProvenanceError(f"{path}: {problem}; {FIX}")
