"""The files of the text stage, one parquet table (text, label) per split of a domain: apart from
:mod:`unishift.data.text` so that the jobs that only read them import neither loader.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from unishift.io import DamagedFileError, atomic_path, one_line


def text_frame(texts, labels) -> pd.DataFrame:
    """A split as the text stage stores it: string texts and int64 labels."""
    return pd.DataFrame(
        {"text": pd.Series(list(texts), dtype=str), "label": np.asarray(labels, dtype=np.int64)}
    )


def write_split(frame: pd.DataFrame, path: str | Path) -> None:
    with atomic_path(path) as partial:
        frame.to_parquet(partial, index=False)


def read_split(path: str | Path) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(path, columns=["text", "label"])
    except FileNotFoundError:
        raise
    except Exception as err:  # pyarrow raises its own types for a truncated or foreign file
        raise DamagedFileError(path, f"{type(err).__name__}: {one_line(str(err))}") from err
    return text_frame(frame["text"], frame["label"])
