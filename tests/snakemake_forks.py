"""The tests' snakemake runs, each in a fork of one warm process instead of a fresh interpreter.

About 50 workflow tests start ``python -m snakemake``, and each such process spent about 3.3 of its
4-5 CPU seconds of a dry run importing Snakemake and the library before reading the Snakefile
(docs/testing.md, "The warm snakemake process"). Here one process imports them once, then runs
each invocation in a fork of itself: the fork changes to the run's folder and environment, points
its standard streams at files and calls Snakemake's command line, so that what it prints, its exit
status and the files it writes are those of ``python -m snakemake``.

A fork computes what a fresh process would only where nothing read at import time differs: it
runs in the environment the warm process started with (the CPU-kernel pin, the plugin variable,
``PYTHONPATH``, the cache folder), which is the test process's; where that changed, the warm
process starts again. A run given an environment of its own (the kernel-switch test, a plugin's, a
library copy's) starts a fresh interpreter as before.

The warm process also imports what the workflow's job server imports (about 3.8 CPU s in each
fresh server). A run's server, which the library starts as a fresh interpreter, is then a fork of
the run (``_launch_job_server_in_a_fork``), where what that interpreter would load is what the warm
process loaded: the same CPU-kernel pin, plugins, numerical libraries' variables and import path.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
# what `python -m snakemake` imports before it reads the Snakefile, and what common.smk imports
PRELOAD = (
    "snakemake.cli",
    "snakemake.api",
    "snakemake.workflow",
    "snakemake.dag",
    "snakemake.utils",
    "snakemake.executors.local",
    "snakemake.executors.dryrun",
    "unishift.evaluation.records",
    "unishift.methods.base",
    "unishift.methods.registry",
    "unishift.report.regimes",
    "unishift.report.summary",
    "unishift.report.table_specs",
    "unishift.workflow.code_version",
    "unishift.workflow.config_access",
    "unishift.workflow.prepare",
    "unishift.workflow.provenance",
)
# set by pytest for each test: not read by Snakemake or the library
IGNORED_VARIABLES = frozenset({"PYTEST_CURRENT_TEST"})
DISABLE_VARIABLE = "UNISHIFT_TEST_FRESH_SNAKEMAKE"  # "1": every run in a fresh interpreter


def _comparable(environ) -> dict:
    return {k: v for k, v in environ.items() if k not in IGNORED_VARIABLES}


def serve() -> None:
    """The warm process: import, then run each request (a JSON line on stdin) in a fork, one at a
    time, and answer the fork's pid, then its exit status and CPU seconds (JSON lines)."""
    import importlib

    reply = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # a stray print must not garble the replies
    for module in PRELOAD:
        importlib.import_module(module)
    global _SERVER_STATE, _IMPORT_PATH
    from unishift.workflow import job_server

    job_server.warm_up()
    _SERVER_STATE = _job_server_state(os.environ)
    _IMPORT_PATH = _import_path(os.environ, os.getcwd())
    reply.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _run_in_fork(request)  # never returns
        reply.write(json.dumps({"pid": pid}) + "\n")
        _, status, usage = os.wait4(pid, 0)
        reply.write(
            json.dumps(
                {
                    "returncode": os.waitstatus_to_exitcode(status),
                    "cpu_s": usage.ru_utime + usage.ru_stime,
                }
            )
            + "\n"
        )


def _run_in_fork(request: dict) -> None:
    """Become ``python -m snakemake ARGS`` in the request's folder and environment, and exit."""
    code = 1
    try:
        os.setpgid(0, 0)  # a timeout kills the run's whole process tree
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[0] = os.getcwd()  # as `python -m` puts it
        from snakemake.workflow import Workflow

        # the one folder Snakemake notes at import: the run directory of its log's header
        Workflow._rundir = os.getcwd()
        for fd, path, mode in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], os.O_WRONLY),
                               (2, request["stderr"], os.O_WRONLY)):  # fmt: skip
            target = os.open(path, mode)
            os.dup2(target, fd)
            os.close(target)
        from importlib.util import find_spec

        from snakemake.cli import main

        from unishift.workflow import job_server

        job_server.start = functools.partial(job_server.start, launch=_launch_job_server_in_a_fork)
        # the script path `python -m snakemake` runs (Snakemake prints it as the command)
        sys.argv = [find_spec("snakemake.__main__").origin, *request["args"]]
        try:
            main(request["args"])
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        # what the interpreter does on exit: wait for non-daemon threads, then the atexit handlers
        threading._shutdown()
        atexit._run_exitfuncs()
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)


