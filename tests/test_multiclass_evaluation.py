"""The multiclass per-sample records: what each column holds, and failures recorded, not raised."""

from __future__ import annotations

import json

import numpy as np
import pytest
import quapy as qp
from unishift.multiclass.base import (
    MulticlassCalibrator,
    MulticlassLabelledSet,
    MulticlassQuantifier,
    MulticlassSetting,
)
from unishift.multiclass.evaluation import MULTICLASS_RECORD_COLUMNS, evaluate_multiclass_setup
from unishift.multiclass.quantification import PCC

from unishift.data.setups import SetupData as MulticlassSetup
from unishift.metrics import multiclass as mcm


def toy_setup(k=3, n=90, seed=0):
    rng = np.random.default_rng(seed)
    posteriors = rng.dirichlet(np.ones(k), size=n)
    labels = rng.integers(0, k, n)
    data = MulticlassLabelledSet(posteriors, labels, k)
    setting = MulticlassSetting(data, data, "label", key="toy/LR")
    indices = np.stack([rng.choice(n, 30) for _ in range(4)])
    return (
        MulticlassSetup("label", "LR", "toy", setting, data, indices, np.linspace(0, 0.3, 4)),
        posteriors,
        labels,
    )


def test_quantification_records_hold_vectors_and_quapy_errors():
    setup, posteriors, labels = toy_setup()
    records, timing = evaluate_multiclass_setup("quantification", "PCC", PCC, setup)
    assert timing["n_samples"] == 4 and len(records) == 4
    assert set(records[0]) <= set(MULTICLASS_RECORD_COLUMNS)
    for record, index in zip(records, setup.sample_indices):
        truth = np.bincount(labels[index], minlength=3) / 30
        estimate = posteriors[index].mean(axis=0)
        np.testing.assert_allclose(json.loads(record["true_prevalence"]), truth, atol=1e-12)
        np.testing.assert_allclose(json.loads(record["estimated_prevalence"]), estimate, atol=1e-12)
        assert record["error"] == record["ae"] == pytest.approx(qp.error.ae(truth, estimate))
        assert record["rae"] == pytest.approx(qp.error.rae(truth, estimate, eps=1 / 60))
        assert record["status"] == "ok" and record["n_classes"] == 3


class Identity(MulticlassCalibrator):
    def fit(self, setting):
        return self

    def calibrate(self, sample, context):
        return sample.posteriors


def test_calibration_records_rank_by_top_label_or_classwise_ece():
    setup, posteriors, labels = toy_setup()
    top, _ = evaluate_multiclass_setup("calibration", "Id", Identity, setup)
    classwise, _ = evaluate_multiclass_setup("calibration", "Id", Identity, setup, ece="classwise")
    index = setup.sample_indices[0]
    assert top[0]["error"] == mcm.ece_top_label(posteriors[index], labels[index]) == top[0]["ece"]
    assert classwise[0]["error"] == mcm.ece_classwise(posteriors[index], labels[index])
    assert top[0]["brier"] == pytest.approx(mcm.brier(posteriors[index], labels[index]))
    assert top[0]["true_value"] == mcm.accuracy(posteriors[index], labels[index])


class OffSimplex(MulticlassQuantifier):
    def fit(self, setting):
        return self

    def quantify(self, sample, context):
        return np.array([0.9, 0.9, 0.1])


class Unfittable(MulticlassQuantifier):
    def fit(self, setting):
        raise RuntimeError("cannot")

    def quantify(self, sample, context):
        raise AssertionError("never called")


def test_failures_are_recorded_per_sample_with_a_reason():
    setup, _, _ = toy_setup()
    records, _ = evaluate_multiclass_setup("quantification", "Off", OffSimplex, setup)
    assert all(r["status"] == "error" and "not on the simplex" in r["reason"] for r in records)
    records, _ = evaluate_multiclass_setup("quantification", "Bad", Unfittable, setup)
    assert all(r["reason"] == "fit failed: RuntimeError: cannot" for r in records)
    with pytest.raises(ValueError, match="ece='positive_class'"):
        evaluate_multiclass_setup("calibration", "Id", Identity, setup, ece="positive_class")
