"""The code is formatted as docs/developing.md asks: `ruff format` and `ruff check` for Python,
`snakefmt` for the Snakefile and the rule files (a rule's docstring after another keyword once kept
snakefmt from parsing workflow/rules/evaluate.smk at all)."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

BIN = Path(sys.executable).parent


def _run(tool, *arguments):
    executable = BIN / tool
    if not executable.is_file():
        pytest.skip(f"{tool} is not installed beside this Python (requirements.lock installs it)")
    return subprocess.run([str(executable), *arguments], cwd=REPO, capture_output=True, text=True)


def test_the_rule_files_are_formatted_with_snakefmt():
    result = _run("snakefmt", "--check", "workflow/rules", "Snakefile")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_python_code_is_formatted_and_checked_with_ruff():
    folders = ("src", "tests", "workflow/scripts", "benchmarks", "tools")
    formatted = _run("ruff", "format", "--check", *folders)
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr
    checked = _run("ruff", "check", *folders)
    assert checked.returncode == 0, checked.stdout + checked.stderr
