"""config/field.yaml and config/field_multiclass.yaml (docs/methods.md §6.4): valid, their results
apart from the default's, every paper column of the embedded default's tables kept, and every field
method of the registry in every table whose data it can run on (the binary-only ones only in the
two-class config)."""

from __future__ import annotations

import pytest
import yaml
from snakemake.utils import validate

from tests.conftest import REPO
from unishift.methods.registry import all_methods
from unishift.workflow.checks import check_config
from unishift.workflow.config_access import results_folder

CONFIGS = {
    "config/field.yaml": ("config/config.yaml", "results/field", 2),
    "config/field_multiclass.yaml": ("config/multiclass.yaml", "results/field_multiclass", 3),
}


def _field_methods(task: str, shift: str, k: int) -> set[str]:
    return {
        spec.name
        for (t, _), spec in all_methods().items()
        if t == task
        and spec.group == "field"
        and spec.inner is None
        and shift in spec.shifts
        and (k == 2 or not spec.binary_only)
    }


@pytest.mark.parametrize("path", sorted(CONFIGS))
def test_the_field_configs_run_the_papers_and_the_fields_methods(path, tmp_path):
    base_path, results, k = CONFIGS[path]
    config = yaml.safe_load((REPO / path).read_text())
    base = yaml.safe_load((REPO / base_path).read_text())
    validate(config, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    config["quapy_home"] = str(tmp_path / "quapy")
    check_config(config)
    assert results_folder(config) == results
    assert config["shifts"] == ["label", "covariate", "compound"]
    for shift, tasks in config["methods"].items():
        for task, names in tasks.items():
            paper = base["methods"][shift][task]
            assert names[: len(paper)] == paper, (shift, task)
            assert set(names[len(paper) :]) == _field_methods(task, shift, k), (shift, task)
