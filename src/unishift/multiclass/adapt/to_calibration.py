"""ρ2ζ and α2ζ for k classes: calibrators built from a quantifier or a CAP method.

Two constructions (docs/multiclass.md §2.3, §2.6):

* ``binning="level_sets"``: the lemmas' own cells, the exact score classes [x]_h (items whose whole
  posterior vectors are equal). ρ2ζ gives every item its cell's prevalence *vector* (Lemma 3: a
  canonically calibrated output); α2ζ gives the predicted class of the cell its accuracy and scales
  the other coordinates proportionally (Lemma 6: calibrated for the event "y = the classifier's
  prediction"; top-label calibrated whenever that coordinate stays the largest, e.g. when every cell's
  accuracy exceeds 1/2).
* ``binning="isometric"`` (the practical form of the tables): an isometric binning of the simplex has
  b^(k-1) cells and is empty almost everywhere, so the cells are (predicted class j) x (``bins``
  isometric bins of the top-label confidence on [1/k, 1]). The inner method estimates the share of
  class j in each non-empty cell (ρ: the j-th entry of the quantifier's vector; α: the accuracy, since
  every item of the cell is predicted j), which is the cell's top-label calibrated confidence. Per
  predicted class the points go through the binary post-processing (NaN imputation, running maximum,
  three-point smoothing; docs/methods.md §0.4, B1) between the anchors (1/k, 1/k) and (1, 1), and each item's confidence is
  mapped by interpolation; the other coordinates are scaled to fill the rest of the row. This targets
  top-label calibration.

  Which inner method answers for a cell (``cell_fit``): the binary tables fit one inner method on the
  whole validation set. That is consistent for an inner method that assumes covariate shift (P(y|x)
  is the same on every region of the input space, a cell included), not for one that assumes label
  shift: restricting to a cell keeps P(x|y) invariant only between the *same* cell of the validation
  and the test data. ``"per_cell"`` therefore fits one inner method per cell on the validation items
  in it; ``"auto"`` (default) does so exactly for inner methods whose ``assumption`` is ``"label"``
  (PACC, EMQ, KDEy, LEAP) and keeps the whole-validation fit otherwise (PCC, ATC, DoC).

For k = 2 the level-set constructions equal the binary ones; the isometric ones do not, because the
binary tables bin the positive posterior (ρ2ζ: 5 bins, the middle one straddling 0.5) into one map
across both predicted classes (benchmarks/multiclass_binary_invariant.py --related compares them).
"""

from __future__ import annotations

import numpy as np

from unishift.methods.adapt.common import part_context
from unishift.methods.base import check_choice
from unishift.methods.binning import MONOTONE_RULES, postprocess_map
from unishift.multiclass.adapt.common import build_inner, fit_notes_of
from unishift.multiclass.base import MulticlassCalibrator, argmax_predictions

BINNINGS = ("isometric", "level_sets")
CELL_FITS = ("auto", "whole", "per_cell")
ABSCISSAE = ("bin_mean", "bin_centre")


