"""The domain classifier's up-sampling draws: REF's continuing seed stream and the per-sample option.

The oracle is a literal replay: a legacy RandomState put at the state persisted with the samples,
advanced by one ``choice(n_small, n_large)`` per domain-classifier call, calls in sample order
(two per sample in the CAP adaptations, none for an empty prediction partition).
"""

import numpy as np
import pytest

import unishift.methods.domain_weights as shared
from tests.calibration_settings import make_setting
from unishift.data.containers import LabelledSet
from unishift.data.label_shift import label_shift_samples
from unishift.evaluation.evaluate import SetupData, evaluate_setup
from unishift.methods.registry import get_method
from unishift.protocols.sampling import (
    stream_state_arrays,
    stream_state_from_arrays,
    upp_indices,
)


def test_the_persisted_state_is_where_quapys_protocol_leaves_the_global_stream():
    from quapy.data import LabelledCollection
    from quapy.protocol import UPP

    labels = np.array([0] * 30 + [1] * 12)
    indices, state = upp_indices(labels, 25, 7, seed=0, return_state=True)
    # REF: inside the protocol's loop (QuaPy's temp_seed(0) context) a draw continues the stream
    protocol = UPP(LabelledCollection(np.zeros((42, 1)), labels), sample_size=25, repeats=7,
                   random_state=0, return_type="index")  # fmt: skip
    generator = protocol()
    first = next(generator)
    inside = np.random.choice(500, 40)
    generator.close()
    continued = np.random.RandomState()
    continued.set_state(state)
    np.testing.assert_array_equal(continued.choice(500, 40), inside)
    np.testing.assert_array_equal(indices[0], first)
    # round trip through the .npz arrays
    again = np.random.RandomState()
    again.set_state(stream_state_from_arrays(stream_state_arrays(state)))
    np.testing.assert_array_equal(again.choice(500, 40), inside)


def test_label_samples_carry_the_state_and_setups_read_it():
    splits = {"y_test": np.array([0] * 40 + [1] * 20), "prevalence_full": np.array(0.3)}
    samples = label_shift_samples(splits, 10, 5, seed=0)
    _, state = upp_indices(splits["y_test"], 10, 5, seed=0, return_state=True)
    restored = stream_state_from_arrays(samples)
    np.testing.assert_array_equal(restored[1], state[1])
    assert restored[2:] == tuple(state[2:])
    assert stream_state_from_arrays({"indices": samples["indices"]}) is None


class Recorder:
    """Wraps fit_domain_weights; records the generator's state before each up-sampling call."""

    def __init__(self, monkeypatch):
        self.calls = []
        original = shared.fit_domain_weights

        def record(train, target, source, seed):
            assert isinstance(seed, np.random.RandomState)
            self.calls.append((seed.get_state()[1].copy(), seed.get_state()[2], len(target)))
            return original(train, target, source, seed)

        monkeypatch.setattr(shared, "fit_domain_weights", record)


def _setup(n_samples=6, stream_seed=123, seed=3):
    setting, _, draw = make_setting(seed=seed, n_train=400, n_val=300, d=4)
    sample, labels = draw(900, 0.6, shift_x=0.4)
    pool = LabelledSet(sample.posteriors, labels, sample.features, sample.logits)
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, 900, size=(n_samples, 250))
    stream = np.random.RandomState(stream_seed).get_state()
    return SetupData("label", "LR", "toy", setting, pool, indices, np.zeros(n_samples),
                     stream_state=stream)  # fmt: skip


def _replay(setup, sizes):
    """The states a literal loop passes through: one choice(small, large) per call."""
    rng = np.random.RandomState()
    rng.set_state(setup.stream_state)
    n_tr = len(setup.setting.training)
    states = []
    for n_t in sizes:
        states.append((rng.get_state()[1].copy(), rng.get_state()[2]))
        if n_t and n_t != n_tr:
            rng.choice(min(n_t, n_tr), max(n_t, n_tr), replace=True)
    return states


def _evaluate(task, name, setup, **kwargs):
    spec = get_method(task, name, "label")
    return evaluate_setup(task, name, lambda: spec.build("label", 2), setup, **kwargs)[0]


