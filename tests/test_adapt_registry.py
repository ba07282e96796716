"""The adapted columns of the paper's tables: each column the paper prints (its transcription in
``report/paper/cells.csv``) is registered under that shift with the paper's display name and group,
and every adapted entry hands its inner parameters to the inner method it builds. That every entry
runs end to end is the contract test's job (tests/test_method_contract.py)."""

from __future__ import annotations

import numpy as np
import pytest

from unishift.methods.adapt import KINDS, adapted_display, adapted_name
from unishift.methods.base import LabelledSet, Sample, Setting, as_posteriors, fresh_context
from unishift.registry import all_methods, get_method
from unishift.report.paper import load_paper

PAPER_COLUMNS = sorted(
    load_paper("cells")[["task", "shift", "method", "display", "group"]]
    .drop_duplicates()
    .itertuples(index=False, name=None)
)
# the adapters (an adapted method of its own, e.g. DMCal, has no inner method)
ADAPTERS = sorted(key for key, spec in all_methods().items() if "inner" in spec.defaults)


@pytest.mark.parametrize("task, shift, name, display, group", PAPER_COLUMNS)
def test_every_paper_column_is_registered_as_printed(task, shift, name, display, group):
    spec = get_method(task, name, shift)
    assert (spec.display, spec.group) == (display, group)


def test_the_paper_has_adapted_columns_of_every_kind():
    names = {name for _, _, name, _, group in PAPER_COLUMNS if group == "adapted"}
    for kind in KINDS:
        assert any(
            name.endswith(KINDS[kind].suffix) if KINDS[kind].suffix else name.startswith("EMQ_")
            for name in names
        ), kind


def test_derived_names_and_displays():
    assert adapted_name("q2c", "KDEy") == "KDEy_q2c_5B"
    assert adapted_name("emq", "LasCal") == "EMQ_LasCal"
    assert (
        adapted_display("a2c", r"LEAP$^{\text{PCC}}$")
        == r"LEAP$_{\alpha 2\zeta}^{\text{PCC}-6\text{B}}$"
    )
    assert adapted_display("c2q", "CPCS") == r"CPCS$_{\zeta 2 \rho}$"
    assert adapted_display("emq", "LasCal") == r"EMQ$^{\text{LasCal}}$"
    assert adapted_display("c2a", r"$\beta$-Cal") == r"$\beta$-Cal$_{\zeta 2 \alpha}$"
    assert adapted_display("q2c", r"$\mathrm{ACC}$") == r"$\mathrm{ACC}_{\rho 2\zeta}^{5\text{B}}$"


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


@pytest.mark.parametrize("task, name", ADAPTERS)
def test_adapted_entries_hand_their_inner_parameters_to_the_inner_method(
    task, name, settings_by_shift
):
    spec = get_method(task, name)
    for shift in spec.shifts:
        params = spec.params(shift)
        method = spec.build(shift).fit(settings_by_shift[shift])
        inners = method.inner_.values() if isinstance(method.inner_, dict) else [method.inner_]
        for inner in inners:
            assert inner.name == params["inner"]
            for key, value in (params.get("inner_params") or {}).items():
                assert getattr(inner, key) == value


def test_c2a_methods_share_the_domain_weights_of_each_part(settings_by_shift):
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
