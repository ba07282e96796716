"""Every adapted column of the paper's tables (methods.md §1.1-1.6) is registered with the right
task, shifts, display name and inner configuration, and runs end to end on a synthetic setting."""

from __future__ import annotations

import numpy as np
import pytest

from unishift.methods.base import LabelledSet, Sample, Setting, as_posteriors, fresh_context
from unishift.registry import all_methods, get_method

BOTH, CS, LS = ("label", "covariate"), ("covariate",), ("label",)

# name -> (task, shifts, inner, inner task, inner parameters that must reach the inner method)
ADAPTED = {
    "PCC_q2c_5B": ("calibration", CS, "PCC", "quantification", {}),
    "PACC_q2c_5B": ("calibration", BOTH, "PACC", "quantification", {}),
    "EMQ_q2c_5B": (
        "calibration",
        BOTH,
        "EMQ",
        "quantification",
        {"train_prevalence": "validation"},
    ),
    "KDEy_q2c_5B": ("calibration", BOTH, "KDEy", "quantification", {}),
    "ATC_a2c_6B": ("calibration", BOTH, "ATC", "cap", {}),
    "DoC_a2c_6B": ("calibration", BOTH, "DoC", "cap", {}),
    "LEAP_a2c_6B": ("calibration", BOTH, "LEAP", "cap", {"quantifier": "KDEy"}),
    "LEAP_PCC_a2c_6B": ("calibration", CS, "LEAP_PCC", "cap", {"quantifier": "PCC"}),
    "ATC_a2q": ("quantification", BOTH, "ATC", "cap", {}),
    "DoC_a2q": ("quantification", BOTH, "DoC", "cap", {}),
    "LEAP_a2q": ("quantification", BOTH, "LEAP", "cap", {"quantifier": "KDEy"}),
    "LEAP_PCC_a2q": ("quantification", CS, "LEAP_PCC", "cap", {"quantifier": "PCC"}),
    "CPCS_c2q": ("quantification", BOTH, "CPCS", "calibration", {"logits": "P"}),
    "TransCal_c2q": ("quantification", BOTH, "TransCal", "calibration", {"logits": "P"}),
    "LasCal_c2q": ("quantification", BOTH, "LasCal", "calibration", {"logits": "P"}),
    "Head2Tail_c2q": ("quantification", LS, "Head2Tail", "calibration", {"logits": "P"}),
    "EMQ_LasCal": ("quantification", LS, "LasCal", "calibration", {"logits": "S"}),
    "PCC_q2a": ("cap", CS, "PCC", "quantification", {}),
    "PACC_q2a": ("cap", BOTH, "PACC", "quantification", {}),
    "EMQ_q2a": ("cap", BOTH, "EMQ", "quantification", {"train_prevalence": "validation"}),
    "EMQ_BCTS_q2a": ("cap", CS, "EMQ_BCTS", "quantification", {}),
    "KDEy_q2a": ("cap", BOTH, "KDEy", "quantification", {}),
    "CPCS_c2a": ("cap", BOTH, "CPCS", "calibration", {"logits": "S"}),
    "TransCal_c2a": ("cap", BOTH, "TransCal", "calibration", {"logits": "S"}),
    "LasCal_c2a": ("cap", BOTH, "LasCal", "calibration", {"logits": "P"}),
    "DMCal_c2a": ("cap", BOTH, "DMCal", "calibration", {"n_bins": 10}),
}


def test_the_adapted_columns_of_each_table_are_registered():
    registered = {
        (task, name) for (task, name), spec in all_methods().items() if spec.group == "adapted"
    }
    expected = {(task, name) for name, (task, *_rest) in ADAPTED.items()}
    assert expected <= registered


@pytest.mark.parametrize("name", sorted(ADAPTED))
def test_adapted_entry_configuration(name):
    task, shifts, inner, _, _ = ADAPTED[name]
    spec = get_method(task, name)
    assert spec.group == "adapted"
    assert spec.shifts == shifts
    assert spec.params(shifts[0])["inner"] == inner
    assert "$" in spec.display


