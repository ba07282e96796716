"""Synthetic k-class problems shared by the method tests (this module holds no tests).

* :func:`synthetic_problem`: Gaussian classes in feature space and their linear discriminant as the
  classifier, with features, logits and posteriors;
* :func:`samples`: label-shifted samples drawn from it;
* :func:`replicated`: exact finite-sample label shift (each class's items repeated);
* :func:`grid_setting`: posteriors on a coarse grid of the simplex (shared confidences, many ties).
"""

from __future__ import annotations

import numpy as np

from unishift.data.containers import LabelledSet, Sample, Setting


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def synthetic_problem(seed=0, k=3, n_val=300, n_train=300, dim=4, scale=1.5, spread=1.5):
    """Gaussian classes in feature space; the 'classifier' is the linear discriminant of the class
    means (the Bayes rule for unit covariances and uniform priors), its logits scaled by ``scale``
    (above 1 over-confident, below under-confident). Returns the setting and ``draw(n, prior)``."""
    rng = np.random.default_rng(seed)
    means = rng.normal(0, spread, size=(k, dim))

    def draw(n, prior):
        labels = rng.choice(k, size=n, p=prior)
        features = means[labels] + rng.normal(size=(n, dim))
        logits = scale * (features @ means.T - 0.5 * np.sum(means**2, axis=1))
        return LabelledSet(softmax(logits), labels, features=features, logits=logits, n_classes=k)

    uniform = np.full(k, 1.0 / k)
    setting = Setting(draw(n_val, uniform), draw(n_train, uniform), "label", key=f"s{seed}")
    return setting, draw


def samples(draw, k, rng, n=6, size=120):
    """``n`` samples of ``size`` items, each at a prevalence drawn uniformly from the simplex:
    [(Sample, labels)]."""
    out = []
    for _ in range(n):
        data = draw(size, rng.dirichlet(np.ones(k)))
        out.append((Sample(data.posteriors, data.features, data.logits), data.labels))
    return out


def replicated(validation: LabelledSet, multiplicities) -> LabelledSet:
    """Exact finite-sample label shift: every item of class i repeated multiplicities[i] times, so
    that P(x | y) is the validation one."""
    index = np.repeat(np.arange(len(validation)), np.asarray(multiplicities)[validation.labels])
    return validation.subset(index)


def grid_setting(seed, k=3, n=2000):
    """Posteriors on the grid of the simplex with step 1/4 (no confidence 1), labels the prediction
    with probability 0.6 and uniform otherwise; validation = training."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(4, np.ones(k) / k, size=n)
    posteriors = counts / 4
    posteriors = posteriors[posteriors.max(axis=1) < 1]
    predicted = np.argmax(posteriors, axis=1)
    labels = np.where(
        rng.random(len(posteriors)) < 0.6, predicted, rng.integers(0, k, len(posteriors))
    )
    validation = LabelledSet(posteriors, labels, n_classes=k)
    return Setting(validation, validation, "label", key="grid")
