"""The paper's published numbers, transcribed in ``report/paper/*.csv`` (its README says how), and
the cell-by-cell reproduction report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

PAPER_DATA = Path(__file__).parent / "paper"


def load_paper(name: str) -> pd.DataFrame:
    """One transcribed frame: cells, wins, ranks, cd, accuracy_covariate or accuracy_label."""
    return pd.read_csv(PAPER_DATA / f"{name}.csv", keep_default_na=False, na_values=[""],
                       dtype={"classifier": str, "dataset": str, "method": str, "display": str})  # fmt: skip


VERDICTS = ("equal", "within 0.005", "differs", "missing")
_KEYS = ("task", "shift", "classifier", "dataset", "method")


def verdict(ours: float, paper: float, decimals: int, tolerance: float = 0.005) -> str:
    """'equal' if ours printed at the paper's precision is the paper's number (half-up rounding of the
    printed value is what a reader sees), 'within 0.005' if not equal but close, else 'differs'."""
    if ours is None or not np.isfinite(ours):
        return "missing"
    if f"{ours:.{decimals}f}" == f"{paper:.{decimals}f}":
        return "equal"
    return "within 0.005" if abs(ours - paper) <= tolerance + 1e-12 else "differs"


def reproduction_table(
    ours: pd.DataFrame, paper: pd.DataFrame, task: str, shift: str, decimals: int = 3
) -> pd.DataFrame:
    """Cell-by-cell comparison of our (task, shift) table (the cells CSV: classifier, dataset, method,
    mean_error, bold) with the paper's cells (``load_paper("cells")``): one row per paper cell of
    that table, with our mean, the paper's value, the difference, the verdict and both bold flags."""
    ours = ours.assign(task=task, shift=shift)
    paper = paper[(paper["task"] == task) & (paper["shift"] == shift)]
    merged = paper.merge(
        ours[[*_KEYS, "mean_error", "bold"]].rename(
            columns={"mean_error": "ours", "bold": "ours_bold"}
        ),
        on=list(_KEYS),
        how="left",
    )
    merged = merged.rename(columns={"value": "paper", "bold": "paper_bold"})
    merged["difference"] = merged["ours"] - merged["paper"]
    merged["verdict"] = [verdict(o, p, decimals) for o, p in zip(merged["ours"], merged["paper"])]
    columns = [
        *_KEYS,
        "display",
        "ours",
        "paper",
        "difference",
        "verdict",
        "ours_bold",
        "paper_bold",
    ]
    return merged[columns].reset_index(drop=True)


def compare_summary(
    ours: pd.DataFrame,
    paper: pd.DataFrame,
    value: str,
    decimals: int,
    keys=("task", "shift", "method"),
) -> pd.DataFrame:
    """Ranks or win rates side by side (``value`` = avg_rank or win_rate; win rates in percent)."""
    merged = paper.merge(ours, on=list(keys), how="left", suffixes=("_paper", "_ours"))
    merged["difference"] = merged[f"{value}_ours"] - merged[f"{value}_paper"]
    merged["verdict"] = [
        verdict(o, p, decimals, tolerance=10**-decimals * 5)
        for o, p in zip(merged[f"{value}_ours"], merged[f"{value}_paper"])
    ]
    return merged


def wins_long(summary: pd.DataFrame, task: str, shift: str) -> pd.DataFrame:
    """Our summary CSV's win rates in the paper's long layout (percent, one row per method and i)."""
    rows = []
    for row in summary.to_dict("records"):
        i = 1
        while f"wins_{i}" in row:
            if pd.notna(row[f"wins_{i}"]):
                rows.append({"task": task, "shift": shift, "method": row["method"], "i": i,
                             "win_rate": 100 * row[f"wins_{i}"], "dagger": bool(row[f"wins_{i}_dagger"])})  # fmt: skip
            i += 1
    return pd.DataFrame(rows, columns=["task", "shift", "method", "i", "win_rate", "dagger"])


def rank_table(ranks: pd.DataFrame, decimals: int) -> list[str]:
    """The markdown lines of our average ranks beside the paper's (:func:`compare_summary`)."""
    return ["| method | our rank | paper rank | verdict |", "|---|---|---|---|"] + [
        f"| {r.method} | {r.avg_rank_ours:.{decimals}f} | {r.avg_rank_paper:.{decimals}f} | {r.verdict} |"
        for r in ranks.itertuples()
    ]


def reproduction_markdown(
    repro: pd.DataFrame, ranks: pd.DataFrame | None = None, wins: pd.DataFrame | None = None
) -> str:
    """Per (task, shift): verdict counts, the share of equal cells and the largest differences."""
    out = ["# Reproduction of the paper's result tables", ""]
    for (task, shift), frame in repro.groupby(["task", "shift"], sort=True):
        n = len(frame)
        counts = frame["verdict"].value_counts()
        equal = int(counts.get("equal", 0))
        cells = f"Cells: {n}; equal at printed precision: {equal} ({100 * equal / n:.1f}%)."
        out += [f"## {task} under {shift} shift", "", cells, "", "| verdict | cells |", "|---|---|"]
        out += [f"| {v} | {int(counts.get(v, 0))} |" for v in VERDICTS]
        both = frame.dropna(subset=["ours"])
        if len(both):
            agree = int((both["ours_bold"].astype(bool) == both["paper_bold"].astype(bool)).sum())
            worst = both.reindex(both["difference"].abs().sort_values(ascending=False).index)
            out += ["", f"Bold flags agreeing: {agree} of {len(both)}.", "", "Largest differences:"]
            out += ["", "| classifier | dataset | method | ours | paper | difference |"]
            out.append("|---|---|---|---|---|---|")
            for r in worst.head(5).itertuples():
                out.append(
                    f"| {r.classifier} | {r.dataset} | {r.method} | {r.ours:.3f} | {r.paper:.3f} | {r.difference:+.3f} |"
                )
        if ranks is not None:
            sel = ranks[(ranks["task"] == task) & (ranks["shift"] == shift)]
            if len(sel):
                out += ["", *rank_table(sel, 2)]
        if wins is not None:
            sel = wins[(wins["task"] == task) & (wins["shift"] == shift)]
            if len(sel):
                equal = int((sel["verdict"] == "equal").sum())
                both = sel.dropna(subset=["dagger_ours"])
                agree = int(
                    (both["dagger_ours"].astype(bool) == both["dagger_paper"].astype(bool)).sum()
                )
                out.append("")
                out.append(
                    f"Win rates equal at 2 decimals: {equal} of {len(sel)}; "
                    f"daggers agreeing: {agree} of {len(both)}."
                )
        out.append("")
    return "\n".join(out)
