"""Error as a function of the level of shift (docs/reporting.md §4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from unishift.report.cd import figure_settings, latex_to_mathtext, pyplot, save_figure
from unishift.report.names import resolve_methods
from unishift.report.names import title as make_title

# The reference implementation's method selection and colours per panel (docs/reporting.md §4), then
# the k-class forms of the binary-only ones (TS for Platt, the top-label binnings for the p_1
# binnings) and a few k-class columns; a panel draws those of them that the config lists. Names are
# registry names.
_K_CALIBRATION = [
    ("TS", "black"), ("BCTS", "teal"), ("PCC_q2c_3B", "gray"), ("PACC_q2c_3B", "magenta"),
    ("DoC_a2c_3B", "blue"),
]  # fmt: skip
PLOT_METHODS = {
    ("calibration", "covariate"): [
        ("Platt", "black"), ("Head2Tail", "blueviolet"), ("CPCS", "firebrick"),
        ("TransCal", "lightgreen"), ("LasCal", "gold"), ("PCC_q2c_5B", "gray"),
        ("PACC_q2c_5B", "magenta"), ("DoC_a2c_6B", "blue"), *_K_CALIBRATION,
        ("EMQ_BCTS", "dodgerblue"), ("DMCal", "orangered"),
    ],
    ("calibration", "label"): [
        ("Platt", "black"), ("Head2Tail", "blueviolet"), ("CPCS", "firebrick"),
        ("TransCal", "lightgreen"), ("LasCal", "gold"), ("EMQ_BCTS", "dodgerblue"),
        ("DMCal", "orangered"), *_K_CALIBRATION,
    ],
    ("quantification", "covariate"): [
        ("CC", "black"), ("PCC", "gray"), ("PACC", "magenta"), ("EMQ", "dodgerblue"),
        ("KDEy", "green"), ("DoC_a2q", "blue"), ("LEAP_PCC_a2q", "red"), ("TransCal_c2q", "lightgreen"),
        ("LasCal_c2q", "gold"),
    ],
    ("quantification", "label"): [
        ("CC", "black"), ("PACC", "magenta"), ("EMQ", "dodgerblue"), ("KDEy", "green"),
        ("DoC_a2q", "blue"), ("LasCal_c2q", "gold"), ("PCC", "gray"), ("TransCal_c2q", "lightgreen"),
    ],
    ("cap", "covariate"): [
        ("Naive", "black"), ("ATC", "darkorange"), ("DoC", "blue"), ("LEAP", "cadetblue"),
        ("LEAP_PCC", "red"), ("PCC_q2a", "gray"), ("LasCal_c2a", "gold"), ("PACC_q2a", "magenta"),
        ("CPCS_c2a", "firebrick"),
    ],
    ("cap", "label"): [
        ("Naive", "black"), ("ATC", "darkorange"), ("DoC", "blue"), ("LEAP", "cadetblue"),
        ("CPCS_c2a", "firebrick"), ("PACC_q2a", "magenta"), ("LasCal_c2a", "gold"),
    ],
}  # fmt: skip
# Compound shift runs the covariate branch's methods on the covariate data: the same selection.
PLOT_METHODS |= {(t, "compound"): m for (t, s), m in PLOT_METHODS.items() if s == "covariate"}
# Colours of a panel none of whose selected methods the config lists (its first eight methods).
FALLBACK_COLOURS = ("black", "gray", "magenta", "dodgerblue", "green", "blue", "red", "gold")
N_BINS = 10


def shift_bins(intensity: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """Bin index of each shift intensity (docs/reporting.md §4)."""
    # clipped: 1.0 and levels outside [0, 1] in the outer bins (the reference implementation widens
    # the outer edges by 1e-4)
    return np.clip(np.digitize(intensity, np.linspace(0.0, 1.0, n_bins + 1)) - 1, 0, n_bins - 1)


def error_by_shift(records: pd.DataFrame, methods: list[str], n_bins: int = N_BINS) -> pd.DataFrame:
    """Per (method, bin): mean shift of the bin's records (x), mean error (y) and count. Errored
    samples (NaN error) are left out. Rows ordered by method (given order) then bin."""
    frame = records[records["method"].isin(methods) & np.isfinite(records["error"].astype(float))]
    frame = frame.assign(bin=shift_bins(frame["shift_intensity"].to_numpy(dtype=float), n_bins))
    agg = (
        frame.groupby(["method", "bin"], sort=True)
        .agg(shift=("shift_intensity", "mean"), error=("error", "mean"), n=("error", "size"))
        .reset_index()
    )
    agg["method"] = pd.Categorical(agg["method"], categories=list(methods), ordered=True)
    return agg.sort_values(["method", "bin"]).reset_index(drop=True).astype({"method": str})


def density(records: pd.DataFrame, shift: str, n_bins: int = N_BINS) -> np.ndarray:
    """Background bars (docs/reporting.md §4): uniform under covariate shift, else the share of
    samples per bin."""
    if shift == "covariate":
        return np.full(n_bins, 1.0 / n_bins)
    one_method = records[records["method"] == records["method"].iloc[0]]
    bins = shift_bins(one_method["shift_intensity"].to_numpy(dtype=float), n_bins)
    counts = np.bincount(bins, minlength=n_bins).astype(float)
    return counts / counts.sum()


def plot_error_by_shift(
    records: pd.DataFrame,
    task: str,
    shift: str,
    paths: list[str | Path],
    methods: list[tuple[str, str]] | None = None,
    method_info: dict[str, tuple[str, str]] | None = None,
) -> pd.DataFrame:
    """Draw the panel and save it to each of ``paths`` (png/pdf by suffix); returns the plotted
    points. ``methods`` = [(name, colour)], default the paper's selection restricted to the methods
    present in ``records``."""
    records = records[(records["task"] == task) & (records["shift"] == shift)]
    present = set(records["method"])
    chosen = [(m, c) for m, c in methods or PLOT_METHODS.get((task, shift), []) if m in present]
    if not chosen:
        raise ValueError(f"none of the plot's methods has {task}/{shift} records")
    names = [m for m, _ in chosen]
    displays = {c.name: c.display for c in resolve_methods(task, names, shift, method_info)}
    points = error_by_shift(records, names)
    bars = density(records, shift)
    with figure_settings():
        _draw_error_by_shift(points, bars, chosen, displays, task, shift, paths)
    return points


def _draw_error_by_shift(points, bars, chosen, displays, task, shift, paths) -> None:
    fig, ax = pyplot().subplots(figsize=(10, 8))
    centres = (np.arange(N_BINS) + 0.5) / N_BINS
    top = float(points["error"].max()) if len(points) else 1.0
    ax.bar(
        centres,
        bars * top / bars.max(),
        width=0.09,
        color="lavender",
        alpha=0.9,
        label="Density",
        zorder=0,
    )
    for name, colour in chosen:
        sel = points[points["method"] == name]
        label, _ = latex_to_mathtext(displays[name])
        ax.plot(
            sel["shift"], sel["error"], marker="o", lw=3, ms=10, color=colour, label=label, zorder=2
        )
    ax.set_xlim(0, 1)
    ax.set_xlabel("Level of shift")
    ax.set_ylabel("ECE" if task == "calibration" else "AE")
    ax.set_title(make_title(task, shift))
    ax.minorticks_on()
    ax.grid(axis="y", linestyle="--", color="lightgray")
    ax.set_axisbelow(True)
    ax.legend(title="Method", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save_figure(fig, *paths, bbox_inches="tight")
