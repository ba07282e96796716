"""Comments, docstrings and config descriptions point to documents in the repository.

Every ``<path>.md`` that src/, workflow/ and config/ cite, and the tests' docstrings and comments,
must be a file of the repository (a bare
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

CITING_FOLDERS = ("src", "workflow", "envs", "config", "tests")
# the tests cite documents in their docstrings and comments; their code holds paths and deliberate
# examples of bad citations (this file's own cases), which are no citations
PROSE_ONLY = ("tests",)
# the folder named as a document (``docs/one-library``) must be one too
DOCS_NAME = re.compile(r"(?<![\w./-])docs/(?P<name>[\w-]+)(?![\w.-])")
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


def prose_of(path: Path) -> str:
    """The docstrings and comments of a Python file, each at its own line (other lines blank)."""
    import ast
    import io
    import tokenize

    source = path.read_text(encoding="utf-8")
    lines = [""] * (source.count("\n") + 2)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            lines[token.start[0] - 1] += token.string
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                for offset, text in enumerate(value.value.splitlines()):
                    lines[value.lineno - 1 + offset] += " " + text
    return "\n".join(lines)


def text_of(path: Path, root: Path = REPO) -> str:
    """What of a file may cite documents: all of it, or a test's docstrings and comments (none of
    this file's, whose prose quotes the bad citations it refuses)."""
    if path.resolve() == Path(__file__).resolve():
        return ""
    folder = path.relative_to(root).parts[0]
    if folder in PROSE_ONLY and path.suffix == ".py":
        return prose_of(path)
    return path.read_text(encoding="utf-8")


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
    for match in DOCS_NAME.finditer(text):
        name = match.group("name")
        if not ((root / "docs" / f"{name}.md").is_file() or (root / "docs" / name).is_dir()):
            found.append(f"{where}: 'docs/{name}' is no document or folder of docs/")
    for match in UNNAMED.finditer(text):
        found.append(f"{where}: {match.group(0)!r} names no file (write docs/<name>.md §...)")
    for match in OUTSIDE.finditer(text):
        found.append(f"{where}: {match.group(0)!r} points outside the repository")
    return found


def test_every_cited_document_and_section_is_in_the_repository():
    problems = []
    for path in citing_files():
        where = str(path.relative_to(REPO))
        text = text_of(path)
        for number, line in enumerate(text.splitlines(), 1):
            problems += problems_in(line, f"{where}:{number}")
        # citations broken over two lines ("docs/methods.md\n§0.4")
        problems += [
            p
            for p in problems_in(re.sub(r"\s*\n\s*(?:#\s*)?", " ", text), where)
            if not any(p.split(": ", 1)[1] in q for q in problems)
        ]
    assert not problems, "\n".join(sorted(set(problems)))


def test_a_test_is_read_for_its_docstrings_and_comments_only(tmp_path):
    test = tmp_path / "tests" / "test_x.py"
    test.parent.mkdir()
    test.write_text(
        '"""Proven against oracles.md."""\n\n'
        "def test_x():\n"
        '    """A bin edge (docs/one-library)."""\n'
        '    path = "docs/missing.md"  # a path in code, not a citation\n'
    )
    prose = text_of(test, root=tmp_path)
    assert "docs/missing.md" not in prose and "not a citation" in prose
    assert prose.splitlines()[0].strip() == "Proven against oracles.md."
    problems = [
        p for n, line in enumerate(prose.splitlines(), 1) for p in problems_in(line, str(n))
    ]
    assert any("'oracles.md' is not a file" in p for p in problems)
    assert any("4: 'docs/one-library' is no document" in p for p in problems)


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
        ("# the layer order (docs/one-library)", "'docs/one-library' is no document"),
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
        "# the documentation (docs/api, docs/methods.md)",
    ],
)
def test_a_reference_into_the_repository_passes(line):
    assert problems_in(line, "here") == []


# Shorthand of docs/methods.md that a reader of the code would have to look up: "REF" (the authors'
# reference implementation) and B1-B6 (its numerical building blocks, §0.4). The code says what
# they are in words, with a pointer.
JARGON = re.compile(r"\b(?:REF|B[1-6])\b")
# Fit notes whose words a run writes into the records' ``reason`` column (results/eval) and the
# tests' fixtures pin: they keep their bytes; a comment beside each says what the shorthand means.
KEPT_IN_RESULTS = (
    "REF's sentinel T = -1 kept",
    "REF's sentinel T_s = -1 kept",
    "map imputed by B1",
)


def jargon_in(text: str, where: str) -> list[str]:
    """Every use of the docs' shorthand in ``text`` outside the result strings it must keep."""
    for kept in KEPT_IN_RESULTS:
        text = text.replace(kept, "")
    return [
        f"{where}:{number}: {match.group(0)!r} is shorthand of docs/methods.md: say what it is"
        for number, line in enumerate(text.splitlines(), 1)
        for match in JARGON.finditer(line)
    ]


def bare_sections_in(text: str, where: str) -> list[str]:
    """Every section sign in ``text`` that no document citation carries (``(§2.4)``, ``paper §4``),
    so that neither the reader nor the check above knows which document it means; citations may
    run over two lines, joined as the check above joins them."""
    joined = re.sub(r"\s*\n\s*(?:#\s*)?", " ", text)
    carried = {i for match in CITATION.finditer(joined) for i in range(match.start(), match.end())}
    return [
        f"{where}: {joined[max(0, m.start() - 40) : m.start() + 8]!r}: a section with no document "
        "(write docs/<name>.md §N)"
        for m in re.finditer("§", joined)
        if m.start() not in carried
    ]


def test_the_library_says_what_the_docs_shorthand_means():
    problems = []
    for path in sorted((REPO / "src").rglob("*.py")):
        problems += jargon_in(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
    assert not problems, "\n".join(problems)


def test_every_section_the_library_and_the_tests_cite_names_its_document():
    # the library's files whole; the tests' docstrings and comments (text_of, as above)
    problems = []
    for folder in ("src", "tests"):
        for path in sorted((REPO / folder).rglob("*.py")):
            problems += bare_sections_in(text_of(path), str(path.relative_to(REPO)))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "line",
    [
        '"""As REF does."""',
        "# the B5 weights",
        "# post-processed (B1-B3)",
        'description = "LasCal [REF LasCal-P]"',
        'note("LasCal: REF\'s sentinel kept")',
    ],
)
def test_the_docs_shorthand_in_the_code_fails(line):
    assert jargon_in(line, "here"), line


@pytest.mark.parametrize(
    "line",
    [
        "# the domain-classifier weights (docs/methods.md §0.4)",
        'kind = "q2c_5B"  # the binary binning, B-less',
        "REFERENCE = 1  # a longer word",
        'note("fallback", "LasCal: no finite loss on the grid; REF\'s sentinel T = -1 kept")',
    ],
)
def test_plain_words_and_kept_result_strings_pass(line):
    assert jargon_in(line, "here") == []


@pytest.mark.parametrize(
    "text, bare",
    [
        ('"""TransCal (§2.4) followed by EM."""', True),
        ("# the adaptations (paper §4)", True),
        ("# UPP (docs/protocols.md §2.4, §4)", False),
        ("# (docs/methods.md §1-§4; docs/multiclass.md\n# §2, §4)", False),
        ('"""Fine-tune (docs/protocols.md §3.4,\n    §3.6)."""', False),
        ("# docs/protocols.md §2.1 (UCI), §3.1 (text)", True),
    ],
)
def test_a_section_without_its_document_is_found(text, bare):
    assert bool(bare_sections_in(text, "here")) == bare
