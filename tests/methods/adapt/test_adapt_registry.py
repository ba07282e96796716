"""The adapted columns of the paper's tables: each column the paper prints (its transcription in
``report/paper/cells.csv``) is registered under that shift with the paper's display name and group,
and every adapted entry hands its inner parameters to the inner method it builds. That every entry
runs end to end is the contract test's job (tests/methods/test_method_contract.py)."""

from __future__ import annotations

import numpy as np
import pytest

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.adapt.table import KINDS, adapted_display, adapted_name
from unishift.methods.base import fresh_context
from unishift.methods.registry import all_methods, get_method
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


def test_the_paper_has_adapted_columns_of_every_two_class_kind():
    # the k-class binnings (top-label cells) have no column in the paper's binary tables
    names = {name for _, _, name, _, group in PAPER_COLUMNS if group == "adapted"}
    for kind in (k for k in KINDS if not k.endswith("_3B")):
        assert any(
            name.endswith(KINDS[kind].suffix) if KINDS[kind].suffix else name.startswith("EMQ_")
            for name in names
        ), kind


def test_derived_names_and_displays():
    assert adapted_name("q2c_5B", "KDEy") == "KDEy_q2c_5B"
    assert adapted_name("q2c_3B", "KDEy") == "KDEy_q2c_3B"
    assert adapted_name("emq", "LasCal") == "EMQ_LasCal"
    assert adapted_name("emq", "BCTS") == "EMQ_BCTS_c"  # not the quantifier EMQ_BCTS
    assert (
        adapted_display("a2c_6B", r"LEAP$^{\text{PCC}}$")
        == r"LEAP$_{\alpha 2\zeta}^{\text{PCC}-6\text{B}}$"
    )
    assert adapted_display("a2c_3B", "ATC") == r"ATC$_{\alpha 2\zeta}^{3\text{B}}$"
    assert adapted_display("c2q", "CPCS") == r"CPCS$_{\zeta 2 \rho}$"
    assert adapted_display("emq", "LasCal") == r"EMQ$^{\text{LasCal}}$"
    assert adapted_display("c2a", r"$\beta$-Cal") == r"$\beta$-Cal$_{\zeta 2 \alpha}$"
    assert (
        adapted_display("q2c_5B", r"$\mathrm{ACC}$") == r"$\mathrm{ACC}_{\rho 2\zeta}^{5\text{B}}$"
    )
    assert get_method("quantification", "EMQ_BCTS_c").display == r"EMQ$^{\text{BCTS}}_{\zeta}$"


def test_bins_and_doc_protocol_are_parameters():
    assert get_method("calibration", "KDEy_q2c_5B").params("label", 2)["bins"] == 5
    assert get_method("calibration", "KDEy_q2c_5B").params("label", 2)["abscissa"] == "bin_mean"
    assert get_method("calibration", "ATC_a2c_6B").params("label", 2)["bins"] == 6
    assert get_method("calibration", "KDEy_q2c_3B").params("label", 3)["bins"] == 3
    # DoC inside an adapter draws its validation samples as the DoC column: its own per-shift rule
    for name, task in [("DoC_a2c_6B", "calibration"), ("DoC_a2q", "quantification")]:
        spec = get_method(task, name)
        assert spec.build("label", 2).inner.protocol == "upp"
        assert spec.build("covariate", 2).inner.protocol == "npp"
    overridden = get_method("calibration", "PACC_q2c_5B").build(
        "label", 2, {"abscissa": "bin_centre"}
    )
    assert overridden.abscissa == "bin_centre"


def _synthetic(seed, n, prevalence, with_logits, k=2):
    rng = np.random.default_rng(seed)
    if k == 2:
        y = (rng.random(n) < prevalence).astype(int)
        z = rng.normal(0, 1, n) + 1.5 * (2 * y - 1)
        logits = np.column_stack([-z / 2, z / 2])
    else:
        y = rng.integers(0, k, n)
        logits = rng.normal(0, 1, (n, k)) + 2.0 * np.eye(k)[y]
    posteriors = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    features = rng.normal(size=(n, 4)) + 0.3 * y[:, None]
    return LabelledSet(posteriors, y, features=features, logits=logits if with_logits else None)


@pytest.fixture(scope="module")
def settings_by_shift():
    return {
        (shift, k): Setting(
            _synthetic(1, 400, 0.5, shift != "label", k),
            _synthetic(2, 400, 0.5, shift != "label", k),
            shift,
            key=f"synthetic-{shift}-{k}",
            seed=0,
        )
        for shift in ("label", "covariate", "compound")
        for k in (2, 3)
    }


@pytest.mark.parametrize("task, name", ADAPTERS)
def test_adapted_entries_hand_their_inner_parameters_to_the_inner_method(
    task, name, settings_by_shift
):
    """The inner method is the registered one with its own parameters for the same shift and
    number of classes, then the adaptation's ``inner_params``."""
    spec = get_method(task, name)
    for shift in spec.shifts:
        for k in (2, 3) if not spec.binary_only else (2,):
            params = spec.params(shift, k)
            expected = spec.inner.params(shift, k, params.get("inner_params"))
            method = spec.build(shift, k).fit(settings_by_shift[shift, k])
            inners = method.inner_.values() if isinstance(method.inner_, dict) else [method.inner_]
            for inner in inners:
                assert inner.name == params["inner"] == spec.inner.name
                for key, value in expected.items():
                    assert getattr(inner, key) == value, (shift, k, key)


def test_the_paper_and_the_k_class_tables_differ_where_the_catalogues_did():
    c2q = get_method("quantification", "LasCal_c2q")
    assert c2q.build("label", 2).inner.logits == "P"
    assert c2q.build("label", 3).inner.logits == "S"
    assert c2q.build("covariate", 3).inner.logits == "S"  # not LasCal's own L
    h2t = get_method("quantification", "Head2Tail_c2q").build("label", 2).inner
    assert (h2t.logits, h2t.head) == ("P", "index")
    h2t = get_method("quantification", "Head2Tail_c2q").build("label", 4).inner
    assert (h2t.logits, h2t.head) == ("S", "frequency")
    dmcal = get_method("cap", "DMCal_c2a")
    assert (dmcal.build("label", 2).inner.cells, dmcal.build("label", 2).inner.n_bins) == (
        "positive_class",
        10,
    )
    assert dmcal.build("label", 3).inner.cells == "top_label"


def test_c2a_methods_share_the_domain_weights_of_each_part(settings_by_shift):
    from unishift.methods.domain_weights import domain_weights_key

    setting = settings_by_shift["label", 2]
    test = _synthetic(20, 250, 0.3, False)
    sample = Sample(test.posteriors, test.features)
    context = fresh_context(setting, 0)
    for name in ("CPCS_c2a", "TransCal_c2a"):
        get_method("cap", name).build("label", 2).fit(setting).predict_accuracy(sample, context)
    for cls, tag in ((1, "pred=1"), (0, "pred=0")):
        part_setting = setting.restrict_validation(setting.validation.predictions == cls, tag)
        key = domain_weights_key(part_setting)
        assert context.computations.get(key) == 1, tag
