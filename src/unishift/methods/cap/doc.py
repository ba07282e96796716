"""DoC, Difference of Confidences of Guillory et al. 2021 (docs/methods.md §4.1, docs/protocols.md §4)."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LinearRegression

from unishift.data.containers import Sample, Setting
from unishift.methods.base import AccuracyPredictor, SampleContext
from unishift.methods.cap.atc import max_confidence
from unishift.option_checks import check_choice, check_positive_int, check_seed
from unishift.protocols.sampling import app_indices, npp_indices, upp_indices

PROTOCOLS = ("upp", "npp", "app")


class DoC(AccuracyPredictor):
    """Linear regression from the shift in mean max-confidence to the drop in accuracy, trained on
    ``repeats`` validation samples of ``sample_size`` items drawn by ``protocol`` with ``seed``
    (docs/protocols.md §4)."""

    name, description = "DoC", "difference of confidences, 100 x 250 validation samples"
    adaptations = ("a2c", "a2q")

    def __init__(
        self,
        protocol: str = "upp",
        sample_size: int = 250,
        repeats: int = 100,
        seed: int = 0,
        clip: bool = True,
    ):
        self.protocol = protocol
        self.sample_size = sample_size
        self.repeats = repeats
        self.seed = seed
        self.clip = clip

    def check_params(self):
        check_choice("protocol", self.protocol, PROTOCOLS)
        check_positive_int("sample_size", self.sample_size)
        check_positive_int("repeats", self.repeats)
        check_seed("seed", self.seed)

    def _sample_indices(self, labels: np.ndarray, n_classes: int) -> np.ndarray:
        protocol = self.protocol
        if protocol in ("upp", "app") and len(np.unique(labels)) < n_classes:
            self.fit_fallback(
                f"DoC: validation set lacks a class; NPP samples used instead of {protocol.upper()}"
            )
            protocol = "npp"
        if protocol == "npp":
            return npp_indices(len(labels), self.sample_size, self.repeats, self.seed)
        draw = upp_indices if protocol == "upp" else app_indices
        return draw(labels, self.sample_size, self.repeats, self.seed, n_classes=n_classes)

    def _fit(self, setting: Setting) -> None:
        validation = setting.validation
        if len(validation) == 0:
            raise ValueError("DoC cannot be fitted on an empty validation set")
        confidence = max_confidence(validation.posteriors)
        correct = (validation.predictions == validation.labels).astype(float)
        self.val_confidence_ = float(confidence.mean())
        self.val_accuracy_ = float(correct.mean())
        indices = self._sample_indices(validation.labels, setting.n_classes)
        shifts = confidence[indices].mean(axis=1) - self.val_confidence_
        drops = self.val_accuracy_ - correct[indices].mean(axis=1)
        self.regressor_ = LinearRegression().fit(shifts.reshape(-1, 1), drops)

    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        shift = max_confidence(sample.posteriors).mean() - self.val_confidence_
        estimate = self.val_accuracy_ - float(self.regressor_.predict([[shift]])[0])
        return float(np.clip(estimate, 0.0, 1.0)) if self.clip else estimate
