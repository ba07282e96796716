"""ρ2ζ and α2ζ: calibrators built from a quantifier or a CAP method, on the binary tables' p_1 bins
(``_q2c_5B`` / ``_a2c_6B``) or on top-label cells (``_3B``, any k): docs/methods.md §2.11, §2.12;
docs/multiclass.md §2.3, §2.6."""

from __future__ import annotations

from itertools import product
from typing import ClassVar

import numpy as np

from unishift.data.containers import Sample, argmax_predictions
from unishift.methods.adapt.common import Adapter, part_context
from unishift.methods.base import Calibrator, SampleContext, as_posteriors
from unishift.methods.binning import (
    MONOTONE_RULES,
    apply_map,
    bin_membership,
    binned_points,
    isometric_edges,
    postprocess_map,
    replace_top,
    top_label_map,
)
from unishift.methods.domain_weights import UNSHARED
from unishift.option_checks import check_choice, check_positive_int

BINNINGS = ("isometric", "level_sets")
ABSCISSAE = ("bin_mean", "bin_centre")
CELL_FITS = ("auto", "whole", "per_cell")
P1_BINS = (
    "bins the positive posterior p_1 across both predicted classes; for k classes use the "
    "top-label cells of {kind} (bins of the confidence per predicted class)"
)


class _BinnedCalibrator(Adapter, Calibrator):
    # the leaves' constructors take bins, binning and, in their order, abscissa, monotone, smooth,
    # cell_fit

    def check_params(self):
        super().check_params()
        check_choice("binning", self.binning, BINNINGS)
        check_choice("monotone", self.monotone, MONOTONE_RULES)
        check_choice("smooth", self.smooth, (True, False))
        check_positive_int("bins", self.bins)
        check_choice("abscissa", getattr(self, "abscissa", "bin_centre"), ABSCISSAE)

    def domain_weight_plan(self):
        # calls per cell of the posterior range: a pattern no shared artifact covers
        return None if super().domain_weight_plan() is None else UNSHARED


