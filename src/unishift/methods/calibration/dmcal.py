"""DMCal (docs/methods.md §2.10): a DMy prevalence estimate turned into a binned calibration map."""

from __future__ import annotations

import numpy as np

from unishift.methods.base import Calibrator, Setting, check_choice
from unishift.methods.binning import MONOTONE_RULES, apply_map, postprocess_map
from unishift.methods.quantification.qp_bridge import PosteriorPassthrough, quiet

DMCAL_EPSILON = 1e-7


class DMCal(Calibrator):
    """DMCal (§2.10): DMy's prevalence estimate mixes the class-conditional validation histograms into
    a per-bin positive rate, post-processed by B1 (docs/methods.md §0.4) and interpolated at the test posteriors.

    Args:
        n_bins: DMy histogram bins (8 in the calibration tables, 10 in DMCal_ζ2α).
        monotone: B1 monotonicity rule ("running_max" = REF).
        smooth: B1 three-point smoothing (REF: True).
    """

    name, group = "DMCal", "adapted"
    description = "DMy(8 bins) mixture map, running max + smoothing [REF HDcal8-sm-mono]"
    defaults = {"n_bins": 8, "monotone": "running_max", "smooth": True}
    adaptations = ("c2a",)

    def __init__(self, n_bins: int = 8, monotone: str = "running_max", smooth: bool = True):
        if not isinstance(n_bins, int) or isinstance(n_bins, bool) or n_bins < 1:
            raise ValueError(f"n_bins={n_bins!r} is not valid; choose a positive integer")
        check_choice("monotone", monotone, MONOTONE_RULES)
        check_choice("smooth", smooth, (True, False))
        self.n_bins = n_bins
        self.monotone = monotone
        self.smooth = smooth

    def fit(self, setting: Setting):
        from quapy.method.aggregative import DMy

        self.fit_notes = []
        self.quantifier_ = DMy(
            PosteriorPassthrough(),
            fit_classifier=False,
            val_split=None,
            nbins=self.n_bins,
            divergence="HD",
            cdf=False,
            search="optim_minimize",
        )
        validation = setting.validation
        self.missing_class_ = not (
            np.any(validation.labels == 0) and np.any(validation.labels == 1)
        )
        quiet(self.quantifier_.aggregation_fit, validation.posteriors, validation.labels)
        return self

    def calibration_map(self, posteriors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(abscissae, ordinates) of the sample's map: bin centres and the B1-processed ratios."""
        prevalence = quiet(self.quantifier_.aggregate, np.asarray(posteriors, dtype=float))
        # QuaPy histograms the negative-class posterior for binary problems: reversing the bins
        # indexes them by the positive posterior (upper-closed intervals, as REF).
        hist_neg, hist_pos = (h.flatten()[::-1] for h in self.quantifier_.validation_distribution)
        negative = hist_neg * prevalence[0] + DMCAL_EPSILON
        positive = hist_pos * prevalence[1] + DMCAL_EPSILON
        ratio = positive / (negative + positive)
        centres = np.linspace(0.0, 1.0, self.n_bins + 1)[:-1] + 0.5 / self.n_bins
        return postprocess_map(centres, ratio, monotone=self.monotone, smooth=self.smooth)

    def calibrate(self, sample, context):
        x, y = self.calibration_map(sample.posteriors)
        if self.missing_class_:
            # REF's map would be NaN here; B1's NaN imputation turns it into the identity instead.
            context.note("fallback", "DMCal: a class is absent from validation; map imputed by B1")
        return apply_map(x, y, np.asarray(sample.posteriors, dtype=float)[:, 1])


__all__ = ["DMCal"]
