"""Result tables (docs/reporting.md §2): one computed object per (task, shift, metric), derived from
one [sample x method] matrix per setup (rows aligned by sample id), its CSV and its LaTeX table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from unishift.data.containers import derive_seed
from unishift.evaluation.records import (
    layout_of_columns,
    read_records,
)
from unishift.evaluation.stats import (
    ALPHA,
    MIN_COVERAGE,
    RANK_DECIMALS,
    WinRates,
    bold_row,
    cell_means,
    check_share,
    covered,
    holm,
    rank_matrix,
    row_colours,
    top_ranked,
    wilcoxon_pvalue,
    win_rates,
)
from unishift.io import DamagedFileError, write_csv, write_text
from unishift.regimes.references import (
    ANSWERS,
    DECIMALS,
    N_BOOTSTRAP,
    bootstrap_mean_intervals,
    degenerate,
)
from unishift.report.names import (
    MethodColumn,
    classifier_display,
    latex_escape,
    order_classifiers,
    order_datasets,
    resolve_methods,
)
from unishift.report.render import render_template

METRICS = ("error", "brier")
# The headers of the column groups, in column order (names.TABLE_GROUPS).
GROUP_HEADERS = {
    "baseline": "Baselines",
    "reference": "Reference",
    "adapted": "Adapted Methods",
    "field": "Field Methods",
    "selection": "Selection",
}


def load_records(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Concatenate validated per-sample result files, which must share one record layout."""
    paths = list(paths)
    frames = [read_records(path) for path in paths]
    if not frames:
        raise ValueError("no result files given")
    layouts = {layout_of_columns(frame.columns) for frame in frames}
    if len(layouts) > 1:
        raise ValueError(
            f"the result files mix the record layouts {sorted(layouts)}: {[str(p) for p in paths]}"
        )
    return pd.concat(frames, ignore_index=True)


def check_complete(
    records: pd.DataFrame,
    methods: Iterable[str],
    setups: Iterable[tuple[str, str]],
    n_samples: int,
    files: dict[str, str | Path] | None = None,
) -> None:
    """Every method has every (classifier, data set) setup with sample ids exactly 0..n-1, once each;
    otherwise the error names the method's file and what is missing."""
    keys = ["method", "classifier", "dataset"]
    stats_ = records.groupby(keys)["sample_id"].agg(["size", "nunique", "min", "max"])
    for method in methods:
        for classifier, dataset in setups:
            where = (files or {}).get(method, f"the results of {method}")
            key = (method, classifier, dataset)
            if key not in stats_.index:
                raise DamagedFileError(
                    where, f"no records of setup {classifier}/{dataset}", _RERUN_EVALUATION
                )
            size, unique, low, high = stats_.loc[key]
            if not (size == unique == n_samples and low == 0 and high == n_samples - 1):
                raise DamagedFileError(
                    where,
                    f"setup {classifier}/{dataset} has {size} records of {unique} distinct samples "
                    f"(ids {low}..{high}), expected samples 0..{n_samples - 1} once each",
                    _RERUN_EVALUATION,
                )


_RERUN_EVALUATION = "delete it and rerun snakemake to re-evaluate that method"


