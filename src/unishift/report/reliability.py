"""Reliability diagrams of the calibrators (docs/reporting.md, "Reliability diagrams").

The records keep one ECE per sample, not the calibrated posteriors it was computed from. The
evaluation job therefore passes each scored sample's posteriors to a :class:`ReliabilityCollector`,
which keeps only what a reliability diagram needs: per setup, shift-intensity band, target and
confidence bin, the number of predictions, the sum of their confidences and the number that were
right. Sums, not means, so that pooling setups or bands is exact (:func:`pool`).

Targets: ``top_label`` (the predicted class's posterior against "the prediction is right", the
tables' default ECE) for any number of classes, and ``class_<c>`` (the posterior of class c against
"the label is c") for each class when there are more than two (for two classes the class-wise
diagrams are the top-label one's mirror images).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from unishift.evaluation.metrics import N_BINS as METRIC_BINS
from unishift.evaluation.metrics import top_label_confidence

# The tables' ECE bins (unishift.evaluation.metrics): equal width over [0, 1], right-closed.
N_CONFIDENCE_BINS = METRIC_BINS
# Shift-intensity bands of the diagrams: [0, 1/3), [1/3, 2/3), [2/3, 1] (levels outside [0, 1]
# in the outer bands).
BANDS = ("low", "medium", "high")
BAND_EDGES = np.linspace(0.0, 1.0, len(BANDS) + 1)
TOP_LABEL = "top_label"
COLUMNS = (
    "classifier",
    "dataset",
    "band",
    "target",
    "bin",
    "n",
    "sum_confidence",
    "n_correct",
)


def band_of(intensity: float) -> str:
    """The band of one shift intensity (right-open bands, 1.0 and above in the last)."""
    index = int(
        np.clip(np.searchsorted(BAND_EDGES, intensity, side="right") - 1, 0, len(BANDS) - 1)
    )
    return BANDS[index]


def confidence_bins(confidence: np.ndarray, n_bins: int = N_CONFIDENCE_BINS) -> np.ndarray:
    """Bin index of each confidence: right-closed bins (a, b], the first also holding 0, as the
    tables' ECE bins them (with 10 bins 0.1 falls in bin 0, 0.1 + 1e-9 in bin 1, 1.0 in the last)."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    index = np.searchsorted(edges, np.asarray(confidence, dtype=float), side="left") - 1
    return np.clip(index, 0, n_bins - 1)


def _targets(calibrated: np.ndarray, labels: np.ndarray):
    """(target, confidence, correct) of each diagram one sample contributes to: the top label as
    the tables' ECE reads it (after the metric's log/softmax round trip, ties to the lowest class)."""
    labels = np.asarray(labels).astype(int)
    confidence, predicted = top_label_confidence(calibrated)
    yield TOP_LABEL, confidence, predicted == labels
    if calibrated.shape[1] > 2:
        for c in range(calibrated.shape[1]):
            yield f"class_{c}", calibrated[:, c], labels == c


