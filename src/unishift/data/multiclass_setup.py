"""One multiclass setup read back from the workflow's files: what methods are fitted on, the test
pool and the persisted samples. Kept apart from the data loaders (:mod:`unishift.data.
label_shift_multiclass`) so that the evaluation jobs import no data-source package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from unishift.data.containers import LabelledSet as MulticlassLabelledSet
from unishift.data.containers import Sample as MulticlassSample
from unishift.data.containers import Setting as MulticlassSetting


@dataclass
class MulticlassSetup:
    """One multiclass setup: what methods are fitted on, the test pool and the persisted samples."""

    shift: str
    classifier: str
    dataset: str
    setting: MulticlassSetting
    pool: MulticlassLabelledSet
    sample_indices: np.ndarray
    shift_intensity: np.ndarray
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n_classes(self) -> int:
        return self.setting.n_classes

    def sample(self, sample_id: int) -> tuple[MulticlassSample, np.ndarray]:
        items = self.pool.subset(self.sample_indices[sample_id])
        return MulticlassSample(items.posteriors, items.features, items.logits), items.labels


def load_multiclass_label_setup(
    splits: dict, posteriors: dict, samples: dict, dataset: str, classifier: str, seed: int
) -> MulticlassSetup:
    k = int(splits["n_classes"])
    setting = MulticlassSetting(
        validation=MulticlassLabelledSet(
            posteriors["P_val"], splits["y_val"], splits["X_val"], n_classes=k
        ),
        training=MulticlassLabelledSet(
            posteriors["P_h"], splits["y_h"], splits["X_h"], n_classes=k
        ),
        shift="label",
        key=f"{dataset}/{classifier}",
        seed=seed,
    )
    return MulticlassSetup(
        shift="label",
        classifier=classifier,
        dataset=dataset,
        setting=setting,
        pool=MulticlassLabelledSet(
            posteriors["P_test"], splits["y_test"], splits["X_test"], n_classes=k
        ),
        sample_indices=np.asarray(samples["indices"], dtype=np.int64),
        shift_intensity=np.asarray(samples["shift_intensity"], dtype=float),
    )


__all__ = ["MulticlassSetup", "load_multiclass_label_setup"]
