"""A reproduction page says at its top when the run's cells cannot be the paper's (docs/reproduction.md)."""

import yaml
from snakemake.utils import validate

from tests.conftest import REPO
from unishift.workflow.config_access import PAPER_PROTOCOL, reproduction_caveat

SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")
PAPER = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())


def with_defaults(config: dict) -> dict:
    """A config as the workflow holds it: validated, the schema's defaults filled in."""
    config = yaml.safe_load(yaml.safe_dump(config))
    validate(config, SCHEMA)
    return config


def test_a_run_of_the_paper_config_gets_no_caveat():
    """The run's config and the paper's protocol (rules/common.smk) both carry the schema's
    defaults: a key that config/paper.yaml leaves to its default (label_shift.benchmark) is the
    paper's. Compared raw, the run's filled-in default once read as a difference."""
    run, paper = with_defaults(PAPER), with_defaults(PAPER)
    assert "benchmark" not in PAPER["label_shift"]  # the case that went wrong
    for shift in PAPER_PROTOCOL:
        assert reproduction_caveat(run, paper, shift) == "", shift
    assert reproduction_caveat(run, PAPER, "label") != ""  # what the workflow compared before
    # the workflow validates the paper config against the schema, as the run's own config
    prepare = (REPO / "src" / "unishift" / "workflow" / "prepare.py").read_text()
    assert "validate(paper_config, schema=str(schema))" in prepare
    assert "validate(config, schema=str(schema))" in prepare
    common = (REPO / "workflow" / "rules" / "common.smk").read_text()
    assert (
        'schema=Path(workflow.current_basedir).parent / "schemas" / "config.schema.yaml"' in common
    )


def test_the_paper_config_gets_no_caveat_and_the_tiny_run_names_what_differs():
    assert reproduction_caveat(PAPER, PAPER, "label") == ""
    tiny = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    caveat = reproduction_caveat({**PAPER, **tiny}, PAPER, "label")
    assert caveat.startswith("**Not comparable with the paper:**")
    assert "label_shift.sample_size 50 (the paper's: 250)" in caveat
    assert "label_shift.n_samples 10 (the paper's: 100)" in caveat


def test_every_protocol_key_that_differs_is_named():
    for shift, keys in PAPER_PROTOCOL.items():
        for key in keys:
            changed = yaml.safe_load(yaml.safe_dump(PAPER))
            section = changed
            *parents, leaf = key.split(".")
            for part in parents:
                section = section.setdefault(part, {})
            section[leaf] = "something else"
            assert f"{key} 'something else'" in reproduction_caveat(changed, PAPER, shift), key