@dataclass
class TableResult:
    """One result table's numbers, as :func:`compute_table` (and ``unishift.api.table``) compute
    them: S setups (rows, ``setups``) by k methods (columns, ``methods``). ``means`` holds each
    cell's mean ``metric`` over the samples scored, ``bold`` the cells not told apart from the row's
    best (docs/reporting.md §2.3), ``wins`` the win rates against the reference methods and
    ``avg_ranks`` the average ranks (docs/reporting.md §2.4, §2.5); ``render_table_tex`` writes its
    LaTeX and ``unishift.report.cd.write_cd`` its critical-difference diagram."""

    task: str
    shift: str
    metric: str
    methods: list[MethodColumn]
    setups: list[tuple[str, str]]  # (classifier, dataset), in table row order
    # per setup: (n_samples, k) metric values, NaN where the sample errored
    values: list[np.ndarray]
    means: np.ndarray  # (S, k)
    n_samples: np.ndarray  # (S, k) samples with a value
    n_fallbacks: np.ndarray  # (S, k)
    n_errors: np.ndarray  # (S, k)
    bold: np.ndarray  # (S, k)
    colours: list[list[str | None]]  # (S, k)
    wins: WinRates
    avg_ranks: np.ndarray  # (k,)
    rank_bold: np.ndarray  # (k,)
    alpha: float
    # With a column of the selection group, the ranks and bold flags among the other columns only
    # (NaN / False for the selection columns; docs/regimes.md §5.4); None without one.
    avg_ranks_methods: np.ndarray | None = None  # (k,)
    bold_methods: np.ndarray | None = None  # (S, k)
    # (S, k) cells scored on at least min_coverage of their samples, the only ones that may be bold
    # or best-coloured; (k,) methods that may be top-ranked (docs/reporting.md §2.1.1); None:
    # every one
    covered: np.ndarray | None = None
    covered_methods: np.ndarray | None = None
    min_coverage: float = MIN_COVERAGE
    # The uncertainty and the tests behind every declared winner (docs/reporting.md §2.7); None
    # where the result was built without them.
    # (S, k, 2) and (k, 2): percentile intervals (1 - alpha) of the cell means (samples resampled
    # within the setup) and of each method's overall mean (setups resampled, then samples within
    # them), n_bootstrap resamples seeded from seed
    cell_ci: np.ndarray | None = None
    overall_means: np.ndarray | None = None  # (k,) mean over every scored sample
    overall_ci: np.ndarray | None = None
    n_bootstrap: int = N_BOOTSTRAP
    seed: int = 0
    # (S, k) the cell each row's bold rule tests against (its lowest covered mean); the two-sided
    # Wilcoxon p-value of every other covered cell against it, and the Holm-adjusted one over the
    # row's comparisons (NaN: not tested)
    best_cell: np.ndarray | None = None
    pvalue_vs_best: np.ndarray | None = None
    holm_vs_best: np.ndarray | None = None
    # the top-ranked covered method (-1: none) and each covered method's Wilcoxon p-value against
    # it over the setups (paired per-setup average ranks), raw and Holm-adjusted (k,)
    winner: int = -1
    pvalue_vs_winner: np.ndarray | None = None
    holm_vs_winner: np.ndarray | None = None
    # the trivial answer's mean error per setup (S,) and overall, and whether the task and shift
    # is degenerate (regimes.references.degenerate); None without the trivial answers
    trivial_means: np.ndarray | None = None
    trivial_overall: float = float("nan")
    degenerate: bool | None = None
    n_beaten_by_trivial: int = 0

    def coverage(self) -> np.ndarray:
        """(S, k) the share of each cell's samples it was scored on."""
        asked = np.array([len(v) for v in self.values], dtype=float)[:, None]
        return np.where(asked > 0, self.n_samples / np.maximum(asked, 1), 0.0)

    def coverage_methods(self) -> np.ndarray:
        """(k,) the share of all the table's samples each method was scored on."""
        asked = sum(len(v) for v in self.values)
        return self.n_samples.sum(axis=0) / asked if asked else np.zeros(len(self.methods))

    def below_share(self) -> np.ndarray:
        """(S, k) cells with a mean but scored on fewer than ``min_coverage`` of their samples."""
        if self.covered is None:
            return np.zeros(self.means.shape, dtype=bool)
        return np.isfinite(self.means) & ~self.covered

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.methods]

    @property
    def references(self) -> list[str]:
        return [m.name for m in self.methods if m.group == "reference"]

    def failures(self) -> pd.DataFrame:
        """Per method: fallback and errored samples over the whole table (only methods with any)."""
        fallbacks, errors = self.n_fallbacks.sum(axis=0), self.n_errors.sum(axis=0)
        rows = [
            {"method": m.name, "display": m.display, "n_fallbacks": fb, "n_errors": er}
            for m, fb, er in zip(self.methods, fallbacks.tolist(), errors.tolist())
            if fb or er
        ]
        return pd.DataFrame(rows, columns=["method", "display", "n_fallbacks", "n_errors"])


