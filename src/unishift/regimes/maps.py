"""Regime maps: which method wins where, along one shift descriptor or two (paired samples, bins,
per-setup-normalised errors, Holm-corrected paired tests, bins merged until a winner is
significant, the cluster bootstrap's share of resamples that keep it, and the written files:
docs/regimes.md §3).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from unishift.evaluation.stats import ALPHA, MIN_COVERAGE, holm
from unishift.io import write_csv, write_text
from unishift.option_checks import check_choice, check_positive_int
from unishift.regimes.references import N_BOOTSTRAP, cluster_draws
from unishift.regimes.selector import REQUIRED, SAMPLE_KEY, eligible_methods, method_errors

# a region's (or cell's) columns per method: its samples, the method's errors, the test of its
# leader and the verdict; the same in the 1-D and the 2-D maps
_PER_METHOD_COLUMNS = (
    "n_samples",
    "n_setups",
    "method",
    "mean_error",
    "normalised_error",
    "rank",
    "p_value",
    "p_holm",
    "is_winner",
    "leader",
    "winner",
    "verdict",
    "tied",
    "n_tied",
    "bootstrap_share",
)

CSV_COLUMNS = (
    "task",
    "descriptor",
    "bin",
    "first_bin",
    "last_bin",
    "lower",
    "upper",
    "upper_closed",
    *_PER_METHOD_COLUMNS,
    "winner_changed",
    "ranking_changed",
    "trivial_error",
    "degenerate",
)


def bin_edges(values, n_bins: int = 10, scheme: str = "quantile", value_range=None) -> np.ndarray:
    """Increasing bin edges for ``values`` (docs/regimes.md §3, point 2)."""
    check_choice("scheme", scheme, ("quantile", "width"))
    check_positive_int("n_bins", n_bins)
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or len(v) == 0:
        raise ValueError("bin_edges needs a non-empty 1-d array of values")
    if not np.all(np.isfinite(v)):
        raise ValueError("the descriptor has non-finite values; drop those samples first")
    if scheme == "quantile":
        if value_range is not None:
            raise ValueError("value_range applies to scheme='width' only")
        # i / B rather than linspace, so that edges stay on data values (docs/regimes.md §3)
        levels = np.arange(n_bins + 1) / n_bins
        edges = np.unique(np.quantile(v, levels, method="linear"))
    else:
        lo, hi = (
            (float(v.min()), float(v.max())) if value_range is None else map(float, value_range)
        )
        if not hi >= lo:
            raise ValueError(f"value_range must be (low, high) with low <= high, got {value_range}")
        # lo + (hi - lo) * i / B rather than linspace: on [0, 1] the floats nearest i / B
        edges = np.unique(lo + (hi - lo) * (np.arange(n_bins + 1) / n_bins))
    if len(edges) == 1:  # every value equal: one bin [v, v]
        edges = np.array([edges[0], edges[0]])
    return edges


def assign_bins(values, edges) -> np.ndarray:
    """Bin index of each value: [e_i, e_{i+1}) for the inner bins, the last bin closed."""
    v = np.asarray(values, dtype=float)
    e = np.asarray(edges, dtype=float)
    if e.ndim != 1 or len(e) < 2 or np.any(np.diff(e) < 0):
        raise ValueError("edges must be a non-decreasing array of at least two values")
    if not np.all(np.isfinite(v)):
        raise ValueError("the descriptor has non-finite values; drop those samples first")
    outside = (v < e[0]) | (v > e[-1])
    if np.any(outside):
        raise ValueError(
            f"{int(outside.sum())} values lie outside the bin range [{e[0]}, {e[-1]}], e.g. "
            f"{v[outside][0]}; widen value_range"
        )
    n_bins = len(e) - 1
    return np.minimum(np.searchsorted(e, v, side="right") - 1, n_bins - 1).astype(np.int64)


@dataclass(frozen=True)
class Verdict:
    """The decision on one region (a bin, merged bins or a 2-D cell): docs/regimes.md §3, point 3."""

    leader: int  # index into the ranked methods: the lowest mean normalised error (ties: first)
    ranking: tuple[int, ...]  # the ranked methods' indices by mean normalised error
    means: np.ndarray  # (k,) mean normalised error of each ranked method
    pvalues: np.ndarray  # (k,) one-sided Wilcoxon p of the leader against each (NaN: the leader)
    holm: np.ndarray  # (k,) Holm-adjusted (capped at 1; NaN: the leader)
    significant: bool  # the leader is better than every other ranked method after Holm
    tied: tuple[int, ...]  # the leader and every method it is not significantly better than


def _nanmean(values: np.ndarray, axis=None):
    """NumPy's nanmean, NaN without a warning where nothing is finite (a method below the share
    with no finite error in a bin, a map without trivial answers)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(values, axis=axis)


