"""Calibrators adapted from quantification (docs/methods.md §2.6-§2.10).

EMQ-type calibrators return the adapted posteriors of Saerens et al.'s EM (B4); PacCal^σ rescales the
positive posterior with PACC's tpr/fpr; DMCal turns a DMy prevalence estimate into a binned map.
QuaPy does the quantification; this module only turns its outputs into posteriors.
"""

from __future__ import annotations

import numpy as np

from unishift.methods.base import (
    PREVALENCE_SOURCES,
    Calibrator,
    Sample,
    SampleContext,
    Setting,
    as_posteriors,
    check_choice,
)
from unishift.methods.binning import MONOTONE_RULES, apply_map, postprocess_map
from unishift.methods.calibration.shared import softmax
from unishift.methods.calibration.temperature import LasCal, TransCal
from unishift.methods.quantification.qp_bridge import PosteriorPassthrough, em, quiet
from unishift.methods.quantification.reference import EMQBCTS

DMCAL_EPSILON = 1e-7


def _check_rows_sum_to_one(posteriors: np.ndarray, method: str) -> None:
    if not np.isclose(np.asarray(posteriors).sum(axis=1), 1).all():
        raise ValueError(f"{method}: the input does not look like posterior probabilities")


class EMQCalibrator(Calibrator):
    """EMQ as a calibrator: the EM-adapted posteriors of the test sample (§2.6).

    Args:
        train_prevalence: the prior EM starts from, "training" (label prevalence of the
            classifier-training set: both calibration tables) or "validation".
    """

    name, group, display = "EMQ", "adapted", "EMQ"
    description = "EM-adapted posteriors from the classifier-training prevalence [REF EM]"
    defaults = {"train_prevalence": "training"}
    adaptations = ()

    def __init__(self, train_prevalence: str = "training"):
        check_choice("train_prevalence", train_prevalence, PREVALENCE_SOURCES)
        self.train_prevalence = train_prevalence

    def fit(self, setting: Setting):
        self.fit_notes = []
        self.prior_ = setting.prevalence_of(self.train_prevalence)
        return self

    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        return em(self.prior_, sample.posteriors)[1]


class EMQBCTSCalibrator(Calibrator):
    """EMQ on BCTS-recalibrated posteriors; returns the adapted posteriors (§2.7).

    Uses the quantification package's EMQ^BCTS (QuaPy EMQ with calib='bcts'). When BCTS fails at fit
    time REF silently used the identity map and the exact ``fallback_prevalence`` (validation labels
    in both calibration tables); the fallback is kept and recorded in ``fit_notes``.
    """

    name, group, display = "EMQ_BCTS", "adapted", r"EMQ$^{\text{BCTS}}$"
    description = "EM on BCTS-recalibrated posteriors [REF EM-BCTS]"
    defaults = {"fallback_prevalence": "validation"}
    adaptations = ()

    def __init__(self, fallback_prevalence: str = "validation"):
        check_choice("fallback_prevalence", fallback_prevalence, PREVALENCE_SOURCES)
        self.fallback_prevalence = fallback_prevalence

    def fit(self, setting: Setting):
        self.quantifier_ = EMQBCTS(fallback_prevalence=self.fallback_prevalence).fit(setting)
        self.fit_notes = list(self.quantifier_.fit_notes)
        return self

    def calibrate(self, sample, context):
        posteriors = np.asarray(sample.posteriors, dtype=float)
        _check_rows_sum_to_one(posteriors, "EMQ_BCTS")
        if self.quantifier_.fallback_prior_ is not None:
            return em(self.quantifier_.fallback_prior_, posteriors)[1]
        return quiet(self.quantifier_.quantifier_.predict_proba, posteriors)


class _ThenEM:
    """Mixin for a calibrator followed by EM (B4) from the prior of ``train_prevalence`` (§2.8)."""

    def _set_prior_source(self, train_prevalence: str) -> None:
        check_choice("train_prevalence", train_prevalence, PREVALENCE_SOURCES)
        self.train_prevalence = train_prevalence

    def fit(self, setting):
        super().fit(setting)
        self.prior_ = setting.prevalence_of(self.train_prevalence)
        return self

    def calibrate(self, sample, context):
        return em(self.prior_, super().calibrate(sample, context))[1]


