"""Domain-classifier weights computed once by the upstream rule and read by every method that needs
them (docs/domain-weights.md): the reading jobs fit no domain classifier and write the same records,
in both stream modes, and the file holds what a literal loop computes."""

from dataclasses import replace

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import unishift.methods.domain_weights as shared
from tests.calibration_settings import make_setting
from unishift.data.containers import LabelledSet
from unishift.data.setups import SetupData
from unishift.evaluation.evaluate import evaluate_setup
from unishift.methods.adapt.to_quantification import CalibrationToQuantification
from unishift.methods.base import PRECOMPUTED, SampleContext
from unishift.methods.calibration.cpcs import CPCS
from unishift.methods.domain_weights import (
    MEMO_KEY,
    PREDICTED_CLASSES,
    SAMPLE,
    UNSHARED,
    domain_weight_plan,
)
from unishift.methods.registry import get_method
from unishift.output_records import read_record, write_record
from unishift.workflow.domain_weight_artifacts import (
    attach_domain_weights,
    compute_domain_weights,
    method_domain_weight_plan,
    read_domain_weights,
    write_domain_weights,
)


def _setup(shift, n_samples=4, stream_seed=11, seed=5):
    setting, _, draw = make_setting(seed=seed, n_train=300, n_val=200, d=4, shift=shift)
    sample, labels = draw(700, 0.6, shift_x=0.5)
    pool = LabelledSet(sample.posteriors, labels, sample.features, sample.logits)
    indices = np.random.default_rng(seed).integers(0, 700, size=(n_samples, 120))
    # one sample predicted all negative: its positive part is empty (no call for it)
    indices[1] = np.flatnonzero(pool.predictions == 0)[:120]
    stream = np.random.RandomState(stream_seed).get_state()
    return SetupData(shift, "LR", "toy", setting, pool, indices, np.zeros(n_samples),
                     stream_state=stream)  # fmt: skip


class FitCounter:
    def __init__(self, monkeypatch):
        self.calls = 0
        original = shared.fit_domain_weights

        def counted(*args, **kwargs):
            self.calls += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(shared, "fit_domain_weights", counted)


def _evaluate(task, name, setup, mode):
    spec = get_method(task, name, setup.shift)
    records, _ = evaluate_setup(
        task, name, lambda: spec.build(setup.shift, 2), setup, domain_stream=mode
    )
    return records


CONSUMERS = [
    ("calibration", "CPCS"),
    ("calibration", "TransCal"),
    ("quantification", "TransCal_c2q"),
    ("cap", "CPCS_c2a"),
    ("cap", "TransCal_c2a"),
]


@pytest.mark.parametrize("mode", ["reference", "per_sample"])
@pytest.mark.parametrize("shift", ["label", "covariate"])
def test_with_the_artifact_no_domain_classifier_is_fitted_and_records_are_equal(
    tmp_path, monkeypatch, shift, mode
):
    setup = _setup(shift)
    paths = []
    for plan in (SAMPLE, PREDICTED_CLASSES):
        memo, errors = compute_domain_weights(setup, plan, mode)
        assert not errors and memo.entries
        path = tmp_path / f"{plan}.npz"
        write_domain_weights(path, memo, setup, plan, mode)
        paths.append(str(path))
    consumers = CONSUMERS + ([("calibration", "EMQ_TransCal")] if shift == "covariate" else [])
    for task, name in consumers:
        without = _evaluate(task, name, replace(setup), mode)
        counter = FitCounter(monkeypatch)
        [with_artifact] = attach_domain_weights([replace(setup)], paths)
        records = _evaluate(task, name, with_artifact, mode)
        assert counter.calls == 0, (task, name)
        assert all(r["status"] == "ok" for r in records), records
        assert records == without, (task, name)
        monkeypatch.undo()


def test_an_artifact_of_the_other_stream_mode_is_not_used(tmp_path, monkeypatch):
    setup = _setup("label")
    memo, _ = compute_domain_weights(setup, SAMPLE, "reference")
    write_domain_weights(tmp_path / "w.npz", memo, setup, SAMPLE, "reference")
    without = _evaluate("calibration", "CPCS", replace(setup), "per_sample")
    counter = FitCounter(monkeypatch)
    [attached] = attach_domain_weights([replace(setup)], [str(tmp_path / "w.npz")])
    assert _evaluate("calibration", "CPCS", attached, "per_sample") == without
    assert counter.calls == len(setup.sample_indices)  # every call fitted its own classifier


def _literal_weights(train, target, at, rng):
    n_tr, n_t = len(train), len(target)
    if n_tr < n_t:
        train = train[rng.choice(n_tr, n_t, replace=True)]
    elif n_tr > n_t:
        target = target[rng.choice(n_t, n_tr, replace=True)]
    x = np.concatenate([train, target])
    y = np.r_[np.ones(len(train), dtype=int), np.zeros(len(target), dtype=int)]
    proba = LogisticRegression().fit(x, y).predict_proba(at)
    return proba[:, 0] / proba[:, 1]


