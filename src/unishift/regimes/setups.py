"""The shift descriptors of every sample of one setup, computed once per (shift, setup) for every
method and joined into each record (docs/regimes.md §5.1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from unishift.data.containers import derive_seed
from unishift.data.setups import SetupData
from unishift.regimes.descriptors import DESCRIPTORS, SampleInputs, describe, make_reference

KEYS = ("shift", "classifier", "dataset", "sample_id")
COLUMNS = (*KEYS, *DESCRIPTORS)


def full_prevalence(prevalence_full) -> np.ndarray:
    """A label-shift split's ``prevalence_full`` as a length-k vector: the two-class files store the
    positive class's share p (the vector is (1 - p, p)), the k-class files the vector itself."""
    p = np.asarray(prevalence_full, dtype=float)
    return np.array([1.0 - float(p), float(p)]) if p.ndim == 0 else p


def describe_setup(
    setup: SetupData,
    seed: int,
    train_prevalence=None,
    n_source: int | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """One row per sample of ``setup`` (columns :data:`COLUMNS`, samples in id order) and the
    reasons of the descriptors left empty (NaN), one line per sample and descriptor.
    ``n_source``: the size of the source pool, for ``true_mixture`` (None: not a mixture)."""
    setting = setup.setting
    pi = setting.train_prevalence if train_prevalence is None else train_prevalence
    features = setting.validation.features  # the domain classifier's reference items
    reference = make_reference(setting.validation.posteriors, setting.validation.labels, pi)
    rows, reasons = [], []
    for sample_id in range(len(setup.sample_indices)):
        sample, labels = setup.sample(sample_id)
        indices = np.asarray(setup.sample_indices[sample_id])
        is_target = None if n_source is None else indices >= n_source
        sample_seed = derive_seed(seed, setup.shift, setup.key, "descriptors", sample_id)
        values, errors = describe(
            reference,
            SampleInputs(
                sample.posteriors,
                labels=labels,
                is_target=is_target,
                features=sample.features,
                reference_features=features,
                seed=sample_seed,
            ),
        )
        # a descriptor that cannot score this sample (domain_auc) is left empty; the others stay
        reasons += [f"{setup.key} sample {sample_id}: {error}" for error in errors]
        key = (setup.shift, setup.classifier, setup.dataset, sample_id)
        rows.append([*key, *(values.get(name, np.nan) for name in DESCRIPTORS)])
    return pd.DataFrame(rows, columns=list(COLUMNS)), reasons
