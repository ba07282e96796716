"""Entry points for the workflow's report rules: each reads files, writes files, returns what it
computed. File names follow the project's layout (``results/tables``, ``results/cd``, ...)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import pandas as pd

from unishift.evaluation.stats import ALPHA
from unishift.io import write_csv, write_text
from unishift.regimes.references import N_BOOTSTRAP
from unishift.report.appendix import write_accuracy_tex
from unishift.report.cd import cd_groups_frame, pyplot, save_figure, write_cd
from unishift.report.paper import (
    compare_summary,
    load_paper,
    rank_table,
    reproduction_markdown,
    reproduction_table,
    wins_long,
)
from unishift.report.plots import FALLBACK_COLOURS, PLOT_METHODS, plot_error_by_shift
from unishift.report.regimes import read_trivial
from unishift.report.tables import (
    TableResult,
    check_complete,
    compute_table,
    load_records,
    write_table_csv,
    write_table_tex,
)

# The paper shrinks only the CAP-LS table.
TABLE_WIDTH = {("cap", "label"): r".9\textwidth"}


def build_table(
    result_files: Iterable[str | Path],
    task: str,
    shift: str,
    methods: list[str],
    out_dir: str | Path,
    metric: str = "error",
    classifiers: list[str] | None = None,
    datasets: list[str] | None = None,
    n_samples: int | None = None,
    alpha: float = ALPHA,
    method_info: dict[str, tuple[str, str]] | None = None,
    trivial_files: Iterable[str | Path] = (),
    seed: int = 0,
    n_bootstrap: int = N_BOOTSTRAP,
    name: str | None = None,
) -> TableResult:
    """Read the per-sample files of one (task, shift) and write ``<name>.csv`` (cells),
    ``<name>_summary.csv`` (ranks, win rates, intervals, tests) and ``<name>.tex`` into ``out_dir``,
    where name is given (the workflow's: :mod:`unishift.report.table_specs`) or ``{task}_{shift}``,
    or ``calibration_brier_{shift}`` for metric="brier". With ``classifiers``, ``datasets`` and
    ``n_samples`` given, every file must hold every setup and sample; with ``trivial_files`` (the
    trivial rule's, one per setup), the table says whether the task and shift is degenerate
    (docs/reporting.md §2.7)."""
    records = _read(result_files, methods, classifiers, datasets, n_samples)
    trivial_files = list(trivial_files)
    result = compute_table(
        records,
        task,
        shift,
        methods,
        metric,
        classifiers,
        datasets,
        n_samples,
        alpha,
        method_info=method_info,
        trivial=read_trivial(trivial_files, task, shift) if trivial_files else None,
        seed=seed,
        n_bootstrap=n_bootstrap,
    )
    out_dir = Path(out_dir)
    if name is None:
        name = f"calibration_brier_{shift}" if metric == "brier" else f"{task}_{shift}"
    write_table_csv(result, out_dir / f"{name}.csv")
    write_table_tex(
        with_class_counts(result, records),
        out_dir / f"{name}.tex",
        width=TABLE_WIDTH.get((task, shift), r"\textwidth"),
    )
    return result


def with_class_counts(result: TableResult, records: pd.DataFrame) -> TableResult:
    """The result with each row's data set named with its number of classes, ``cmc (k=3)``, when the
    records it was computed from are in the k-class layout (the CSV keeps the plain names)."""
    if "n_classes" not in records:
        return result
    classes = records.groupby("dataset")["n_classes"].first()
    setups = [(clf, f"{ds} (k={int(classes[ds])})") for clf, ds in result.setups]
    return replace(result, setups=setups)


def build_cd(result: TableResult, out_dir: str | Path, alpha: float = ALPHA) -> None:
    """``{task}_{shift}.tex`` (tikzpicture), ``.png`` and ``_groups.csv`` in ``out_dir``; with fewer
    than two methods, the three files say that there is no diagram."""
    out_dir = Path(out_dir)
    stem = f"{result.task}_{result.shift}"
    if len(result.names) >= 2:
        cd = write_cd(result, out_dir / f"{stem}.tex", out_dir / f"{stem}.png", alpha)
        write_csv(out_dir / f"{stem}_groups.csv", cd_groups_frame(cd))
        return
    reason = "a critical-difference diagram needs at least two methods"
    figure = pyplot().figure(figsize=(4, 1))
    figure.text(0.5, 0.5, reason, ha="center", va="center", fontsize=8)
    save_figure(figure, out_dir / f"{stem}.png")
    (out_dir / f"{stem}.tex").write_text(f"% {reason}\n", encoding="utf-8")
    (out_dir / f"{stem}_groups.csv").write_text("method,avg_rank,groups,friedman_pvalue\n")


def _read(files, methods, classifiers, datasets, n_samples) -> pd.DataFrame:
    """The records of ``files``; with every other argument given, :func:`check_complete` first."""
    files = list(files)
    records = load_records(files)
    if None not in (methods, classifiers, datasets, n_samples):
        # the workflow names each per-sample file after its method
        by_method = {Path(path).stem: str(path) for path in files}
        setups = [(c, d) for c in classifiers for d in datasets]
        check_complete(records, methods, setups, n_samples, by_method)
    return records


def build_error_by_shift(
    result_files: Iterable[str | Path],
    task: str,
    shift: str,
    out_dir: str | Path,
    methods: list[str] | None = None,
    classifiers: list[str] | None = None,
    datasets: list[str] | None = None,
    n_samples: int | None = None,
    method_info: dict[str, tuple[str, str]] | None = None,
) -> pd.DataFrame:
    """``{task}_{shift}_err_by_shift.pdf`` and ``.png`` in ``out_dir``: the plot's selection of
    methods among the configured ones (docs/reporting.md §4), or the first eight configured when
    none of them is; incomplete result files are refused as in :func:`build_table`."""
    records = _read(result_files, methods, classifiers, datasets, n_samples)
    chosen = None
    if methods is not None:
        chosen = [(m, c) for m, c in PLOT_METHODS.get((task, shift), []) if m in methods]
        chosen = chosen or list(zip(methods, FALLBACK_COLOURS))
    out_dir = Path(out_dir)
    stem = f"{task}_{shift}_err_by_shift"
    return plot_error_by_shift(
        records,
        task,
        shift,
        [out_dir / f"{stem}.pdf", out_dir / f"{stem}.png"],
        methods=chosen,
        method_info=method_info,
    )


def build_reproduction(
    cells_csv: str | Path,
    summary_csv: str | Path,
    task: str,
    shift: str,
    out_csv: str | Path,
    out_md: str | Path,
    caveat: str = "",
) -> pd.DataFrame:
    """Compare one of our tables with the paper: cell-by-cell CSV and a markdown summary, opened by
    ``caveat`` (:func:`unishift.workflow.config_access.reproduction_caveat`). Calibration under label shift has no
    published cells; its ranks are compared with the CD diagram's (3 decimals)."""
    ours = pd.read_csv(cells_csv, dtype={"classifier": str, "dataset": str, "method": str})
    summary = pd.read_csv(summary_csv, dtype={"method": str}).assign(task=task, shift=shift)
    # a table with the Selector: compare the paper's columns as ranked and bolded among themselves
    if "bold_methods" in ours.columns:
        ours = ours.drop(columns="bold").rename(columns={"bold_methods": "bold"})
    if "avg_rank_methods" in summary.columns:
        summary = summary.drop(columns="avg_rank").rename(columns={"avg_rank_methods": "avg_rank"})
    repro = reproduction_table(ours, load_paper("cells"), task=task, shift=shift)
    paper_ranks = load_paper("ranks")
    paper_ranks = paper_ranks[(paper_ranks["task"] == task) & (paper_ranks["shift"] == shift)]
    decimals = 2
    if paper_ranks.empty:
        cd = load_paper("cd")
        paper_ranks = cd[(cd["kind"] == "method") & (cd["task"] == task) & (cd["shift"] == shift)]
        paper_ranks = paper_ranks.rename(columns={"rank": "avg_rank"}).round({"avg_rank": 3})
        decimals = 3
    ranks = compare_summary(
        summary[["task", "shift", "method", "avg_rank"]],
        paper_ranks[["task", "shift", "method", "avg_rank"]],
        "avg_rank",
        decimals,
    )
    wins = compare_summary(
        wins_long(summary, task, shift),
        load_paper("wins")[["task", "shift", "method", "i", "win_rate", "dagger"]],
        "win_rate",
        2,
        keys=("task", "shift", "method", "i"),
    )
    wins = wins[(wins["task"] == task) & (wins["shift"] == shift)]
    write_csv(out_csv, repro)
    if len(repro):
        text = reproduction_markdown(repro, ranks, wins)
    else:
        head = [f"# {task} under {shift} shift", "", "The paper prints no table body; ranks only."]
        text = "\n".join([*head, "", *rank_table(ranks, 3)]) + "\n"
    if caveat:
        title, _, rest = text.partition("\n")
        text = f"{title}\n\n{caveat}\n{rest}"
    write_text(out_md, text)
    return repro


def build_accuracy(
    accuracy_csv: str | Path, shift: str, out_tex: str | Path, out_repro: str | Path
) -> pd.DataFrame:
    """Appendix accuracy table (.tex) and its comparison with the paper's (tab:sklearn:acc for label
    shift: columns classifier, dataset, accuracy; tab:lm:acc for covariate shift: model, source,
    target, accuracy). Returns the comparison (ours, paper, difference, verdict at 3 decimals)."""
    ours = write_accuracy_tex(accuracy_csv, out_tex, shift)
    keys = ["classifier", "dataset"] if shift == "label" else ["model", "source", "target"]
    paper = load_paper(f"accuracy_{shift}").drop(columns="table")
    merged = compare_summary(ours[[*keys, "accuracy"]], paper, "accuracy", 3, keys=keys)
    write_csv(out_repro, merged)
    return merged