# what a fresh interpreter reads at import and a fork would keep from the warm process: the job
# server's fingerprint (interpreter, library, CPU-kernel pin, plugins) and the variables the
# numerical libraries read as they load
_LOAD_TIME_PREFIXES = ("OMP_", "OPENBLAS_", "MKL_", "NPY_", "KMP_", "GOTO", "TORCH", "PYTHON")
# the warm process's, once it imported what the server does
_SERVER_STATE: dict | None = None
_IMPORT_PATH: set[Path] = set()  # the warm process's PYTHONPATH folders
# the first line of such a server's log (results/logs/job_server.log)
FORKED_SERVER_LINE = "job server: a fork of the run's snakemake process (tests/snakemake_forks.py)"


def _job_server_state(environ) -> dict:
    from unishift.workflow import job_server

    return {
        "fingerprint": job_server._fingerprint(job_server._process(), environ),
        "load_time": {
            k: v
            for k, v in environ.items()
            if k.startswith(_LOAD_TIME_PREFIXES) and k != "PYTHONPATH"
        },
    }


def _import_path(environ, cwd) -> set[Path]:
    """The existing folders of ``PYTHONPATH`` (relative ones from ``cwd``), but the one holding
    the library this process imported (the Snakefile puts its checkout's ``src`` first)."""
    import unishift

    library = Path(unishift.__file__).resolve().parents[1]
    folders = {
        (Path(cwd) / p).resolve() for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p
    }
    return {folder for folder in folders if folder.is_dir() and folder != library}


def _imports_differ(environ, cwd, imported_path: set[Path]) -> bool:
    """Whether a fresh interpreter in ``environ`` and ``cwd`` would import one of this process's
    modules from elsewhere than this process, whose ``PYTHONPATH`` folders were ``imported_path``:
    a folder only the fresh one has holds one of the modules' top-level names, or one only this
    process had holds a module it imported."""
    path = _import_path(environ, cwd)
    names = {name.partition(".")[0] for name in sys.modules}
    for folder in path - imported_path:
        if names & {entry.name.partition(".")[0] for entry in folder.iterdir()}:
            return True
    gone = imported_path - path
    if not gone:
        return False
    modules = list(sys.modules.values())
    files = [Path(f).resolve() for m in modules if (f := getattr(m, "__file__", None))]
    return any(f.is_relative_to(folder) for folder in gone for f in files)


class _ForkedServer:
    """A job server forked from the run's process, with the handle ``subprocess.Popen`` gives."""

    def __init__(self, pid: int, ready: int):
        self.pid, self.stdout = pid, open(ready)

    def terminate(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)

    def wait(self) -> None:
        with contextlib.suppress(ChildProcessError):  # waited for already
            os.waitpid(self.pid, 0)


def _launch_job_server_in_a_fork(address: str, log):
    """The launcher ``unishift.workflow.job_server.start`` takes, for a run in a fork of the warm
    process: the server is a fork of the run's process, which already imported what the server
    imports (about 3.8 CPU s of a fresh server's start), where what a fresh interpreter would load
    is what the warm process loaded; else the library's own, a fresh interpreter. The fork then runs
    as such a server: its own streams, no exit handler of the run's, its jobs in forks of it."""
    from unishift.workflow import job_server

    if (
        _SERVER_STATE is None
        or _job_server_state(os.environ) != _SERVER_STATE
        or _imports_differ(os.environ, os.getcwd(), _IMPORT_PATH)
    ):
        return job_server._interpreter(address, log)
    ready, ready_writer = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    with warnings.catch_warnings():  # Snakemake's threads wait on their own locks, unused here
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(ready)
            atexit._clear()
            signal.signal(signal.SIGINT, signal.default_int_handler)
            null = os.open(os.devnull, os.O_RDONLY)
            for fd, target in ((null, 0), (ready_writer, 1)):
                os.dup2(fd, target)
                os.close(fd)
            os.dup2(log.fileno(), 2)
            # new stream objects: the run's may hold a lock of one of its threads
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", buffering=1, closefd=False)
            print(FORKED_SERVER_LINE, file=sys.stderr)
            request = job_server.serve(address)  # returns in the server's forks, one per job
            code = 0 if request is None else job_server._run(request)
        except SystemExit as exit_:  # the server's end: its SIGTERM handler exits
            code = exit_.code if isinstance(exit_.code, int) else 0
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(ready_writer)
    return _ForkedServer(pid, ready)


