"""Nothing outside ``tests/`` imports from ``tests/``: the library, the workflow, the tools, the
benchmarks, the examples and CI stand on their own (what a tool needs from the tests' helpers
belongs in the library, e.g. :mod:`unishift.report.paper_cells`).

Every Python and Snakemake file of the repository outside ``tests/`` is read as text, so that an
import inside a function, a ``python -c`` string or a rule's ``run:`` block counts too.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

# `import tests`, `import tests.x`, `from tests import x`, `from tests.x import y`, anywhere in a line
IMPORT_OF_TESTS = re.compile(r"(?<![\w.])(?:from\s+tests(?:\.\w+)*\s+import\b|import\s+tests\b)")
SKIPPED = {".git", ".venv", "tests", "results", ".snakemake", "__pycache__", "build"}


def source_files(root: Path = REPO) -> list[Path]:
    files = []
    for folder, subfolders, names in os.walk(root):
        # prune in place: a virtual environment or a results folder is never entered
        subfolders[:] = [d for d in subfolders if d not in SKIPPED and not d.endswith(".egg-info")]
        for name in names:
            if name.endswith((".py", ".smk")) or name in ("Snakefile", "run", "lock"):
                files.append(Path(folder) / name)
    return sorted(files)


def imports_of_tests(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if IMPORT_OF_TESTS.search(line)]


def test_no_file_outside_tests_imports_from_tests():
    found = [
        f"{path.relative_to(REPO)}: {line}"
        for path in source_files()
        for line in imports_of_tests(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not found, "outside tests/, move what these need into the library:\n" + "\n".join(found)


def test_the_scan_reads_the_tools_and_the_workflow():
    names = {str(p.relative_to(REPO)) for p in source_files()}
    assert {"tools/perturbation_check.py", "Snakefile", ".ci/run"} <= names
    assert not any(name.startswith("tests/") for name in names)


@pytest.mark.parametrize(
    "line",
    [
        "from tests.paper_cells import cell_value",
        "    from tests.regression_cases import run  # noqa",
        "import tests.conftest",
        '"import sys; from tests.regression_cases import setup_arrays; "',
        "from tests import conftest",
    ],
)
def test_an_import_of_tests_is_found(line):
    assert imports_of_tests(line) == [line.strip()]


@pytest.mark.parametrize(
    "line",
    [
        "from unishift.report.paper_cells import cell_value",
        "# the tests import nothing from here",
        "from mytests.x import y",
        "import testsuite",
        "runs the tests in tests/test_foo.py",
    ],
)
def test_other_lines_are_not_taken_for_an_import_of_tests(line):
    assert imports_of_tests(line) == []
