"""The contract every registered method keeps (docs/methods.md, "Adding a method"), checked on every
(task, method, shift) the registry lists, adaptations and plugins included: it builds from its class's
description, fits on a small setting, goes through the evaluation driver without an error and
returns what its task promises (calibrated posteriors: one row per item, each in [0, 1] and summing to
1; a prevalence or an accuracy: a number in [0, 1]), the same numbers when run again."""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_calibration_support import make_setting
from unishift.data.containers import LabelledSet
from unishift.data.setups import SetupData
from unishift.evaluation import evaluate_setup
from unishift.methods.base import Method, SampleContext
from unishift.registry import all_methods, get_method

CASES = sorted(
    (task, name, shift) for (task, name), spec in all_methods().items() for shift in spec.shifts
)


def _setup(shift: str) -> SetupData:
    setting, _, draw = make_setting(seed=7, shift=shift, logits=shift == "covariate")
    pool, pool_labels = draw(500, 0.5, shift_x=0.3)
    pool = LabelledSet(pool.posteriors, pool_labels, pool.features, pool.logits)
    rng = np.random.default_rng(7)
    # one sample rich in positives, one poor in them: the estimates must follow the data
    positives, negatives = np.flatnonzero(pool_labels == 1), np.flatnonzero(pool_labels == 0)
    indices = np.array(
        [
            np.concatenate([rng.choice(positives, 90), rng.choice(negatives, 30)]),
            np.concatenate([rng.choice(positives, 20), rng.choice(negatives, 100)]),
        ]
    )
    stream = np.random.RandomState(7).get_state()
    return SetupData(shift, "LR", "toy", setting, pool, indices, np.zeros(2), stream_state=stream)


SETUPS = {shift: _setup(shift) for shift in ("label", "covariate")}


def _outputs(spec, shift):
    setup = SETUPS[shift]
    method = spec.build(shift, 2).fit(setup.setting)
    outputs = []
    for sample_id in range(len(setup.sample_indices)):
        sample, _ = setup.sample(sample_id)
        context = SampleContext(setup.key, sample_id, seed=setup.setting.seed)
        outputs.append(method.apply(sample, context))
    return method, outputs, setup


def test_the_registry_lists_every_task_and_shift():
    assert {task for task, _, _ in CASES} == {"calibration", "quantification", "cap"}
    assert {shift for _, _, shift in CASES} == {"label", "covariate"}


@pytest.mark.parametrize("task, name, shift", CASES, ids=["/".join(case) for case in CASES])
def test_method_contract(task, name, shift):
    spec = get_method(task, name, shift)
    assert isinstance(spec.build(shift, 2), Method)
    if spec.group != "adapted" or "inner" not in spec.defaults:
        assert (spec.factory.name, spec.factory.task) == (name, task)  # it describes itself
    method, outputs, setup = _outputs(spec, shift)
    assert method.task == task
    for sample_id, output in enumerate(outputs):
        n = len(setup.sample_indices[sample_id])
        if task == "calibration":
            output = np.asarray(output)
            assert output.shape == (n, 2)
            assert np.all((output >= 0) & (output <= 1))
            np.testing.assert_allclose(output.sum(axis=1), 1.0, atol=1e-9)
        else:
            assert 0.0 <= float(output) <= 1.0
    records, timing = evaluate_setup(
        task, name, lambda: spec.build(shift, 2), setup, domain_stream="per_sample"
    )
    assert timing["n_samples"] == len(records) == len(outputs)
    for record, output in zip(records, outputs):
        assert record["status"] in ("ok", "fallback"), record["reason"]
        assert (record["task"], record["method"], record["shift"]) == (task, name, shift)
        estimate = np.asarray(output)[:, 1].mean() if task == "calibration" else float(output)
        assert record["estimate"] == pytest.approx(estimate, abs=1e-12)  # deterministic rerun
    if task == "quantification":
        # the positive-rich sample gets the higher estimate
        assert records[0]["estimate"] > records[1]["estimate"]
