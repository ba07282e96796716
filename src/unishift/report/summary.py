"""What a run says at its end: per table, the methods that fell back or failed on samples, and how
often (docs/reporting.md, "The run summary"). Read from the tables' cells, which count every
sample's status."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def table_summary(cells_csv: str | Path) -> list[str]:
    """One line per method with fallbacks or errors in one table's cells (empty when none)."""
    cells = pd.read_csv(cells_csv, dtype={"method": str})
    totals = cells.groupby("method", sort=False)[["n_samples", "n_fallbacks", "n_errors"]].sum()
    lines = []
    for method, row in totals.iterrows():
        parts = []
        if row["n_errors"]:
            parts.append(f"errors on {int(row['n_errors'])} of {int(row['n_samples'])} samples")
        if row["n_fallbacks"]:
            parts.append(f"fallbacks on {int(row['n_fallbacks'])}")
        if parts:
            lines.append(f"{method}: {', '.join(parts)}")
    return lines


def run_summary(results: str | Path, tables: list[tuple[str, str]]) -> str:
    """The summary of the (task, shift) tables of a finished run under ``results``."""
    results = Path(results)
    lines = [f"unishift: what the run's tables hold (per-sample reasons in {results}/eval/)"]
    for task, shift in tables:
        path = results / "tables" / f"{task}_{shift}.csv"
        if not path.is_file():
            continue
        found = table_summary(path)
        head = f"  {task} under {shift} shift:"
        lines.append(f"{head} every method scored every sample" if not found else head)
        lines += [f"    {line}" for line in found]
    return "\n".join(lines)