class WarmSnakemake:
    """The client side: one warm process per test session, started at the first run."""

    def __init__(self):
        self._process = None
        self._environ = None
        self._lock = threading.Lock()
        self.starts = 0
        # what the running warm process's forks used: the pytest process sees it only once it
        # waited for that process, whose own count of its waited-for children then includes it
        self.forked_cpu_s = 0.0

    def _start(self) -> None:
        """Start the warm process in this process's environment (again, where that changed since:
        tests/conftest.py sets the one variable PyTorch would set halfway, so only a test's own
        change does)."""
        self.close()
        self._environ = _comparable(os.environ)
        self._process = subprocess.Popen(
            [sys.executable, "-c", "from tests.snakemake_forks import serve; serve()"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        if json.loads(self._process.stdout.readline() or "{}").get("ready") is not True:
            raise RuntimeError("the warm snakemake process did not start")
        self.starts += 1
        if self.starts == 1:
            atexit.register(self.close)

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.stdin.close()
            self._process.wait(timeout=60)
            self.forked_cpu_s = 0.0  # now in this process's children's count

    def can_run(self, env) -> bool:
        """Whether a run in ``env`` (None: this process's) can be a fork: its environment is this
        process's, for which the warm process is (re)started; a run given an environment of its
        own starts a fresh interpreter."""
        if os.environ.get(DISABLE_VARIABLE) == "1":
            return False
        return env is None or _comparable(env) == _comparable(os.environ)

    def run(self, args, cwd, env, timeout) -> subprocess.CompletedProcess:
        with self._lock:
            if self._process is None or self._environ != _comparable(os.environ):
                self._start()
            with tempfile.TemporaryDirectory(prefix="snakemake-fork-") as folder:
                out, err = Path(folder, "stdout"), Path(folder, "stderr")
                out.touch()
                err.touch()
                request = {
                    "args": [str(a) for a in args],
                    "cwd": str(Path(cwd).resolve()),
                    "env": dict(os.environ if env is None else env),
                    "stdout": str(out),
                    "stderr": str(err),
                }
                self._process.stdin.write(json.dumps(request) + "\n")
                self._process.stdin.flush()
                pid = json.loads(self._process.stdout.readline())["pid"]
                answer = self._answer(pid, timeout)
                self.forked_cpu_s += answer["cpu_s"]
                return subprocess.CompletedProcess(
                    [*SNAKEMAKE, *args],
                    answer["returncode"],
                    out.read_text(errors="replace"),
                    err.read_text(errors="replace"),
                )

    def _answer(self, pid: int, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:  # an epoll descriptor: closed after each run
            selector.register(self._process.stdout, selectors.EVENT_READ)
            while not selector.select(max(0.0, deadline - time.monotonic())):
                if time.monotonic() >= deadline:
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    json.loads(self._process.stdout.readline())
                    raise subprocess.TimeoutExpired([*SNAKEMAKE], timeout)
        return json.loads(self._process.stdout.readline())


WARM = WarmSnakemake()


def run_snakemake(args, cwd, env=None, timeout=1200) -> subprocess.CompletedProcess:
    """``python -m snakemake ARGS`` in ``cwd`` (``subprocess.run``'s result, output captured as
    text): in a fork of the warm process where the environment allows, else a fresh one."""
    if WARM.can_run(env):
        return WARM.run(args, cwd, env, timeout)
    return run_fresh(args, cwd, env, timeout)


def run_fresh(args, cwd, env=None, timeout=1200) -> subprocess.CompletedProcess:
    """``python -m snakemake ARGS`` in ``cwd``, in a fresh interpreter whatever the environment."""
    return subprocess.run(
        [*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )
