"""Regime maps: which method wins where, along one shift descriptor (paired samples, bins, ranking
with ties, winner changes and the written files: docs/regimes.md §3).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from unishift.evaluation.stats import MIN_COVERAGE
from unishift.io import write_csv, write_text
from unishift.option_checks import check_choice, check_positive_int
from unishift.regimes.selector import REQUIRED, SAMPLE_KEY, eligible_methods, method_errors

CSV_COLUMNS = (
    "task",
    "descriptor",
    "bin",
    "lower",
    "upper",
    "upper_closed",
    "n_samples",
    "method",
    "mean_error",
    "rank",
    "is_winner",
    "winner",
    "n_tied",
    "winner_changed",
    "ranking_changed",
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
class RegimeMap:
    task: str
    descriptor: str
    methods: tuple[str, ...]
    edges: np.ndarray
    bins: pd.DataFrame  # one row per bin
    cells: pd.DataFrame  # one row per (bin, method)
    n_dropped: int
    # methods scored on fewer than the share of the map's samples (docs/regimes.md, "Failures"):
    # drawn with the means of their finite errors, never ranked nor a winner
    below_share: tuple[str, ...] = ()

    def table(self) -> pd.DataFrame:
        """The CSV's rows: :data:`CSV_COLUMNS`, one row per (bin, method)."""
        table = self.cells.merge(self.bins.drop(columns="ranking"), on="bin")
        return table.assign(task=self.task, descriptor=self.descriptor)[list(CSV_COLUMNS)]

    def change_edges(self) -> list[float]:
        """The lower edges of the bins whose winner differs from the previous non-empty bin's."""
        return self.bins.loc[self.bins["winner_changed"], "lower"].tolist()


def regime_map(
    records: pd.DataFrame,
    descriptor: str,
    n_bins: int = 10,
    scheme: str = "quantile",
    value_range=None,
    methods: list[str] | None = None,
    min_coverage: float = MIN_COVERAGE,
) -> RegimeMap:
    """Bin ``descriptor``, and per bin each method's mean error, ranking and winner
    (docs/regimes.md §3)."""
    if descriptor in REQUIRED:
        raise ValueError(f"{descriptor!r} is a record column, not a descriptor")
    methods, frame, errors = method_errors(records, methods, [descriptor], "a regime map")
    undefined = ~np.isfinite(frame[descriptor].to_numpy(dtype=float))
    if undefined.any():
        raise ValueError(
            f"the descriptor {descriptor!r} is not finite in {int(undefined.sum())} rows; drop "
            "those samples (or compute the descriptor) first"
        )
    per_sample = frame.groupby(SAMPLE_KEY, sort=True)[descriptor].agg(["min", "max"])
    varying = ~np.isclose(per_sample["min"], per_sample["max"], rtol=0, atol=1e-12)
    if varying.any():
        raise ValueError(
            f"the descriptor {descriptor!r} differs between the methods' rows of "
            f"{int(varying.sum())} samples; a descriptor belongs to the sample, not the method"
        )
    # the samples on which every method scored on the share has a finite error: a method that
    # failed too often is not compared, and its failures drop no other method's samples
    ranked = eligible_methods(errors, methods, min_coverage, f"of the map of {descriptor!r}")
    complete = np.isfinite(errors[ranked].to_numpy(dtype=float)).all(axis=1)
    if not complete.any():
        raise ValueError(f"no sample has a finite error for every one of {ranked}")
    values = per_sample["min"].reindex(errors.index).to_numpy()[complete]
    errors, task = errors[complete], str(frame["task"].iloc[0])
    edges = bin_edges(values, n_bins, scheme, value_range)
    sample_bin = assign_bins(values, edges)

    bin_rows, cell_rows = [], []
    prev_winner = prev_ranking = None
    for b in range(len(edges) - 1):
        in_bin = errors[sample_bin == b]
        n = len(in_bin)
        # NaN errors (of a method below the share) left out of its mean; NaN where it has none
        means = in_bin.mean(axis=0) if n else pd.Series(np.nan, index=methods)
        ranking, winner, n_tied, winner_changed, ranking_changed = [], "", 0, False, False
        if n:
            rounded = means[ranked].round(12)  # so that summation order cannot decide
            ranking = sorted(ranked, key=lambda m: (rounded[m], methods.index(m)))
            winner = ranking[0]
            n_tied = int((rounded == rounded[winner]).sum())
            winner_changed = prev_winner is not None and winner != prev_winner
            ranking_changed = prev_ranking is not None and ranking != prev_ranking
            prev_winner, prev_ranking = winner, ranking
        bin_rows.append(
            {
                "bin": b,
                "lower": float(edges[b]),
                "upper": float(edges[b + 1]),
                "upper_closed": b == len(edges) - 2,
                "n_samples": n,
                "winner": winner,
                "n_tied": n_tied,
                "ranking": ";".join(ranking),
                "winner_changed": bool(winner_changed),
                "ranking_changed": bool(ranking_changed),
            }
        )
        cell_rows += [
            {
                "bin": b,
                "method": m,
                "mean_error": float(means[m]),
                "rank": ranking.index(m) + 1 if m in ranking else 0,
                "is_winner": m == winner,
            }
            for m in methods
        ]
    return RegimeMap(
        task=task,
        descriptor=descriptor,
        methods=tuple(methods),
        edges=edges,
        bins=pd.DataFrame(bin_rows),
        cells=pd.DataFrame(cell_rows),
        n_dropped=int((~complete).sum()),
        below_share=tuple(m for m in methods if m not in ranked),
    )


