"""Every function docs/api.md documents has a numpydoc docstring a reader can use without the source.

The names are read from docs/api.md itself (a call written in backticks: ``load_setups(...)``,
``unishift.cpu_kernels.pin()``), so a function the page adds is checked too. Each docstring must
have a one-line summary, a ``Parameters`` entry for every parameter of the signature and none for a
parameter it lacks, a ``Returns`` section where the function returns a value, and a ``Raises``
section naming every exception the function raises itself. The sections are parsed here (numpydoc
is not a dependency); the parser is checked on docstrings it must refuse. The examples the
docstrings give run as doctests.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import re
import textwrap

import pytest

import unishift
from tests.conftest import REPO

API_PAGE = REPO / "docs" / "api.md"
# a call in backticks: a name or a dotted path, then "(" (``table_tex(result)``)
CALL = re.compile(r"`((?:unishift\.)?[A-Za-z_][\w.]*)\(")
SECTION = re.compile(r"^(?P<name>[A-Z][A-Za-z ]+)\n-{3,}$", re.MULTILINE)
# a Parameters entry: "name : type", "name", "*args", "**params", at the section's own indent
ENTRY = re.compile(r"^(?P<names>\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)(?:\s*:.*)?$")


def documented_functions() -> dict[str, object]:
    """{name as docs/api.md writes it: the function} for every call of the package the page names:
    the names ``unishift`` exports (:data:`unishift.API`) and dotted ``unishift.`` paths."""
    found = {}
    for name in dict.fromkeys(CALL.findall(API_PAGE.read_text(encoding="utf-8"))):
        if name in unishift.API:
            found[name] = getattr(unishift, name)
        elif name.startswith("unishift."):
            module, _, attribute = name.rpartition(".")
            found[name] = getattr(importlib.import_module(module), attribute)
    return found


def sections_of(docstring: str) -> tuple[str, dict[str, str]]:
    """(summary paragraph, {section name: body}) of a numpydoc docstring."""
    text = inspect.cleandoc(docstring)
    headers = list(SECTION.finditer(text))
    summary = text[: headers[0].start() if headers else len(text)].strip().split("\n\n")[0]
    sections = {}
    for header, following in zip(headers, [*headers[1:], None], strict=True):
        end = following.start() if following else len(text)
        sections[header.group("name")] = text[header.end() : end].strip("\n")
    return summary, sections


def parameter_names(body: str) -> list[str]:
    """The names a Parameters section documents (its unindented entry lines)."""
    names = []
    for line in textwrap.dedent(body).splitlines():
        if not line or line[0].isspace():
            continue
        entry = ENTRY.match(line)
        assert entry, f"not a Parameters entry: {line!r}"
        names += [n.strip().lstrip("*") for n in entry.group("names").split(",")]
    return names


def own_nodes(function_node: ast.AST):
    """The nodes of a function's body, not those of the functions and classes defined inside it."""
    stack = list(ast.iter_child_nodes(function_node))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def problems_of(function) -> list[str]:
    """What the docstring of ``function`` lacks, as numpydoc would have it."""
    doc = inspect.getdoc(function)
    if not doc:
        return ["no docstring"]
    summary, sections = sections_of(doc)
    problems = []
    if "\n" in summary or not summary.endswith("."):
        problems.append(f"the summary is not one sentence on one line: {summary!r}")
    parameters = [
        name
        for name, p in inspect.signature(function).parameters.items()
        if name not in ("self", "cls")
    ]
    if parameters and "Parameters" not in sections:
        problems.append("no Parameters section")
    documented = parameter_names(sections.get("Parameters", ""))
    problems += [
        f"parameter {name!r} is not documented" for name in parameters if name not in documented
    ]
    problems += [
        f"{name!r} is documented but no parameter" for name in documented if name not in parameters
    ]

    node = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    mine = list(own_nodes(node))
    returns = any(isinstance(n, ast.Return) and n.value is not None for n in mine)
    if returns and "Returns" not in sections:
        problems.append("returns a value but has no Returns section")
    if not returns and "Returns" in sections:
        problems.append("has a Returns section but returns nothing")
    for raised in (n for n in mine if isinstance(n, ast.Raise) and n.exc is not None):
        call = raised.exc.func if isinstance(raised.exc, ast.Call) else raised.exc
        name = ast.unparse(call).rpartition(".")[2]
        if not re.search(rf"^\S*\b{name}\s*$", sections.get("Raises", ""), re.MULTILINE):
            problems.append(f"raises {name} but its Raises section does not name it")
    return problems


def test_the_page_names_every_function_the_package_exports():
    # not vacuous: every name unishift exports, and the kernels' pin, are among those checked
    names = documented_functions()
    assert set(unishift.API) <= set(names), set(unishift.API) - set(names)
    assert "unishift.cpu_kernels.pin" in names


@pytest.mark.parametrize("name", list(documented_functions()))
def test_a_documented_function_has_a_numpydoc_docstring(name):
    function = documented_functions()[name]
    assert problems_of(function) == [], f"{name}: {problems_of(function)}"


def test_the_docstrings_examples_run():
    from unishift import api, cpu_kernels

    for module in (api, cpu_kernels):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__


def _missing_parameter(a, b):
    """Add two numbers.

    Parameters
    ----------
    a : int
        The first.

    Returns
    -------
    int
        The sum.
    """
    return a + b


def _stale_parameter(a):
    """Halve a number.

    Parameters
    ----------
    a : float
        The number.
    b : float
        Gone from the signature.

    Returns
    -------
    float
        Its half.
    """
    return a / 2


def _no_returns(a, **options):
    """Double a number.

    Parameters
    ----------
    a : float
        The number.
    **options
        Ignored.
    """
    return a * 2


def _undocumented_raise(a):
    """Check a number.

    Parameters
    ----------
    a : float
        The number.

    Raises
    ------
    TypeError
        Never, in fact.
    """
    if a < 0:
        raise ValueError("negative")


def _two_line_summary(a):
    """Check a number, a summary that runs
    over two lines.

    Parameters
    ----------
    a : float
        The number.
    """

    def inner():
        return a  # a nested function's return is not the function's own

    inner()


@pytest.mark.parametrize(
    "function, problem",
    [
        (_missing_parameter, "parameter 'b' is not documented"),
        (_stale_parameter, "'b' is documented but no parameter"),
        (_no_returns, "returns a value but has no Returns section"),
        (_undocumented_raise, "raises ValueError but its Raises section does not name it"),
        (_two_line_summary, "the summary is not one sentence on one line"),
    ],
)
def test_the_parser_finds_what_a_docstring_lacks(function, problem):
    found = problems_of(function)
    assert any(problem in p for p in found), found
    # and nothing it should not: the rest of each example is well formed
    assert len(found) == 1, found