class _PositiveBinnedCalibrator(_BinnedCalibrator):
    # one inner method, fitted on the whole validation set, answers for every cell of every sample
    def calibrate(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        context = self.context_for(context)
        scores = sample.posteriors[:, 1]
        if self.binning == "level_sets":
            calibrated = np.empty(len(scores))
            for value in map(float, np.unique(scores)):  # the score classes [x]_h, exact equality
                mask = scores == value
                cell = sample.subset(mask)
                # a score class has one crisp prediction, which decides the side of a CAP answer
                upper_side = bool(argmax_predictions(cell.posteriors[:1])[0] == 1)
                cell_context = part_context(context, f"{self.tag}:level={value!r}")
                calibrated[mask] = self._positive_rate(cell, cell_context, upper_side)
            return as_posteriors(calibrated)
        edges = isometric_edges(self.bins, lower_first=self.lower_first)
        centres = (edges[:-1] + edges[1:]) / 2

        def rate(b, mask):
            cell_context = part_context(context, f"{self.tag}:{self.bins}B:bin{b}")
            return self._positive_rate(sample.subset(mask), cell_context, centres[b] > 0.5)

        at_centres = getattr(self, "abscissa", "bin_centre") == "bin_centre"
        abscissae, ordinates = binned_points(scores, edges, rate, at_centres)
        x, y = postprocess_map(abscissae, ordinates, self.monotone, self.smooth)
        return apply_map(x, y, scores)


class PositiveQuantificationToCalibration(_PositiveBinnedCalibrator):
    """ρ2ζ on p_1 bins: each bin's ordinate is the quantifier's estimate on the bin's items, at the
    bin's mean posterior (``bin_mean``, the reference implementation's) or centre (the paper's
    text)."""

    inner_task = "quantification"
    tag = "q2c"
    binary_only = P1_BINS.format(kind="q2c_3B")
    lower_first = True

    def __init__(
        self,
        inner=None,
        inner_params: dict | None = None,
        bins: int = 5,
        binning: str = "isometric",
        abscissa: str = "bin_mean",
        monotone: str = "running_max",
        smooth: bool = True,
    ):
        super().__init__(inner, inner_params)
        self.bins = bins
        self.binning = binning
        self.abscissa = abscissa
        self.monotone = monotone
        self.smooth = smooth

    def _positive_rate(self, cell, context, upper_side):
        return float(np.asarray(self.inner_.quantify(cell, context), dtype=float)[1])


class PositiveCAPToCalibration(_PositiveBinnedCalibrator):
    """α2ζ on p_1 bins (isometric, only the last edge raised; docs/methods.md §0.4): a bin whose
    centre is above 0.5 gets the CAP's accuracy estimate, one below it 1 - accuracy."""

    inner_task = "cap"
    tag = "a2c"
    binary_only = P1_BINS.format(kind="a2c_3B")
    lower_first = False

    def __init__(
        self,
        inner=None,
        inner_params: dict | None = None,
        bins: int = 6,
        binning: str = "isometric",
        monotone: str = "running_max",
        smooth: bool = True,
    ):
        super().__init__(inner, inner_params)
        self.bins = bins
        self.binning = binning
        self.monotone = monotone
        self.smooth = smooth

    def check_params(self):
        super().check_params()
        if self.binning == "isometric" and self.bins % 2:
            raise ValueError(f"bins={self.bins} must be even so that no bin straddles 0.5")

    def _positive_rate(self, cell, context, upper_side):
        accuracy = float(self.inner_.predict_accuracy(cell, context))
        return accuracy if upper_side else 1.0 - accuracy


class _TopLabelCalibrator(_BinnedCalibrator):
    calibration_notion = "top-label"
    level_sets_notion: ClassVar[str]

    def check_params(self):
        super().check_params()
        check_choice("cell_fit", self.cell_fit, CELL_FITS)

    def _fit(self, setting) -> None:
        if self.binning == "level_sets":
            self.calibration_notion = self.level_sets_notion
        # one inner method on the whole validation set (the binary tables' rule) ...
        super()._fit(setting)
        # ... and, with cell_fit="per_cell", one per isometric cell on the validation items in it
        self.cell_inner_ = {}
        label_shift = getattr(self.inner_, "assumption", "none") == "label"
        auto = "per_cell" if label_shift else "whole"
        self.cell_fit_ = auto if self.cell_fit == "auto" else self.cell_fit
        if self.cell_fit_ == "per_cell" and self.binning == "isometric":
            posteriors = np.asarray(setting.validation.posteriors, dtype=float)
            k = posteriors.shape[1]
            predicted = argmax_predictions(posteriors)
            confidence = posteriors[np.arange(len(posteriors)), predicted]
            edges = isometric_edges(self.bins, 1.0 / k)
            for cls, (b, mask) in product(range(k), enumerate(bin_membership(confidence, edges))):
                mask = mask & (predicted == cls)
                if not mask.any():
                    self.fit_fallback(
                        f"{self.tag}: no validation item in cell class{cls}:bin{b}; "
                        "the whole-validation inner method answers for it"
                    )
                    continue
                tag = f"{self.tag}:{self.bins}B:class{cls}:bin{b}"
                self.cell_inner_[cls, b] = self._fit_part(setting, mask, tag)

    def calibrate(self, sample, context=None) -> np.ndarray:
        context = self.context_for(context)
        if self.binning == "level_sets":
            posteriors = np.asarray(sample.posteriors, dtype=float)
            out = np.empty_like(posteriors)
            # the score classes: items with identical posterior rows
            _, inverse = np.unique(posteriors, axis=0, return_inverse=True)
            inverse = np.asarray(inverse).reshape(-1)
            for mask in (inverse == cell for cell in np.unique(inverse)):
                row = posteriors[mask][0]
                cls = int(argmax_predictions(row[None, :])[0])
                cell_context = part_context(context, f"{self.tag}:level={tuple(row.tolist())!r}")
                out[mask] = self._level_set_row(sample.subset(mask), cell_context, cls, row)
            return out

        def cell_rate(cls, b, mask):
            tag = f"{self.tag}:{self.bins}B:class{cls}:bin{b}"
            inner = self.cell_inner_.get((cls, b), self.inner_)
            return self._class_rate(inner, sample.subset(mask), part_context(context, tag), cls)

        centre = getattr(self, "abscissa", "bin_centre") == "bin_centre"
        return top_label_map(
            sample.posteriors, self.bins, cell_rate, centre, self.monotone, self.smooth
        )


class QuantificationToCalibration(_TopLabelCalibrator):
    """ρ2ζ on top-label cells: ``bins`` confidence bins per predicted class, a cell's point at its
    mean confidence (``bin_mean``) or the bin centre."""

    inner_task = "quantification"
    tag = "q2c"
    level_sets_notion = "canonical"

    def __init__(
        self,
        inner=None,
        inner_params: dict | None = None,
        bins: int = 3,
        binning: str = "isometric",
        abscissa: str = "bin_mean",
        monotone: str = "running_max",
        smooth: bool = True,
        cell_fit: str = "auto",
    ):
        super().__init__(inner, inner_params)
        self.bins = bins
        self.binning = binning
        self.abscissa = abscissa
        self.monotone = monotone
        self.smooth = smooth
        self.cell_fit = cell_fit

    def _class_rate(self, inner, cell, context, cls):
        return float(np.asarray(inner.quantify(cell, context), dtype=float)[cls])

    def _level_set_row(self, cell, context, cls, row):
        return np.asarray(self.inner_.quantify(cell, context), dtype=float)


class CAPToCalibration(_TopLabelCalibrator):
    """α2ζ: a cell's accuracy is the share of its predicted class (all its items are predicted j)."""

    inner_task = "cap"
    tag = "a2c"
    level_sets_notion = "predicted-label"

    def __init__(
        self,
        inner=None,
        inner_params: dict | None = None,
        bins: int = 3,
        binning: str = "isometric",
        monotone: str = "running_max",
        smooth: bool = True,
        cell_fit: str = "auto",
    ):
        super().__init__(inner, inner_params)
        self.bins = bins
        self.binning = binning
        self.monotone = monotone
        self.smooth = smooth
        self.cell_fit = cell_fit

    def _class_rate(self, inner, cell, context, cls):
        return float(inner.predict_accuracy(cell, context))

    def _level_set_row(self, cell, context, cls, row):
        accuracy = float(self.inner_.predict_accuracy(cell, context))
        return replace_top(row[None, :], np.array([cls]), np.array([accuracy]))[0]
