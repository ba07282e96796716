"""The results folder's layout is spelled once (unishift.results_layout): the rules, the API, the
workflow's checks and the run summary take their paths from it."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO
from unishift.results_layout import LAYOUT, TOP_FOLDERS, fields_of, folder_of, results_path


def test_a_path_fills_the_fields_given_and_keeps_the_others_as_wildcards():
    assert results_path("results", "records") == "results/eval/{shift}/{task}/{method}.csv"
    # a value is placed by field name, not by position (shift and task swapped would still parse)
    assert (
        results_path("out", "records", task="cap", method="ATC", shift="label")
        == "out/eval/label/cap/ATC.csv"
    )
    assert results_path("r", "records", shift="label") == "r/eval/label/{task}/{method}.csv"
    # a field renamed to another rule's wildcard (the text domain of a pair's target)
    assert results_path("r", "text_split", domain="{target}", split="test") == (
        "r/text/{target}/test.parquet"
    )


def test_a_misspelt_field_or_entry_is_an_error_not_a_wildcard():
    with pytest.raises(ValueError, match=r"records .* has no field \['methods'\]"):
        results_path("r", "records", methods="ATC")
    with pytest.raises(KeyError, match="'record' is no entry"):
        results_path("r", "record")


def test_folders_stop_at_the_first_field_not_given():
    assert folder_of("r", "records", shift="label", task="cap") == "r/eval/label/cap"
    assert folder_of("r", "posteriors") == "r/posteriors/label"
    assert folder_of("r", "label_samples", dataset="yeast") == "r/samples/label"
    assert "eval" in TOP_FOLDERS and "logs" not in TOP_FOLDERS


def test_every_entry_names_its_fields_once():
    for entry in LAYOUT:
        assert len(set(fields_of(entry))) == len(fields_of(entry)), entry


def test_the_rules_spell_no_results_path_but_logs_and_benchmarks():
    # a path written out in a rule file would be a second spelling of the layout; logs and
    # benchmarks are the rules' own bookkeeping
    spelled = []
    for path in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for line_number, line in enumerate(path.read_text().splitlines(), 1):
            for found in re.findall(r'\{RESULTS\}/([^"]*)"', line):
                if not found.startswith(("logs/", "benchmarks/")):
                    spelled.append(f"{path.name}:{line_number}: {found}")
    assert spelled == []


def test_the_checker_of_spelled_paths_finds_one():
    line = 'records=f"{RESULTS}/eval/{{shift}}/{{task}}/{{method}}.csv",'
    assert re.findall(r'\{RESULTS\}/([^"]*)"', line) == ["eval/{{shift}}/{{task}}/{{method}}.csv"]
