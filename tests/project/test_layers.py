"""The rule of the library's layout in one line: the science never imports ``unishift.workflow``, no
import cycles, no upward imports (the layer order of docs/developing.md, "Layers"). Every import counts: at module level, inside functions, and in
``__init__`` modules (a package's ``__init__`` is a module of its own: importing the package, or
``from package import name``, is an edge to it)."""

from __future__ import annotations

import ast
import re

import pytest

from tests.conftest import REPO
from unishift.workflow.code_version import ROOT

MODULES = {
    ".".join(("unishift", *path.relative_to(ROOT).with_suffix("").parts)).removesuffix(
        ".__init__"
    ): path
    for path in ROOT.rglob("*.py")
    if "__pycache__" not in path.parts
}


def imports_of(name: str) -> set[str]:
    """The unishift modules a module imports anywhere in its body (``from a import b`` counts as
    ``a.b`` when that is a module, else as ``a``)."""
    found = set()
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # a relative import
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{module}" if module else base
            if not module.startswith("unishift"):
                continue
            for alias in node.names:
                child = f"{module}.{alias.name}"
                found.add(child if child in MODULES else module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in MODULES)
    return found - {name}


GRAPH = {name: imports_of(name) for name in MODULES}

# Bottom up: a module may import its own layer and those below (docs/developing.md, "Layers"). Each
# entry is a module or a package (all its modules); the longest entry that holds a module places it.
LAYERS = [
    # the foundation both halves share: checks of option values, float helpers, atomic file I/O,
    # the CPU kernels (the API warns, the workflow pins), QuaPy without PyTorch, the hub's names
    ("unishift", "unishift.option_checks", "unishift.numerics", "unishift.io",
     "unishift.cpu_kernels", "unishift.results_layout", "unishift.output_records",
     "unishift.data.quapy_loader",
     "unishift.data.hub_access", "unishift.figures"),
    ("unishift.evaluation.metrics", "unishift.evaluation.stats", "unishift.protocols",
     "unishift.classifiers", "unishift.lm", "unishift.methods.quapy_adapter"),
    ("unishift.data",),
    # shift descriptors, regime maps, the selector (docs/regimes.md): data, metrics, protocols below
    ("unishift.regimes",),
    ("unishift.methods",),
    ("unishift.methods.registry",),
    ("unishift.evaluation",),
    ("unishift.report",),
    ("unishift.api",),
    # the machinery imports the science, never the reverse
    ("unishift.workflow",),
    # runs the workflow's scripts, having imported every layer below once; what starts it
    ("unishift.workflow.job_server", "unishift.workflow.prepare"),
]  # fmt: skip


def layer_of(module: str) -> int:
    """The layer of the longest entry that is the module or a package above it."""
    best, level = -1, None
    for index, entries in enumerate(LAYERS):
        for entry in entries:
            if (module == entry or module.startswith(entry + ".")) and len(entry) > best:
                best, level = len(entry), index
    if level is None:
        raise KeyError(f"{module} is in no layer: add it to LAYERS")
    return level


def cycles(graph=None) -> list[list[str]]:
    graph = GRAPH if graph is None else graph
    state, found = {}, []

    def visit(node, path):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, path)
        path.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


SCIENCE = sorted(
    m for m in MODULES if m != "unishift.workflow" and not m.startswith("unishift.workflow.")
)


def imports_the_machinery(graph=None) -> dict[str, set[str]]:
    """The science modules that import the workflow machinery, with what they import of it."""
    graph = GRAPH if graph is None else graph
    found = {
        m: {i for i in graph.get(m, ()) if i.split(".")[:2] == ["unishift", "workflow"]}
        for m in SCIENCE
    }
    return {m: i for m, i in found.items() if i}


def test_the_science_never_imports_the_workflow_machinery():
    assert imports_the_machinery() == {}


def test_the_machinery_rule_catches_a_function_level_import(monkeypatch):
    # an import inside a function counts as much as one at the top (ast.walk enters functions)
    monkeypatch.setitem(GRAPH, "unishift.report.summary", {"unishift.workflow.config_access"})
    assert imports_the_machinery() == {
        "unishift.report.summary": {"unishift.workflow.config_access"}
    }


def test_no_import_cycles():
    assert cycles() == []


def test_the_cycle_finder_finds_a_cycle_through_an_init_module_and_a_function():
    # the shape of the registry <-> methods.adapt cycle the refactor removed: a package __init__
    # importing a module whose function imports the package back
    graph = {
        "unishift.methods.adapt": {"unishift.methods.registry"},
        "unishift.methods.registry": {"unishift.methods.adapt"},
    }
    assert [set(c) for c in cycles(graph)] == [
        {"unishift.methods.adapt", "unishift.methods.registry"}
    ]
    source = "def f():\n    from unishift.methods.registry import get_method\n"
    tree = ast.parse(source)
    assert any(isinstance(n, ast.ImportFrom) for n in ast.walk(tree))  # ast.walk enters functions


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_every_layer_entry_is_a_module_or_a_package():
    # an entry left behind by a module that moved would place nothing and hide the new one
    for entries in LAYERS:
        for entry in entries:
            assert entry in MODULES, f"{entry} (in LAYERS) is no module of unishift"


