"""The library's modules import each other without cycles, and lower layers never import upper ones
(function-level imports included): methods know nothing of the data layer, the evaluation driver or
the reports; the data layer knows nothing of the evaluation driver or the reports."""

from __future__ import annotations

import ast

import pytest

from unishift.codeversion import ROOT

MODULES = {
    ".".join(("unishift", *path.relative_to(ROOT).with_suffix("").parts)).removesuffix(
        ".__init__"
    ): path
    for path in ROOT.rglob("*.py")
    if "__pycache__" not in path.parts
}


def imports_of(name: str) -> set[str]:
    """The unishift modules a module imports anywhere in its body (``from a import b`` counts as
    ``a.b`` when that is a module)."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("unishift"):
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in MODULES)
    return found - {name}


# a package's __init__ only re-exports its modules: importing a module is an edge to that module
GRAPH = {name: imports_of(name) for name, path in MODULES.items() if path.name != "__init__.py"}


def cycles() -> list[list[str]]:
    state, found = {}, []

    def visit(node, path):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(GRAPH.get(node, ())):
            if state.get(nxt) == "open":
                found.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, path)
        path.pop()
        state[node] = "done"

    for node in sorted(GRAPH):
        if node not in state:
            visit(node, [])
    return found


def test_no_import_cycles():
    assert cycles() == []


def test_the_cycle_finder_finds_a_cycle(monkeypatch):
    monkeypatch.setitem(
        GRAPH, "unishift.methods.calibration.shared", {"unishift.methods.calibration.temperature"}
    )
    found = cycles()
    assert len(found) == 1
    assert set(found[0]) == {
        "unishift.methods.calibration.temperature",
        "unishift.methods.calibration.shared",
    }


CALIBRATION = "unishift.methods.calibration"
# the modules the calibrators share: the helpers and the temperature-type base class
CALIBRATION_HELPERS = (f"{CALIBRATION}.shared", f"{CALIBRATION}.temperature")


@pytest.mark.parametrize("helper", CALIBRATION_HELPERS)
def test_calibrator_helpers_import_no_method_module(helper):
    # one module per calibrator; what the calibrators share imports no module that defines a
    # method (of any task), directly or through other modules, so no method module is in a cycle
    import importlib

    from unishift.registry import declared_methods

    assert not declared_methods(importlib.import_module(helper))
    reached, pending = set(), [helper]
    while pending:
        for module in GRAPH.get(pending.pop(), ()):
            if module not in reached:
                reached.add(module)
                pending.append(module)
    defining = [m for m in sorted(reached) if declared_methods(importlib.import_module(m))]
    assert defining == []


@pytest.mark.parametrize(
    "lower, upper",
    [
        ("unishift.methods.", ("unishift.evaluation", "unishift.data", "unishift.report", "unishift.api")),
        ("unishift.data.", ("unishift.evaluation", "unishift.report", "unishift.api")),
        ("unishift.metrics.", ("unishift.evaluation", "unishift.methods", "unishift.report")),
    ],
)  # fmt: skip
def test_lower_layers_do_not_import_upper_ones(lower, upper):
    offending = {
        (name, imported)
        for name in MODULES
        if name.startswith(lower)
        for imported in imports_of(name)
        if imported.startswith(upper)
    }
    assert offending == set()
