"""A real SLURM run: a one-node cluster on localhost executes `.test/config.yaml` through the
snakemake SLURM executor plugin with `profiles/slurm`, and its results equal a local run's byte for byte.

Slow (every job waits for the plugin's squeue polling) and it needs root (apt-get for `slurm-wlm` and
`munge`, slurmd, /etc/slurm/slurm.conf), so it runs only where asked for: in CI (`CI` set) or with
`UNISHIFT_CLUSTER_TESTS=1`; `UNISHIFT_CLUSTER_TESTS=0` turns it off in CI too.
"""

from __future__ import annotations

import contextlib
import filecmp
import getpass
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.workflow.test_workflow import assert_identical, copy_workflow

pytestmark = [pytest.mark.cluster, pytest.mark.workflow]

# The command the README's cluster section shows, with the tiny config.
SLURM_ARGS = ("--executor", "slurm", "--profile", "profiles/slurm", "--workflow-profile", "none")
TEST_CONFIG = ("--configfile", ".test/config.yaml")
# Wall-clock limit of the SLURM run of `.test/config.yaml`. Measured on the shared 2-core build machine:
# the whole test (local reference run + SLURM run; the local run is now the session's shared one) took 7.0 min at load average 2-4 and 17 min at
# 8-10 (8.7 min of it the SLURM run). CI has 90 minutes on 2 cores; the rest of the suite takes ~8.
RUN_BUDGET_S = 1800
DAEMONS = ("munged", "slurmctld", "slurmd")
PACKAGES = ("slurm-wlm", "munge")
# The job-step plugin strips SLURM_* variables (SLURM_CONF included) before its inner `srun`, so the
# configuration must also sit where SLURM's client commands look without it.
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")
MARKER = "# written by unishift tests/workflow/test_cluster_slurm.py"


def _enabled() -> bool:
    # Opt-in: the run takes 7-17 minutes on 2 cores (every job waits for squeue polling), more than
    # the whole rest of the suite, which CI keeps well under 15 minutes.
    return os.environ.get("UNISHIFT_CLUSTER_TESTS") == "1"


