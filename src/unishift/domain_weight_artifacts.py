"""The shared domain-classifier weights of a setup: computing, writing, reading and attaching them.

The upstream rule (``workflow/rules/weights.smk``) writes one file per (setup, plan) (:mod:`unishift.data.domain_weights`): every call
that a method with that domain-weight plan makes on that setup, in sample order, with the random
stream the evaluation driver gives it (docs/domain-weights.md). The calls are made by running a probe
method through :func:`unishift.evaluation.evaluate_setup`, so that the contexts, streams and parts
are exactly those of the consumers: a plain calibrator that asks for the weights (plan ``sample``)
and the ζ2α adapter around it (plan ``predicted_classes``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.data.setups import SetupData
from unishift.evaluation import evaluate_setup
from unishift.methods.adapt.to_cap import CalibrationToCAP
from unishift.methods.base import Calibrator, SampleContext
from unishift.methods.domain_weights import (
    MEMO_KEY,
    PREDICTED_CLASSES,
    SAMPLE,
    SHARED_PLANS,
    DomainWeightMemo,
    domain_weight_plan,
    domain_weights,
)

FEATURE_SET = "features"


class WeightProbe(Calibrator):
    """A calibrator that only asks for the weights of its setting and the sample (plan ``sample``);
    it returns the posteriors unchanged. Not registered (it sets no ``name``)."""

    def domain_weight_plan(self):
        return SAMPLE

    def fit(self, setting: Setting):
        self.setting_ = setting
        return self

    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        domain_weights(self.setting_, sample, context, FEATURE_SET)
        return np.asarray(sample.posteriors, dtype=float)


def probe(plan: str) -> tuple[str, object]:
    """(task, method) whose calls are those of every method with ``plan``."""
    if plan == SAMPLE:
        return "calibration", WeightProbe()
    if plan == PREDICTED_CLASSES:
        return "cap", CalibrationToCAP(inner=WeightProbe)
    raise ValueError(f"no shared domain weights for plan {plan!r}; shared plans: {SHARED_PLANS}")


def compute_domain_weights(
    setup: SetupData, plan: str, domain_stream: str = "reference"
) -> tuple[DomainWeightMemo, list[str]]:
    """Every call of plan ``plan`` on every sample of ``setup`` (a recording memo), and the reasons
    of the samples whose calls failed (they are left to the consumers, which record the error)."""
    task, method = probe(plan)
    memo = DomainWeightMemo(recording=True)
    recording = replace(setup, sample_artifacts=lambda sample_id: {MEMO_KEY: memo})
    records, _ = evaluate_setup(
        task, "domain weights", lambda: method, recording, domain_stream=domain_stream
    )
    errors = [f"sample {r['sample_id']}: {r['reason']}" for r in records if r["status"] == "error"]
    memo.recording = False
    return memo, errors


def method_domain_weight_plan(
    task: str, name: str, shift: str, params: dict | None = None, n_classes: int = 2
) -> str | None:
    """The plan of a registered method as configured (its adaptations' inner methods included)."""
    from unishift.registry import get_method

    return domain_weight_plan(get_method(task, name, shift).build(shift, n_classes, params))
