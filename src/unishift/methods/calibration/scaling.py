"""Temperature, vector and bias-corrected temperature scaling by validation NLL with ``abstention``:
the k-class analogues of Platt scaling (logits, zero posteriors, fit failures: docs/multiclass.md
§4, TS, BCTS, VS)."""

from __future__ import annotations

import numpy as np

from unishift.methods.base import Calibrator
from unishift.option_checks import check_choice

LOGITS = ("L", "S")
ZERO_POSTERIOR_RULES = ("clip", "raise")
FIT_ERROR_RULES = ("backup", "raise")
CLIP = 1e-12


class _AbstentionScaling(Calibrator):
    group = "baseline"
    adaptations = ()
    abstention_call: tuple[str, dict]  # an abstention.calibration class and its arguments

    def __init__(self, logits: str = "S", zero_posteriors: str = "clip", on_fit_error="backup"):
        self.logits = logits
        self.zero_posteriors = zero_posteriors
        self.on_fit_error = on_fit_error

    def check_params(self):
        check_choice("logits", self.logits, LOGITS)
        check_choice("zero_posteriors", self.zero_posteriors, ZERO_POSTERIOR_RULES)
        check_choice("on_fit_error", self.on_fit_error, FIT_ERROR_RULES)

    def _inputs(self, data, notes: list) -> np.ndarray:
        if self.logits == "L":
            if data.logits is None:
                raise ValueError("logits='L' needs true logits (language models); use logits='S'")
            return np.asarray(data.logits, dtype=float)
        posteriors = np.asarray(data.posteriors, dtype=float)
        if np.any(posteriors <= 0):
            if self.zero_posteriors == "raise":
                raise ValueError(
                    f"{self.name}: a posterior is exactly 0 and has no logarithm; "
                    "use zero_posteriors='clip'"
                )
            notes.append(
                ("fallback", f"{self.name}: posteriors clipped to [{CLIP:g}, 1] before logs")
            )
            posteriors = np.clip(posteriors, CLIP, 1.0)
            posteriors = posteriors / posteriors.sum(axis=1, keepdims=True)
        return posteriors

    def _fit(self, setting) -> None:
        import abstention.calibration

        validation = setting.validation
        inputs = self._inputs(validation, self.fit_notes)
        onehot = np.eye(setting.n_classes)[np.asarray(validation.labels, dtype=int)]
        self.map_ = None
        cls, kwargs = self.abstention_call
        try:
            with np.errstate(all="ignore"):
                fitter = getattr(abstention.calibration, cls)(**kwargs)
                self.map_ = fitter(inputs, onehot, posterior_supplied=self.logits == "S")
        except AssertionError as err:  # abstention's convergence assertion
            summary = str(err).splitlines()[0] if str(err) else "no convergence"
            reason = f"{self.name}: the likelihood fit failed ({summary})"
            if self.on_fit_error == "raise":
                raise RuntimeError(reason) from err
            self.fit_fallback(reason + "; uncalibrated posteriors returned")

    def calibrate(self, sample, context=None):
        if self.map_ is None:
            posteriors = np.asarray(sample.posteriors, dtype=float)
            return posteriors / posteriors.sum(axis=1, keepdims=True)
        notes = self.context_for(context).notes
        return np.asarray(self.map_(self._inputs(sample, notes)), dtype=float)


class TemperatureScaling(_AbstentionScaling):
    name, display = "TS", "TS"
    description = "temperature scaling by validation NLL (abstention)"
    abstention_call = ("TempScaling", {"bias_positions": []})


class BiasCorrectedTemperatureScaling(_AbstentionScaling):
    name, display = "BCTS", "BCTS"
    adaptations = ("c2q", "c2a", "emq")
    description = "temperature plus per-class biases by validation NLL (abstention)"
    abstention_call = ("TempScaling", {"bias_positions": "all"})


class VectorScaling(_AbstentionScaling):
    name, display = "VS", "VS"
    description = "per-class scales and biases by validation NLL (abstention)"
    abstention_call = ("VectorScaling", {})
