"""A reproduction page says at its top when the run's cells cannot be the paper's (docs/reproduction.md)."""

import yaml

from tests.conftest import REPO
from unishift.plan import PAPER_PROTOCOL, reproduction_caveat

PAPER = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())


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
