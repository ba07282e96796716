"""The documentation runs: every ```python block of README.md and docs/*.md is executed as written,
each in a fresh interpreter with this checkout's library first on the path.

A block that reads the files of a finished run (it calls ``load_setups`` or ``load_records``) runs in
the folder of the session's finished ``.test/config.yaml`` run (``finished_test_run``; a
``workflow`` test): the folder's entries are linked into a fresh directory, so that what a block
writes at its top level stays out of the shared run. Any other block runs in an empty temporary
directory. Pseudo-code belongs in a ```text block, which is not run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import KERNELS_PINNED, REPO

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# a block opens with ```python alone on its line and closes with ``` alone on its line
BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
NEEDS_A_RUN = re.compile(r"\bload_(?:setups|records)\(")
TIMEOUT = 900


def python_blocks(text: str) -> list[str]:
    return BLOCK.findall(text)


def snippets() -> list:
    found = []
    for document in DOCUMENTS:
        for number, code in enumerate(python_blocks(document.read_text(encoding="utf-8")), 1):
            name = f"{document.relative_to(REPO)}#{number}"
            marks = [pytest.mark.workflow] if NEEDS_A_RUN.search(code) else []
            found.append(pytest.param(name, code, id=name, marks=marks))
    return found


SNIPPETS = snippets()


def linked_view(folder: Path, into: Path) -> Path:
    """A directory whose entries are links to ``folder``'s (reading sees the run, writing at the
    top level does not touch it)."""
    into.mkdir()
    for entry in folder.iterdir():
        (into / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    return into


def run_block(name: str, code: str, cwd: Path) -> subprocess.CompletedProcess:
    script = cwd / "doc_snippet.py"
    if script.exists():
        raise FileExistsError(f"{script} exists already")
    script.write_text(f"# {name}\n{code}", encoding="utf-8")
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "src"), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    )
    try:
        return subprocess.run(
            [sys.executable, script.name],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    finally:
        script.unlink()


@pytest.mark.parametrize("name, code", SNIPPETS)
def test_the_documented_block_runs(name, code, request, tmp_path):
    if "cpu_kernels.pin(" in code and not KERNELS_PINNED:
        pytest.skip("this CPU cannot run the pinned AVX2 kernels (docs/determinism.md)")
    if NEEDS_A_RUN.search(code):
        folder, _ = request.getfixturevalue("finished_test_run")
        cwd = linked_view(Path(folder), tmp_path / "run")
    else:
        cwd = tmp_path
    done = run_block(name, code, cwd)
    assert done.returncode == 0, f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"


def test_the_documents_hold_the_blocks_this_test_is_for():
    names = {param.values[0] for param in SNIPPETS}
    assert {"docs/api.md#1", "docs/methods.md#1", "docs/determinism.md#1"} <= names
    needing_a_run = {p.values[0] for p in SNIPPETS if NEEDS_A_RUN.search(p.values[1])}
    assert "docs/api.md#1" in needing_a_run and "docs/methods.md#1" not in needing_a_run


@pytest.mark.parametrize(
    "text, blocks",
    [
        ("intro\n```python\nx = 1\n```\nmore\n", ["x = 1\n"]),
        (
            "```python\na = 1\n\nb = 2\n```\n```python\nc = 3\n```\n",
            ["a = 1\n\nb = 2\n", "c = 3\n"],
        ),
        ("```text\nnot run\n```\n```bash\nls\n```\n", []),
        ("an inline ```python``` mention, then\n```py\nnot ours\n```\n", []),
        ("```python\nfence = '```'\n```\n", ["fence = '```'\n"]),
    ],
)
def test_the_blocks_are_found_exactly(text, blocks):
    assert python_blocks(text) == blocks


def test_a_failing_block_fails(tmp_path):
    done = run_block("docs/x.md#1", "import unishift\nraise SystemExit(3)\n", tmp_path)
    assert done.returncode == 3
    done = run_block("docs/x.md#2", "undefined_name\n", tmp_path)
    assert done.returncode != 0 and "NameError" in done.stderr
