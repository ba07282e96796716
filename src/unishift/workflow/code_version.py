"""The version of the library code a workflow step runs: a hash of its modules' syntax trees
without docstrings, read from their files, not imported (docs/code-version.md)."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Iterable
from functools import cache
from pathlib import Path

PACKAGE = "unishift"
# the package unishift (this module is in its subpackage unishift.workflow)
ROOT = Path(__file__).resolve().parent.parent
DIGITS = 16
REGISTRY = f"{PACKAGE}.methods.registry"
_DOCUMENTED = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
CACHE_VARIABLE = "UNISHIFT_CACHE_DIR"
# a cached analysis written longer ago is deleted when another is written (it is only re-computed)
CACHE_DAYS = 30
# what a cached analysis depends on besides the module's name and text: the syntax tree's dump
# differs between Python minor versions, and this module's own code makes the analysis
_CACHE_SALT = "\0".join(
    (f"{sys.version_info[0]}.{sys.version_info[1]}", Path(__file__).read_text(encoding="utf-8"))
)


def module_file(name: str) -> Path | None:
    """The source file of a ``unishift`` module or package, or None if there is none."""
    return _module_file(ROOT, name)


@cache
def _module_file(root: Path, name: str) -> Path | None:
    """:func:`module_file` under ``root``, looked up once per process: the closures of a plan's
    few hundred jobs ask for the same modules over a hundred thousand times."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = root.joinpath(*parts[1:])
    return next((f for f in (base.with_suffix(".py"), base / "__init__.py") if f.is_file()), None)


def _imports(tree: ast.AST, module: str | None = None) -> tuple[tuple[str, str | None], ...]:
    """(module, imported name or None) of every import in the syntax tree of ``module`` (a workflow
    script's relative imports reach no module of the package)."""
    imported = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and (module or not node.level):
            base = node.module
            if node.level:  # a module's own name is one level below its package's
                dots = node.level + (module_file(module).name != "__init__.py")
                base = importlib.util.resolve_name("." * dots + (base or ""), module)
            if base:
                imported += [(base, alias.name) for alias in node.names]
    return tuple(imported)


