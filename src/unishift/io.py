"""Atomic writing of result artifacts: write to a temporary sibling, then rename over the target."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd


@contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path next to ``path``; it replaces ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    try:
        yield partial
        os.replace(partial, path)
    finally:
        if partial.exists():
            partial.unlink()


def write_npz(path, **arrays) -> None:
    with atomic_path(path) as partial:
        with open(partial, "wb") as handle:
            np.savez(handle, **arrays)


def read_npz(path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def write_csv(path, frame: pd.DataFrame) -> None:
    with atomic_path(path) as partial:
        frame.to_csv(partial, index=False, lineterminator="\n")


def write_text(path, text: str) -> None:
    with atomic_path(path) as partial:
        Path(partial).write_text(text)


def write_json(path, payload) -> None:
    write_text(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")