def test_bins_and_doc_protocol_are_parameters():
    assert get_method("calibration", "KDEy_q2c_5B").params("label")["bins"] == 5
    assert get_method("calibration", "KDEy_q2c_5B").params("label")["abscissa"] == "bin_mean"
    assert get_method("calibration", "ATC_a2c_6B").params("label")["bins"] == 6
    for name, task in [("DoC_a2c_6B", "calibration"), ("DoC_a2q", "quantification")]:
        spec = get_method(task, name)
        assert spec.params("label")["inner_params"] == {"protocol": "upp"}
        assert spec.params("covariate")["inner_params"] == {"protocol": "npp"}
    overridden = get_method("calibration", "PACC_q2c_5B").build("label", {"abscissa": "bin_centre"})
    assert overridden.abscissa == "bin_centre"


def _inner_available(name):
    _, _, inner, inner_task, _ = ADAPTED[name]
    return (inner_task, inner) in all_methods()


def _synthetic(seed, n, prevalence, with_logits):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < prevalence).astype(int)
    z = rng.normal(0, 1, n) + 1.5 * (2 * y - 1)
    s = 1 / (1 + np.exp(-z))
    features = rng.normal(size=(n, 4)) + 0.3 * y[:, None]
    logits = np.column_stack([-z / 2, z / 2]) if with_logits else None
    return LabelledSet(as_posteriors(s), y, features=features, logits=logits)


@pytest.fixture(scope="module")
def settings_by_shift():
    return {
        shift: Setting(
            _synthetic(1, 400, 0.5, shift == "covariate"),
            _synthetic(2, 400, 0.5, shift == "covariate"),
            shift,
            key=f"synthetic-{shift}",
            seed=0,
        )
        for shift in ("label", "covariate")
    }


@pytest.mark.parametrize(
    "name, shift", [(name, shift) for name in sorted(ADAPTED) for shift in ADAPTED[name][1]]
)
def test_adapted_entry_runs_end_to_end(name, shift, settings_by_shift):
    if not _inner_available(name):
        pytest.skip(f"inner method {ADAPTED[name][2]!r} is not registered yet")
    task, _, _, _, inner_params = ADAPTED[name]
    setting = settings_by_shift[shift]
    method = get_method(task, name, shift).build(shift).fit(setting)
    inners = method.inner_.values() if isinstance(method.inner_, dict) else [method.inner_]
    for inner in inners:
        for key, value in inner_params.items():
            assert getattr(inner, key) == value
    for sample_id, prevalence in enumerate([0.1, 0.9]):
        test = _synthetic(10 + sample_id, 250, prevalence, shift == "covariate")
        sample = Sample(test.posteriors, test.features, test.logits)
        output = method.apply(sample, fresh_context(setting, sample_id))
        if task == "calibration":
            assert output.shape == (250, 2)
            assert np.all((output >= 0) & (output <= 1))
            assert output.sum(axis=1) == pytest.approx(np.ones(250))
        else:
            assert 0.0 <= float(output) <= 1.0


def test_c2a_methods_share_the_domain_weights_of_each_part(settings_by_shift):
    for inner in ("CPCS", "TransCal"):
        if ("calibration", inner) not in all_methods():
            pytest.skip(f"inner method {inner!r} is not registered yet")
    from unishift.methods.calibration.shared import domain_weights_key

    setting = settings_by_shift["label"]
    test = _synthetic(20, 250, 0.3, False)
    sample = Sample(test.posteriors, test.features)
    context = fresh_context(setting, 0)
    for name in ("CPCS_c2a", "TransCal_c2a"):
        get_method("cap", name).build("label").fit(setting).predict_accuracy(sample, context)
    for cls, tag in ((1, "pred=1"), (0, "pred=0")):
        part_setting = setting.restrict_validation(setting.validation.predictions == cls, tag)
        key = domain_weights_key(part_setting)
        assert context.computations.get(key) == 1, tag
