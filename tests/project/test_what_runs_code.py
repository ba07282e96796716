"""The documents say plainly which code a run executes: plugins and entry points run when the
workflow plans, and nothing under a results folder runs (issue 32: no document said that a plugin
entry or an installed entry point runs code)."""

import re

import yaml

from tests.conftest import REPO


def _section(text: str, title: str) -> str:
    match = re.search(rf"^## {title}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"no section {title!r}"
    return " ".join(match.group(1).split())


def test_running_md_says_what_runs_code():
    section = _section((REPO / "docs" / "running.md").read_text(), "What runs code")
    for words in (
        "A plugin is code",
        "`plugins:`",
        "`unishift.methods` entry point",
        "a dry run included",
        "Nothing under a results folder runs code",
        "restricted unpickler",
        "refuses a symbolic link",
    ):
        assert words in section, words


def test_the_plugins_key_says_it_runs_code_where_it_is_documented():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    description = schema["properties"]["plugins"]["description"]
    assert "A plugin is code" in description and "What runs code" in description
    assert description in (REPO / "config" / "README.md").read_text()
