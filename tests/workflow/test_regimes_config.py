"""The config keys of compound shift, the Selector and the regime maps (docs/regimes.md §5): schema
defaults, refusals before any job, and the defaults the covariate rules fill in."""

import copy

import pytest
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from tests.conftest import REPO
from unishift.lm.config import COVARIATE_DEFAULTS, covariate_options
from unishift.workflow.checks import ConfigError, check_config

SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")


def _validated(path=".test/config.yaml", **changes):
    config = yaml.safe_load((REPO / path).read_text())
    config.update(copy.deepcopy(changes))
    validate(config, schema=SCHEMA)
    return config


def test_the_schema_fills_the_new_keys_with_their_defaults():
    # .test/config.yaml sets regimes.n_bootstrap: the section emptied, the schema fills it
    config = _validated(covariate_shift={"compound": {}}, regimes={})
    assert config["selector"] is True
    assert config["regimes"] == {
        "n_bins": 10, "scheme": "quantile", "n_bins_2d": 4, "n_bootstrap": 1000,
    }  # fmt: skip
    assert config["covariate_shift"]["compound"] == {
        "sample_size": 250,
        "n_samples": 100,
        "mixture": "round",
        "replace": "as_needed",
    }
    # the covariate rules read the same defaults when the section is absent
    assert COVARIATE_DEFAULTS["compound"] == config["covariate_shift"]["compound"]
    assert covariate_options({})["compound"] == config["covariate_shift"]["compound"]


@pytest.mark.parametrize(
    "changes",
    [
        {"covariate_shift": {"compound": {"mixture": "linear"}}},
        {"covariate_shift": {"compound": {"replace": "sometimes"}}},
        {"covariate_shift": {"compound": {"n_samples": 1}}},
        {"covariate_shift": {"compound": {"sample_sizes": 10}}},
        {"selector": "yes"},
        {"regimes": {"n_bins": 0}},
        {"regimes": {"scheme": "log"}},
        {"regimes": {"n_bins_2d": 0}},
        {"shifts": ["label", "mixed"]},
        {"methods": {"compound": {"quantification": ["CC", "CC"]}}},
    ],
)
def test_the_schema_refuses_bad_values_of_the_new_keys(changes):
    with pytest.raises(WorkflowError):
        _validated(**changes)


def test_compound_is_a_shift_with_its_own_method_lists():
    config = _validated(
        shifts=["compound"],
        methods={"compound": {"quantification": ["CC", "PACC"], "cap": ["LEAP"]}},
    )
    check_config(config)  # LEAP runs under covariate shift, so under compound shift too


def test_a_compound_branch_needs_methods_and_label_only_methods_are_refused():
    with pytest.raises(ConfigError, match="methods.compound"):
        check_config(_validated(shifts=["label", "compound"]))
    config = _validated(
        shifts=["compound"], methods={"compound": {"quantification": ["EMQ_LasCal"]}}
    )
    with pytest.raises(ConfigError, match="does not run under compound shift"):
        check_config(config)


def test_the_selector_checks():
    config = _validated()
    check_config(config)
    one = _validated(label_shift={**config["label_shift"], "datasets": ["cmc.3"]})
    with pytest.raises(ConfigError, match="leave one data set out"):
        check_config(one)
    one["selector"] = False
    check_config(one)
    # a configured method may not take the name of the Selector or its references (checked before
    # the method's name, so the message says why)
    methods = copy.deepcopy(config["methods"])
    methods["label"]["cap"] = ["Naive", "Oracle"]
    with pytest.raises(ConfigError, match="cap: 'Oracle' is the name of the selector's column"):
        check_config(_validated(methods=methods))
    one["methods"] = methods  # selector: false: no clash, but no method of that name either
    with pytest.raises(ConfigError, match="methods.label.cap: ") as err:
        check_config(one)
    assert "selector's column" not in str(err.value)
