"""CPCS and TransCal for k classes: the binary implementations, which are already class-generic.

Both fit a temperature on the validation logits with importance weights from a domain classifier
between the classifier-training features and the test sample's features (docs/methods.md §0.4, B5): CPCS
minimises the weighted multiclass Brier score (canonical), TransCal matches the mean top-label
confidence to a weighted estimate of the target accuracy (top-label). The binary classes compute with
``np.eye(k)``, a k-column softmax and k-column arg-maxes, so they are reused here unchanged (wrapped
to the multiclass interface); for two classes the numbers are the binary ones by construction.

``logits``: ``"L"`` true logits (language models), ``"S"`` log-posteriors (default), ``"P"`` the
posteriors used as logits (the reference code's convention in some binary tables; for k classes it
is a narrow family, softmax(p / T), kept only for the n = 2 comparison).
"""

from __future__ import annotations

from unishift.methods.calibration.cpcs import CPCS as BinaryCPCS
from unishift.methods.calibration.transcal import TransCal as BinaryTransCal
from unishift.multiclass.base import MulticlassCalibrator


class _Wrapped(MulticlassCalibrator):
    group = "reference"
    assumption = "covariate"

    def _inner(self):
        raise NotImplementedError

    def fit(self, setting):
        self.inner_ = self._inner().fit(setting)
        self.fit_notes = list(getattr(self.inner_, "fit_notes", []) or [])
        return self

    def calibrate(self, sample, context):
        return self.inner_.calibrate(sample, context)


class CPCS(_Wrapped):
    name, display, binary_name = "CPCS", "CPCS", "CPCS"
    calibration_notion = "canonical"
    defaults = {"logits": "S", "weights": "domain_classifier"}
    description = "CPCS (Park et al. 2020): importance-weighted Brier temperature"

    def __init__(self, logits: str = "S", weights: str = "domain_classifier"):
        self.logits = logits
        self.weights = weights
        self._inner()  # validate now

    def _inner(self):
        return BinaryCPCS(logits=self.logits, weights=self.weights)


class TransCal(_Wrapped):
    name, display, binary_name = "TransCal", "TransCal", "TransCal"
    calibration_notion = "top-label"
    defaults = {"logits": "S", "weights": "domain_classifier", "zero_posteriors": "faithful"}
    description = "TransCal (Wang et al. 2020): confidence matched to a weighted accuracy estimate"

    def __init__(
        self,
        logits: str = "S",
        weights: str = "domain_classifier",
        zero_posteriors: str = "faithful",
        variance_term: bool = True,
    ):
        self.logits = logits
        self.weights = weights
        self.zero_posteriors = zero_posteriors
        self.variance_term = variance_term
        self._inner()

    def _inner(self):
        return BinaryTransCal(
            logits=self.logits,
            weights=self.weights,
            zero_posteriors=self.zero_posteriors,
            variance_term=self.variance_term,
        )


__all__ = ["CPCS", "TransCal"]