def _normalised(tree: ast.AST) -> str:
    """The syntax tree without its docstrings, dumped without positions."""
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED) and ast.get_docstring(node, clean=False) is not None:
            node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def cache_folder() -> Path | None:
    """Where analyses of module sources are kept between processes: ``$UNISHIFT_CACHE_DIR``, else
    ``unishift/code-version`` under ``$XDG_CACHE_HOME`` (default ``~/.cache``); None where neither
    variable is set and the user has no home folder (a container's user without a passwd entry)."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    except RuntimeError:  # Path.home() where HOME is unset and the user has no passwd entry
        return None
    return base / PACKAGE / "code-version"


def _valid(stored) -> bool:
    """Whether a cached entry has the shape :func:`_analysis` returns."""
    return (
        isinstance(stored, list)
        and len(stored) == 2
        and isinstance(stored[0], list)
        and all(
            isinstance(pair, list)
            and len(pair) == 2
            and isinstance(pair[0], str)
            and (pair[1] is None or isinstance(pair[1], str))
            for pair in stored[0]
        )
        and isinstance(stored[1], str)
    )


def _analysis(source: str, module: str | None) -> tuple[tuple[tuple[str, str | None], ...], str]:
    """(imports, normalised code) of ``source``, the text of ``module`` (None: a workflow script),
    read from the cache when an earlier process analysed the same text: parsing and dumping the
    package takes about a second, which every snakemake process spent at start-up. The entry is
    found by a hash of everything the analysis depends on, so an edited module is analysed again;
    an unreadable or malformed entry is re-computed, and a cache that cannot be written is skipped
    (the result is the same either way)."""
    kind = "" if module is None else module_file(module).name
    key = hashlib.sha256("\0".join((_CACHE_SALT, module or "", kind, source)).encode()).hexdigest()
    folder = cache_folder()
    entry = None if folder is None else folder / f"{key}.json"
    try:
        stored = None if entry is None else json.loads(entry.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = None
    if _valid(stored):
        return tuple((base, alias) for base, alias in stored[0]), stored[1]
    tree = ast.parse(source)
    result = _imports(tree, module), _normalised(tree)
    if entry is not None:
        _store(entry, result)
    return result


def _store(entry: Path, result) -> None:
    """Write one analysis (atomically: processes that start together share the folder), and delete
    entries written more than :data:`CACHE_DAYS` days ago, once per process."""
    from unishift.io import atomic_path

    try:
        with atomic_path(entry) as partial:
            partial.write_text(json.dumps([result[0], result[1]]), encoding="utf-8")
        _prune(entry.parent)
    except OSError:
        return


@cache
def _prune(folder: Path) -> None:
    cutoff = time.time() - CACHE_DAYS * 86400
    for old in folder.glob("*.json"):
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            continue


@cache
def _analyse(name: str) -> tuple[tuple[tuple[str, str | None], ...], str]:
    """(imports, normalised code) of a module, from one parse."""
    return _analysis(module_file(name).read_text(encoding="utf-8"), name)


def _script(script: str | Path) -> tuple[set[str], str]:
    """The modules a workflow script imports directly (an imported name may be a module), and its
    own code normalised (the profiles leave out Snakemake's "code" trigger: it fires on a comment)."""
    imported, normalised = _script_source(Path(script).read_text(encoding="utf-8"))
    return set(imported), normalised


@cache
def _script_source(source: str) -> tuple[frozenset[str], str]:
    """:func:`_script` of a script's text (keyed by the text: the workflow asks for the evaluation
    script's version once per method)."""
    imports, normalised = _analysis(source, None)
    return frozenset({b for b, _ in imports} | {f"{b}.{a}" for b, a in imports if a}), normalised


def module_closure(entries: Iterable[str], skip: Iterable[str] = ()) -> frozenset[str]:
    """The ``unishift`` modules that importing ``entries`` executes (parents' ``__init__``
    included), less those in ``skip`` and what only they import."""
    skip = set(skip)
    seen: set[str] = set()
    # names that are no module of the package (an imported class or function): looked up once
    absent: set[str] = set()
    stack = list(entries)
    while stack:
        name = stack.pop()
        if name in seen or name in skip or name in absent:
            continue
        if module_file(name) is None:
            absent.add(name)
            continue
        seen.add(name)
        parts = name.split(".")
        stack.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        for base, alias in _analyse(name)[0]:
            imported = [(base, alias)]
            if base in skip and alias:  # counts as imported from where the package takes it
                imported = [(b, a) for b, a in _analyse(base)[0] if a == alias]
            for module, attribute in imported:
                stack.extend((module, f"{module}.{attribute}") if attribute else (module,))
    return frozenset(seen)


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


@cache
def version_of(modules: frozenset[str]) -> str:
    """The hash of the given modules' normalised code and their packages' data files."""
    digest = hashlib.sha256()
    for name in sorted(modules):
        digest.update(f"{name}\0{_analyse(name)[1]}\0".encode())
        if module_file(name).name == "__init__.py":
            for relative, content in _package_data(name):
                digest.update(f"{relative}\0".encode() + content + b"\0")
    return digest.hexdigest()[:DIGITS]


def _registrations(specs) -> list[str]:
    entries = []
    for spec in specs:
        factory = f"{spec.factory.__module__}.{spec.factory.__qualname__}"
        fields = (spec.task, spec.name, spec.group, spec.display, spec.shifts, factory)
        tables = (spec.defaults, spec.shift_defaults, spec.binary_defaults)
        entries.append(repr((*fields, *(sorted(t.items()) for t in tables), spec.binary_only)))
    return sorted(entries)


def _combine(version: str, entries: Iterable[str]) -> str:
    digest = hashlib.sha256(version.encode())
    for entry in entries:
        digest.update(f"\0{entry}".encode())
    return digest.hexdigest()[:DIGITS]


def script_code_version(script: str | Path, registry: bool = False) -> str:
    """The code version of a workflow script: every module its imports reach; the registry and the
    method packages count (as the registry's code and entries) only with ``registry=True``."""
    from unishift.methods.registry import METHOD_MODULES, all_methods

    imported, source = _script(script)
    version = _combine(version_of(module_closure(imported, {*METHOD_MODULES, REGISTRY})), [source])
    if not registry:
        return version
    entries = [_analyse(REGISTRY)[1], *_registrations(all_methods().values())]
    return _combine(version, entries)


def library_version() -> str:
    """The code version of the whole library (every module of the package)."""
    names = frozenset(
        ".".join((PACKAGE, *path.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__")
        for path in ROOT.rglob("*.py")
        if "__pycache__" not in path.parts
    )
    return version_of(names)


def method_modules(
    task: str, name: str, shift: str | None = None, overrides: dict | None = None
) -> tuple[set[str], list]:
    """The modules one registered method runs and the registry entries it reaches (its own, and
    those of its inner method and of every string parameter naming a registered method)."""
    from unishift.methods.registry import all_methods, get_method

    specs = all_methods()
    reached = []
    pending = [(get_method(task, name, shift), overrides)]
    while pending:
        spec, given = pending.pop()
        if spec in reached:
            continue
        reached.append(spec)
        params = spec.params(shift if shift in spec.shifts else spec.shifts[0], overrides=given)
        if spec.inner is not None:  # an adaptation runs its inner method
            pending.append((spec.inner, None))
        for value in params.values():
            if isinstance(value, str):
                pending.extend((s, None) for (_, n), s in specs.items() if n == value)
    return {spec.factory.__module__ for spec in reached}, reached


def method_code_version(
    task: str, name: str, shift: str, script: str | Path, overrides: dict | None = None
) -> str:
    """The code version of evaluating one method (docs/code-version.md, "What a job's code is")."""
    from unishift.methods.registry import METHOD_MODULES

    modules, specs = method_modules(task, name, shift, overrides)
    imported, source = _script(script)
    return _combine(
        version_of(module_closure(imported | modules | {REGISTRY}, METHOD_MODULES)),
        [
            source,
            *_registrations(specs),
            repr(sorted((overrides or {}).items())),
            *_external_sources(modules),
        ],
    )


def _external_sources(modules: Iterable[str]) -> list[str]:
    """The normalised code of the modules outside the package among ``modules`` (a plugin's)."""
    sources = []
    for name in sorted(m for m in modules if m.split(".")[0] != PACKAGE):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin and spec.origin.endswith(".py"):
            normalised = _analysis(Path(spec.origin).read_text(encoding="utf-8"), None)[1]
            sources.append(f"{name}\0{normalised}")
    return sources


def plugin_code_version(module: str) -> str | None:
    """The code version of a plugin module (None when it has no Python source)."""
    sources = _external_sources([module])
    return _combine("", sources) if sources else None
