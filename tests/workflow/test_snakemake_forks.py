"""The tests' warm snakemake process (tests/snakemake_forks.py): a fork prints, exits and plans as
a fresh ``python -m snakemake`` does, a run with an environment of its own gets a fresh
interpreter, a change to the test process's environment restarts the warm process, a timeout
stops the run's whole process tree, and a run's job server is a fork of the run only where a fresh
server would import what the warm process did (that such a server writes the bytes of the
library's own is test_workflow.py::test_a_second_run_one_job_at_a_time_writes_the_same_bytes)."""

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.snakemake_forks import (
    WARM,
    _imports_differ,
    _job_server_state,
    run_fresh,
    run_snakemake,
)
from tests.workflow.test_workflow import copy_workflow

pytestmark = pytest.mark.workflow

# what differs between any two runs of Snakemake: the time and the random id of the run
VOLATILE = re.compile(r"^\s*(Date: |Workflow ID: |Complete log|\[\w{3} \w{3} ).*$", re.M)


def _stable(text: str) -> list[str]:
    """The lines but the volatile ones, sorted, each line's comma-separated items sorted: the order
    of a plan's jobs and of a job's input files follows the string hashes, which differ from one
    interpreter to the next (fresh or forked alike)."""
    return sorted(
        ", ".join(sorted(re.split(r"[,;:] ", line))) for line in VOLATILE.sub("", text).splitlines()
    )


@pytest.mark.parametrize(
    "args",
    [
        ["-n", "--configfile", ".test/config.yaml"],  # a plan from empty results
        ["-n", "--config", "seed=-1"],  # a config refused before any job
    ],
    ids=["plan", "refused"],
)
def test_a_fork_prints_and_exits_as_a_fresh_snakemake(tmp_path, args):
    work = copy_workflow(tmp_path / "wf")
    assert WARM.can_run(None)
    forked, fresh = run_snakemake(args, work), run_fresh(args, work)
    assert forked.returncode == fresh.returncode
    assert _stable(forked.stdout) == _stable(fresh.stdout)
    assert _stable(forked.stderr) == _stable(fresh.stderr)
    if args[0] == "-n" and "--configfile" in args:
        assert forked.returncode == 0 and "rule evaluate:" in forked.stdout
        assert f"Run directory: {work}" in forked.stdout  # the fork's folder, not the server's
    else:
        assert forked.returncode == 1 and "seed" in forked.stdout + forked.stderr


def test_an_environment_of_its_own_gets_a_fresh_interpreter(tmp_path, monkeypatch):
    assert WARM.can_run(None) and WARM.can_run(dict(os.environ))
    assert WARM.can_run(dict(os.environ, PYTEST_CURRENT_TEST="another test"))
    # read at import by NumPy, the registry, the interpreter: a fork would not see the change
    for name, value in [("UNISHIFT_PLUGINS", "tests.wrong_methods"), ("PYTHONPATH", "/elsewhere"),
                        ("OPENBLAS_CORETYPE", "SkylakeX")]:  # fmt: skip
        assert not WARM.can_run(dict(os.environ, **{name: value})), name
    # a change to the test process's own environment starts the warm process again, once
    (tmp_path / "Snakefile").write_text(
        "rule env:\n    output: 'seen'\n    shell: 'echo ${{UNISHIFT_FORK_PROBE:-unset}} > {output}'\n"
    )
    args = ["--cores", "1", "--workflow-profile", "none", "--forceall"]
    # (each start imports Snakemake and the job server's stack: the session's own environment first)
    monkeypatch.delenv("UNISHIFT_FORK_PROBE", raising=False)
    assert WARM.can_run(None)
    run_snakemake(args, tmp_path)
    starts = WARM.starts
    assert (tmp_path / "seen").read_text() == "unset\n"
    monkeypatch.setenv("UNISHIFT_FORK_PROBE", "second")
    run_snakemake(args, tmp_path)
    run_snakemake(args, tmp_path)
    assert WARM.starts == starts + 1
    assert (tmp_path / "seen").read_text() == "second\n"
    monkeypatch.setenv("UNISHIFT_TEST_FRESH_SNAKEMAKE", "1")
    assert not WARM.can_run(None)


def test_a_timeout_stops_the_run_and_its_jobs(tmp_path):
    marker = tmp_path / "still-running"
    (tmp_path / "Snakefile").write_text(
        "rule slow:\n"
        "    output: 'done'\n"
        f"    shell: 'sleep 3 && touch {marker} && sleep 60 && touch {{output}}'\n"
    )
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_snakemake(["--cores", "1", "--workflow-profile", "none"], tmp_path, timeout=1)
    assert time.monotonic() - started < 30
    time.sleep(4)  # the job, had it survived, would have touched the marker by now
    assert not marker.exists()
    # the warm process serves the next run
    assert run_snakemake(["--version"], tmp_path).returncode == 0


def test_a_job_server_is_forked_only_where_a_fresh_one_would_load_the_same(tmp_path):
    import yaml

    import unishift

    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    state = _job_server_state(base)
    for change in [
        {"UNISHIFT_CPU_KERNELS": "native"},  # cpu_kernels: native (the pin's variables)
        {"OPENBLAS_CORETYPE": "SkylakeX"},
        {"UNISHIFT_PLUGINS": "my_plugin"},  # the plugins: config key
        {"OMP_NUM_THREADS": "7"},  # read by OpenMP as it loads
        {"PYTHONHASHSEED": "1"},  # read by the interpreter as it starts
    ]:
        assert _job_server_state({**base, **change}) != state, change
    assert _job_server_state(dict(base, PYTEST_CURRENT_TEST="another")) == state

    # PYTHONPATH: whether a fresh server would import one of this process's modules elsewhere
    library = Path(unishift.__file__).resolve().parents[1]
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("nothing to import")
    (tmp_path / "shadow" / "yaml").mkdir(parents=True)  # a yaml package before the installed one
    (tmp_path / "shadow" / "yaml" / "__init__.py").write_text("")
    for folders, differ in [
        ([], False),
        ([tmp_path / "wf" / "src"], False),  # a copied workflow's missing checkout
        ([library], False),  # the checkout the library was imported from
        ([tmp_path / "notes"], False),  # none of the modules' names
        (["notes"], False),  # relative: from the run's folder
        ([tmp_path / "shadow"], True),
        (["shadow"], True),
    ]:
        env = dict(base, PYTHONPATH=os.pathsep.join(map(str, folders)))
        assert _imports_differ(env, tmp_path, set()) == differ, folders
    # a folder only this process had, which holds a module it imported
    installed = Path(yaml.__file__).resolve().parents[1]
    assert _imports_differ(base, tmp_path, {installed})
    assert not _imports_differ(base, tmp_path, {(tmp_path / "notes").resolve()})
