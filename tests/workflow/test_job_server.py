"""The job server runs a job's script in a fork as Python would run it alone, and a job it cannot
serve runs in its own process (unishift.workflow.job_server; docs/evaluation-jobs.md, "The job server")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from unishift.cpu_kernels import VARIABLES
from unishift.methods.registry import PLUGINS_VARIABLE
from unishift.workflow import job_server

# A job as the workflow's scripts start: hand itself to the server, and run here where it is not.
CLIENT = """
import sys, types
from unishift.workflow.job_server import run_in_server
job = types.SimpleNamespace(log=[sys.argv[2]], output=[sys.argv[3]])
run_in_server(job, sys.argv[1])
print("ran in the client")
"""

SCRIPT = """
import atexit, os, sys, time
with open(snakemake.output[0], "w") as f:
    f.write(f"{os.getpid()} {os.getppid()} {os.environ.get('MARK')} {os.getcwd()}")
atexit.register(lambda: open(snakemake.output[0] + ".atexit", "w").write("ran"))
print("to stdout", flush=True)
print("to stderr", file=sys.stderr, flush=True)
how = os.environ.get("HOW")
if how == "raise":
    raise RuntimeError("boom")
if how == "sleep":
    time.sleep(60)
if how:
    sys.exit(int(how))
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("server")
    address = str(folder / "socket")
    process = subprocess.Popen(
        [sys.executable, "-m", "unishift.workflow.job_server", address],
        stdout=subprocess.PIPE,
        stderr=open(folder / "server.log", "w"),
        text=True,
    )
    assert process.stdout.readline().strip() == "ready"
    yield process, address
    process.terminate()
    process.wait(timeout=30)
    assert not os.path.exists(address)  # the server removes its socket when it stops


def run_job(tmp_path, address, how="", **env_changes):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    work = tmp_path / "cwd"
    work.mkdir(exist_ok=True)
    env = {**os.environ, job_server.ADDRESS_VARIABLE: address, "MARK": "from-the-job", "HOW": how}
    env.update(env_changes)
    args = [sys.executable, "-c", CLIENT, str(script), str(tmp_path / "log"), str(tmp_path / "out")]
    return subprocess.run(args, env=env, cwd=work, capture_output=True, text=True, timeout=120)


def test_a_job_runs_in_a_fork_with_its_environment_streams_and_exit_functions(server, tmp_path):
    process, address = server
    result = run_job(tmp_path, address)
    assert result.returncode == 0, result.stderr
    pid, parent, mark, cwd = (tmp_path / "out").read_text().split()
    assert int(parent) == process.pid and int(pid) != process.pid  # a fork of the server
    assert mark == "from-the-job" and cwd == str(tmp_path / "cwd")
    assert "to stdout" in result.stdout and "ran in the client" not in result.stdout
    assert "to stderr" in result.stderr
    assert (tmp_path / "out.atexit").read_text() == "ran"
    assert "job server: ran in a fork, CPU" in (tmp_path / "log").read_text()


@pytest.mark.parametrize(("how", "status", "message"), [("3", 3, ""), ("raise", 1, "boom")])
def test_the_job_exits_with_the_status_of_its_fork(server, tmp_path, how, status, message):
    result = run_job(tmp_path, server[1], how=how)
    assert result.returncode == status
    assert message in result.stderr
    assert (tmp_path / "out.atexit").exists()  # exit functions run on failure too


@pytest.mark.parametrize("variable", [VARIABLES[0], PLUGINS_VARIABLE])
def test_other_kernels_plugins_or_no_server_run_the_job_in_its_own_process(
    server, tmp_path, variable
):
    other = run_job(tmp_path, server[1], **{variable: "Sandybridge"})
    assert f"job server not used: (server's, job's) {{'{variable}'" in other.stderr
    assert "ran in the client" in other.stdout
    nobody = run_job(tmp_path, str(tmp_path / "no-socket"))
    assert "job server not used: no answer at" in nobody.stderr
    assert "ran in the client" in nobody.stdout


def test_a_killed_job_takes_its_fork_with_it(server, tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = {**os.environ, job_server.ADDRESS_VARIABLE: server[1], "HOW": "sleep"}
    args = [sys.executable, "-c", CLIENT, str(script), str(tmp_path / "log"), str(tmp_path / "out")]
    client = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL)
    for _ in range(600):
        if (tmp_path / "out").exists() and (tmp_path / "out").read_text():
            break
        time.sleep(0.05)
    fork = int((tmp_path / "out").read_text().split()[0])
    client.send_signal(signal.SIGKILL)
    client.wait()
    for _ in range(200):
        try:
            os.kill(fork, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the fork {fork} of a killed job is still running")


def test_start_serves_this_process_s_jobs_until_it_exits(tmp_path):
    code = (
        "import os, sys; from unishift.workflow import job_server;"
        f"server = job_server.start({str(tmp_path / 'server.log')!r});"
        "print(server.pid, os.environ[job_server.ADDRESS_VARIABLE])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    pid, address = result.stdout.split()
    assert address.endswith("socket") and not os.path.exists(os.path.dirname(address))
    with pytest.raises(ProcessLookupError):  # stopped, and waited for, at the starter's exit
        os.kill(int(pid), 0)


# A figure of each kind the shared run draws, and the log of the job that draws it (under
# results/logs; the reliability diagrams and 2-D maps are compared in-process,
# tests/report/test_report_figures.py).
FIGURE_JOBS = {
    "plots/cap_label_err_by_shift.png": "plots/cap_label_err_by_shift.log",
    "regimes/cap_label.png": "regimes/cap_label.log",
    "cd/cap_label.png": "tables/cap_label.log",
}


def test_a_figure_job_run_alone_writes_the_bytes_it_wrote_in_the_server(
    finished_test_run, tmp_path
):
    """The shared run drew its figures in forks of the job server, which imported QuaPy (whose
    quapy/plot.py changes matplotlib's global settings); each figure job run again in a process of
    its own (job_server: false) writes the same bytes (issue 32: 3120x2338 at 200 dpi in the server,
    1498x1181 at 100 dpi without it)."""
    from tests.workflow.test_workflow import snakemake
    from tests.workflow.test_workflow_reruns import copy_run

    work = copy_run(finished_test_run, tmp_path / "wf")
    results = work / "results"
    for log in FIGURE_JOBS.values():
        assert "job server: ran in a fork" in (results / "logs" / log).read_text(), log
    drawn = {figure: (results / figure).read_bytes() for figure in FIGURE_JOBS}
    for figure in FIGURE_JOBS:
        (results / figure).unlink()
    targets = [f"results/{figure}" for figure in FIGURE_JOBS]
    snakemake(
        "--cores", "1", *targets, "--configfile", ".test/config.yaml",
        "--config", "job_server=False", cwd=work,
    )  # fmt: skip
    for figure, log in FIGURE_JOBS.items():
        assert "job server" not in (results / "logs" / log).read_text(), log
        assert (results / figure).read_bytes() == drawn[figure], figure
