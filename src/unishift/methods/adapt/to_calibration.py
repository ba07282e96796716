"""ρ2ζ and α2ζ: calibrators built from a quantifier or a CAP method (docs/methods.md §2.11, §2.12).

Both cut the test sample into cells by positive posterior, ask the inner method about each cell and turn
the answers into a calibration map. ``binning="isometric"`` is what the tables use (docs/methods.md
§0.4: B2 / B3 bins, then B1's imputation, running maximum and smoothing, then interpolation).
``binning="level_sets"`` uses the exact score classes [x]_h of Lemmas 3 and 6 as cells and gives every item its cell's answer without
post-processing: with an oracle inside, that is exactly the lemmas' construction, which is how the
oracle tests exercise this same code.
"""

from __future__ import annotations

import numpy as np

from unishift.methods.adapt.common import (
    build_inner,
    fit_notes_of,
    inner_domain_weight_plan,
    part_context,
)
from unishift.methods.base import (
    Calibrator,
    Sample,
    SampleContext,
    Setting,
    as_posteriors,
    check_choice,
    crisp_predictions,
)
from unishift.methods.binning import (
    MONOTONE_RULES,
    apply_map,
    bin_membership,
    isometric_edges_a2c,
    isometric_edges_q2c,
    postprocess_map,
)
from unishift.methods.domain_weights import UNSHARED

BINNINGS = ("isometric", "level_sets")
ABSCISSAE = ("bin_mean", "bin_centre")


def level_sets(scores: np.ndarray) -> list[tuple[float, np.ndarray]]:
    """(score, mask) for every distinct raw score (exact float equality: the classes [x]_h)."""
    return [(float(value), scores == value) for value in np.unique(scores)]


class _BinnedCalibrator(Calibrator):
    inner_task: str

    def __init__(
        self,
        inner,
        inner_params: dict | None = None,
        bins: int = 5,
        binning: str = "isometric",
        monotone: str = "running_max",
        smooth: bool = True,
    ):
        check_choice("binning", binning, BINNINGS)
        check_choice("monotone", monotone, MONOTONE_RULES)
        self.inner = inner
        self.inner_params = inner_params
        self.bins = bins
        self.binning = binning
        self.monotone = monotone
        self.smooth = smooth

    def domain_weight_plan(self):
        # calls per cell of the posterior range: a pattern no shared artifact covers
        return None if inner_domain_weight_plan(self) is None else UNSHARED

    def fit(self, setting: Setting):
        # ONE inner method on the whole validation set, reused for every cell of every sample
        self.inner_ = build_inner(self.inner_task, self.inner, self.inner_params).fit(setting)
        self.fit_notes = fit_notes_of(self.inner_)
        return self

    def _positive_rate(self, cell: Sample, context: SampleContext, upper_side: bool) -> float:
        raise NotImplementedError

    def _calibrate_level_sets(self, sample: Sample, context: SampleContext) -> np.ndarray:
        scores = sample.posteriors[:, 1]
        calibrated = np.empty(len(scores))
        for value, mask in level_sets(scores):
            cell = sample.subset(mask)
            # a score class has one crisp prediction, which decides the side of a CAP answer
            upper_side = bool(crisp_predictions(cell.posteriors[:1])[0] == 1)
            tag = f"{self.tag}:level={value!r}"
            calibrated[mask] = self._positive_rate(cell, part_context(context, tag), upper_side)
        return as_posteriors(calibrated)


class QuantificationToCalibration(_BinnedCalibrator):
    """ρ2ζ: the map's ordinate in each bin is the quantifier's prevalence estimate on the bin's items.

    ``abscissa``: ``bin_mean`` (REF, the tables) places it at the mean test posterior of the bin;
    ``bin_centre`` (the paper's text) at the bin centre. Empty bins sit at the centre with a NaN
    ordinate that B1 imputes.
    """

    inner_task = "quantification"
    tag = "q2c"

    def __init__(
        self,
        inner="PCC",
        inner_params: dict | None = None,
        bins: int = 5,
        binning: str = "isometric",
        abscissa: str = "bin_mean",
        monotone: str = "running_max",
        smooth: bool = True,
    ):
        super().__init__(inner, inner_params, bins, binning, monotone, smooth)
        check_choice("abscissa", abscissa, ABSCISSAE)
        self.abscissa = abscissa

    def _positive_rate(self, cell, context, upper_side):
        return float(self.inner_.quantify(cell, context))

    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        if self.binning == "level_sets":
            return self._calibrate_level_sets(sample, context)
        scores = sample.posteriors[:, 1]
        edges = isometric_edges_q2c(self.bins)
        abscissae, ordinates = [], []
        for i, mask in enumerate(bin_membership(scores, edges)):
            centre = (edges[i] + edges[i + 1]) / 2
            if mask.any():
                cell_context = part_context(context, f"q2c:{self.bins}B:bin{i}")
                ordinates.append(self._positive_rate(sample.subset(mask), cell_context, True))
                abscissae.append(scores[mask].mean() if self.abscissa == "bin_mean" else centre)
            else:
                ordinates.append(np.nan)
                abscissae.append(centre)
        x, y = postprocess_map(np.array(abscissae), np.array(ordinates), self.monotone, self.smooth)
        return apply_map(x, y, scores)


class CAPToCalibration(_BinnedCalibrator):
    """α2ζ: a bin above 0.5 gets the CAP's accuracy estimate, a bin below it 1 - accuracy.

    ``bins`` must be even so that no isometric bin straddles 0.5; the side of a bin is decided by its
    centre (REF), abscissae are always the bin centres (B3).
    """

    inner_task = "cap"
    tag = "a2c"

    def __init__(
        self,
        inner="ATC",
        inner_params: dict | None = None,
        bins: int = 6,
        binning: str = "isometric",
        monotone: str = "running_max",
        smooth: bool = True,
    ):
        super().__init__(inner, inner_params, bins, binning, monotone, smooth)
        if binning == "isometric" and bins % 2:
            raise ValueError(f"bins={bins} must be even so that no bin straddles 0.5")

    def _positive_rate(self, cell, context, upper_side):
        accuracy = float(self.inner_.predict_accuracy(cell, context))
        return accuracy if upper_side else 1.0 - accuracy

    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        if self.binning == "level_sets":
            return self._calibrate_level_sets(sample, context)
        scores = sample.posteriors[:, 1]
        edges = isometric_edges_a2c(self.bins)
        centres = (edges[:-1] + edges[1:]) / 2
        ordinates = []
        for i, mask in enumerate(bin_membership(scores, edges)):
            if mask.any():
                cell_context = part_context(context, f"a2c:{self.bins}B:bin{i}")
                cell = sample.subset(mask)
                ordinates.append(self._positive_rate(cell, cell_context, centres[i] > 0.5))
            else:
                ordinates.append(np.nan)
        x, y = postprocess_map(centres, np.array(ordinates), self.monotone, self.smooth)
        return apply_map(x, y, scores)