_TEX = str.maketrans({"\\": r"\textbackslash{}", "_": r"\_", "&": r"\&", "%": r"\%", "#": r"\#",
    "$": r"\$", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"})  # fmt: skip


def _draw(ax, rmap: RegimeMap) -> None:
    """One map on one axis: mean error against the bin centre, a dashed line at each winner change."""
    centres = (rmap.bins["lower"].to_numpy() + rmap.bins["upper"].to_numpy()) / 2
    for m in rmap.methods:
        sel = rmap.cells[rmap.cells["method"] == m].sort_values("bin")
        ax.plot(centres, sel["mean_error"].to_numpy(), marker="o", lw=2, label=m)
    for edge in rmap.change_edges():
        ax.axvline(edge, color="gray", linestyle="--", lw=1)
    ax.set_xlabel(rmap.descriptor)
    ax.set_ylabel("mean error")
    ax.grid(axis="y", linestyle="--", color="lightgray")


def regime_maps_tex(rmaps: list[RegimeMap]) -> str:
    """One LaTeX tabular per map, headed by its descriptor and scaled to the text width: bin
    interval, sample count, each method's mean error (the winner's in bold), the winner, and a ``*``
    where the winner changes."""
    lines = []
    for rmap in rmaps:
        cells = rmap.cells.set_index(["bin", "method"])["mean_error"]
        head = ["bin", "$n$", *(m.translate(_TEX) for m in rmap.methods), "winner", "change"]
        left_out = "every method's" if not rmap.below_share else "a ranked method's"
        flagged = (
            "; not ranked, scored on too few samples: "
            + ", ".join(m.translate(_TEX) for m in rmap.below_share)
            if rmap.below_share
            else ""
        )
        lines += [
            rf"\noindent\textbf{{{rmap.descriptor.translate(_TEX)}}}"
            rf" ({rmap.n_dropped} samples without {left_out} error left out{flagged})\\",
            r"\resizebox{\textwidth}{!}{%",
            r"\begin{tabular}{lr" + "r" * len(rmap.methods) + "lc}",
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
            winner = row.winner.translate(_TEX) if row.winner else "--"
            lines.append(
                " & ".join([interval, str(row.n_samples), *values, winner, change]) + r" \\"
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
    fig.suptitle(title or f"{rmaps[0].task}: mean error by bin (dashed: winner changes)")
    fig.tight_layout()
    # fixed metadata: the same maps give the same bytes (the CSV written first made the folder)
    fig.savefig(png, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