def _install_slurm() -> str | None:
    """Install the Debian packages when a daemon is missing; the reason it is impossible, or None."""
    if all(shutil.which(name) or Path("/usr/sbin", name).exists() for name in (*DAEMONS, "sbatch")):
        return None
    if shutil.which("apt-get") is None:
        return f"{' and '.join(PACKAGES)} are not installed and there is no apt-get to install them"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *PACKAGES]):
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        if result.returncode != 0:
            return f"`{' '.join(command)}` failed: {result.stderr.strip()[-500:]}"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _daemon(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise RuntimeError("no MemTotal in /proc/meminfo")


def slurm_conf(root: Path, ports: tuple[int, int], munge_socket: Path) -> str:
    """One node, one partition; no cgroups, no accounting daemon (containers have neither)."""
    host = socket.gethostname().split(".")[0]
    memory = int(_memory_mb() * 0.8)
    user = getpass.getuser()
    return f"""\
{MARKER}
ClusterName=unishift
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ports[0]}
SlurmdPort={ports[1]}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=unishift NodeHostname={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory={memory} State=UNKNOWN
PartitionName=main Nodes=unishift Default=YES MaxTime=INFINITE State=UP
"""


class ClusterUnavailable(RuntimeError):
    """The local cluster cannot be set up on this machine (the test skips with this reason)."""


class LocalSlurm:
    """munged + slurmctld + slurmd under ``root``; ``env`` points the SLURM clients at them."""

    def __init__(self, root: Path):
        self.root = root
        self.processes: list[subprocess.Popen] = []
        self.env = dict(os.environ)
        self.installed_conf = False
        self.logs: list = []

    def start(self) -> None:
        root = self.root
        for sub in ("state", "spool", "munge"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        (root / "munge").chmod(0o700)
        key = root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        munge_socket = root / "munge" / "munge.socket"
        conf = root / "slurm.conf"
        conf.write_text(slurm_conf(root, (_free_port(), _free_port()), munge_socket))
        self.env["SLURM_CONF"] = str(conf)
        self._install_conf(conf)
        self._spawn(
            _daemon("munged"),
            "--foreground",
            "--force",
            f"--key-file={key}",
            f"--socket={munge_socket}",
            f"--pid-file={root / 'munge' / 'munged.pid'}",
            f"--log-file={root / 'munge' / 'munged.log'}",
            f"--seed-file={root / 'munge' / 'munged.seed'}",
        )
        self._wait(lambda: munge_socket.exists(), "munged socket", root / "munge" / "munged.log")
        self._spawn(_daemon("slurmctld"), "-D", "-i", "-f", str(conf))
        self._wait(
            lambda: self._ok(["scontrol", "ping"], "UP"), "slurmctld", root / "slurmctld.log"
        )
        self._spawn(_daemon("slurmd"), "-D", "-N", "unishift", "-f", str(conf))
        self._wait(
            lambda: self._ok(["sinfo", "-h", "-N", "-o", "%T"], "idle"),
            "an idle node",
            root / "slurmd.log",
        )

    def _install_conf(self, conf: Path) -> None:
        """Copy the configuration to SLURM's default path unless another cluster's file is there."""
        if SYSTEM_CONF.exists() and not SYSTEM_CONF.read_text().startswith(MARKER):
            raise ClusterUnavailable(f"{SYSTEM_CONF} belongs to another SLURM installation")
        SYSTEM_CONF.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(conf, SYSTEM_CONF)
        self.installed_conf = True

    def _spawn(self, *command: str) -> None:
        log = open(self.root / f"{Path(command[0]).name}.out", "w")
        self.logs.append(log)
        self.processes.append(
            subprocess.Popen(
                command, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        )

    def _ok(self, command: list[str], expected: str) -> bool:
        result = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=30)
        return result.returncode == 0 and expected in result.stdout

    def _wait(self, ready, what: str, log: Path, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            for process in self.processes:
                if process.poll() is not None:
                    break
            else:
                time.sleep(0.5)
                continue
            break
        text = log.read_text()[-3000:] if log.exists() else "(no log)"
        out = "\n".join(
            (self.root / f"{d}.out").read_text()[-1500:]
            for d in DAEMONS
            if (self.root / f"{d}.out").exists()
        )
        raise RuntimeError(f"{what} did not come up:\n{text}\n{out}")

    def stop(self) -> None:
        """Stop the daemons started here, newest first, by their process ids."""
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)
        self.processes.clear()
        for log in self.logs:
            log.close()
        self.logs.clear()
        if self.installed_conf and SYSTEM_CONF.exists():
            SYSTEM_CONF.unlink()
            self.installed_conf = False


@contextlib.contextmanager
def local_slurm(root: Path):
    cluster = LocalSlurm(root)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def slurm_cluster(tmp_path):
    if not _enabled():
        pytest.skip(
            "the SLURM test is opt-in: set UNISHIFT_CLUSTER_TESTS=1 (root, apt-get, ~10 min)"
        )
    if sys.platform != "linux":
        pytest.skip("the local SLURM cluster needs Linux")
    if os.geteuid() != 0:
        pytest.skip(f"the local SLURM cluster needs root (apt-get, slurmd, {SYSTEM_CONF})")
    reason = _install_slurm()
    if reason:
        pytest.skip(reason)
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        pytest.skip("snakemake-executor-plugin-slurm is not installed")
    try:
        with local_slurm(tmp_path / "slurm") as cluster:
            yield cluster
    except ClusterUnavailable as err:
        pytest.skip(str(err))


def test_slurm_run_equals_local_run(tmp_path, slurm_cluster, finished_test_run):
    local = finished_test_run[0]  # the session's local run of the same config
    remote = copy_workflow(tmp_path / "remote")
    command = [sys.executable, "-m", "snakemake", *SLURM_ARGS, *TEST_CONFIG]
    result = subprocess.run(
        command,
        cwd=remote,
        env=slurm_cluster.env,
        capture_output=True,
        text=True,
        timeout=RUN_BUDGET_S,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{result.stdout[-5000:]}\n{result.stderr[-5000:]}"
    assert "SLURM run ID" in output
    # each method's evaluate job went out in batch jobs of `group-components` methods each (the
    # rule's group, docs/evaluation-jobs.md; per_method jobs write their record files themselves)
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    group = "evaluation"
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    n_methods = sum(len(methods) for methods in config["methods"]["label"].values())
    batches = re.findall(
        rf"submitted with SLURM jobid \d+ \(log: \S*/group_{group}_evaluate/",
        output,
    )
    assert len(batches) == math.ceil(n_methods / profile["group-components"][group])
    assert "rule_evaluate/" not in output  # no evaluate job went out on its own
    for folder in ("eval", "tables"):
        assert_identical(filecmp.dircmp(local / "results" / folder, remote / "results" / folder))


def test_the_documented_slurm_command_is_the_tested_one():
    """The cluster command of docs/running.md (which the README links) is the one this test submits
    (there with .test/config.yaml)."""
    command = " ".join(("snakemake", *SLURM_ARGS, "--configfile"))
    assert command in (REPO / "docs" / "running.md").read_text()
    assert "docs/running.md" in (REPO / "README.md").read_text()