class ReliabilityCollector:
    """Accumulates the bin statistics of the samples it observes (the ``observe`` hook of
    :func:`unishift.evaluation.evaluate_method`)."""

    def __init__(self, n_bins: int = N_CONFIDENCE_BINS):
        self.n_bins = n_bins
        self._sums: dict[tuple[str, str, str, str], np.ndarray] = {}

    def __call__(self, setup, sample_id: int, calibrated: np.ndarray, labels: np.ndarray) -> None:
        band = band_of(float(setup.shift_intensity[sample_id]))
        calibrated = np.asarray(calibrated, dtype=float)
        for target, confidence, correct in _targets(calibrated, labels):
            key = (setup.classifier, setup.dataset, band, target)
            sums = self._sums.setdefault(key, np.zeros((3, self.n_bins)))
            bins = confidence_bins(confidence, self.n_bins)
            sums[0] += np.bincount(bins, minlength=self.n_bins)
            sums[1] += np.bincount(bins, weights=confidence, minlength=self.n_bins)
            sums[2] += np.bincount(bins, weights=correct.astype(float), minlength=self.n_bins)

    def frame(self) -> pd.DataFrame:
        """One row per (classifier, data set, band, target, bin) that holds a prediction, in the
        order the setups were observed, then band, target and bin."""
        order = {band: i for i, band in enumerate(BANDS)}
        rows = []
        # setups keep their observation order (table order); bands and targets are sorted in each
        setups = list(dict.fromkeys(k[:2] for k in self._sums))
        for setup in setups:
            keys = [k for k in self._sums if k[:2] == setup]
            for key in sorted(keys, key=lambda k: (order[k[2]], _target_order(k[3]))):
                sums = self._sums[key]
                for b in np.flatnonzero(sums[0]):
                    rows.append(
                        (*key, int(b), int(sums[0, b]), float(sums[1, b]), int(round(sums[2, b])))
                    )
        return pd.DataFrame.from_records(rows, columns=list(COLUMNS))


def _target_order(target: str) -> tuple[int, int]:
    return (0, 0) if target == TOP_LABEL else (1, int(target.split("_", 1)[1]))


def pool(frame: pd.DataFrame, by: tuple[str, ...] = ("band", "target")) -> pd.DataFrame:
    """The diagram's points pooled over everything not in ``by``: per group and bin, the count,
    mean confidence and accuracy (the share right), and the group's pooled ECE x 100 in the
    tables' form (unishift.evaluation.metrics: the count-weighted mean of the squared gap
    (confidence - accuracy)^2 over its bins), of all its predictions taken as one sample."""
    keys = [*by, "bin"]
    sums = frame.groupby(keys, sort=True)[["n", "sum_confidence", "n_correct"]].sum().reset_index()
    sums["confidence"] = sums["sum_confidence"] / sums["n"]
    sums["accuracy"] = sums["n_correct"] / sums["n"]
    gap = (sums["accuracy"] - sums["confidence"]) ** 2 * sums["n"]
    totals = sums.groupby(list(by))["n"].transform("sum")
    sums["ece"] = 100 * gap.groupby([sums[k] for k in by]).transform("sum") / totals
    return sums[[*keys, "n", "confidence", "accuracy", "ece"]]


def read_reliability(paths) -> pd.DataFrame:
    """The concatenated reliability files of one method's evaluation jobs (table order)."""
    frames = [pd.read_csv(p, dtype={"classifier": str, "dataset": str}) for p in paths]
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS))
    return pd.concat(frames, ignore_index=True)


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
    frame: pd.DataFrame, method: str, title: str, paths: list[str | Path]
) -> pd.DataFrame:
    """One column per shift-intensity band present, one pair of rows (diagram above, confidence
    histogram below) per target, pooled over the setups; saved to each of ``paths``. Returns the
    plotted points (:func:`pool`)."""
    import matplotlib

    from unishift.figures import figure_settings, pyplot, save_figure

    points = pool(frame)
    if points.empty:
        raise ValueError(f"{method}: no calibrated sample to draw a reliability diagram from")
    bands = [b for b in BANDS if b in set(points["band"])]
    targets = sorted(set(points["target"]), key=_target_order)
    width = 1.0 / N_CONFIDENCE_BINS
    # the project's figure settings (matplotlib's defaults, whatever the process imported), then ours
    with figure_settings(), matplotlib.rc_context(RC):
        plt = pyplot()
        fig, axes = plt.subplots(
            2 * len(targets),
            len(bands),
            figsize=(3.0 * len(bands), 3.6 * len(targets)),
            gridspec_kw={"height_ratios": [3, 1] * len(targets)},
            squeeze=False,
            sharex=True,
        )
        for row, target in enumerate(targets):
            for col, band in enumerate(bands):
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
        fig.tight_layout()
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
    plot_reliability(frame, method, f"{label}: reliability under {shift} shift", [png_path])
    return frame
