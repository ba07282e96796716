"""The lock file, pyproject's ranges and the workflow's conda environments agree with each other
and with what the rules import (conda itself cannot run here: its channels are unreachable)."""

import ast
import importlib.util
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version

from tests.conftest import REPO

spec = importlib.util.spec_from_file_location("environments", REPO / ".ci" / "environments.py")
environments = importlib.util.module_from_spec(spec)
sys.modules["environments"] = environments
spec.loader.exec_module(environments)

ENV_FILES = sorted((REPO / "envs").glob("*.yaml"))
# Imported only under a guard, for information (the GPU driver version), never needed to run.
# pynvml: GPU descriptions, optional. cvxpy: LasCal's oracle solver (solver="cvxpy"), imported
# inside that function only, which no workflow path calls (the registry reaches the LasCal module
# that holds it).
OPTIONAL_IMPORTS = {"pynvml", "cvxpy"}


def _pip_entries(path: Path) -> list[str]:
    spec = yaml.safe_load(path.read_text())
    return next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))


def env_pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in _pip_entries(path):
        name, _, version = line.partition("==")
        assert version, f"{path.name}: {line!r} is not pinned with =="
        pins[environments.canonical(name)] = version
    return pins


def test_env_files_parse_and_pin_python_and_packages():
    assert {p.stem for p in ENV_FILES} == set(environments.ENVIRONMENTS)
    for path in ENV_FILES:
        spec = yaml.safe_load(path.read_text())
        assert spec["channels"][0] == "conda-forge"
        assert f"python={environments.PYTHON}" in spec["dependencies"]
        pins = env_pins(path)
        assert pins and "unishift" not in pins
        # no relative or editable installs: conda runs pip from a copy under .snakemake/conda
        assert not any(entry.startswith(("-e", ".", "/")) for entry in _pip_entries(path))


def test_env_files_are_the_lock_s_versions():
    """Every pin equals the lock's version (torch: the same release, PyPI's default build), and
    each file is exactly what .ci/environments.py writes from the lock."""
    locked, _ = environments.read_lock()
    for path in ENV_FILES:
        for name, version in env_pins(path).items():
            expected = locked[name].split("+")[0] if name == "torch" else locked[name]
            assert version == expected, (path.name, name)
        assert path.read_text() == environments.render(path.stem), (
            f"{path.name} drifted from requirements.lock: run python .ci/environments.py write"
        )
    assert "torch" not in env_pins(REPO / "envs/core.yaml")
    assert "torch" not in env_pins(REPO / "envs/text.yaml")


def test_closure_follows_the_lock_graph():
    locked, required_by = environments.read_lock()
    members = environments.closure({"pandas"}, required_by)
    assert {"pandas", "numpy", "python-dateutil", "tzdata"} <= members
    assert "torch" not in members and "scikit-learn" not in members
    with pytest.raises(KeyError, match="not in requirements.lock"):
        environments.closure({"no-such-package"}, required_by)


def test_lock_satisfies_every_range_of_pyproject():
    locked, _ = environments.read_lock()
    core, extras = environments.project_requirements()
    requirements = core + [r for name, reqs in extras.items() if name != "all" for r in reqs]
    for text in requirements:
        requirement = Requirement(text)
        name = environments.canonical(requirement.name)
        assert name in locked, f"{name} is missing from requirements.lock: run bash .ci/lock"
        assert requirement.specifier.contains(Version(locked[name]), prereleases=True), (
            f"locked {name}=={locked[name]} is outside {requirement.specifier}"
        )
    # ranges, not pins: a researcher's environment keeps its own numpy and pandas
    assert not any("==" in r for r in requirements)


def test_lock_holds_torch_s_cpu_build_and_the_readme_installs_it():
    locked, _ = environments.read_lock()
    assert locked["torch"].endswith("+cpu")
    readme = (REPO / "README.md").read_text()
    commands = re.findall(r"```bash\n(.+?)\n```", readme, flags=re.S)
    assert len(commands) == 2
    for command in commands:
        assert f"torch=={locked['torch']}" in command
        assert "-r requirements.lock" in command


def _rules():
    """(rule name, conda env file, script file) of every rule that runs a script."""
    found = []
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        # a rule of its own, or one made in a loop (rule: name: ...; report.smk's tables)
        for block in re.split(r"\n(?= *rule\b)", smk.read_text()):
            name = re.match(r" *rule (\w+):", block) or re.match(r" *rule:\s*name:\s*(\S+)", block)
            conda = re.search(r'conda:\s*\n\s*"([^"]+)"', block)
            script = re.search(r'script:\s*\n\s*"([^"]+)"', block)
            if name and script:
                assert conda, f"rule {name[1]} has no conda environment"
                base = smk.parent
                found.append((name[1], (base / conda[1]).resolve(), (base / script[1]).resolve()))
    return found


def _imported_modules(path: Path, seen: set[Path]) -> set[str]:
    """Top-level third-party modules imported by a file and, recursively, the unishift modules it
    imports (anywhere in the file: inside functions too)."""
    if path in seen:
        return set()
    seen.add(path)
    modules = set()
    if path == REPO / "src" / "unishift" / "evaluation" / "evaluate.py":
        # the evaluation driver fits and applies methods the registry imports by name (strings the
        # AST walk cannot follow): a script that reaches the driver may run any method's code
        for method_file in sorted((REPO / "src" / "unishift" / "methods").rglob("*.py")):
            modules |= _imported_modules(method_file, seen)
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            top = name.split(".")[0]
            if top == "unishift":
                parts = name.split(".")
                for depth in range(len(parts), 0, -1):
                    candidate = REPO / "src" / Path(*parts[:depth])
                    for file in (candidate.with_suffix(".py"), candidate / "__init__.py"):
                        if file.is_file():
                            modules |= _imported_modules(file, seen)
                # the packages on the way (their __init__ runs on import)
                for depth in range(1, len(parts)):
                    init = REPO / "src" / Path(*parts[:depth]) / "__init__.py"
                    if init.is_file():
                        modules |= _imported_modules(init, seen)
            elif top not in sys.stdlib_module_names and top not in ("__future__", "snakemake"):
                modules.add(top)
    return modules


def test_every_rule_s_environment_names_what_its_script_imports():
    """Scripts, and the unishift modules they import, need only packages of their rule's conda
    environment (``snakemake`` itself is put on the path by the script directive)."""
    distributions = metadata.packages_distributions()
    rules = _rules()
    assert {"hub_download", "lm_finetune", "evaluate"} <= {name for name, _, _ in rules}
    for name, env, script in rules:
        pins = env_pins(env)
        for module in sorted(_imported_modules(script, set()) - OPTIONAL_IMPORTS):
            owners = {environments.canonical(d) for d in distributions.get(module, [])}
            assert owners, f"rule {name}: no installed distribution provides {module!r}"
            assert owners & set(pins), f"rule {name} imports {module} but {env.name} lacks {owners}"


def test_language_model_rules_get_torch_and_the_rest_do_not():
    by_rule = {name: env.name for name, env, _ in _rules()}
    assert by_rule["lm_encode"] == by_rule["lm_finetune"] == "lm.yaml"
    # the evaluation runs REF's arithmetic of LasCal and TransCal, which calls torch
    assert by_rule["evaluate"] == "evaluation.yaml"
    assert by_rule["train_classifier"] == "core.yaml"
    assert by_rule["text_domain"] == by_rule["hub_download"] == "text.yaml"
