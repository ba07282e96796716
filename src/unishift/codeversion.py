"""The version of the library code that a workflow step runs, as a content hash.

A step's code is the set of ``unishift`` modules its script imports, followed transitively through
every import statement of those modules (function-level imports included, and a package's
``__init__`` whenever one of its modules is imported), plus the non-Python files shipped inside those
packages (templates, the paper's numbers). Each module enters the hash as its syntax tree without
docstrings, so a comment, a docstring or a reformatting does not change the version, while any change
to what the code does does. The workflow passes these versions to its rules as a parameter: Snakemake
then re-runs exactly the jobs whose code changed (docs/code-version.md).

Nothing here imports the modules it hashes: files are located from the package's folder.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

PACKAGE = "unishift"
ROOT = Path(__file__).resolve().parent
_MODULE_NAME = re.compile(rf"^{PACKAGE}(\.[A-Za-z_][A-Za-z0-9_]*)+$")
DIGITS = 16


def module_file(name: str) -> Path | None:
    """The source file of a ``unishift`` module or package, or None if there is none."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = ROOT.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _resolve_relative(module: str, node: ast.ImportFrom) -> str | None:
    package = module if module_file(module).name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


@cache
def _analyse(name: str) -> tuple[frozenset[str], frozenset[str], str]:
    """(imported names, string constants that name a ``unishift`` module, normalised code) of a
    module, from one parse. The strings matter where a module imports by name (the registry's
    list of method packages)."""
    tree = ast.parse(module_file(name).read_text(encoding="utf-8"))
    imported, named = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_relative(name, node) if node.level else node.module
            if base:
                imported.add(base)
                imported.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _MODULE_NAME.match(node.value):
                named.add(node.value)
    code = ast.dump(_without_docstrings(tree), include_attributes=False)
    return frozenset(imported), frozenset(named), code


def module_closure(entries: Iterable[str], follow_strings: bool = True) -> set[str]:
    """The ``unishift`` modules that importing ``entries`` executes (parents' ``__init__`` included)."""
    seen: set[str] = set()
    stack = list(entries)
    while stack:
        name = stack.pop()
        if name in seen or module_file(name) is None:
            continue
        seen.add(name)
        parts = name.split(".")
        stack.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        imported, named, _ = _analyse(name)
        stack.extend(imported)
        if follow_strings:
            stack.extend(named)
    return seen


def script_imports(script: str | Path) -> set[str]:
    """The ``unishift`` modules a workflow script imports directly."""
    tree = ast.parse(Path(script).read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == PACKAGE:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return tree


def normalise(source: str) -> str:
    """Python code without its comments, docstrings or layout: its syntax tree, dumped."""
    return ast.dump(_without_docstrings(ast.parse(source)), include_attributes=False)


def normalised_source(name: str) -> str:
    return _analyse(name)[2]


@cache
def _package_data(package: str) -> tuple[tuple[str, bytes], ...]:
    """Non-Python files of a package's own folder and of its sub-folders that are not packages."""
    folder = module_file(package).parent
    found = []
    pending = [folder]
    while pending:
        current = pending.pop()
        for path in sorted(current.iterdir()):
            if path.is_dir():
                if path.name != "__pycache__" and not (path / "__init__.py").is_file():
                    pending.append(path)
            elif path.suffix not in (".py", ".pyc"):
                found.append((path.relative_to(ROOT).as_posix(), path.read_bytes()))
    return tuple(found)


def version_of(modules: Iterable[str]) -> str:
    """The hash of the given modules' normalised code and their packages' data files."""
    return _version(frozenset(modules))


@cache
def _version(modules: frozenset[str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(modules):
        digest.update(f"{name}\0{normalised_source(name)}\0".encode())
        if module_file(name).name == "__init__.py":
            for relative, content in _package_data(name):
                digest.update(f"{relative}\0".encode() + content + b"\0")
    return digest.hexdigest()[:DIGITS]


def script_code_version(script: str | Path) -> str:
    """The code version of a workflow script: every module its imports reach."""
    return version_of(module_closure(script_imports(script)))


def library_version() -> str:
    """The code version of the whole library (every module of the package)."""
    names = [
        ".".join((PACKAGE, *path.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__")
        for path in ROOT.rglob("*.py")
        if "__pycache__" not in path.parts
    ]
    return version_of(names)


def method_modules(
    task: str, name: str, shift: str | None = None, overrides: dict | None = None
) -> set[str]:
    """The modules one registered method runs: its class's module and, through every string
    parameter that names a registered method (an adapter's inner method, LEAP's quantifier), theirs."""
    from unishift.registry import all_methods, get_method

    specs = all_methods()
    found: set[str] = set()
    pending = [(get_method(task, name, shift), overrides)]
    done = set()
    while pending:
        spec, given = pending.pop()
        if (spec.task, spec.name) in done:
            continue
        done.add((spec.task, spec.name))
        found.add(spec.factory.__module__)
        params = spec.params(shift if shift in spec.shifts else spec.shifts[0], given)
        for value in params.values():
            if isinstance(value, str):
                pending.extend((s, None) for (_, n), s in specs.items() if n == value)
    return found


def method_code_version(
    task: str, name: str, shift: str, script: str | Path, overrides: dict | None = None
) -> str:
    """The code version of evaluating one method: the evaluation script's modules and the method's
    own, without the registry's list of every method package (a change to another method does
    not touch this one's results)."""
    entries = script_imports(script) | method_modules(task, name, shift, overrides)
    return version_of(module_closure(entries, follow_strings=False))
