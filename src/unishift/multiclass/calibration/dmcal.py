"""DMCal for k classes: Bayes' rule on top-label cells with a distribution-matching prior.

The binary DMCal (docs/methods.md §2.10) mixes the class-conditional validation histograms of p_1 with a
DMy prevalence estimate q and reads each bin's positive share q H+ / (q H+ + (1 - q) H-). That is
Bayes' rule on a region of the input space, and it stays exact for k classes on any region R: under
label shift P(x in R | y = c) is the same on validation and test, so

    Q(y = j | x in R) = q_j P(R | j) / sum_c q_c P(R | c).

A k-dimensional histogram of the simplex is empty almost everywhere, so the regions are the top-label
cells of ρ2ζ (predicted class j x ``n_bins`` bins of the confidence on [1/k, 1]); P(R | c) is the share
of the validation items of class c in R; q is QuaPy's multiclass DMy estimate on the whole sample
(``n_bins`` histogram bins per posterior column, Hellinger distance, as the binary method). The cell's
Bayes share of its predicted class is its calibrated top-label confidence; the points (bin centre,
share) (or the cell's mean confidence, ``abscissa="bin_mean"``) go through B1 per predicted class between (1/k, 1/k) and (1, 1) and the other coordinates are
rescaled, as in ρ2ζ. With the true prior the cell shares are exact at the population level; the map
targets top-label calibration.

For k = 2 it is not the binary DMCal: the binary method bins p_1 on [0, 1] into 8 bins and draws one
map across both predicted classes; the cells here are 8 confidence bins per predicted class.
"""

from __future__ import annotations

import numpy as np

from unishift.methods.base import check_choice
from unishift.methods.binning import MONOTONE_RULES
from unishift.multiclass.adapt.to_calibration import confidence_edges, top_label_map
from unishift.multiclass.base import MulticlassCalibrator, argmax_predictions
from unishift.multiclass.quantification.quapy_bridge import PosteriorPassthroughK, quiet

EPSILON = 1e-7


def cell_index(posteriors: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """(predicted class, confidence bin) of each row, with the top-label cells' edges."""
    posteriors = np.asarray(posteriors, dtype=float)
    predicted = argmax_predictions(posteriors)
    confidence = posteriors[np.arange(len(posteriors)), predicted]
    edges = confidence_edges(posteriors.shape[1], bins)
    b = np.clip(np.searchsorted(edges, confidence, side="right") - 1, 0, bins - 1)
    return predicted, b


class DMCal(MulticlassCalibrator):
    name, display, group = "DMCal", "DMCal", "adapted"
    assumption = "label"
    calibration_notion = "top-label"
    defaults = {"n_bins": 8, "monotone": "running_max", "smooth": True, "abscissa": "bin_centre"}
    description = "Bayes shares of top-label cells under a DMy prior, running max + smoothing"

    def __init__(
        self,
        n_bins: int = 8,
        monotone: str = "running_max",
        smooth: bool = True,
        abscissa: str = "bin_centre",
    ):
        if not isinstance(n_bins, int) or isinstance(n_bins, bool) or n_bins < 1:
            raise ValueError(f"n_bins={n_bins!r} is not valid; choose a positive integer")
        check_choice("monotone", monotone, MONOTONE_RULES)
        check_choice("abscissa", abscissa, ("bin_centre", "bin_mean"))
        self.abscissa = abscissa
        check_choice("smooth", smooth, (True, False))
        self.n_bins = n_bins
        self.monotone = monotone
        self.smooth = smooth

    def fit(self, setting):
        from quapy.method.aggregative import DMy

        self.fit_notes = []
        k = setting.n_classes
        validation = setting.validation
        labels = np.asarray(validation.labels, dtype=int)
        self.quantifier_ = DMy(
            PosteriorPassthroughK(k),
            fit_classifier=False,
            val_split=None,
            nbins=self.n_bins,
            divergence="HD",
            cdf=False,
            search="optim_minimize",
        )
        quiet(self.quantifier_.aggregation_fit, validation.posteriors, labels)
        predicted, b = cell_index(validation.posteriors, self.n_bins)
        # likelihood[c, j, b] = share of the validation items of class c in cell (j, b)
        counts = np.zeros((k, k, self.n_bins))
        np.add.at(counts, (labels, predicted, b), 1.0)
        totals = counts.sum(axis=(1, 2), keepdims=True)
        missing = np.flatnonzero(totals.reshape(-1) == 0).tolist()
        if missing:
            self.fit_notes.append(("fallback", f"DMCal: class {missing} absent from validation"))
        self.likelihood_ = counts / np.where(totals > 0, totals, 1.0)
        return self

    def calibrate(self, sample, context):
        prior = np.asarray(quiet(self.quantifier_.aggregate, np.asarray(sample.posteriors)), float)

        def cell_rate(cls, b, mask):
            joint = prior * self.likelihood_[:, cls, b] + EPSILON
            return float(joint[cls] / joint.sum())

        at_centres = self.abscissa == "bin_centre"
        return top_label_map(
            sample.posteriors, self.n_bins, cell_rate, at_centres, self.monotone, self.smooth
        )


__all__ = ["DMCal", "cell_index"]