def level_set_cells(posteriors: np.ndarray) -> list[np.ndarray]:
    """Masks of the exact score classes: items with identical posterior rows."""
    _, inverse = np.unique(np.asarray(posteriors), axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    return [inverse == cell for cell in range(inverse.max() + 1)] if len(inverse) else []


def confidence_edges(n_classes: int, bins: int) -> np.ndarray:
    """``bins`` isometric edges on [1/k, 1], the first lowered and the last raised by 1e-5."""
    if not isinstance(bins, int) or isinstance(bins, bool) or bins < 1:
        raise ValueError(f"bins={bins!r} is not valid; choose a positive integer")
    edges = np.linspace(1.0 / n_classes, 1.0, bins + 1)
    edges[0] -= 1e-5
    edges[-1] += 1e-5
    return edges


def replace_top(posteriors: np.ndarray, predicted: np.ndarray, top: np.ndarray) -> np.ndarray:
    """Rows whose predicted-class entry is ``top`` and whose other entries keep their proportions
    (uniform when the row had all its mass on the predicted class)."""
    posteriors = np.asarray(posteriors, dtype=float)
    n, k = posteriors.shape
    rows = np.arange(n)
    top = np.clip(np.asarray(top, dtype=float), 0.0, 1.0)
    rest = 1.0 - posteriors[rows, predicted]
    out = np.empty_like(posteriors)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(rest > 0, (1.0 - top) / np.where(rest > 0, rest, 1.0), 0.0)
    out[:] = posteriors * scale[:, None]
    uniform = rest <= 0
    if uniform.any():
        out[uniform] = ((1.0 - top[uniform]) / (k - 1))[:, None]
    out[rows, predicted] = top
    return out


class _TopLabelCalibrator(MulticlassCalibrator):
    inner_task: str
    tag: str
    group = "adapted"
    calibration_notion = "top-label"

    def __init__(self, inner, inner_params, bins, binning, monotone, smooth, cell_fit="auto"):
        check_choice("binning", binning, BINNINGS)
        check_choice("cell_fit", cell_fit, CELL_FITS)
        self.cell_fit = cell_fit
        check_choice("monotone", monotone, MONOTONE_RULES)
        check_choice("smooth", smooth, (True, False))
        self.inner = inner
        self.inner_params = inner_params
        self.bins = bins
        self.binning = binning
        self.monotone = monotone
        self.smooth = smooth

    def fit(self, setting):
        # one inner method on the whole validation set (the binary tables' rule) ...
        self.inner_ = build_inner(self.inner_task, self.inner, self.inner_params).fit(setting)
        self.fit_notes = fit_notes_of(self.inner_)
        # ... and, with cell_fit="per_cell", one per isometric cell on the validation items in it
        self.cell_inner_ = {}
        self.cell_fit_ = self.cell_fit
        if self.cell_fit == "auto":
            label_shift = getattr(self.inner_, "assumption", "none") == "label"
            self.cell_fit_ = "per_cell" if label_shift else "whole"
        if self.cell_fit_ == "per_cell" and self.binning == "isometric":
            validation = setting.validation
            for (cls, b), mask in self._cells(validation.posteriors).items():
                if not mask.any():
                    self.fit_notes.append(
                        (
                            "fallback",
                            f"{self.tag}: no validation item in cell class{cls}:bin{b}; "
                            "the whole-validation inner method answers for it",
                        )
                    )
                    continue
                tag = f"{self.tag}:{self.bins}B:class{cls}:bin{b}"
                part = setting.restrict_validation(mask, tag)
                method = build_inner(self.inner_task, self.inner, self.inner_params).fit(part)
                self.cell_inner_[cls, b] = method
                self.fit_notes.extend(fit_notes_of(method, tag))
        return self

    def _cells(self, posteriors) -> dict[tuple[int, int], np.ndarray]:
        """{(predicted class, confidence bin): mask} of the isometric top-label cells."""
        posteriors = np.asarray(posteriors, dtype=float)
        k = posteriors.shape[1]
        predicted = argmax_predictions(posteriors)
        confidence = posteriors[np.arange(len(posteriors)), predicted]
        edges = confidence_edges(k, self.bins)
        return {
            (cls, b): (predicted == cls) & (confidence >= edges[b]) & (confidence < edges[b + 1])
            for cls in range(k)
            for b in range(self.bins)
        }

    def _inner_for(self, cls: int, b: int):
        return self.cell_inner_.get((cls, b), self.inner_)

    def _class_rate(self, inner, cell, context, cls: int) -> float:
        """The inner method's estimate of the share of class ``cls`` in ``cell``."""
        raise NotImplementedError

    def _level_set_row(self, cell, context, cls: int, row: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _calibrate_level_sets(self, sample, context) -> np.ndarray:
        posteriors = np.asarray(sample.posteriors, dtype=float)
        out = np.empty_like(posteriors)
        for mask in level_set_cells(posteriors):
            row = posteriors[mask][0]
            cls = int(argmax_predictions(row[None, :])[0])
            tag = f"{self.tag}:level={tuple(row.tolist())!r}"
            out[mask] = self._level_set_row(
                sample.subset(mask), part_context(context, tag), cls, row
            )
        return out

    def calibrate(self, sample, context) -> np.ndarray:
        if self.binning == "level_sets":
            return self._calibrate_level_sets(sample, context)

        def cell_rate(cls, b, mask):
            tag = f"{self.tag}:{self.bins}B:class{cls}:bin{b}"
            inner = self._inner_for(cls, b)
            return self._class_rate(inner, sample.subset(mask), part_context(context, tag), cls)

        centre = self.abscissa == "bin_centre" if hasattr(self, "abscissa") else True
        return top_label_map(
            sample.posteriors, self.bins, cell_rate, centre, self.monotone, self.smooth
        )


def top_label_map(posteriors, bins, cell_rate, at_centres, monotone, smooth) -> np.ndarray:
    """Calibrate the top-label confidence per predicted class through its cells' rates.

    ``cell_rate(cls, b, mask)`` gives the share of class ``cls`` among the items ``mask`` of cell
    (cls, b). Each non-empty cell contributes the point (abscissa, rate), the abscissa being the bin
    centre (``at_centres``) or the cell's mean confidence; empty cells a NaN at the centre. The points
    go through B1 in unit coordinates u = (c - 1/k) / (1 - 1/k), so that B1's anchors (0, 0) and (1, 1)
    are (1/k, 1/k) and (1, 1) and its running maximum and smoothing act as in the binary tables
    (both commute with an increasing affine map). The other coordinates are rescaled
    (:func:`replace_top`).
    """
    posteriors = np.asarray(posteriors, dtype=float)
    k = posteriors.shape[1]
    predicted = argmax_predictions(posteriors)
    confidence = posteriors[np.arange(len(posteriors)), predicted]
    edges = confidence_edges(k, bins)
    centres = (edges[:-1] + edges[1:]) / 2
    low, span = 1.0 / k, 1.0 - 1.0 / k
    top = np.empty(len(posteriors))
    for cls in range(k):
        in_class = predicted == cls
        if not in_class.any():
            continue
        abscissae, ordinates = [], []
        for b in range(bins):
            mask = in_class & (confidence >= edges[b]) & (confidence < edges[b + 1])
            if mask.any():
                ordinates.append(cell_rate(cls, b, mask))
                abscissae.append(centres[b] if at_centres else float(confidence[mask].mean()))
            else:
                ordinates.append(np.nan)
                abscissae.append(centres[b])
        x, y = postprocess_map(
            (np.array(abscissae) - low) / span,
            (np.array(ordinates) - low) / span,
            monotone,
            smooth,
        )
        top[in_class] = low + span * np.interp((confidence[in_class] - low) / span, x, y)
    return replace_top(posteriors, predicted, top)


class QuantificationToCalibration(_TopLabelCalibrator):
    """ρ2ζ. Isometric: ``bins`` confidence bins per predicted class (3: the binary α2ζ's 6 bins
    split by side); ``abscissa``: a cell's point sits at its mean confidence (``bin_mean``, the
    binary tables' rule) or at the bin centre."""

    name, display, binary_name = "q2c", r"$\rho 2 \zeta$", None
    assumption = "none"
    defaults = {"bins": 3, "binning": "isometric", "abscissa": "bin_mean"}
    description = "rho2zeta: cell prevalences (level sets: canonical; isometric: top-label)"
    inner_task = "quantification"
    tag = "q2c"

    def __init__(
        self,
        inner="PCC",
        inner_params: dict | None = None,
        bins: int = 3,
        binning: str = "isometric",
        abscissa: str = "bin_mean",
        monotone: str = "running_max",
        smooth: bool = True,
        cell_fit: str = "auto",
    ):
        super().__init__(inner, inner_params, bins, binning, monotone, smooth, cell_fit)
        check_choice("abscissa", abscissa, ABSCISSAE)
        self.abscissa = abscissa
        if binning == "level_sets":
            self.calibration_notion = "canonical"

    def _class_rate(self, inner, cell, context, cls):
        return float(np.asarray(inner.quantify(cell, context), dtype=float)[cls])

    def _level_set_row(self, cell, context, cls, row):
        return np.asarray(self.inner_.quantify(cell, context), dtype=float)


class CAPToCalibration(_TopLabelCalibrator):
    """α2ζ: a cell's accuracy is the share of its predicted class (all its items are predicted j)."""

    name, display, binary_name = "a2c", r"$\alpha 2 \zeta$", None
    assumption = "none"
    defaults = {"bins": 3, "binning": "isometric"}
    description = "alpha2zeta: cell accuracies as top-label confidences"
    inner_task = "cap"
    tag = "a2c"

    def __init__(
        self,
        inner="ATC",
        inner_params: dict | None = None,
        bins: int = 3,
        binning: str = "isometric",
        monotone: str = "running_max",
        smooth: bool = True,
        cell_fit: str = "auto",
    ):
        super().__init__(inner, inner_params, bins, binning, monotone, smooth, cell_fit)
        if binning == "level_sets":
            self.calibration_notion = "predicted-label"

    def _class_rate(self, inner, cell, context, cls):
        return float(inner.predict_accuracy(cell, context))

    def _level_set_row(self, cell, context, cls, row):
        accuracy = float(self.inner_.predict_accuracy(cell, context))
        return replace_top(row[None, :], np.array([cls]), np.array([accuracy]))[0]


__all__ = [
    "CAPToCalibration",
    "QuantificationToCalibration",
    "confidence_edges",
    "level_set_cells",
    "replace_top",
    "top_label_map",
]
