"""Entry points of the workflow's regime rules (docs/regimes.md §5): the regime maps of one task and
shift, and the Selector with its two references, from the per-sample record files, which carry
their sample's shift descriptors (:data:`unishift.evaluation.records.DESCRIPTOR_COLUMNS`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from unishift.data.containers import derive_seed
from unishift.evaluation.records import COLUMNS, DESCRIPTOR_COLUMNS
from unishift.evaluation.stats import MIN_COVERAGE
from unishift.io import write_csv
from unishift.regimes.descriptors import UNSUPERVISED_DESCRIPTORS
from unishift.regimes.maps import regime_map, write_regime_maps
from unishift.regimes.selector import (
    add_groups,
    best_single_method,
    best_single_records,
    oracle_records,
    select_methods,
)
from unishift.report.names import latex_escape
from unishift.report.names import title as make_title
from unishift.report.tables import load_records

# The Selector's column and record file name, and its group in the tables (docs/regimes.md §5.4).
SELECTOR = "Selector"
SELECTION_GROUP = "selection"
PSEUDO_METHODS = (SELECTOR, "Oracle", "BestSingle")
SAMPLE = ["classifier", "dataset", "sample_id"]  # one sample of a task and shift

# The descriptors each shift's maps bin: its true intensities (what the protocol set), then the
# unsupervised estimates (what a user can compute from an unlabelled sample).
TRUE_INTENSITIES = {
    "label": ("true_label_shift",),
    "covariate": ("true_mixture",),
    "compound": ("true_label_shift", "true_mixture"),
}


def map_descriptors(shift: str) -> tuple[str, ...]:
    if shift not in TRUE_INTENSITIES:
        raise ValueError(f"unknown shift {shift!r}; one of {sorted(TRUE_INTENSITIES)}")
    return (*TRUE_INTENSITIES[shift], *UNSUPERVISED_DESCRIPTORS)


def _records(files: Iterable[str | Path], task: str, shift: str, methods: list[str]):
    records = load_records(list(files))
    records = records[
        (records["task"] == task) & (records["shift"] == shift) & records["method"].isin(methods)
    ]
    absent = sorted(set(methods) - set(records["method"]))
    if absent:
        raise ValueError(f"no {task}/{shift} records of the methods {absent}")
    missing = [c for c in DESCRIPTOR_COLUMNS if c not in records.columns]
    if missing:
        raise ValueError(
            f"the {task}/{shift} records lack the descriptor columns {missing} (written before "
            "the descriptors existed?): rerun the evaluation"
        )
    return records.reset_index(drop=True)


def build_regime_maps(
    files: Iterable[str | Path],
    task: str,
    shift: str,
    methods: list[str],
    stem: str | Path,
    n_bins: int = 10,
    scheme: str = "quantile",
) -> tuple[list, dict[str, int]]:
    """The regime maps of one task and shift (docs/regimes.md §5.3), written to ``<stem>.csv``,
    ``.png`` and ``.tex``; returns the maps and, per descriptor, the samples left out as empty."""
    records = _records(files, task, shift, methods)
    maps, undefined = [], {}
    for descriptor in map_descriptors(shift):
        defined = np.isfinite(records[descriptor].to_numpy(dtype=float))
        undefined[descriptor] = len(records.loc[~defined, SAMPLE].drop_duplicates())
        if not defined.any():
            raise ValueError(
                f"the descriptor {descriptor!r} is empty on every {shift}-shift sample"
            )
        maps.append(
            regime_map(records[defined], descriptor, n_bins=n_bins, scheme=scheme, methods=methods)
        )
    write_regime_maps(maps, stem, title=f"{make_title(task, shift)}: mean error by bin")
    return maps, undefined


def _counts(choices: pd.Series) -> str:
    return "; ".join(f"{m}: {n}" for m, n in choices.value_counts().items())


def build_selection(
    files: Iterable[str | Path],
    task: str,
    shift: str,
    methods: list[str],
    layout: str,
    seed: int,
    records_path: str | Path,
    summary_path: str | Path,
    choices_path: str | Path,
    tex_path: str | Path | None = None,
) -> dict[str, pd.DataFrame]:
    """The Selector of one task and shift, with the per-sample oracle and the best single method
    beside it; writes the files of docs/regimes.md §5.4 (``records_path`` in the record layout
    ``layout``; the .tex with ``tex_path``)."""
    methods = list(methods)
    records = add_groups(_records(files, task, shift, methods))
    selected = select_methods(
        records,
        features=[f for f in UNSUPERVISED_DESCRIPTORS if records[f].notna().any()],
        methods=methods,
        seed=derive_seed(seed, "selector", shift, task),
    )
    oracle = oracle_records(records, methods)
    best = best_single_records(records, methods)

    # in the row order of the first method's record file (setups in table order)
    order = records.loc[records["method"] == methods[0], SAMPLE].reset_index(drop=True)
    ordered = order.merge(selected, on=SAMPLE, how="left", validate="one_to_one")
    write_csv(records_path, ordered[list(COLUMNS[layout])])
    choices = ordered[[*SAMPLE, "group", "chosen_method", "predicted_error", "error"]].rename(
        columns={"chosen_method": "selector_choice", "error": "selector_error"}
    )
    for frame, label in ((best, "best_single"), (oracle, "oracle")):
        part = frame[[*SAMPLE, "chosen_method", "error"]].rename(
            columns={"chosen_method": f"{label}_choice", "error": f"{label}_error"}
        )
        choices = choices.merge(part, on=SAMPLE, how="left", validate="one_to_one")
    write_csv(choices_path, choices)

    roles = {
        SELECTOR: "selector: a method, a column of the tables",
        "BestSingle": "the best single method of the other groups: a baseline, not in the tables",
        "Oracle": "the per-sample best method: an upper bound, not a method, kept out of ranks",
    }
    notes = {
        SELECTOR: "chosen on " + _counts(selected["chosen_method"]),
        "BestSingle": "; ".join(
            f"{g}: {m}"
            for g, m in best.groupby("group", sort=True)["chosen_method"].first().items()
        ),
        "Oracle": "best on " + _counts(oracle["chosen_method"]),
    }
    # mean error (NaN errors left out) and the number of finite errors per (pseudo-)method
    rows = pd.concat([selected, best, oracle, records[["method", "error"]]], ignore_index=True)
    summary = rows.groupby("method")["error"].agg(mean_error="mean", n_finite="count")
    summary = summary.loc[[SELECTOR, "BestSingle", "Oracle", *methods]].reset_index()
    summary["role"] = [roles.get(m, "method") for m in summary["method"]]
    summary["note"] = [notes.get(m, "") for m in summary["method"]]
    overall = best_single_method(records, methods)
    summary.loc[summary["method"] == overall, "note"] = "best single method over all groups"
    # a method that failed too often is shown and counted, and said never to have been chosen
    per_sample = records.groupby(SAMPLE).ngroups
    for method in methods:
        scored = int(records.loc[records["method"] == method, "error"].notna().sum())
        if scored < np.ceil(np.round(MIN_COVERAGE * per_sample, 9)):
            summary.loc[summary["method"] == method, "note"] = (
                f"scored on {scored} of {per_sample} samples, fewer than {MIN_COVERAGE:.0%}: "
                "never chosen nor declared best (docs/regimes.md, Failures)"
            )
    write_csv(summary_path, summary[["method", "role", "mean_error", "n_finite", "note"]])
    if tex_path is not None:
        Path(tex_path).write_text(selection_tex(summary, overall))
    return {"selector": ordered, "oracle": oracle, "best_single": best, "summary": summary}


def selection_tex(summary: pd.DataFrame, overall: str) -> str:
    """The report's LaTeX tabular of the selection summary (docs/regimes.md §5.4)."""
    rows = summary.set_index("method")
    roles = {
        SELECTOR: "picks a method per sample, trained on the other groups",
        "BestSingle": "best single method of the other groups",
        "Oracle": "per-sample best: an upper bound, not ranked",
        overall: "best single method over all groups (in hindsight)",
    }
    lines = [
        r"\begin{tabular}{lrrl}",
        r"\hline",
        r"method & mean error & $n$ & what \\",
        r"\hline",
    ]
    for method, role in roles.items():
        mean, n = rows.loc[method, "mean_error"], int(rows.loc[method, "n_finite"])
        value = f"{mean:.4f}" if np.isfinite(mean) else "--"
        lines.append(f"{latex_escape(method)} & {value} & {n} & {role} \\\\")
    lines += [r"\hline", r"\end{tabular}", ""]
    return "\n".join(lines)