def compute_table(
    records: pd.DataFrame,
    task: str,
    shift: str,
    methods: list[str] | tuple[str, ...],
    metric: str = "error",
    classifiers: list[str] | None = None,
    datasets: list[str] | None = None,
    n_samples: int | None = None,
    alpha: float = ALPHA,
    method_info: dict[str, tuple[str, str]] | None = None,
    min_coverage: float = MIN_COVERAGE,
    trivial: pd.DataFrame | None = None,
    seed: int = 0,
    n_bootstrap: int = N_BOOTSTRAP,
) -> TableResult:
    """Every number of one table (docs/reporting.md §2) from the per-sample records: ``methods`` in
    config order (regrouped by group, in that order within a group), ``classifiers``/``datasets``
    the row order (default: the paper's), ``n_samples`` the exact sample count of every cell;
    ``trivial`` the trivial answer's error per sample (columns classifier, dataset, sample_id,
    error: the degenerate flag), ``seed`` and ``n_bootstrap`` those of the intervals
    (docs/reporting.md §2.7)."""
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int | np.integer):
        raise ValueError(f"n_bootstrap must be an integer, got {n_bootstrap!r}")
    if n_bootstrap < 1:
        raise ValueError(f"n_bootstrap must be at least 1, got {n_bootstrap}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if metric not in METRICS:
        raise ValueError(f"metric {metric!r} is not one of {METRICS}")
    alpha = check_share("alpha", alpha)
    min_coverage = check_share("min_coverage", min_coverage, low_open=False)
    columns = resolve_methods(task, list(methods), shift, method_info)
    names = [c.name for c in columns]
    if not names:
        raise ValueError("compute_table needs at least one method")
    frame = records[(records["task"] == task) & (records["shift"] == shift)]
    frame = frame[frame["method"].isin(names)]
    absent = sorted(set(names) - set(frame["method"]))
    if absent:
        raise ValueError(f"no {task}/{shift} records for methods {absent}")
    classifiers = classifiers or order_classifiers(frame["classifier"])
    datasets = datasets or order_datasets(frame["dataset"])
    key = ["method", "classifier", "dataset", "sample_id"]
    dupes = frame.duplicated(key)
    if dupes.any():
        raise ValueError(f"duplicate records, e.g. {frame[dupes].iloc[0][key].to_dict()}")

    setups, values, fallbacks, sample_ids = [], [], [], []
    grouped = dict(tuple(frame.groupby(["classifier", "dataset"], sort=False)))
    for clf in classifiers:
        for ds in datasets:
            block = grouped.get((clf, ds))
            if block is None:
                raise ValueError(f"no {task}/{shift} records of setup ({clf}, {ds})")
            wide = block.pivot(index="sample_id", columns="method", values=[metric, "status"])
            value = wide[metric]
            present = [m for m in names if m not in value.columns]
            if present:
                raise ValueError(f"({clf}, {ds}): no records for {present}")
            value = value[names].sort_index()
            counts = block.groupby("method")["sample_id"].nunique()
            if counts.nunique() != 1 or counts.iloc[0] != len(value):
                raise ValueError(
                    f"({clf}, {ds}): sample ids differ across methods: {counts.to_dict()}"
                )
            if n_samples is not None and len(value) != n_samples:
                raise ValueError(f"({clf}, {ds}): {len(value)} samples, expected {n_samples}")
            status = wide["status"][names].sort_index()
            matrix = value.to_numpy(dtype=float, copy=True)
            matrix[(status == "error").to_numpy()] = np.nan
            setups.append((clf, ds))
            sample_ids.append(value.index.to_numpy())
            values.append(matrix)
            fallbacks.append((status == "fallback").sum(axis=0).to_numpy())

    means = np.vstack([cell_means(v) for v in values])
    rows_bold = [bold_row(v, alpha, min_coverage) for v in values]
    bold = np.vstack([row.bold for row in rows_bold])
    cells_covered = np.vstack([covered(v, min_coverage) for v in values])
    experiments = np.vstack(values)
    methods_covered = covered(experiments, min_coverage)
    references = [c.name for c in columns if c.group == "reference"]
    ranks = rank_matrix(experiments, RANK_DECIMALS)
    avg = ranks.mean(axis=0)
    rank_bold = top_ranked(avg, len(references), methods_covered)
    best_cell, pvalue_vs_best, holm_vs_best = _row_tests(values, rows_bold, means, cells_covered)
    setup_of_row = np.repeat(np.arange(len(values)), [len(v) for v in values])
    winner, pvalue_vs_winner, holm_vs_winner = _winner_tests(
        ranks, setup_of_row, avg, methods_covered
    )
    cell_ci = np.full((*means.shape, 2), np.nan)
    for s_, ((clf, ds), v) in enumerate(zip(setups, values, strict=True)):
        cell_seed = derive_seed(seed, "table cell", clf, ds)
        cell_ci[s_, :, 0], cell_ci[s_, :, 1] = bootstrap_mean_intervals(
            v, np.zeros(len(v)), n_bootstrap, cell_seed, alpha
        )
    overall_means = cell_means(experiments)
    overall_ci = np.column_stack(
        bootstrap_mean_intervals(experiments, setup_of_row, n_bootstrap, seed, alpha)
    )
    trivial_means, trivial_overall, is_degenerate, n_beaten = None, float("nan"), None, 0
    if trivial is not None:
        answers = _trivial_errors(trivial, setups, sample_ids)
        trivial_means = np.array([np.nanmean(a) for a in answers])
        trivial_overall = float(np.nanmean(np.concatenate(answers)))
        judged = {
            c.name: overall_means[j]
            for j, c in enumerate(columns)
            if c.group != "selection" and methods_covered[j]
        }
        is_degenerate, n_beaten = degenerate(trivial_overall, judged)
    avg_methods = bold_methods = None
    keep = [j for j, c in enumerate(columns) if c.group != "selection"]
    if len(keep) < len(columns):
        avg_methods = np.full(len(columns), np.nan)
        avg_methods[keep] = rank_matrix(experiments[:, keep], RANK_DECIMALS).mean(axis=0)
        bold_methods = np.zeros(bold.shape, dtype=bool)
        bold_methods[:, keep] = np.vstack(
            [bold_row(v[:, keep], alpha, min_coverage).bold for v in values]
        )
    return TableResult(
        task=task,
        shift=shift,
        metric=metric,
        methods=columns,
        setups=setups,
        values=values,
        means=means,
        n_samples=np.vstack([np.isfinite(v).sum(axis=0) for v in values]),
        n_fallbacks=np.vstack(fallbacks).astype(int),
        n_errors=np.vstack([(~np.isfinite(v)).sum(axis=0) for v in values]),
        bold=bold,
        colours=[row_colours(m, eligible=c) for m, c in zip(means, cells_covered)],
        wins=win_rates(experiments, names, references, alpha, min_coverage),
        avg_ranks=avg,
        rank_bold=rank_bold,
        alpha=alpha,
        covered=cells_covered,
        covered_methods=methods_covered,
        min_coverage=min_coverage,
        avg_ranks_methods=avg_methods,
        bold_methods=bold_methods,
        cell_ci=cell_ci,
        overall_means=overall_means,
        overall_ci=overall_ci,
        n_bootstrap=int(n_bootstrap),
        seed=int(seed),
        best_cell=best_cell,
        pvalue_vs_best=pvalue_vs_best,
        holm_vs_best=holm_vs_best,
        winner=winner,
        pvalue_vs_winner=pvalue_vs_winner,
        holm_vs_winner=holm_vs_winner,
        trivial_means=trivial_means,
        trivial_overall=trivial_overall,
        degenerate=is_degenerate,
        n_beaten_by_trivial=n_beaten,
    )


def _capped_holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values, capped at 1 (a NaN p-value, no difference at all, taken as 1)."""
    return np.minimum(holm(np.where(np.isnan(pvalues), 1.0, pvalues)), 1.0)


def _row_tests(values, rows_bold, means, cells_covered):
    """Per row, the cell the bold rule tests against and each other covered cell's Wilcoxon p-value
    against it, raw (the bold rule's) and Holm-adjusted over the row's comparisons."""
    shape = means.shape
    best_cell = np.zeros(shape, dtype=bool)
    raw, adjusted = np.full(shape, np.nan), np.full(shape, np.nan)
    for s, (v, row) in enumerate(zip(values, rows_bold, strict=True)):
        if row.best < 0:
            continue
        best_cell[s, row.best] = True
        tested = np.isfinite(means[s]) & cells_covered[s]
        tested[row.best] = False
        p = row.pvalues.copy()
        # the cells tied with the best mean, bold without a test: tested here
        for j in np.flatnonzero(tested & np.isnan(p)):
            p[j] = wilcoxon_pvalue(v[:, j], v[:, row.best])
        p = np.where(tested & np.isnan(p), 1.0, p)
        raw[s, tested] = p[tested]
        adjusted[s, tested] = _capped_holm(p[tested])
    return best_cell, raw, adjusted


def _winner_tests(ranks, setup_of_row, avg_ranks, eligible):
    """The top-ranked eligible method and each other eligible method's two-sided Wilcoxon p-value
    against it over the setups (per-setup average ranks: the samples of a setup are not independent
    experiments), raw and Holm-adjusted over the comparisons."""
    k = ranks.shape[1]
    raw, adjusted = np.full(k, np.nan), np.full(k, np.nan)
    if not eligible.any():
        return -1, raw, adjusted
    winner = int(np.flatnonzero(top_ranked(avg_ranks, 1, eligible))[0])
    n_setups = int(setup_of_row.max()) + 1
    per_setup = np.vstack([ranks[setup_of_row == s].mean(axis=0) for s in range(n_setups)])
    tested = eligible.copy()
    tested[winner] = False
    for j in np.flatnonzero(tested):
        raw[j] = wilcoxon_pvalue(per_setup[:, j], per_setup[:, winner])
    raw = np.where(tested & np.isnan(raw), 1.0, raw)
    adjusted[tested] = _capped_holm(raw[tested])
    return winner, raw, adjusted


def _trivial_errors(trivial: pd.DataFrame, setups, sample_ids) -> list[np.ndarray]:
    """The trivial answer's error of every sample of each setup, in the table's sample order."""
    missing = {"classifier", "dataset", "sample_id", "error"} - set(trivial.columns)
    if missing:
        raise ValueError(f"the trivial answers lack the columns {sorted(missing)}")
    by_setup = {key: part for key, part in trivial.groupby(["classifier", "dataset"], sort=False)}
    answers = []
    for (clf, ds), ids in zip(setups, sample_ids, strict=True):
        part = by_setup.get((clf, ds))
        if part is None or part["sample_id"].duplicated().any():
            raise ValueError(
                f"the trivial answers of setup ({clf}, {ds}) are missing or repeated: rerun the "
                "trivial rule"
            )
        absent = int((~pd.Index(ids).isin(part["sample_id"])).sum())
        if absent:
            raise ValueError(
                f"the trivial answers of setup ({clf}, {ds}) lack {absent} of its {len(ids)} "
                "samples: rerun the trivial rule"
            )
        answers.append(part.set_index("sample_id")["error"].reindex(ids).to_numpy(dtype=float))
    return answers


def table_frame(result: TableResult) -> pd.DataFrame:
    """One row per (classifier, dataset, method) cell."""
    k = len(result.methods)
    frame = pd.DataFrame(
        {
            "classifier": [clf for clf, _ in result.setups for _ in range(k)],
            "dataset": [ds for _, ds in result.setups for _ in range(k)],
            "method": [m.name for m in result.methods] * len(result.setups),
            "group": [m.group for m in result.methods] * len(result.setups),
            "mean_error": result.means.ravel(),
            "n_samples": result.n_samples.ravel(),
            "n_fallbacks": result.n_fallbacks.ravel(),
            "n_errors": result.n_errors.ravel(),
            "bold": result.bold.ravel(),
            "colour": [colour or "" for row in result.colours for colour in row],
        }
    )
    if result.bold_methods is not None:
        frame["bold_methods"] = result.bold_methods.ravel()
    return frame.assign(**_cell_checks(result))


def _flags(values: np.ndarray, known: np.ndarray | bool) -> list:
    """Booleans, pd.NA where ``known`` is False (not tested, or no trivial answers)."""
    known = np.broadcast_to(np.asarray(known, dtype=bool), values.shape)
    return [bool(v) if k else pd.NA for v, k in zip(values.ravel(), known.ravel(), strict=True)]


def _cell_checks(result: TableResult) -> dict[str, object]:
    """The columns of docs/reporting.md §2.7 of the cells: interval, coverage and its flag, the
    Holm-corrected test of the row's best cell against each other cell, the trivial answer."""
    shape = result.means.shape
    nan = np.full(shape, np.nan)
    ci = result.cell_ci if result.cell_ci is not None else np.stack([nan, nan], axis=-1)
    holm_p = result.holm_vs_best if result.holm_vs_best is not None else nan
    best = result.means.copy()
    if result.best_cell is not None and result.best_cell.any():
        rows = result.best_cell.any(axis=1)
        best[rows] = np.nanmin(np.where(result.best_cell, result.means, np.nan)[rows], axis=1)[
            :, None
        ]
    with np.errstate(invalid="ignore"):
        better = (holm_p < result.alpha) & (result.means > best)
    trivial = (
        np.repeat(result.trivial_means[:, None], shape[1], axis=1)
        if result.trivial_means is not None
        else nan
    )
    known_trivial = result.trivial_means is not None
    return {
        "ci_low": ci[..., 0].ravel(),
        "ci_high": ci[..., 1].ravel(),
        "coverage": result.coverage().ravel(),
        "below_coverage": (result.coverage() < result.min_coverage).ravel()
        if result.covered is None
        else (~result.covered).ravel(),
        "best_cell": (
            result.best_cell if result.best_cell is not None else np.zeros(shape, bool)
        ).ravel(),
        "pvalue_vs_best": (
            result.pvalue_vs_best if result.pvalue_vs_best is not None else nan
        ).ravel(),
        "holm_pvalue_vs_best": holm_p.ravel(),
        "best_significantly_better": _flags(better, np.isfinite(holm_p)),
        "trivial_error": trivial.ravel(),
        "beaten_by_trivial": _flags(
            np.round(trivial, DECIMALS) < np.round(result.means, DECIMALS),
            known_trivial & np.isfinite(result.means),
        ),
        "degenerate": _flags(np.full(shape, bool(result.degenerate)), known_trivial),
    }


def summary_frame(result: TableResult) -> pd.DataFrame:
    """One row per method: average rank (+ bold) and, for each i, the win rate Pr(M > iR), its count,
    binomial p-value and dagger (empty for reference methods)."""
    wins = result.wins
    rows = []
    for j, m in enumerate(result.methods):
        row = {
            "method": m.name,
            "group": m.group,
            "avg_rank": result.avg_ranks[j],
            "rank_bold": bool(result.rank_bold[j]),
            "n_experiments": wins.n_experiments,
        }
        if result.avg_ranks_methods is not None:
            row["avg_rank_methods"] = result.avg_ranks_methods[j]
        for i in range(len(wins.references)):
            ref = m.group == "reference"
            row[f"wins_{i + 1}"] = np.nan if ref else wins.rates[i, j]
            row[f"wins_{i + 1}_count"] = pd.NA if ref else int(wins.counts[i, j])
            row[f"wins_{i + 1}_pvalue"] = wins.pvalues[i, j]
            row[f"wins_{i + 1}_dagger"] = pd.NA if ref else bool(wins.dagger[i, j])
        rows.append(row)
    return pd.DataFrame(rows).assign(**_method_checks(result))


def _method_checks(result: TableResult) -> dict[str, object]:
    """The columns of docs/reporting.md §2.7 of the methods: overall mean and interval, coverage and
    its flag, the Holm-corrected test of the top-ranked method against each other, the trivial
    answer and the degenerate flag."""
    k = len(result.methods)
    nan = np.full(k, np.nan)
    ci = result.overall_ci if result.overall_ci is not None else np.column_stack([nan, nan])
    means = result.overall_means if result.overall_means is not None else nan
    holm_p = result.holm_vs_winner if result.holm_vs_winner is not None else nan
    winner = np.arange(k) == result.winner
    with np.errstate(invalid="ignore"):
        better = holm_p < result.alpha
    coverage = result.coverage_methods()
    covered_methods = (
        result.covered_methods
        if result.covered_methods is not None
        else coverage >= result.min_coverage
    )
    known_trivial = result.trivial_means is not None
    return {
        "mean_error": means,
        "ci_low": ci[:, 0],
        "ci_high": ci[:, 1],
        "coverage": coverage,
        "below_coverage": ~np.asarray(covered_methods, dtype=bool),
        "winner": winner,
        "pvalue_vs_winner": (
            result.pvalue_vs_winner if result.pvalue_vs_winner is not None else nan
        ),
        "holm_pvalue_vs_winner": holm_p,
        "winner_significantly_better": _flags(better, np.isfinite(holm_p)),
        "trivial_error": np.full(k, result.trivial_overall),
        "beaten_by_trivial": _flags(
            np.round(result.trivial_overall, DECIMALS) < np.round(means, DECIMALS),
            known_trivial & np.isfinite(means),
        ),
        "degenerate": _flags(np.full(k, bool(result.degenerate)), known_trivial),
    }


def write_table_csv(result: TableResult, path: str | Path) -> None:
    """Cells to ``path``; per-method ranks and win rates to ``<stem>_summary.csv`` next to it."""
    path = Path(path)
    write_csv(path, table_frame(result))
    write_csv(path.with_name(f"{path.stem}_summary.csv"), summary_frame(result))


def _cell(mean: float, bold: bool, colour: str | None) -> str:
    if not np.isfinite(mean):
        return "n/a"
    number = f"{mean:.3f}"
    number = rf"\textbf{{{number}}}" if bold else number
    if colour is None:  # scored on too few samples: flagged, never coloured
        return f"${number}^{{\\ast}}$"
    return f"${number}$\\cellcolor{{{colour}}}"


def render_table_tex(result: TableResult, width: str = r"\textwidth") -> str:
    """The LaTeX table of docs/reporting.md §2.6, followed by a note on fallbacks and errors if any."""
    k = len(result.methods)
    counts = Counter(m.group for m in result.methods)
    groups = [(label, counts[group]) for group, label in GROUP_HEADERS.items() if counts[group]]
    col_spec = "cc|" + "|".join("c" * n for _, n in groups)
    group_cells = [
        rf"\multicolumn{{{n}}}{{c{'|' if g < len(groups) - 1 else ''}}}{{{label}}}"
        for g, (label, n) in enumerate(groups)
    ]
    rows_of = {}  # classifier -> its rows, in setup order
    for s, (clf, ds) in enumerate(result.setups):
        cells = [
            _cell(result.means[s, j], result.bold[s, j], result.colours[s][j]) for j in range(k)
        ]
        # a covariate pair a->b as \texttt{a}$\rightarrow$\texttt{b}
        dataset = r"$\rightarrow$".join(rf"\texttt{{{latex_escape(p)}}}" for p in ds.split("->"))
        rows_of.setdefault(clf, []).append({"dataset": dataset, "cells": cells})
    blocks = [{"label": classifier_display(c), "rows": rows} for c, rows in rows_of.items()]
    wins = result.wins
    win_rows = []
    for i in range(len(wins.references)):
        dags = [r"\dag " if dagger else "" for dagger in wins.dagger[i]]
        cells = [
            "---" if m.group == "reference" else f"${dags[j]}{100 * wins.rates[i, j]:.2f}\\%$"
            for j, m in enumerate(result.methods)
        ]
        win_rows.append({"i": i + 1, "cells": cells})
    ranks = [
        rf"\textbf{{{r:.2f}}}" if b else f"{r:.2f}"
        for r, b in zip(result.avg_ranks, result.rank_bold)
    ]
    return render_template(
        "result_table.tex.j2",
        width=width,
        col_spec=col_spec,
        group_cells=group_cells,
        headers=[m.display for m in result.methods],
        blocks=blocks,
        win_rows=win_rows,
        ranks=ranks,
        notes=result.failures().to_dict("records"),
        below_share=int(result.below_share().sum()),
        min_coverage=f"{result.min_coverage:.0%}".replace("%", r"\%"),
        na_cells=int((result.n_samples == 0).sum()),
        n_experiments=wins.n_experiments,
        degenerate=bool(result.degenerate),
        trivial_answer=ANSWERS.get(result.task, "the trivial answer"),
        trivial_mean=f"{result.trivial_overall:.3f}",
        n_beaten=result.n_beaten_by_trivial,
        n_judged=int(
            sum(
                1
                for j, m in enumerate(result.methods)
                if m.group != "selection"
                and (result.covered_methods is None or result.covered_methods[j])
            )
        ),
    )


def write_table_tex(result: TableResult, path: str | Path, width: str = r"\textwidth") -> None:
    write_text(path, render_table_tex(result, width=width))
