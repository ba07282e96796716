"""config/README.md documents every key of the config schema: its key reference is the block
``python -m unishift.workflow.config_docs --write`` generates from workflow/schemas/config.schema.yaml, and
every key the schema defines is named there."""

from __future__ import annotations

import copy

import pytest
import yaml

from tests.conftest import REPO
from unishift.workflow import config_docs

SCHEMA_PATH = REPO / "workflow" / "schemas" / "config.schema.yaml"
README_PATH = REPO / "config" / "README.md"
FIX = "run: python -m unishift.workflow.config_docs --write"


@pytest.fixture(scope="module")
def schema():
    return yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def readme():
    return README_PATH.read_text(encoding="utf-8")


def defined_keys(schema: dict) -> list[str]:
    """Every key the schema names, dotted, written out independently of the generator: the
    ``properties`` of each object, through local ``$ref``s."""

    def resolve(node):
        while "$ref" in node:
            target = schema
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return node

    keys, pending = [], [("", schema)]
    while pending:
        prefix, node = pending.pop()
        for name, child in (resolve(node).get("properties") or {}).items():
            keys.append(prefix + name)
            pending.append((f"{prefix}{name}.", child))
    return keys


def test_every_schema_key_is_named_in_the_config_readme(schema, readme):
    keys = defined_keys(schema)
    assert len(keys) > 60  # the walk reaches the nested sections (covariate_shift.lm.*, ...)
    missing = [key for key in keys if f"`{key}`" not in readme]
    assert not missing, f"config/README.md does not name {missing}; {FIX}"


def test_the_generated_key_reference_is_fresh(schema, readme):
    assert config_docs.block_in(readme) == config_docs.generated_block(schema), (
        f"the key reference of config/README.md is stale; {FIX}"
    )


def test_a_key_added_to_the_schema_makes_the_reference_stale(schema, readme):
    grown = copy.deepcopy(schema)
    grown["properties"]["label_shift"]["properties"]["new_key"] = {
        "type": "integer",
        "default": 3,
        "description": "a key nobody documented",
    }
    block = config_docs.generated_block(grown)
    assert block != config_docs.block_in(readme)
    assert "| `label_shift.new_key` | integer | `3` | a key nobody documented |" in block
    assert "label_shift.new_key" in defined_keys(grown)


def test_rows_give_type_enum_default_and_description(schema):
    rows = {
        key: (kind, default, text) for key, kind, default, text in config_docs.schema_rows(schema)
    }
    assert rows["ece"][:2] == ("one of `top_label`, `positive_class`, `classwise`", "top_label")
    assert rows["label_shift.n_samples"][:2] == ("integer (≥ 2, ≤ 100000)", "100")
    assert rows["shifts"][1] == "[label]"
    assert rows["covariate_shift.mixture.counts"][2].startswith("round: round(linspace")
    # a $ref is followed: the hub entry's fields under each hf data set and model
    assert rows["covariate_shift.hf.datasets.rt.revision"][1] == "null"
    assert "covariate_shift.models.<key>.id" in rows
    # keys of every section, in schema order
    assert list(rows).index("label_shift") < list(rows).index("label_shift.benchmark")


def test_a_description_cut_by_a_yaml_flow_mapping_is_refused():
    cut = yaml.safe_load("properties: {a: {type: integer, description: one, two}}")
    with pytest.raises(ValueError, match="'two'.*cut at its first"):
        config_docs.schema_rows(cut)


def test_the_block_markers_are_required():
    with pytest.raises(ValueError, match="no generated block"):
        config_docs.block_in("# Configuration\n\nno markers here\n")


def test_the_command_line_check_and_write(tmp_path, schema, readme):
    copied = tmp_path / "README.md"
    copied.write_text(readme.replace("| `seed` |", "| `seed_typo` |"), encoding="utf-8")
    assert config_docs.main(["--readme", str(copied), "--check"]) == 1
    assert config_docs.main(["--readme", str(copied), "--write"]) == 0
    assert copied.read_text(encoding="utf-8") == readme
    assert config_docs.main(["--readme", str(copied), "--check"]) == 0
