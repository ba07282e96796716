"""What a run says at its end, read from its tables' cells (docs/reporting.md, "The run summary")."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from unishift.evaluation.stats import MIN_COVERAGE
from unishift.results_layout import folder_of, results_path

_BELOW_SHARE = (
    f"scored on fewer than {MIN_COVERAGE:.0%} of its samples: shown, never bold, chosen or "
    "ranked best (docs/reporting.md §2.1.1)"
)


def run_summary(results: str | Path, tables: list[tuple[str, str]]) -> str:
    """The summary of the (task, shift) tables of a finished run under ``results``."""
    records = folder_of(Path(results), "records")
    lines = [f"unishift: what the run's tables hold (per-sample reasons in {records}/)"]
    for task, shift in tables:
        path = Path(results_path(Path(results), "table_cells", task=task, shift=shift))
        if not path.is_file():
            continue
        cells = pd.read_csv(path, dtype={"method": str})
        totals = cells.groupby("method", sort=False)[["n_samples", "n_fallbacks", "n_errors"]].sum()
        found = []
        for method, row in totals.iterrows():
            parts = []
            if row["n_errors"]:
                # n_samples counts the scored samples; a method was asked for the errored ones too
                asked = int(row["n_samples"] + row["n_errors"])
                parts.append(f"errors on {int(row['n_errors'])} of {asked} samples")
                if row["n_samples"] < MIN_COVERAGE * asked:
                    parts.append(_BELOW_SHARE)
            if row["n_fallbacks"]:
                parts.append(f"fallbacks on {int(row['n_fallbacks'])}")
            if parts:
                found.append(f"    {method}: {', '.join(parts)}")
        head = f"  {task} under {shift} shift:"
        lines += [head, *found] if found else [f"{head} every method scored every sample"]
    return "\n".join(lines)
