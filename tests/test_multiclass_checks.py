"""Bad input to the multiclass branch fails before any job, naming the problem and the fix: a
binary-only method (with the reason it has no multiclass form), a data set with fewer than three
classes of the minimum support, a two-class text source, and posteriors whose columns do not match
the data set's classes. A classifier that would not output one column per class fails in its own job,
before any evaluation."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml
from unishift.multiclass.catalogue import BINARY_ONLY
from unishift.multiclass.checks import (
    check_multiclass_config,
    check_multiclass_intermediates,
    posterior_column_problems,
    regime_of,
)

from tests.conftest import REPO
from unishift.data.label_shift import prepare_splits, train_and_predict
from unishift.io import write_npz
from unishift.workflow_checks import ConfigError, DamagedIntermediatesError

BASE = yaml.safe_load((REPO / ".test" / "multiclass.yaml").read_text())


@pytest.fixture
def config(tmp_path):
    config = copy.deepcopy(BASE)
    config["quapy_home"] = str(tmp_path / "quapy")
    return config


def test_the_tiny_and_the_embedded_multiclass_configs_pass(config):
    check_multiclass_config(config)
    embedded = yaml.safe_load((REPO / "config" / "multiclass.yaml").read_text())
    embedded["quapy_home"] = config["quapy_home"]
    check_multiclass_config(embedded)
    assert regime_of(embedded) == "multiclass" and regime_of({}) == "binary"


@pytest.mark.parametrize("name", ["Platt", "LEAP_PCC_a2c_6B", "PACC_q2c_5B", "ATC_a2c_6B"])
def test_a_binary_only_method_is_rejected_with_its_reason(config, name):
    config["methods"]["label"]["calibration"].append(name)
    with pytest.raises(ConfigError) as err:
        check_multiclass_config(config)
    assert "methods.label.calibration" in str(err.value)
    assert f"{name!r} is binary-only in unishift: {BINARY_ONLY[name]}" in str(err.value)


def test_a_method_of_the_other_shift_and_an_unknown_name_are_rejected(config):
    config["methods"]["label"]["calibration"].append("PCC_q2c_3B")  # covariate shift only
    with pytest.raises(ConfigError, match="'PCC_q2c_3B' is meant for covariate shift only"):
        check_multiclass_config(config)
    config["methods"]["label"]["calibration"][-1] = "Platypus"
    with pytest.raises(ConfigError, match="unknown multiclass calibration method 'Platypus'"):
        check_multiclass_config(config)


def test_a_data_set_with_too_few_supported_classes_is_rejected(config):
    # cmc's classes have 629, 333 and 511 items: at 400 only two survive
    config["label_shift"]["min_class_support"] = 400
    with pytest.raises(ConfigError) as err:
        check_multiclass_config(config)
    message = str(err.value)
    assert "cmc: only 2 classes have at least min_class_support=400" in message
    assert "[629, 333, 511]" in message and "Lower" in message


def test_unknown_data_set_and_two_class_text_are_rejected(config):
    bad = copy.deepcopy(config)
    bad["label_shift"]["datasets"] = ["cmc.3"]
    with pytest.raises(ConfigError, match="unknown uci_multiclass data set 'cmc.3'"):
        check_multiclass_config(bad)
    config["covariate_shift"]["text_source"] = "hf"
    with pytest.raises(ConfigError, match="the tweets' three classes"):
        check_multiclass_config(config)


def test_posteriors_without_one_column_per_class_are_refused_before_planning(tmp_path):
    results = tmp_path / "results"
    write_npz(results / "data/label/cmc/split.npz", n_classes=np.array(3))
    good = {key: np.full((4, 3), 1 / 3) for key in ("P_h", "P_val", "P_test")}
    write_npz(results / "posteriors/label/cmc/LR.npz", **good)
    assert posterior_column_problems(results) == []
    check_multiclass_intermediates(results)
    write_npz(results / "posteriors/label/cmc/kNN.npz", **{**good, "P_test": np.full((4, 2), 0.5)})
    problems = posterior_column_problems(results)
    assert [p for p, _ in problems] == [str(results / "posteriors/label/cmc/kNN.npz")]
    assert "'P_test': (4, 2)" in problems[0][1] and "3 classes" in problems[0][1]
    with pytest.raises(DamagedIntermediatesError, match="no job was started"):
        check_multiclass_intermediates(results)


def test_a_classifier_that_misses_a_class_fails_in_its_job(tmp_path):
    splits, _ = prepare_splits("cmc", tmp_path, collection="uci_multiclass")
    keep = splits["y_h"] != 2  # class 2 absent from the training half: 2 output columns, not 3
    broken = dict(splits, X_h=splits["X_h"][keep], y_h=splits["y_h"][keep])
    with pytest.raises(ValueError, match="would not output 3 posterior columns"):
        train_and_predict(broken, "LR", seed=0)