def test_the_file_holds_a_literal_loop_over_samples_and_prediction_parts(tmp_path):
    setup = _setup("label", n_samples=3)
    setting = setup.setting
    for plan in (SAMPLE, PREDICTED_CLASSES):
        memo, _ = compute_domain_weights(setup, plan, "reference")
        write_domain_weights(tmp_path / "w.npz", memo, setup, plan, "reference")
        meta, read = read_domain_weights(tmp_path / "w.npz")
        assert meta == {"setup_key": setting.key, "plan": plan, "domain_stream": "reference"}
        rng = np.random.RandomState()
        rng.set_state(setup.stream_state)
        expected = []
        val_pred = setting.validation.posteriors[:, 1] > 0.5
        for k in range(3):
            features = setup.pool.features[setup.sample_indices[k]]
            if plan == SAMPLE:
                expected.append(
                    (
                        k,
                        setting.key,
                        _literal_weights(
                            setting.training.features, features, setting.validation.features, rng
                        ),
                    )  # fmt: skip
                )
                continue
            predicted = setup.pool.posteriors[setup.sample_indices[k]][:, 1] > 0.5
            for cls, tag in ((1, "pred=1"), (0, "pred=0")):
                part = predicted == bool(cls)
                if not part.any():
                    continue
                at = setting.validation.features[val_pred == bool(cls)]
                w = _literal_weights(setting.training.features, features[part], at, rng)
                expected.append((k, f"{setting.key}|{tag}", w))
        keys = list(read.entries)
        assert [(key.sample_id, key.setting_key) for key in keys] == [e[:2] for e in expected]
        for key, (_, _, w) in zip(keys, expected):
            np.testing.assert_allclose(read.entries[key].weights[:, 0], w, rtol=1e-12)
            assert read.entries[key].fallback is None
        if plan == PREDICTED_CLASSES:  # sample 1 has no predicted positives: one call only
            assert [key.sample_id for key in keys].count(1) == 1


def test_plans_come_from_the_methods_and_their_inner_methods():
    assert method_domain_weight_plan("calibration", "CPCS", "label") == SAMPLE
    assert method_domain_weight_plan("calibration", "EMQ_TransCal", "covariate") == SAMPLE
    assert method_domain_weight_plan("quantification", "CPCS_c2q", "label") == SAMPLE
    assert method_domain_weight_plan("cap", "TransCal_c2a", "covariate") == PREDICTED_CLASSES
    assert method_domain_weight_plan("calibration", "LasCal", "label") is None
    assert method_domain_weight_plan("cap", "LasCal_c2a", "label") is None
    assert method_domain_weight_plan("calibration", "CPCS", "label", {"weights": "uniform"}) is None
    uniform = {"inner_params": {"weights": "uniform"}}
    assert method_domain_weight_plan("cap", "CPCS_c2a", "label", uniform) is None

    class OwnMethod(CPCS):  # a plugin's calibrator inherits or declares its plan
        pass

    assert domain_weight_plan(CalibrationToQuantification(inner=OwnMethod)) == SAMPLE
    inner = get_method("quantification", "CPCS_c2q").build("label", 2)
    binned = get_method("calibration", "PACC_q2c_5B").factory(inner=inner)
    assert domain_weight_plan(binned) == UNSHARED


def test_a_part_context_sees_the_precomputed_artifacts_but_not_the_rest():
    context = SampleContext("k", 0)
    context.store[MEMO_KEY] = "memo"
    context.store[("other",)] = "scratch"
    child = context.child("pred=1")
    assert child.store == {MEMO_KEY: "memo"} and MEMO_KEY[0] == PRECOMPUTED


@pytest.mark.workflow
def test_only_the_methods_that_share_a_plan_depend_on_its_weights_file(
    finished_test_run, tmp_path, monkeypatch
):
    from tests.workflow.test_workflow_reruns import copy_run, dry_run, planned_jobs

    work = copy_run(finished_test_run, tmp_path / "wf")
    weights = work / "results" / "weights" / "label" / "cmc.3" / "LR"
    files = sorted(p.name for p in weights.iterdir() if not p.name.startswith("."))
    assert files == ["predicted_classes.npz", "sample.npz"]
    # new content in one setup's file (Snakemake compares the content of an updated input), as a
    # job would write it: with its record of what made it (docs/evaluation-jobs.md)
    arrays = dict(np.load(weights / "sample.npz"))
    with open(weights / "sample.npz", "wb") as handle:
        np.savez(handle, **arrays, changed=np.asarray(1))
    record = read_record(weights / "sample.npz")
    with monkeypatch.context() as patch:
        patch.chdir(work)  # a record holds the path relative to the run's folder, as jobs write it
        write_record(record["path"], record["rule"], record["wildcards"], record["inputs"])
    jobs = planned_jobs(dry_run(work))
    assert not any(rule.startswith("domain_weights") for rule, _ in jobs)
    evaluations = {w for rule, w in jobs if rule == "evaluate"}
    expected = {"calibration, method=CPCS", "calibration, method=TransCal",
                "quantification, method=CPCS_c2q", "quantification, method=TransCal_c2q"}  # fmt: skip
    # the run's one job per method over every setup (.test/config.yaml): those methods' jobs re-run
    assert evaluations == {f"shift=label, task={e}" for e in expected}
