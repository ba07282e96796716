"""The tests mirror ``src/unishift`` (docs/testing.md, "Where the tests live"): every folder of
tests names a package of the library or is ``tests/project``, every package has its folder, every
test at the top of ``tests/`` names a top-level module, and the table in docs/testing.md lists
exactly these folders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

SRC = REPO / "src" / "unishift"
TESTS = REPO / "tests"
PROJECT = "project"
# a row of the table: | `tests/<folder>/` | ...
TABLE_ROW = re.compile(r"^\| `tests/([\w/]*?)/?` \|", re.MULTILINE)


def src_packages(src: Path = SRC) -> set[str]:
    return {str(p.parent.relative_to(src)) for p in src.rglob("__init__.py") if p.parent != src}


def src_modules(src: Path = SRC) -> set[str]:
    return {p.stem for p in src.glob("*.py") if p.stem != "__init__"}


def folders_with_tests(tests: Path = TESTS) -> set[str]:
    """The folders below tests/ that hold test files (fixture data and the mutation check do not)."""
    return {
        str(p.parent.relative_to(tests))
        for p in tests.rglob("test_*.py")
        if p.parent != tests and "__pycache__" not in p.parts
    }


def layout_problems(src: Path, tests: Path) -> list[str]:
    packages, found = src_packages(src), folders_with_tests(tests)
    problems = [
        f"tests/{f}/ names no package of src/unishift (move its tests, or into tests/{PROJECT}/)"
        for f in sorted(found - packages - {PROJECT})
    ]
    problems += [f"src/unishift/{p}/ has no tests/{p}/" for p in sorted(packages - found)]
    problems += [
        f"tests/{folder}/ has no __init__.py (its modules would clash by name with other folders')"
        for folder in sorted(found)
        if not (tests / folder / "__init__.py").is_file()
    ]
    modules = src_modules(src)
    for path in sorted(tests.glob("test_*.py")):
        name = path.stem.removeprefix("test_")
        if not any(name == m or name.startswith(m + "_") for m in modules):
            problems.append(
                f"tests/{path.name} names no top-level module of src/unishift: move it into the "
                "folder of the package it tests"
            )
    return problems


def test_the_tests_mirror_the_packages_of_src():
    assert not layout_problems(SRC, TESTS), "\n".join(layout_problems(SRC, TESTS))


def test_the_table_of_docs_testing_lists_every_test_folder():
    table = set(TABLE_ROW.findall((REPO / "docs" / "testing.md").read_text()))
    assert table - {""} == folders_with_tests(), "docs/testing.md, 'Where the tests live', is stale"


def make_tree(root: Path, files: list[str]) -> None:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")


@pytest.mark.parametrize(
    "files, expected",
    [
        # a folder named after no package
        (["tests/misc/__init__.py", "tests/misc/test_a.py"], "tests/misc/ names no package"),
        # a package without tests
        (
            ["src/unishift/methods/cap/__init__.py"],
            "src/unishift/methods/cap/ has no tests/methods/cap/",
        ),
        # a nested folder that forgot its __init__.py
        (
            ["src/unishift/methods/cap/__init__.py", "tests/methods/cap/test_b.py"],
            "tests/methods/cap/ has no __init__.py",
        ),
        # a top-level test that names no module (only the prefix of one)
        (["tests/test_numeric.py"], "tests/test_numeric.py names no top-level module"),
    ],
)
def test_a_layout_that_drifts_is_named(tmp_path, files, expected):
    make_tree(
        tmp_path,
        [
            "src/unishift/__init__.py",
            "src/unishift/numerics.py",
            "src/unishift/methods/__init__.py",
            "tests/methods/__init__.py",
            "tests/methods/test_contract.py",
            "tests/project/__init__.py",
            "tests/project/test_readme.py",
            "tests/test_numerics_float32.py",
            "tests/fixtures/outputs.json",
            *files,
        ],
    )
    problems = layout_problems(tmp_path / "src" / "unishift", tmp_path / "tests")
    assert any(expected in p for p in problems), problems
    assert len(problems) == 1, problems


def test_a_tree_that_mirrors_src_has_no_problem(tmp_path):
    make_tree(
        tmp_path,
        [
            "src/unishift/__init__.py",
            "src/unishift/api.py",
            "src/unishift/methods/__init__.py",
            "tests/methods/__init__.py",
            "tests/methods/test_contract.py",
            "tests/project/__init__.py",
            "tests/project/test_readme.py",
            "tests/test_api_quapy.py",
            "tests/mutation/run.py",
        ],
    )
    assert layout_problems(tmp_path / "src" / "unishift", tmp_path / "tests") == []
