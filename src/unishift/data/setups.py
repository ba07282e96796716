"""A setup: one trained classifier on one data set (label shift) or one language model on one
source->target pair (covariate shift), built by the data layer, consumed by the evaluation layer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from unishift.data.containers import LabelledSet, Sample, Setting


@dataclass
class SetupData:
    """What methods are fitted on, the pool of labelled test items and the persisted sample indices
    into it."""

    shift: str
    classifier: str
    dataset: str
    setting: Setting
    pool: LabelledSet
    sample_indices: np.ndarray
    shift_intensity: np.ndarray
    # Precomputed per-sample artifacts (e.g. domain-classifier weights written by an upstream rule),
    # keyed like SampleContext.cached keys; they pre-seed each sample's context.
    sample_artifacts: Callable[[int], dict] | None = None
    # Legacy NumPy RNG state right after the sample indices were drawn (np.random.get_state()
    # tuple); the "reference" domain stream continues it. None: the samples carry no stream.
    stream_state: tuple | None = None
    # Posteriors of each sample predicted as one batch (n_samples x sample_size x k), used instead of
    # the pool's rows when given (the reference's scripts predict each sample separately).
    sample_posteriors: np.ndarray | None = None

    @property
    def key(self) -> str:
        return self.setting.key

    @property
    def n_classes(self) -> int:
        return self.setting.n_classes

    def sample(self, sample_id: int) -> tuple[Sample, np.ndarray]:
        idx = self.sample_indices[sample_id]
        items = self.pool.subset(idx)
        posteriors = items.posteriors
        if self.sample_posteriors is not None:
            posteriors = self.sample_posteriors[sample_id]
        return Sample(posteriors, items.features, items.logits), items.labels