class EMQTransCal(_ThenEM, TransCal):
    """TransCal (§2.4) followed by EM from the training prevalence (§2.8; CS table: logits "L").

    Args: those of :class:`TransCal`, plus ``train_prevalence`` ("training" | "validation").
    """

    name, group, display = "EMQ_TransCal", "adapted", r"EMQ$^{\text{TransCal}}$"
    description = "TransCal then EM [REF EM-TransCal]"
    shifts = ("covariate",)
    defaults = {"train_prevalence": "training"}
    shift_defaults = {"covariate": {"logits": "L"}}
    adaptations = ()

    def __init__(
        self,
        logits: str = "L",
        weights: str = "domain_classifier",
        zero_posteriors: str = "faithful",
        variance_term: bool = True,
        train_prevalence: str = "training",
    ):
        super().__init__(logits, weights, zero_posteriors, variance_term)
        self._set_prior_source(train_prevalence)


class EMQLasCal(_ThenEM, LasCal):
    """LasCal (§2.5) followed by EM from the training prevalence (§2.8; LS table: logits "S").

    Shares LasCal's per-sample temperature search through the context.

    Args: those of :class:`LasCal`, plus ``train_prevalence`` ("training" | "validation"; the
    quantification variant EMQ^LasCal uses "validation").
    """

    name, group, display = "EMQ_LasCal", "adapted", r"EMQ$^{\text{LasCal}}$"
    description = "LasCal then EM [REF EMLasCal]"
    shifts = ("label",)
    defaults = {"train_prevalence": "training"}
    shift_defaults = {"label": {"logits": "S"}}
    adaptations = ()

    def __init__(
        self,
        logits: str = "S",
        solver: str = "closed_form",
        train_prevalence="training",
        arithmetic="reference",
    ):
        super().__init__(logits, solver, arithmetic)
        self._set_prior_source(train_prevalence)


class PacCalSigma(Calibrator):
    """PacCal^σ (§2.9): p' = (p - fpr) / (tpr - fpr) with PACC's validation tpr/fpr.

    Args:
        post_processing: "sigma" (REF 'softmax', the table's method): when any p' of the sample is
            outside [0, 1], every item becomes softmax([1 - p', p']); when all are inside, p' is
            returned unchanged (REF has no output there; recorded as a note). "clip": clip p' to
            [0, 1] (REF's unused 'clip' variant).
    When tpr <= fpr REF leaves the posteriors unadjusted; recorded in ``fit_notes``.
    """

    name, group, display = "PacCal_sigma", "adapted", r"PacCal$^{\sigma}$"
    description = "PACC-adjusted posteriors with the sigma post-processing [REF PACC-cal(soft)]"
    defaults = {"post_processing": "sigma"}
    adaptations = ()

    POST_PROCESSING = ("sigma", "clip")

    def __init__(self, post_processing: str = "sigma"):
        check_choice("post_processing", post_processing, self.POST_PROCESSING)
        self.post_processing = post_processing

    def fit(self, setting: Setting):
        from quapy.method.aggregative import PACC

        self.fit_notes = []
        conditional = PACC.getPteCondEstim(
            [0, 1], setting.validation.labels, setting.validation.posteriors
        )
        self.tpr_, self.fpr_ = float(conditional[1, 1]), float(conditional[1, 0])
        if not self.tpr_ - self.fpr_ > 0:
            self.fit_notes.append(
                ("fallback", f"PacCal: tpr={self.tpr_:.4g} <= fpr={self.fpr_:.4g}; posteriors kept")
            )
        return self

    def adjusted(self, positive: np.ndarray) -> np.ndarray:
        denominator = self.tpr_ - self.fpr_
        if denominator > 0:
            return (positive - self.fpr_) / denominator
        return positive

    def calibrate(self, sample, context):
        adjusted = self.adjusted(np.asarray(sample.posteriors, dtype=float)[:, 1])
        if self.post_processing == "clip":
            return as_posteriors(np.clip(adjusted, 0.0, 1.0))
        if np.any(adjusted > 1) or np.any(adjusted < 0):
            return softmax(np.column_stack([1 - adjusted, adjusted]))
        context.note("fallback", "PacCal: all adjusted posteriors in [0, 1]; returned unchanged")
        return as_posteriors(adjusted)


class DMCal(Calibrator):
    """DMCal (§2.10): DMy's prevalence estimate mixes the class-conditional validation histograms into
    a per-bin positive rate, post-processed by B1 and interpolated at the test posteriors.

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


__all__ = ["EMQCalibrator", "EMQBCTSCalibrator", "EMQTransCal", "EMQLasCal", "PacCalSigma", "DMCal"]
