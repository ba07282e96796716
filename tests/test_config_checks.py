"""Bad configs are rejected before any job, naming the file or key and the fix: unit checks of the
parse-time checks, then the same cases through ``snakemake -n`` on a copy of the workflow."""

from __future__ import annotations

import copy
import re

import pytest
import yaml
from snakemake.utils import validate

from tests.conftest import REPO
from unishift.workflow_checks import ConfigError, check_config, load_config_file, main

BASE = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
# check_config runs on the validated config, whose defaults the schema fills in (as common.smk does)
validate(BASE, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))


def config_with(**changes):
    config = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        node = config
        *parents, last = dotted.split("__")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return config


def test_the_test_config_passes():
    check_config(config_with())


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"shifts": []}, "shifts is empty: the run would produce no table"),
        (
            {"methods": {"label": {"calibration": []}}},
            "methods.label names no method, so that branch would produce no result table",
        ),
        (
            {"shifts": ["label", "covariate"]},
            "shifts lists 'covariate' but methods.covariate names no method",
        ),
        ({"data_root": "no/such/folder"}, "data_root: 'no/such/folder' is not a folder"),
        (
            {"label_shift__sample_size": 500},
            "label_shift.sample_size: .*cmc.3: sample_size=500 is larger than the test pool "
            r"\(442 items\).*allow_sample_larger_than_pool",
        ),
        (
            {"method_params": {"calibration/DMCal": {"n_binz": 10}}},
            r"method_params.'calibration/DMCal': 'n_binz' is not a parameter of calibration method "
            r"DMCal; its parameters are \['monotone', 'n_bins', 'smooth'\]",
        ),
        (
            {"method_params": {"calibration/DMCal": {"monotone": "isotonic"}}},
            r"method_params.'calibration/DMCal' \(under label shift\): monotone='isotonic'",
        ),
        (
            {"method_params": {"calibrate/DMCal": {}}},
            r"method_params.'calibrate/DMCal': keys read '<task>/<method>'",
        ),
        (
            {"methods": {"label": {"cap": ["Naive", "LEAP_PCC"]}}},
            "does not run under label shift",
        ),
    ],
)
def test_bad_configs_name_the_key_and_the_fix(changes, message):
    with pytest.raises(ConfigError, match=message):
        check_config(config_with(**changes))


def test_a_larger_sample_is_accepted_when_asked_for():
    check_config(
        config_with(label_shift__sample_size=500, label_shift__allow_sample_larger_than_pool=True)
    )


def test_yaml_errors_name_the_file_and_the_line(tmp_path, capsys):
    broken = tmp_path / "broken.yaml"
    broken.write_text("seed: 0\nlabel_shift:\n  datasets: [cmc.3\n  n_samples: 3\n")
    with pytest.raises(ConfigError, match=rf"{broken}, line 4, column \d+: not valid YAML"):
        load_config_file(broken)
    twice = tmp_path / "twice.yaml"
    twice.write_text("seed: 0\nalpha: 0.05\nseed: 1\n")
    with pytest.raises(ConfigError, match=rf"{twice}, line 3, column 1: key 'seed' appears twice"):
        load_config_file(twice)
    assert main([str(broken)]) == 1 and "line 4" in capsys.readouterr().err
    assert main([str(REPO / "config" / "config.yaml")]) == 0
    for name in ("config/config.yaml", "config/paper.yaml", "config/sentences.yaml"):
        load_config_file(REPO / name)


# ------------------------------------------------------------------------------------------------
# the same through snakemake, on a copy of the workflow: rejected while planning, before any job

DUPLICATE = "seed: 0\nshifts: [label]\nseed: 1\n"


@pytest.mark.workflow
@pytest.mark.parametrize(
    "changes, message",
    [
        ({"label_shift__n_samples": 1}, r"1 is less than the minimum of 2[\s\S]*n_samples"),
        ({"label_shift__sample_size": 500}, "larger than the test pool"),
        ({"methods": {"label": {}}}, "would produce no result table"),
        ({"data_root": "missing/folder"}, "data_root: 'missing/folder' is not a folder"),
        (
            {"method_params": {"quantification/KDEy": {"bandwith": 0.2}}},
            "'bandwith' is not a parameter of quantification method KDEy",
        ),
        (DUPLICATE, r"bad.yaml, line 3, column 1: key 'seed' appears twice"),
    ],
)
def test_snakemake_rejects_bad_configs_before_any_job(tmp_path, changes, message):
    from tests.test_workflow import copy_workflow, snakemake

    work = copy_workflow(tmp_path / "wf")
    text = changes if isinstance(changes, str) else yaml.safe_dump(config_with(**changes))
    (work / "bad.yaml").write_text(text)
    result = snakemake("-n", "--configfile", "bad.yaml", cwd=work, check=False)
    assert result.returncode != 0
    assert re.search(message, result.stdout + result.stderr), result.stdout + result.stderr
    assert not (work / "results").exists()


@pytest.mark.workflow
def test_a_yaml_error_in_the_embedded_config_names_its_line(tmp_path):
    from tests.test_workflow import copy_workflow, snakemake

    work = copy_workflow(tmp_path / "wf")
    path = work / "config" / "config.yaml"
    path.write_text(
        path.read_text().replace("shifts: [label, covariate]", "shifts: [label, covariate")
    )
    result = snakemake("-n", cwd=work, check=False)
    assert result.returncode != 0
    assert re.search(
        r"config/config.yaml, line \d+, column \d+: not valid YAML", result.stdout + result.stderr
    )