@pytest.mark.parametrize(
    "task, name", [("calibration", "CPCS"), ("quantification", "TransCal_c2q")]
)
def test_one_draw_per_sample_continuing_the_stream(monkeypatch, task, name):
    setup = _setup()
    recorder = Recorder(monkeypatch)
    records = _evaluate(task, name, setup)
    assert all(r["status"] == "ok" for r in records)
    expected = _replay(setup, [250] * len(records))
    assert len(recorder.calls) == len(expected)
    for (key, pos, _), (key_expected, pos_expected) in zip(recorder.calls, expected):
        np.testing.assert_array_equal(key, key_expected)
        assert pos == pos_expected


def test_every_method_job_starts_from_the_persisted_state(monkeypatch):
    setup = _setup(n_samples=3)
    recorder = Recorder(monkeypatch)
    _evaluate("calibration", "CPCS", setup)
    _evaluate("calibration", "TransCal", setup)
    first_cpcs, first_transcal = recorder.calls[0], recorder.calls[3]
    np.testing.assert_array_equal(first_cpcs[0], first_transcal[0])
    assert first_cpcs[1] == first_transcal[1]
    # so both methods up-sample sample k with the same draw, as REF's per-method loops do
    assert [c[1] for c in recorder.calls[:3]] == [c[1] for c in recorder.calls[3:]]


def test_cap_adaptation_draws_per_prediction_part_and_skips_an_empty_part(monkeypatch):
    setup = _setup(n_samples=5)
    # make sample 2 all predicted negative: its positive part is empty
    pool = setup.pool
    negatives = np.flatnonzero(pool.predictions == 0)
    setup.sample_indices[2] = negatives[: setup.sample_indices.shape[1]]
    recorder = Recorder(monkeypatch)
    records = _evaluate("cap", "CPCS_c2a", setup)
    assert all(r["status"] == "ok" for r in records)
    sizes = []
    for k in range(5):
        sample, _ = setup.sample(k)
        positives = int(np.sum(sample.predictions == 1))
        # REF calibrates the predicted positives first, then the negatives; no call for an empty part
        sizes += [n for n in (positives, len(sample) - positives) if n]
    expected = _replay(setup, sizes)
    assert [c[2] for c in recorder.calls] == sizes
    for (key, pos, _), (key_expected, pos_expected) in zip(recorder.calls, expected):
        np.testing.assert_array_equal(key, key_expected)
        assert pos == pos_expected


def test_per_sample_seeds_do_not_depend_on_the_order():
    setup = _setup(n_samples=4)
    spec = get_method("calibration", "CPCS", "label")
    build = lambda: spec.build("label", 2)  # noqa: E731
    full, _ = evaluate_setup("calibration", "CPCS", build, setup, domain_stream="per_sample")
    alone, _ = evaluate_setup(
        "calibration", "CPCS", build, setup, sample_ids=[3], domain_stream="per_sample"
    )
    assert alone[0]["estimate"] == full[3]["estimate"]
    reference, _ = evaluate_setup("calibration", "CPCS", build, setup)
    assert [r["estimate"] for r in reference] != [r["estimate"] for r in full]


def test_a_missing_stream_is_an_error_not_unit_weights():
    setup = _setup(n_samples=2)
    setup.stream_state = None
    records = _evaluate("calibration", "CPCS", setup)
    assert {r["status"] for r in records} == {"error"}
    assert "regenerate the samples" in records[0]["reason"]
    records = _evaluate("calibration", "CPCS", setup, domain_stream="per_sample")
    assert {r["status"] for r in records} == {"ok"}
    with pytest.raises(ValueError, match="domain_stream"):
        _evaluate("calibration", "CPCS", setup, domain_stream="global")


def test_the_mixture_samples_carry_the_state_a_seeded_global_loop_ends_in():
    from unishift.protocols.mixture import mixture_indices, target_counts

    out = mixture_indices(120, 80, sample_size=30, repeats=6, seed=0)
    # REF's covariate-shift generator: seed the global RNG, draw every (source, target) index pair,
    # then yield; draws made while iterating continue the same stream.
    saved = np.random.get_state()
    try:
        np.random.seed(0)
        for m in target_counts(30, 6):
            np.random.choice(120, 30 - m, replace=True)
            np.random.choice(80, m, replace=True)
        inside = np.random.choice(250, 60)
    finally:
        np.random.set_state(saved)
    continued = np.random.RandomState()
    continued.set_state(stream_state_from_arrays(out))
    np.testing.assert_array_equal(continued.choice(250, 60), inside)