def upward_imports() -> set[tuple[str, str]]:
    return {
        (name, imported)
        for name, imported_modules in GRAPH.items()
        for imported in imported_modules
        if layer_of(imported) > layer_of(name)
    }


def test_no_module_imports_a_layer_above_its_own():
    assert upward_imports() == set()


def test_the_layer_order_catches_an_upward_import(monkeypatch):
    monkeypatch.setitem(GRAPH, "unishift.methods.base", {"unishift.methods.registry"})
    assert ("unishift.methods.base", "unishift.methods.registry") in upward_imports()


CALIBRATION = "unishift.methods.calibration"
# the modules the calibrators share: the helpers and the temperature-type base class
CALIBRATION_HELPERS = (f"{CALIBRATION}.shared", f"{CALIBRATION}.temperature")


@pytest.mark.parametrize("helper", CALIBRATION_HELPERS)
def test_calibrator_helpers_import_no_method_module(helper):
    # one module per calibrator; what the calibrators share imports no module that defines a
    # method (of any task), directly or through other modules, so no method module is in a cycle
    import importlib

    from unishift.methods.registry import declared_methods

    assert not declared_methods(importlib.import_module(helper))
    reached, pending = set(), [helper]
    while pending:
        for module in GRAPH.get(pending.pop(), ()):
            if module not in reached:
                reached.add(module)
                pending.append(module)
    defining = [m for m in sorted(reached) if declared_methods(importlib.import_module(m))]
    assert defining == []


def test_no_adapter_looks_a_method_up_by_name():
    # the registry hands an adapter its inner method; nothing else in methods/ reaches the registry
    registry = "unishift.methods.registry"
    reached, pending = (
        set(),
        [m for m in MODULES if m.startswith("unishift.methods") and m != registry],
    )
    while pending:
        for module in GRAPH.get(pending.pop(), ()):
            if module not in reached:
                reached.add(module)
                pending.append(module)
    assert "unishift.methods.registry" not in reached


def _fenced_block_after(text: str, heading: str) -> list[str]:
    """The lines of the first ```text block after a heading (or a line) that starts with it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    opening = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    closing = next(i for i in range(opening + 1, len(lines)) if lines[i].startswith("```"))
    return lines[opening + 1 : closing]


def documented_layers(text: str) -> list[tuple[str, ...]]:
    """docs/developing.md's layer list, with the package's prefix restored."""
    layers = []
    for line in _fenced_block_after(text, "### Layers"):
        entries = re.sub(r"^\d+\.\s*", "", line).split(",")
        layers.append(
            tuple(
                "unishift" + ("" if e.strip() == "unishift" else "." + e.strip()) for e in entries
            )
        )
    return layers


def test_the_developing_guide_draws_the_layers_of_this_test():
    text = (REPO / "docs" / "developing.md").read_text(encoding="utf-8")
    assert documented_layers(text) == [tuple(entries) for entries in LAYERS]


def readme_tree(text: str) -> tuple[set[str], set[str]]:
    """(top-level packages and modules, modules of unishift.workflow) that the README's "Layout"
    draws under src/unishift/: a name ending in / is a package, in .py a module."""
    block = _fenced_block_after(text, "## Layout")
    start = next(i for i, line in enumerate(block) if line.startswith("src/unishift/"))
    top, machinery, in_workflow = set(), set(), False
    for line in block[start + 1 :]:
        if not line.startswith(" "):
            break
        in_workflow = in_workflow or line.lstrip().startswith("workflow/")
        names = {m.group(1) for m in re.finditer(r"(?<![\w.])(\w+)(?:/|\.py)(?!\w)", line)}
        if in_workflow:
            top |= names & {"workflow"}
            machinery |= names - {"workflow"}
        else:
            top |= names
    return top, machinery


def test_the_readme_layout_is_the_tree():
    top = {p.stem for p in ROOT.glob("*.py") if p.stem != "__init__"}
    top |= {p.parent.name for p in ROOT.glob("*/__init__.py")}
    machinery = {p.stem for p in (ROOT / "workflow").glob("*.py") if p.stem != "__init__"}
    assert readme_tree((REPO / "README.md").read_text(encoding="utf-8")) == (top, machinery)


def test_the_layout_readers_see_a_missing_module():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    top, machinery = readme_tree(readme.replace(" run_lock.py", ""))
    assert "run_lock" not in machinery and "workflow" in top and "api" in top
    guide = (REPO / "docs" / "developing.md").read_text(encoding="utf-8")
    assert documented_layers(guide.replace("9. api", "9. api, catalogue"))[8] == (
        "unishift.api",
        "unishift.catalogue",
    )
