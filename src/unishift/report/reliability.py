"""Reliability diagrams of the calibrators (docs/reporting.md, "Reliability diagrams"), drawn from
the statistics the evaluation jobs collect (:mod:`unishift.evaluation.reliability`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from unishift.evaluation.reliability import (
    BANDS,
    N_CONFIDENCE_BINS,
    _target_order,
    comparable_targets,
    pool,
    read_reliability,
)

# The diagrams' own matplotlib settings, on top of unishift.figures.figure_settings (matplotlib's
# defaults), so that a figure depends neither on the matplotlibrc of whoever runs the job nor on what
# the process imported.
RC = {
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.prop_cycle": "cycler(color=['#1f77b4', '#d62728'])",
    "lines.linewidth": 1.2,
    "savefig.facecolor": "white",
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "hatch.linewidth": 0.5,
    "svg.hashsalt": "unishift",
}


def plot_reliability(
    frame: pd.DataFrame, method: str, title: str, paths: list[str | Path], shift: str = "label"
) -> pd.DataFrame:
    """One diagram (above) with its confidence histogram (below) per shift-intensity band present and
    target, pooled over the setups; saved to each of ``paths``. The top label alone (two classes):
    one column per band. With class-wise targets (k classes): one column per target, one row per
    band, so that the k + 1 diagrams of a band sit side by side on a landscape page; under label
    shift with several data sets, the classes' diagram pools every class (comparable_targets).
    Returns the plotted points (:func:`pool`)."""
    import matplotlib

    from unishift.figures import figure_settings, pyplot, save_figure

    points = pool(comparable_targets(frame, shift))
    if points.empty:
        raise ValueError(f"{method}: no calibrated sample to draw a reliability diagram from")
    bands = [b for b in BANDS if b in set(points["band"])]
    targets = sorted(set(points["target"]), key=_target_order)
    if len(targets) == 1:
        cells = {(band, targets[0]): (0, col) for col, band in enumerate(bands)}
        n_rows, n_cols = 1, len(bands)
    else:
        cells = {
            (band, target): (row, col)
            for row, band in enumerate(bands)
            for col, target in enumerate(targets)
        }
        n_rows, n_cols = len(bands), len(targets)
    width = 1.0 / N_CONFIDENCE_BINS
    # the project's figure settings (matplotlib's defaults, whatever the process imported), then ours
    with figure_settings(), matplotlib.rc_context(RC):
        plt = pyplot()
        # constrained layout leaves room for the suptitle (tight_layout drew it over the first
        # panel's title in a tall figure) and spaces each histogram close to its diagram
        fig, axes = plt.subplots(
            2 * n_rows,
            n_cols,
            figsize=(3.0 * n_cols, 3.6 * n_rows + 0.4),
            gridspec_kw={"height_ratios": [3, 1] * n_rows},
            squeeze=False,
            sharex=True,
            layout="constrained",
        )
        for (band, target), (row, col) in cells.items():
            top, bottom = axes[2 * row, col], axes[2 * row + 1, col]
            sel = points[(points["band"] == band) & (points["target"] == target)]
            centres = (sel["bin"].to_numpy() + 0.5) * width
            top.plot([0, 1], [0, 1], ls="--", color="gray", lw=0.8)
            top.bar(
                centres, sel["accuracy"], width=width, color="#1f77b4", alpha=0.8,
                edgecolor="black", lw=0.4, label="accuracy",
            )  # fmt: skip
            top.plot(sel["confidence"], sel["accuracy"], "o", color="#d62728", ms=3,
                     label="mean confidence")  # fmt: skip
            top.set_xlim(0, 1)
            top.set_ylim(0, 1)
            ece = float(sel["ece"].iloc[0]) if len(sel) else float("nan")
            top.set_title(f"{band} shift, {target.replace('_', ' ')}\npooled ECE {ece:.2f}")
            bottom.bar(centres, sel["n"] / sel["n"].sum(), width=width, color="gray")
            bottom.set_xlabel("confidence")
            if col == 0:
                top.set_ylabel("accuracy")
                bottom.set_ylabel("share")
        axes[0, 0].legend(loc="upper left", fontsize=7)
        fig.suptitle(title)
        save_figure(fig, *paths)
    return points


def build_reliability(
    inputs, csv_path: str | Path, png_path: str | Path, method: str, display: str, shift: str
) -> pd.DataFrame:
    """Concatenate one calibrator's per-job bin statistics into ``csv_path`` (table order) and draw
    its diagrams, pooled over the setups, into ``png_path``; returns the statistics."""
    from unishift.io import write_csv
    from unishift.report.cd import latex_to_mathtext

    frame = read_reliability(inputs)
    write_csv(csv_path, frame)
    label, _ = latex_to_mathtext(display)
    plot_reliability(frame, method, f"{label}: reliability under {shift} shift", [png_path], shift)
    return frame
