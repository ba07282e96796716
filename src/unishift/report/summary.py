"""The first, machine-readable summary of per-sample results: one row per (classifier, data set, method)."""

from __future__ import annotations

import pandas as pd

SUMMARY_COLUMNS = (
    "task",
    "shift",
    "classifier",
    "dataset",
    "method",
    "mean_error",
    "n_samples",
    "n_fallbacks",
    "n_errors",
)


def summary_table(
    frames: list[pd.DataFrame], classifiers: list[str], datasets: list[str], methods: list[str]
) -> pd.DataFrame:
    """Mean error over the samples of each cell, in the given row/column orders.

    Errored samples have no error value: the mean is over the samples that produced one, and
    ``n_errors`` says how many did not (a cell with no valid sample has a NaN mean).
    """
    records = pd.concat(frames, ignore_index=True)
    order = {
        "classifier": {c: i for i, c in enumerate(classifiers)},
        "dataset": {d: i for i, d in enumerate(datasets)},
        "method": {m: i for i, m in enumerate(methods)},
    }
    grouped = records.groupby(["task", "shift", "classifier", "dataset", "method"], sort=False)
    table = grouped.agg(
        mean_error=("error", "mean"),
        n_samples=("sample_id", "size"),
        n_fallbacks=("status", lambda s: int((s == "fallback").sum())),
        n_errors=("status", lambda s: int((s == "error").sum())),
    ).reset_index()
    for column, ranks in order.items():
        table[f"_{column}"] = table[column].map(ranks)
    table = table.sort_values(["_classifier", "_dataset", "_method"]).drop(
        columns=[f"_{c}" for c in order]
    )
    return table[list(SUMMARY_COLUMNS)].reset_index(drop=True)


def plain_latex(table: pd.DataFrame, displays: dict[str, str]) -> str:
    """A plain tabular (classifier, data set x methods) of the mean errors, 3 decimals."""
    methods = list(dict.fromkeys(table["method"]))
    wide = table.pivot_table(
        index=["classifier", "dataset"],
        columns="method",
        values="mean_error",
        sort=False,
        dropna=False,
    )
    lines = [
        r"\begin{tabular}{ll" + "r" * len(methods) + "}",
        r"\toprule",
        "classifier & dataset & " + " & ".join(displays.get(m, m) for m in methods) + r" \\",
        r"\midrule",
    ]
    for (classifier, dataset), row in wide.iterrows():
        cells = ["n/a" if pd.isna(row[m]) else f"{row[m]:.3f}" for m in methods]
        name = dataset.replace("_", r"\_").replace("->", r"$\rightarrow$")
        lines.append(f"{classifier} & \\texttt{{{name}}} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)
