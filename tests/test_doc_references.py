"""Comments, docstrings and config descriptions point to documents in the repository.

Every ``<path>.md`` that src/, workflow/ and config/ cite must be a file of the repository (a bare
``protocols.md`` that only exists in the specification outside it fails); a section cited as
``docs/<name>.md §2.4`` (also ``§2.3-§2.4``, ``§3.3-3.4``, ``§2.11, §2.12``) must be a numbered section
of that document, and a heading cited by name (``docs/reproduction.md, "Arithmetic"``) must begin a
heading of it. Spec-only names (``DECISIONS.md``, ``open_questions``, ``reporting §2.3``) are refused.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import REPO

CITING_FOLDERS = ("src", "workflow", "envs", "config")
SUFFIXES = {".py", ".smk", ".yaml", ".yml", ".md", ".j2", ".tex", ".json", ".cfg", ".toml"}

NUMBER = r"\d+(?:\.\d+)*"
SECTION = rf"§\s?{NUMBER}(?:\s*[-–]\s*§?\s?{NUMBER})?"
# a path ending in .md, not part of a dotted name (``snakemake.output.md``) or a longer path
CITATION = re.compile(
    rf"(?<![\w./-])(?P<path>(?:[\w-]+/)*[\w-]+\.md)\b`*"
    rf"(?P<sections>(?:\s*,?\s*{SECTION})*)"
    r"(?P<heading>,?\s*\(?\"[^\"\n]+\")?"
)
# a section number given after a document's short name without the file (``reporting §2.3``)
UNNAMED = re.compile(
    r"(?<![\w/.])(?:protocols|reporting|methods|oracles|multiclass|reproduction|DECISIONS|open_questions)"
    r"\s*§"
)
# documents of the specification outside the repository (data folders such as ../shared/data are
# named as examples of a config value, not cited as documents)
OUTSIDE = re.compile(r"DECISIONS|open_questions|(?<![\w])spec/")


def citing_files(root: Path = REPO) -> list[Path]:
    files = [root / "Snakefile"]
    for folder in CITING_FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if not path.is_file() or "egg-info" in str(path) or "__pycache__" in path.parts:
                continue
            if path.suffix in SUFFIXES or path.name == "Snakefile":
                files.append(path)
    return files


@cache
def sections_of(document: Path) -> tuple[frozenset[str], tuple[str, ...]]:
    """(section numbers, heading texts) of a markdown document.

    A section number is declared by a numbered heading (``## 2. Calibrators``, ``### 2.4 Test
    samples``), a bold list item (``**§0.3 Logit conventions**``, ``**§1.1**``) or the first cell of a
    table row (``| 2.2 | Head2Tail |``), the three forms docs/ uses.
    """
    numbers, headings = set(), []
    for line in document.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"#{1,6}\s+(.*)", line)
        if heading:
            text = heading.group(1).strip()
            headings.append(text)
            number = re.match(rf"§?({NUMBER})\.?(?:\s|$)", text)
            if number:
                numbers.add(number.group(1))
        numbers.update(re.findall(rf"\*\*§({NUMBER})", line))
        row = re.match(rf"\|\s*({NUMBER})\s*\|", line)
        if row:
            numbers.add(row.group(1))
    return frozenset(numbers), tuple(headings)


def problems_in(text: str, where: str, root: Path = REPO) -> list[str]:
    """Every citation in ``text`` that does not resolve inside the repository at ``root``."""
    found = []
    for match in CITATION.finditer(text):
        cited = match.group("path")
        document = root / cited
        if not document.is_file():
            found.append(f"{where}: {cited!r} is not a file of the repository")
            continue
        numbers, headings = sections_of(document)
        for number in re.findall(NUMBER, match.group("sections")):
            if not cited.startswith("docs/"):
                found.append(f"{where}: section §{number} cited in {cited}, which is not in docs/")
            elif number not in numbers:
                found.append(f"{where}: {cited} has no section §{number}")
        if match.group("heading"):
            name = re.search(r"\"([^\"]+)\"", match.group("heading")).group(1)
            if not any(h.lower().startswith(name.lower()) for h in headings):
                found.append(f"{where}: {cited} has no heading starting with {name!r}")
    for match in UNNAMED.finditer(text):
        found.append(f"{where}: {match.group(0)!r} names no file (write docs/<name>.md §...)")
    for match in OUTSIDE.finditer(text):
        found.append(f"{where}: {match.group(0)!r} points outside the repository")
    return found


def test_every_cited_document_and_section_is_in_the_repository():
    problems = []
    for path in citing_files():
        where = str(path.relative_to(REPO))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            problems += problems_in(line, f"{where}:{number}")
        # citations broken over two lines ("docs/methods.md\n§0.4")
        problems += [
            p
            for p in problems_in(re.sub(r"\s*\n\s*(?:#\s*)?", " ", path.read_text("utf-8")), where)
            if not any(p.split(": ", 1)[1] in q for q in problems)
        ]
    assert not problems, "\n".join(sorted(set(problems)))


def test_the_citing_code_does_cite_the_documents():
    # the check above is not vacuous: the code cites each new document, by section
    text = "\n".join(p.read_text(encoding="utf-8") for p in citing_files())
    for cited in ("docs/protocols.md §2.4", "docs/reporting.md §2.3", "docs/methods.md §0.4"):
        assert cited in text


@pytest.mark.parametrize(
    "line, problem",
    [
        ('"""UPP samples (protocols.md §2.4)."""', "is not a file of the repository"),
        ("# the CD groups (docs/reporting.md §9.9)", "has no section §9.9"),
        ("# ranks (docs/reporting.md §2.5-§2.99)", "has no section §2.99"),
        ("# bins (docs/methods.md §1.1-1.6, §2.11, §7.7)", "has no section §7.7"),
        ('# (docs/reproduction.md, "Random streams")', "has no heading starting with"),
        ("# bold rule (reporting §2.3)", "names no file"),
        ("# answered in DECISIONS.md", "points outside the repository"),
        ("# see open_questions.md §C.20", "points outside the repository"),
        ("# see ../shared/spec/methods.md", "points outside the repository"),
        ("# settings in README.md §2", "which is not in docs/"),
    ],
)
def test_a_reference_outside_the_repository_or_to_a_missing_section_fails(line, problem):
    assert any(problem in p for p in problems_in(line, "here")), problems_in(line, "here")


@pytest.mark.parametrize(
    "line",
    [
        "# UPP (docs/protocols.md §2.4, §4)",
        "# tables (docs/reporting.md §2.3-§2.4), layout (docs/reporting.md §2.6).",
        "# (docs/methods.md §1.1-1.6, §2.11, §2.12, §3.2-3.4, §4.2, §4.3)",
        "# B5 (docs/methods.md §0.4, B5; REF)",
        '# (docs/reproduction.md, "Arithmetic")',
        "# see config/README.md and README.md",
        "snakemake.output.md,",
    ],
)
def test_a_reference_into_the_repository_passes(line):
    assert problems_in(line, "here") == []
