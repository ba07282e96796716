"""The statistics of the calibrators' reliability diagrams (docs/reporting.md, "Reliability diagrams"),
collected in the evaluation jobs and pooled by the report (:mod:`unishift.report.reliability` draws
them).

The records keep one ECE per sample, not the calibrated posteriors it was computed from. The
evaluation job therefore passes each scored sample's posteriors to a :class:`ReliabilityCollector`,
which keeps only what a reliability diagram needs: per setup, shift-intensity band, target and
confidence bin, the number of predictions, the sum of their confidences and the number that were
right. Sums, not means, so that pooling setups or bands is exact (:func:`pool`).

Targets: ``top_label`` (the predicted class's posterior against "the prediction is right", the
tables' default ECE) for any number of classes, and ``class_<c>`` (the posterior of class c against
"the label is c") for each class when there are more than two (for two classes the class-wise
diagrams are the top-label one's mirror images). Class c is pooled over setups only where the
setups share their classes (:func:`comparable_targets`).
"""

from __future__ import annotations

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


# The class-wise targets of setups whose classes differ, pooled over the classes (comparable_targets)
EVERY_CLASS = "every_class"


def _target_order(target: str) -> tuple[int, int]:
    if target == TOP_LABEL:
        return (0, 0)
    if target == EVERY_CLASS:
        return (1, -1)
    return (1, int(target.split("_", 1)[1]))


def comparable_targets(frame: pd.DataFrame, shift: str) -> pd.DataFrame:
    """The frame with targets that may be pooled over its setups. Under label shift each data set
    has its own classes (class 0 of cmc is not class 0 of yeast): where the class-wise rows come
    from more than one data set, they become one target, ``every_class`` (every class-vs-rest
    prediction, the reading of the class-wise ECE), instead of class c of one data set pooled with
    class c of another. Covariate and compound shift pair domains of one text source, whose
    classes are the same: their class-wise targets stay."""
    classwise = frame["target"] != TOP_LABEL
    if shift != "label" or frame.loc[classwise, "dataset"].nunique() <= 1:
        return frame
    return frame.assign(target=frame["target"].where(~classwise, EVERY_CLASS))


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
