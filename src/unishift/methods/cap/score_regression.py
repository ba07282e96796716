"""The base of the score-based accuracy predictors (Nuclear Norm, MaNo): a sample-level score that
rises with accuracy, mapped to an accuracy by a linear regression fitted on ``repeats`` validation
samples of ``sample_size`` items drawn by ``protocol`` with ``seed``, as Deng et al. 2023 fit theirs
on a meta-set of shifted sets (here the validation resamples DoC uses, docs/protocols.md §4)."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LinearRegression

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.base import AccuracyPredictor, SampleContext
from unishift.option_checks import check_choice
from unishift.protocols.sampling import app_indices, npp_indices, upp_indices

PROTOCOLS = ("upp", "npp", "app")


class ScoreRegression(AccuracyPredictor):
    shift_defaults = {"label": {"protocol": "upp"}, "covariate": {"protocol": "npp"}}

    def score(self, posteriors: np.ndarray, logits: np.ndarray | None) -> float:
        raise NotImplementedError

    def _validation_samples(self, labels: np.ndarray, n_classes: int) -> np.ndarray:
        protocol = self.protocol
        if protocol in ("upp", "app") and len(np.unique(labels)) < n_classes:
            self.fit_fallback(
                f"{self.name}: validation set lacks a class; NPP samples used instead of "
                f"{protocol.upper()}"
            )
            protocol = "npp"
        if protocol == "npp":
            return npp_indices(len(labels), self.sample_size, self.repeats, self.seed)
        draw = upp_indices if protocol == "upp" else app_indices
        return draw(labels, self.sample_size, self.repeats, self.seed, n_classes=n_classes)

    def check_params(self):
        check_choice("protocol", self.protocol, PROTOCOLS)

    def _fit(self, setting: Setting) -> None:
        validation: LabelledSet = setting.validation
        if len(validation) == 0:
            raise ValueError(f"{self.name} cannot be fitted on an empty validation set")
        correct = validation.predictions == validation.labels
        indices = self._validation_samples(validation.labels, setting.n_classes)
        logits = validation.logits
        scores = [
            self.score(validation.posteriors[i], None if logits is None else logits[i])
            for i in indices
        ]
        accuracies = correct[indices].mean(axis=1)
        self.regressor_ = LinearRegression().fit(np.reshape(scores, (-1, 1)), accuracies)

    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        score = self.score(sample.posteriors, sample.logits)
        estimate = float(self.regressor_.predict([[score]])[0])
        return float(np.clip(estimate, 0.0, 1.0)) if self.clip else estimate
