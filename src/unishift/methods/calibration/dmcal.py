"""DMCal (docs/methods.md §2.10): a DMy prevalence estimate turned into a binned calibration map by
Bayes' rule on each cell; its two cell constructions (``cells``): docs/multiclass.md §4, DMCal."""

from __future__ import annotations

import numpy as np

from unishift.data.containers import Setting, argmax_predictions
from unishift.data.quapy_loader import load_quapy
from unishift.methods.base import Calibrator
from unishift.methods.binning import (
    MONOTONE_RULES,
    apply_map,
    isometric_edges,
    postprocess_map,
    top_label_map,
)
from unishift.methods.quapy_adapter import PosteriorPassthrough, quiet
from unishift.option_checks import check_choice, check_positive_int

DMCAL_EPSILON = 1e-7
CELLS = ("top_label", "positive_class")
ABSCISSAE = ("bin_centre", "bin_mean")


class DMCal(Calibrator):
    """DMCal (docs/methods.md §2.10): Bayes shares of DMy-mixed validation distributions,
    post-processed as every binned map (docs/methods.md §0.4). ``n_bins``: DMy's histogram bins and
    the map's bins."""

    name, group = "DMCal", "adapted"
    description = (
        "DMy(8 bins) mixture map, running max + smoothing [reference code: HDcal8-sm-mono]"
    )
    adaptations = ("c2a",)
    assumption = "label"
    calibration_notion = "top-label"

    def __init__(
        self,
        n_bins: int = 8,
        monotone: str = "running_max",
        smooth: bool = True,
        abscissa: str = "bin_centre",
        cells: str = "top_label",
    ):
        self.n_bins = n_bins
        self.monotone = monotone
        self.smooth = smooth
        self.abscissa = abscissa
        self.cells = cells

    def check_params(self):
        check_positive_int("n_bins", self.n_bins)
        check_choice("monotone", self.monotone, MONOTONE_RULES)
        check_choice("smooth", self.smooth, (True, False))
        check_choice("abscissa", self.abscissa, ABSCISSAE)
        check_choice("cells", self.cells, CELLS)
        if self.cells == "positive_class" and self.abscissa != "bin_centre":
            raise ValueError("cells='positive_class' places its points at the bin centres")

    def _fit(self, setting: Setting) -> None:
        load_quapy()
        from quapy.method.aggregative import DMy

        k = setting.n_classes
        if self.cells == "positive_class" and k != 2:
            raise ValueError(
                f"DMCal: cells='positive_class' bins p_1 of two classes; this setting has {k} "
                "classes (use cells='top_label')"
            )
        self.quantifier_ = DMy(
            PosteriorPassthrough(k),
            fit_classifier=False,
            val_split=None,
            nbins=self.n_bins,
            divergence="HD",
            cdf=False,
            search="optim_minimize",
        )
        validation = setting.validation
        labels = np.asarray(validation.labels, dtype=int)
        quiet(self.quantifier_.aggregation_fit, validation.posteriors, labels)
        present = np.bincount(labels, minlength=k) > 0
        self.missing_class_ = not present.all()
        if self.cells == "top_label":
            posteriors = np.asarray(validation.posteriors, dtype=float)
            predicted = argmax_predictions(posteriors)
            confidence = posteriors[np.arange(len(posteriors)), predicted]
            edges = isometric_edges(self.n_bins, 1.0 / k)
            b = np.clip(np.searchsorted(edges, confidence, side="right") - 1, 0, self.n_bins - 1)
            # likelihood[c, j, b] = share of the validation items of class c in cell (j, b)
            counts = np.zeros((k, k, self.n_bins))
            np.add.at(counts, (labels, predicted, b), 1.0)
            totals = counts.sum(axis=(1, 2), keepdims=True)
            if self.missing_class_:
                missing = np.flatnonzero(~present).tolist()
                self.fit_fallback(f"DMCal: class {missing} absent from validation")
            self.likelihood_ = counts / np.where(totals > 0, totals, 1.0)

    def calibration_map(self, posteriors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(abscissae, ordinates) of a two-class sample's p_1 map: bin centres and the positive
        shares, post-processed (:func:`unishift.methods.binning.postprocess_map`)
        (``cells="positive_class"``)."""
        prevalence = quiet(self.quantifier_.aggregate, np.asarray(posteriors, dtype=float))
        # QuaPy histograms the negative-class posterior for binary problems: reversing the bins
        # indexes them by the positive posterior (upper-closed intervals, as the reference
        # implementation).
        hist_neg, hist_pos = (h.flatten()[::-1] for h in self.quantifier_.validation_distribution)
        negative = hist_neg * prevalence[0] + DMCAL_EPSILON
        positive = hist_pos * prevalence[1] + DMCAL_EPSILON
        ratio = positive / (negative + positive)
        centres = np.linspace(0.0, 1.0, self.n_bins + 1)[:-1] + 0.5 / self.n_bins
        return postprocess_map(centres, ratio, monotone=self.monotone, smooth=self.smooth)

    def calibrate(self, sample, context=None):
        posteriors = np.asarray(sample.posteriors, dtype=float)
        if self.cells == "positive_class":
            x, y = self.calibration_map(posteriors)
            if self.missing_class_:
                context = self.context_for(context)
                # The reference implementation's map would be NaN here; the binned-map
                # post-processing imputes the NaNs, which makes it the identity (the note's words
                # are in result files).
                context.note(
                    "fallback", "DMCal: a class is absent from validation; map imputed by B1"
                )
            return apply_map(x, y, posteriors[:, 1])
        prior = np.asarray(quiet(self.quantifier_.aggregate, posteriors), dtype=float)

        def cell_rate(cls, b, mask):
            joint = prior * self.likelihood_[:, cls, b] + DMCAL_EPSILON
            return float(joint[cls] / joint.sum())

        at_centres = self.abscissa == "bin_centre"
        return top_label_map(
            sample.posteriors, self.n_bins, cell_rate, at_centres, self.monotone, self.smooth
        )
