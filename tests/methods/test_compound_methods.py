"""Compound shift's methods and parameters (docs/regimes.md §5.2.1): every method that runs under
covariate shift runs under compound shift, with its covariate parameters unless it states compound
ones, resolved in one place (MethodSpec) for classes, adaptations and plugins alike."""

import numpy as np
import pytest

from unishift.methods.base import SHIFTS, Quantifier
from unishift.methods.registry import all_methods, get_method, method_names
from unishift.methods.spec import MethodSpec, shift_chain, with_derived_shifts
from unishift.workflow.checks import check_config_files

TASKS = ("calibration", "quantification", "cap")


class _Toy(Quantifier):
    """Not registered (defined here): a constructor with four parameters to tell the levels apart."""

    name = "Toy"
    shifts = ("covariate",)
    shift_defaults = {"covariate": {"a": "cov", "b": "cov"}, "compound": {"b": "comp"}}
    binary_defaults = {"covariate": {"c": "cov2", "d": "cov2"}, "compound": {"d": "comp2"}}

    def __init__(self, a="init", b="init", c="init", d="init"):
        self.a, self.b, self.c, self.d = a, b, c, d

    def fit(self, setting):
        return self

    def quantify(self, sample, context):
        return np.full(sample.n_classes, 1 / sample.n_classes)


def test_shift_chain_and_derived_shifts():
    assert "compound" in SHIFTS
    assert shift_chain("compound") == ("covariate", "compound")
    assert shift_chain("label") == ("label",) and shift_chain("covariate") == ("covariate",)
    assert with_derived_shifts(("covariate",)) == ("covariate", "compound")
    assert with_derived_shifts(("label",)) == ("label",)
    assert with_derived_shifts(("label", "covariate")) == ("label", "covariate", "compound")


def test_compound_parameters_are_the_covariate_ones_then_the_compound_ones():
    spec = MethodSpec.of(_Toy)
    assert spec.shifts == ("covariate", "compound")
    # any k: covariate's a and b, then compound's b; the binary-table levels do not apply
    assert spec.params("compound", 3) == {"a": "cov", "b": "comp", "c": "init", "d": "init"}
    # two classes: covariate, covariate binary, compound, compound binary, in that order
    assert spec.params("compound", 2) == {"a": "cov", "b": "comp", "c": "cov2", "d": "comp2"}
    # covariate shift itself never sees the compound statements
    assert spec.params("covariate", 2) == {"a": "cov", "b": "cov", "c": "cov2", "d": "cov2"}
    # the config's overrides come last
    assert spec.params("compound", 2, {"b": "user"})["b"] == "user"
    assert spec.build("compound", 2).d == "comp2"


def test_a_label_only_method_does_not_run_under_compound_shift():
    spec = get_method("quantification", "EMQ_LasCal")
    assert "covariate" not in spec.shifts and "compound" not in spec.shifts
    with pytest.raises(KeyError, match="does not run under compound shift"):
        get_method("quantification", "EMQ_LasCal", "compound")


@pytest.mark.parametrize("task", TASKS)
def test_every_covariate_method_runs_under_compound_with_its_covariate_parameters(task):
    assert method_names(task, "compound") == method_names(task, "covariate")
    for name in method_names(task, "covariate"):
        spec = get_method(task, name, "compound")
        for k in (2, 3):
            assert spec.params("compound", k) == spec.params("covariate", k), (name, k)


def test_adaptations_and_their_inner_methods_follow_the_same_rule():
    specs = [s for s in all_methods().values() if s.inner is not None and "covariate" in s.shifts]
    assert specs, "the registry has adaptations running under covariate shift"
    for spec in specs:
        assert "compound" in spec.shifts, spec.name
    # an adapter built under compound shift builds its inner method as under covariate shift
    # (TransCal's covariate logits L for two classes, unless the adaptation's row says otherwise)
    inner = get_method("calibration", "TransCal")
    assert inner.params("compound", 2)["logits"] == "L" == inner.params("covariate", 2)["logits"]
    spec = get_method("quantification", "TransCal_c2q", "compound")
    for k in (2, 3):
        built = {s: vars(spec.build(s, k).inner) for s in ("covariate", "compound")}
        assert built["compound"] == built["covariate"], k


@pytest.mark.parametrize(
    "path",
    [
        "config/config.yaml",
        "config/multiclass.yaml",
        ".test/multiclass.yaml",
        "config/field.yaml",
        "config/field_multiclass.yaml",
    ],
)
def test_the_configs_run_every_covariate_method_under_compound_shift(path):
    import yaml

    from tests.conftest import REPO

    check_config_files([REPO / path])
    config = yaml.safe_load((REPO / path).read_text())
    assert "compound" in config["shifts"]
    assert config["methods"]["compound"] == config["methods"]["covariate"]
