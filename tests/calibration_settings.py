"""Synthetic settings and samples shared by the calibration tests (this module holds no tests)."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.base import SampleContext


def _draw(rng, n, prevalence, d, separation):
    labels = (rng.random(n) < prevalence).astype(int)
    features = rng.normal(size=(n, d)) + separation * labels[:, None]
    return features, labels


def make_setting(
    seed: int = 0,
    n_train: int = 400,
    n_val: int = 300,
    d: int = 5,
    train_prevalence: float = 0.5,
    separation: float = 1.0,
    logits: bool = True,
    shift: str = "label",
):
    """A logistic-regression 'classifier' on Gaussian classes; returns (setting, classifier, draw)
    where ``draw(n, prevalence)`` gives a labelled test sample from the same class conditionals."""
    rng = np.random.default_rng(seed)
    train_x, train_y = _draw(rng, n_train, train_prevalence, d, separation)
    classifier = LogisticRegression().fit(train_x, train_y)

    def labelled(x, y):
        score = classifier.decision_function(x)
        return LabelledSet(
            posteriors=classifier.predict_proba(x),
            labels=y,
            features=x,
            logits=np.column_stack([-score / 2, score / 2]) if logits else None,
        )

    val_x, val_y = _draw(rng, n_val, train_prevalence, d, separation)
    setting = Setting(
        validation=labelled(val_x, val_y),
        training=labelled(train_x, train_y),
        shift=shift,
        key=f"synthetic/{seed}",
        seed=seed,
    )

    def draw(n, prevalence, shift_x=0.0, sample_seed=1):
        local = np.random.default_rng(sample_seed)
        x, y = _draw(local, n, prevalence, d, separation)
        x = x + shift_x
        items = labelled(x, y)
        return Sample(items.posteriors, items.features, items.logits), y

    return setting, classifier, draw


def context_for(setting: Setting, sample_id: int = 0) -> SampleContext:
    return SampleContext(setting_key=setting.key, sample_id=sample_id, seed=setting.seed)


def with_zero_posteriors(data, rows):
    """A copy of a LabelledSet / Sample whose given rows have posteriors exactly [1, 0] / [0, 1]
    (kNN-style), the first ones [1, 0]."""
    posteriors = np.array(data.posteriors, dtype=float)
    for k, row in enumerate(rows):
        posteriors[row] = [1.0, 0.0] if k % 2 == 0 else [0.0, 1.0]
    if isinstance(data, LabelledSet):
        return LabelledSet(posteriors, data.labels, data.features, data.logits)
    return Sample(posteriors, data.features, data.logits)
