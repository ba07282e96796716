"""Platt scaling through scikit-learn's public API against an independent oracle: Platt's (1999)
smoothed targets and the maximum-likelihood sigmoid, minimised with scipy."""

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.base import SampleContext
from unishift.methods.calibration.platt import Platt


def _oracle(scores, labels):
    n_pos, n_neg = labels.sum(), len(labels) - labels.sum()
    targets = np.where(labels == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(ab):
        p = np.clip(expit(-(ab[0] * scores + ab[1])), 1e-15, 1 - 1e-15)
        return -np.sum(targets * np.log(p) + (1 - targets) * np.log(1 - p))

    a, b = optimize.minimize(loss, [0.0, 0.0], method="Nelder-Mead", options={
        "xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000}).x  # fmt: skip
    return lambda s: expit(-(a * s + b))


def _setting(positive, labels):
    posteriors = np.column_stack([1 - positive, positive])
    validation = LabelledSet(posteriors=posteriors, labels=labels)
    return Setting(validation=validation, training=validation, shift="label")


@pytest.mark.parametrize("seed", [0, 1])
def test_platt_equals_the_smoothed_maximum_likelihood_sigmoid(seed):
    rng = np.random.default_rng(seed)
    positive = rng.random(300)
    # labels drawn from a miscalibrated sigmoid of the score, so the fit is far from the identity
    labels = (rng.random(300) < expit(6 * (positive - 0.6))).astype(np.int64)
    method = Platt().fit(_setting(positive, labels))
    test = rng.random(50)
    sample = Sample(posteriors=np.column_stack([1 - test, test]))
    calibrated = method.calibrate(sample, SampleContext(setting_key="s", sample_id=0))
    np.testing.assert_allclose(calibrated[:, 1], _oracle(positive, labels)(test), atol=1e-5)
    np.testing.assert_allclose(calibrated.sum(axis=1), 1.0)
    # a calibrator of the positive class: swapping the classes would fail this
    assert np.all(np.diff(calibrated[np.argsort(test), 1]) > 0)


def test_platt_fits_tiny_validation_sets():
    """Four items, one of them positive: no cross-validation folds to fill."""
    positive, labels = np.array([0.1, 0.2, 0.3, 0.9]), np.array([0, 0, 0, 1])
    method = Platt().fit(_setting(positive, labels))
    out = method.calibrate(
        Sample(posteriors=np.array([[0.1, 0.9]])), SampleContext(setting_key="s", sample_id=0)
    )
    assert 0.5 < out[0, 1] < 1