def setup_scales(errors: np.ndarray, setups) -> np.ndarray:
    """Per row, the mean of the finite ``errors`` ((n, k)) over the rows of its setup and the
    columns: the scale that :func:`regime_map` divides a setup's errors by (docs/regimes.md §3,
    point 3). A setup whose mean is 0 (every error 0) or not finite keeps its errors (scale 1)."""
    errors = np.asarray(errors, dtype=float)
    _, codes = np.unique(np.asarray(setups), return_inverse=True)
    finite = np.isfinite(errors)
    sums = np.bincount(codes, weights=np.where(finite, errors, 0.0).sum(axis=1))
    counts = np.bincount(codes, weights=finite.sum(axis=1).astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = sums / counts
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    return scale[codes]


def decide(normalised: np.ndarray, alpha: float = ALPHA) -> Verdict:
    """The leader of one region's ``normalised`` errors ((n, k), finite, columns in the listed
    order), its one-sided paired Wilcoxon test (SciPy's defaults, ``alternative="less"`` on leader
    minus other, differences rounded to 12 places so that summation noise is no difference)
    against every other column, Holm-adjusted over the k - 1 comparisons
    (:func:`unishift.evaluation.stats.holm`); significant when every adjusted p is below
    ``alpha``. A pair with no non-zero difference gets p = 1."""
    normalised = np.asarray(normalised, dtype=float)
    n, k = normalised.shape
    if n == 0 or k == 0:
        raise ValueError("decide needs at least one sample and one method")
    means = normalised.mean(axis=0)
    rounded = np.round(means, 12)  # so that summation order cannot decide
    ranking = tuple(int(j) for j in np.lexsort((np.arange(k), rounded)))
    leader = ranking[0]
    pvalues = np.full(k, np.nan)
    adjusted = np.full(k, np.nan)
    others = np.array([j for j in range(k) if j != leader], dtype=np.int64)
    if len(others):
        diffs = np.round(normalised[:, [leader]] - normalised[:, others], 12)
        p = np.ones(len(others))
        moving = np.any(diffs != 0, axis=0)
        if moving.any():
            p[moving] = _one_sided_wilcoxon(diffs[:, moving])
        pvalues[others] = p
        adjusted[others] = np.minimum(holm(p), 1.0)
    significant = bool(np.all(adjusted[others] < alpha))
    tied = (leader,) + tuple(int(j) for j in ranking[1:] if not adjusted[j] < alpha)
    return Verdict(leader, ranking, means, pvalues, adjusted, significant, tied)


def _one_sided_wilcoxon(diffs: np.ndarray) -> np.ndarray:
    """Per column of ``diffs``, SciPy's one-sided (``less``) Wilcoxon signed-rank p-value with its
    defaults, as one call per column would give it. Above 50 pairs SciPy's "auto" is the normal
    approximation for every column, so one vectorised call serves; at 50 or fewer it picks the
    exact or a permutation null by whether the *whole* array has zeros or ties, so each column is
    tested alone (few pairs: cheap). NaN (no non-zero difference left) reads as 1."""
    if diffs.shape[0] > 50:
        p = np.atleast_1d(stats.wilcoxon(diffs, axis=0, alternative="less").pvalue)
    else:
        p = np.array([stats.wilcoxon(c, alternative="less").pvalue for c in diffs.T])
    return np.nan_to_num(p.astype(float), nan=1.0)


def resample_counts(setups, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, n) how often each row is drawn in each two-stage resample of
    :func:`unishift.regimes.references.cluster_draws` (setups, then samples within them)."""
    setups = np.asarray(setups)
    key = (tuple(setups.tolist()), n_resamples, seed)
    if _LAST_COUNTS.get("key") != key:  # the maps of one task and shift share their resamples
        draws = cluster_draws(setups, n_resamples, seed)
        n = len(setups)
        flat = np.concatenate([r * n + rows for r, rows in enumerate(draws)])
        counts = np.bincount(flat, minlength=n_resamples * n).reshape(n_resamples, n)
        _LAST_COUNTS.update(key=key, counts=counts.astype(float))
    return _LAST_COUNTS["counts"]


# the last resample counts: the descriptors of one map file keep the same samples (but for a
# descriptor left empty on some), so their bootstraps draw the same resamples once
_LAST_COUNTS: dict = {}


def winner_share(counts: np.ndarray, normalised: np.ndarray, rows: np.ndarray, leader: int):
    """The share of the resamples (rows of ``counts``) that draw any of ``rows`` in which
    ``leader`` keeps the lowest mean normalised error of those rows (ties: the column listed
    first); NaN when no resample draws them."""
    weights = counts[:, rows]
    totals = weights.sum(axis=1)
    drawn = totals > 0
    if not drawn.any():
        return float("nan")
    means = np.round((weights[drawn] @ normalised[rows]) / totals[drawn, None], 12)
    return float(np.mean(np.argmin(means, axis=1) == leader))


@dataclass(frozen=True)
class _Prepared:
    methods: list[str]
    ranked: list[str]
    values: np.ndarray  # (n, d) the descriptors of the kept samples
    errors: np.ndarray  # (n, len(methods)) raw errors (NaN for a method below the share)
    normalised: np.ndarray  # (n, len(methods)) errors / their setup's scale
    setups: np.ndarray  # (n,) the setup of each kept sample
    trivial: np.ndarray  # (n,) the trivial answer's raw error (NaN without one)
    trivial_normalised: np.ndarray
    task: str
    n_dropped: int


def _prepare(records, descriptors, methods, min_coverage, trivial) -> _Prepared:
    """The samples a map compares, their descriptors, raw and per-setup-normalised errors."""
    for descriptor in descriptors:
        if descriptor in REQUIRED:
            raise ValueError(f"{descriptor!r} is a record column, not a descriptor")
    methods, frame, errors = method_errors(records, methods, list(descriptors), "a regime map")
    columns = []
    for descriptor in descriptors:
        undefined = ~np.isfinite(frame[descriptor].to_numpy(dtype=float))
        if undefined.any():
            raise ValueError(
                f"the descriptor {descriptor!r} is not finite in {int(undefined.sum())} rows; "
                "drop those samples (or compute the descriptor) first"
            )
        per_sample = frame.groupby(SAMPLE_KEY, sort=True)[descriptor].agg(["min", "max"])
        varying = ~np.isclose(per_sample["min"], per_sample["max"], rtol=0, atol=1e-12)
        if varying.any():
            raise ValueError(
                f"the descriptor {descriptor!r} differs between the methods' rows of "
                f"{int(varying.sum())} samples; a descriptor belongs to the sample, not the method"
            )
        columns.append(per_sample["min"].reindex(errors.index).to_numpy())
    # the samples on which every method scored on the share has a finite error: a method that
    # failed too often is not compared, and its failures drop no other method's samples
    what = f"of the map of {' x '.join(map(repr, descriptors))}"
    ranked = eligible_methods(errors, methods, min_coverage, what)
    complete = np.isfinite(errors[ranked].to_numpy(dtype=float)).all(axis=1)
    if not complete.any():
        raise ValueError(f"no sample has a finite error for every one of {ranked}")
    kept = errors[complete]
    index = kept.index.to_frame(index=False)
    setups = (index["classifier"].astype(str) + "\x00" + index["dataset"].astype(str)).to_numpy()
    raw = kept.to_numpy(dtype=float)
    scale = setup_scales(kept[ranked].to_numpy(dtype=float), setups)
    if trivial is None:
        trivial_raw = np.full(len(kept), np.nan)
    else:
        trivial_raw = (
            trivial.set_index(SAMPLE_KEY[1:])["error"]
            .reindex(index[SAMPLE_KEY[1:]].itertuples(index=False, name=None))
            .to_numpy(dtype=float)
        )
    return _Prepared(
        methods=methods,
        ranked=ranked,
        values=np.column_stack(columns)[complete],
        errors=raw,
        normalised=raw / scale[:, None],
        setups=setups,
        trivial=trivial_raw,
        trivial_normalised=trivial_raw / scale,
        task=str(frame["task"].iloc[0]),
        n_dropped=int((~complete).sum()),
    )


@dataclass(frozen=True)
class RegimeMap:
    task: str
    descriptor: str
    methods: tuple[str, ...]
    edges: np.ndarray
    bins: pd.DataFrame  # one row per region: a bin or adjacent bins merged
    cells: pd.DataFrame  # one row per (region, method)
    n_dropped: int
    # methods scored on fewer than the share of the map's samples (docs/regimes.md, "Failures"):
    # drawn with the means of their finite errors, never ranked nor a winner
    below_share: tuple[str, ...] = ()
    # per original bin (before merging) and method, the mean normalised error: the figure's lines
    fine: pd.DataFrame | None = None
    # the degenerate flag of the task and shift (None: no trivial answers given), and its reason
    degenerate: bool | None = None
    degenerate_note: str = ""

    def table(self) -> pd.DataFrame:
        """The CSV's rows: :data:`CSV_COLUMNS`, one row per (region, method)."""
        table = self.cells.merge(self.bins.drop(columns="ranking"), on="bin")
        flag = "" if self.degenerate is None else bool(self.degenerate)
        table = table.assign(task=self.task, descriptor=self.descriptor, degenerate=flag)
        return table[list(CSV_COLUMNS)]

    def change_edges(self) -> list[float]:
        """The lower edges of the regions whose winner differs from the previous winner's."""
        return self.bins.loc[self.bins["winner_changed"], "lower"].tolist()


def _region_rows(prep: _Prepared, rows: np.ndarray, verdict: Verdict | None):
    """A region's per-method cells and its summary fields (``verdict`` None: no samples)."""
    methods, ranked = prep.methods, prep.ranked
    n = len(rows)
    # NaN errors (of a method below the share) left out of its mean; NaN where it has none
    raw = _nanmean(prep.errors[rows], axis=0) if n else np.full(len(methods), np.nan)
    norm = _nanmean(prep.normalised[rows], axis=0) if n else np.full(len(methods), np.nan)
    if verdict is None:
        summary = {"leader": "", "winner": "", "tied": "", "n_tied": 0, "verdict": "no samples",
                   "ranking": ""}  # fmt: skip
    else:
        leader = ranked[verdict.leader]
        summary = {
            "leader": leader,
            "winner": leader if verdict.significant else "",
            "tied": ";".join(ranked[j] for j in verdict.tied),
            "n_tied": len(verdict.tied),
            "verdict": "winner" if verdict.significant else "no clear winner",
            "ranking": ";".join(ranked[j] for j in verdict.ranking),
        }
    cells = []
    for i, m in enumerate(methods):
        j = ranked.index(m) if m in ranked else -1
        cells.append(
            {
                "method": m,
                "mean_error": float(raw[i]),
                "normalised_error": float(norm[i]),
                "rank": verdict.ranking.index(j) + 1 if verdict is not None and j >= 0 else 0,
                "p_value": float(verdict.pvalues[j]) if verdict is not None and j >= 0 else np.nan,
                "p_holm": float(verdict.holm[j]) if verdict is not None and j >= 0 else np.nan,
                "is_winner": bool(summary["winner"] == m),
            }
        )
    trivial = float(_nanmean(prep.trivial[rows])) if n else np.nan
    summary |= {
        "n_samples": n,
        "n_setups": len(np.unique(prep.setups[rows])),
        "trivial_error": trivial,
    }
    return cells, summary


def regime_map(
    records: pd.DataFrame,
    descriptor: str,
    n_bins: int = 10,
    scheme: str = "quantile",
    value_range=None,
    methods: list[str] | None = None,
    min_coverage: float = MIN_COVERAGE,
    alpha: float = ALPHA,
    n_bootstrap: int = N_BOOTSTRAP,
    seed: int = 0,
    trivial: pd.DataFrame | None = None,
    merge: bool = True,
) -> RegimeMap:
    """Bin ``descriptor``; per bin each method's mean raw and per-setup-normalised error, the
    leader on the normalised errors, its Holm-corrected paired tests, adjacent bins merged until
    the leader is significant (``merge``), and the share of ``n_bootstrap`` cluster resamples
    (``seed``) in which it keeps leading (docs/regimes.md §3). ``trivial``: the trivial answer's
    error per sample (columns classifier, dataset, sample_id, error), shown beside the methods."""
    prep = _prepare(records, [descriptor], methods, min_coverage, trivial)
    values = prep.values[:, 0]
    edges = bin_edges(values, n_bins, scheme, value_range)
    sample_bin = assign_bins(values, edges)
    ranked_cols = [prep.methods.index(m) for m in prep.ranked]
    scored = prep.normalised[:, ranked_cols]

    def verdict_of(bins: list[int]) -> Verdict | None:
        rows = np.flatnonzero(np.isin(sample_bin, bins))
        return decide(scored[rows], alpha) if len(rows) else None

    n_fine = len(edges) - 1
    regions: list[list[int]] = []
    pending: list[int] = []
    for b in range(n_fine):
        alone = verdict_of([b])
        if alone is None:  # an empty bin (scheme width) joins a pending merge or stands alone
            (pending.append(b) if pending else regions.append([b]))
            continue
        if not merge or alone.significant:
            if pending:
                regions.append(pending)  # a merge that never became significant
                pending = []
            regions.append([b])
            continue
        pending.append(b)
        if len(pending) > 1 and verdict_of(pending).significant:
            regions.append(pending)
            pending = []
    if pending:
        regions.append(pending)

    counts = resample_counts(prep.setups, n_bootstrap, seed) if n_bootstrap else None
    bin_rows, cell_rows = [], []
    prev_winner = prev_ranking = None
    for r, bins in enumerate(regions):
        rows = np.flatnonzero(np.isin(sample_bin, bins))
        verdict = decide(scored[rows], alpha) if len(rows) else None
        cells, summary = _region_rows(prep, rows, verdict)
        share = np.nan
        if verdict is not None and counts is not None:
            share = winner_share(counts, scored, rows, verdict.leader)
        winner_changed = ranking_changed = False
        if summary["winner"]:
            winner_changed = prev_winner is not None and summary["winner"] != prev_winner
            prev_winner = summary["winner"]
        if summary["ranking"]:
            ranking_changed = prev_ranking is not None and summary["ranking"] != prev_ranking
            prev_ranking = summary["ranking"]
        bin_rows.append(
            {
                "bin": r,
                "first_bin": bins[0],
                "last_bin": bins[-1],
                "lower": float(edges[bins[0]]),
                "upper": float(edges[bins[-1] + 1]),
                "upper_closed": bins[-1] == n_fine - 1,
                **summary,
                "bootstrap_share": share,
                "winner_changed": bool(winner_changed),
                "ranking_changed": bool(ranking_changed),
            }
        )
        cell_rows += [{"bin": r, **cell} for cell in cells]
    fine_rows = []
    for b in range(n_fine):
        rows = sample_bin == b
        means = _nanmean(prep.normalised[rows], axis=0) if rows.any() else None
        trivial_mean = _nanmean(prep.trivial_normalised[rows]) if rows.any() else np.nan
        fine_rows += [
            {
                "bin": b,
                "method": m,
                "normalised_error": np.nan if means is None else float(means[i]),
                "trivial_normalised": float(trivial_mean),
            }
            for i, m in enumerate(prep.methods)
        ]
    return RegimeMap(
        task=prep.task,
        descriptor=descriptor,
        methods=tuple(prep.methods),
        edges=edges,
        bins=pd.DataFrame(bin_rows),
        cells=pd.DataFrame(cell_rows),
        n_dropped=prep.n_dropped,
        below_share=tuple(m for m in prep.methods if m not in prep.ranked),
        fine=pd.DataFrame(fine_rows),
    )


_TEX = str.maketrans({"\\": r"\textbackslash{}", "_": r"\_", "&": r"\&", "%": r"\%", "#": r"\#",
    "$": r"\$", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"})  # fmt: skip


def _draw(ax, rmap: RegimeMap) -> None:
    """One map on one axis: each method's mean normalised error per bin against the bin centre,
    the trivial answer dashed, and the regions (merged bins) shaded with their winner or the size
    of their tied set."""
    centres = (rmap.edges[:-1] + rmap.edges[1:]) / 2
    fine = rmap.fine
    for m in rmap.methods:
        sel = fine[fine["method"] == m].sort_values("bin")
        ax.plot(centres, sel["normalised_error"].to_numpy(), marker="o", lw=1.5, label=m)
    trivial = fine.groupby("bin", sort=True)["trivial_normalised"].first().to_numpy()
    if np.isfinite(trivial).any():
        ax.plot(centres, trivial, color="black", ls="--", lw=1.5, label="trivial answer")
    for row in rmap.bins.itertuples(index=False):
        if row.bin % 2:
            ax.axvspan(row.lower, row.upper, color="0.92", zorder=0)
        if row.verdict == "winner":
            text = f"{row.winner} ({row.bootstrap_share:.0%})"
        elif row.verdict == "no clear winner":
            text = f"no clear winner ({row.n_tied} tied)"
        else:
            continue
        ax.text(
            (row.lower + row.upper) / 2, 1.0, text, transform=ax.get_xaxis_transform(),
            rotation=90, ha="center", va="top", fontsize=6,
        )  # fmt: skip
    title = rmap.descriptor
    if rmap.degenerate:
        title += "  [DEGENERATE: " + rmap.degenerate_note + "]"
    ax.set_title(title, fontsize=9, color="firebrick" if rmap.degenerate else "black")
    ax.set_xlabel(rmap.descriptor)
    ax.set_ylabel("mean error / setup's mean")
    ax.grid(axis="y", linestyle="--", color="lightgray")


def regime_maps_tex(rmaps: list[RegimeMap]) -> str:
    """One LaTeX tabular per map, headed by its descriptor and scaled to the text width: region
    interval (merged bins), sample count, each method's mean normalised error (the winner's in
    bold), the winner (or the tied set), its bootstrap share, and a ``*`` where the winner changes;
    a sentence when the task and shift is degenerate."""
    lines = []
    for rmap in rmaps:
        cells = rmap.cells.set_index(["bin", "method"])["normalised_error"]
        head = ["bins", "$n$", *(m.translate(_TEX) for m in rmap.methods), "winner", "kept",
                "change"]  # fmt: skip
        left_out = "every method's" if not rmap.below_share else "a ranked method's"
        flagged = (
            "; not ranked, scored on too few samples: "
            + ", ".join(m.translate(_TEX) for m in rmap.below_share)
            if rmap.below_share
            else ""
        )
        lines += [
            rf"\noindent\textbf{{{rmap.descriptor.translate(_TEX)}}}"
            rf" ({rmap.n_dropped} samples without {left_out} error left out{flagged};"
            r" errors divided by their setup's mean)\\",
        ]
        if rmap.degenerate:
            lines.append(r"\emph{Degenerate: " + rmap.degenerate_note.translate(_TEX) + r".}\\")
        lines += [
            r"\resizebox{\textwidth}{!}{%",
            r"\begin{tabular}{lr" + "r" * len(rmap.methods) + "lrc}",
            r"\hline",
            " & ".join(head) + r" \\",
            r"\hline",
        ]
        for row in rmap.bins.itertuples(index=False):
            close = "]" if row.upper_closed else ")"
            interval = f"$[{row.lower:.4f}, {row.upper:.4f}{close}$"
            values = []
            for m in rmap.methods:
                v = cells[(row.bin, m)]
                text = "--" if not np.isfinite(v) else f"{v:.4f}"
                values.append(rf"\textbf{{{text}}}" if m == row.winner else text)
            change = "*" if row.winner_changed else ""
            if row.verdict == "winner":
                winner = row.winner.translate(_TEX)
            elif row.verdict == "no clear winner":
                winner = "tied: " + ", ".join(m.translate(_TEX) for m in row.tied.split(";"))
            else:
                winner = "--"
            kept = f"{row.bootstrap_share:.0%}".replace("%", r"\%") if row.n_samples else "--"
            if not np.isfinite(row.bootstrap_share):
                kept = "--"
            lines.append(
                " & ".join([interval, str(row.n_samples), *values, winner, kept, change]) + r" \\"
            )
        lines += [r"\hline", r"\end{tabular}}", r"\par\medskip", ""]
    return "\n".join(lines)


def write_regime_maps(rmaps: list[RegimeMap], stem: str | Path, title: str = "") -> dict[str, Path]:
    """Several maps of one task in one ``<stem>.csv`` (the rows of each, told apart by the
    ``descriptor`` column), ``<stem>.png`` (one panel each) and ``<stem>.tex`` (one tabular each);
    returns the paths by suffix."""
    if not rmaps:
        raise ValueError("no regime maps to write")
    stem = Path(stem)
    paths = {s: stem.with_name(stem.name + "." + s) for s in ("csv", "png", "tex")}
    write_csv(paths["csv"], pd.concat([rmap.table() for rmap in rmaps], ignore_index=True))
    write_text(paths["tex"], regime_maps_tex(rmaps))
    from unishift.figures import figure_settings

    with figure_settings():
        _draw_regime_maps(rmaps, title, paths["png"])
    return paths


def _draw_regime_maps(rmaps: list[RegimeMap], title: str, png: Path) -> None:
    from unishift.figures import pyplot

    plt = pyplot()
    columns = min(2, len(rmaps))
    rows = -(-len(rmaps) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(7 * columns, 4 * rows), squeeze=False)
    for ax, rmap in zip(axes.flat, rmaps):
        _draw(ax, rmap)
    for ax in list(axes.flat)[len(rmaps) :]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, title="Method", loc="upper left", bbox_to_anchor=(1.0, 0.95))
    fig.suptitle(
        title
        or f"{rmaps[0].task}: mean error / setup's mean, by bin (shaded: merged regions, the "
        "winner and its bootstrap share)"
    )
    fig.tight_layout()
    # fixed metadata: the same maps give the same bytes (the CSV written first made the folder)
    fig.savefig(png, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)


# --- two descriptors at once (compound shift: label-shift intensity x mixture) ---------------------

CSV_2D_COLUMNS = (
    "task",
    "x_descriptor",
    "y_descriptor",
    "x_bin",
    "x_lower",
    "x_upper",
    "y_bin",
    "y_lower",
    "y_upper",
    *_PER_METHOD_COLUMNS,
    "trivial_error",
    "degenerate",
)
# a cell with fewer samples than this is not tested ("too few samples"): its means rest on a
# handful of samples, and an exact one-sided Wilcoxon p on n pairs is at least 1 / 2^n (0.002 at
# n = 9), about Holm's threshold for 11-18 methods (docs/regimes.md §3.1)
MIN_CELL_SAMPLES = 10


@dataclass(frozen=True)
class RegimeMap2D:
    task: str
    x: str
    y: str
    methods: tuple[str, ...]
    x_edges: np.ndarray
    y_edges: np.ndarray
    cells: pd.DataFrame  # one row per (x bin, y bin, method), the cell's fields repeated
    n_dropped: int
    below_share: tuple[str, ...] = ()
    degenerate: bool | None = None
    degenerate_note: str = ""

    def table(self) -> pd.DataFrame:
        flag = "" if self.degenerate is None else bool(self.degenerate)
        return self.cells.assign(
            task=self.task, x_descriptor=self.x, y_descriptor=self.y, degenerate=flag
        )[list(CSV_2D_COLUMNS)]


def regime_map_2d(
    records: pd.DataFrame,
    x: str = "true_label_shift",
    y: str = "true_mixture",
    n_bins: int = 4,
    scheme: str = "quantile",
    methods: list[str] | None = None,
    min_coverage: float = MIN_COVERAGE,
    alpha: float = ALPHA,
    n_bootstrap: int = N_BOOTSTRAP,
    seed: int = 0,
    trivial: pd.DataFrame | None = None,
    min_samples: int = MIN_CELL_SAMPLES,
    x_range=None,
    y_range=None,
) -> RegimeMap2D:
    """A grid of ``n_bins`` x ``n_bins`` cells over two descriptors (each binned as in
    :func:`regime_map`), per cell the leader on per-setup-normalised errors, its Holm-corrected
    paired tests, the winner or the tied set, and its bootstrap share (docs/regimes.md §3.1);
    ``x_range`` / ``y_range``: each axis's ``value_range`` under ``scheme="width"``. Cells are not
    merged; a cell with fewer than ``min_samples`` samples is "too few samples"."""
    check_positive_int("min_samples", min_samples)
    prep = _prepare(records, [x, y], methods, min_coverage, trivial)
    x_edges = bin_edges(prep.values[:, 0], n_bins, scheme, x_range)
    y_edges = bin_edges(prep.values[:, 1], n_bins, scheme, y_range)
    x_bin = assign_bins(prep.values[:, 0], x_edges)
    y_bin = assign_bins(prep.values[:, 1], y_edges)
    ranked_cols = [prep.methods.index(m) for m in prep.ranked]
    scored = prep.normalised[:, ranked_cols]
    counts = resample_counts(prep.setups, n_bootstrap, seed) if n_bootstrap else None
    rows_out = []
    for i in range(len(x_edges) - 1):
        for j in range(len(y_edges) - 1):
            rows = np.flatnonzero((x_bin == i) & (y_bin == j))
            verdict = decide(scored[rows], alpha) if len(rows) >= min_samples else None
            cells, summary = _region_rows(prep, rows, verdict)
            share = np.nan
            if verdict is not None and counts is not None:
                share = winner_share(counts, scored, rows, verdict.leader)
            if verdict is None and len(rows):
                summary["verdict"] = f"too few samples (fewer than {min_samples})"
            place = {
                "x_bin": i, "x_lower": float(x_edges[i]), "x_upper": float(x_edges[i + 1]),
                "y_bin": j, "y_lower": float(y_edges[j]), "y_upper": float(y_edges[j + 1]),
            }  # fmt: skip
            summary.pop("ranking")
            rows_out += [{**place, **cell, **summary, "bootstrap_share": share} for cell in cells]
    return RegimeMap2D(
        task=prep.task,
        x=x,
        y=y,
        methods=tuple(prep.methods),
        x_edges=x_edges,
        y_edges=y_edges,
        cells=pd.DataFrame(rows_out),
        n_dropped=prep.n_dropped,
        below_share=tuple(m for m in prep.methods if m not in prep.ranked),
    )


def write_regime_map_2d(rmap: RegimeMap2D, stem: str | Path, title: str = "") -> dict[str, Path]:
    """``<stem>.csv`` (:data:`CSV_2D_COLUMNS`, one row per cell and method) and ``<stem>.png`` (the
    grid: each cell coloured by its winner, with the winner and its bootstrap share, the tied set's
    size, or why it has none)."""
    stem = Path(stem)
    paths = {s: stem.with_name(stem.name + "." + s) for s in ("csv", "png")}
    write_csv(paths["csv"], rmap.table())
    from unishift.figures import figure_settings

    with figure_settings():
        _draw_2d(rmap, title, paths["png"])
    return paths


def _draw_2d(rmap: RegimeMap2D, title: str, png: Path) -> None:
    from unishift.figures import pyplot

    plt = pyplot()
    cells = rmap.cells.drop_duplicates(["x_bin", "y_bin"]).sort_values(["x_bin", "y_bin"])
    winners = [m for m in rmap.methods if m in set(cells["winner"])]
    palette = plt.get_cmap("tab20")
    nx, ny = len(rmap.x_edges) - 1, len(rmap.y_edges) - 1
    fig, ax = plt.subplots(figsize=(1.8 * nx + 3, 1.4 * ny + 1.5))
    for row in cells.itertuples(index=False):
        if row.winner:
            colour = palette(winners.index(row.winner) % 20)
            text = f"{row.winner}\n{row.bootstrap_share:.0%} kept\nn={row.n_samples}"
        elif row.verdict == "no clear winner":
            colour, text = "0.85", f"no clear winner\n{row.n_tied} tied\nn={row.n_samples}"
        else:
            colour, text = "white", f"{row.verdict}\nn={row.n_samples}"
        ax.add_patch(
            plt.Rectangle((row.x_bin, row.y_bin), 1, 1, facecolor=colour, edgecolor="black")
        )
        ax.text(row.x_bin + 0.5, row.y_bin + 0.5, text, ha="center", va="center", fontsize=7)
    ax.set_xlim(0, nx)
    ax.set_ylim(0, ny)
    ax.set_xticks(range(nx + 1), [f"{e:.3g}" for e in rmap.x_edges])
    ax.set_yticks(range(ny + 1), [f"{e:.3g}" for e in rmap.y_edges])
    ax.set_xlabel(f"{rmap.x} (bin edges)")
    ax.set_ylabel(f"{rmap.y} (bin edges)")
    heading = title or f"{rmap.task}: winner per cell (per-setup-normalised errors, Holm)"
    if rmap.degenerate:
        heading += "\nDEGENERATE: " + rmap.degenerate_note
    ax.set_title(heading, fontsize=9, color="firebrick" if rmap.degenerate else "black")
    fig.tight_layout()
    fig.savefig(png, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
