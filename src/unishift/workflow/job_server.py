"""The job server: a warm process that runs each workflow job's script in a fork of itself, or
lets the job run alone where it cannot (docs/evaluation-jobs.md, "The job server")."""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import pickle
import resource
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile

ADDRESS_VARIABLE = "UNISHIFT_JOB_SERVER"
# what the scripts that hand themselves to the server import (workflow/scripts)
PRELOAD = (
    "numpy",
    "pandas",
    "scipy.stats",
    "sklearn.linear_model",
    "snakemake.iocontainers",
    "unishift.workflow.jobs",
    "unishift.evaluation.evaluate",
    "unishift.data.label_shift",
    "unishift.data.covariate",
    "unishift.workflow.domain_weight_artifacts",
    "unishift.regimes.setups",
    "unishift.report.pipeline",
    "unishift.report.regimes",
    "unishift.workflow.provenance",
)


def _process() -> dict:
    """The interpreter and library of this process."""
    library = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return {"python": sys.executable, "prefix": sys.prefix, "library": library}


def _fingerprint(process: dict, environ: dict) -> dict:
    """What a job and the server must share for the fork to compute what the job would: the
    interpreter, the library, the CPU kernels and the plugins the registry loaded."""
    from unishift.cpu_kernels import PROFILE_VARIABLE, VARIABLES
    from unishift.methods.registry import PLUGINS_VARIABLE

    names = (PROFILE_VARIABLE, *VARIABLES, PLUGINS_VARIABLE)
    return {**process, **{name: environ.get(name) for name in names}}


def run_in_server(job, script: str) -> None:
    """Run this job's ``script`` in the job server and exit with its status; return (and let the
    script run here) where no server is started, none answers, or the server refuses the job."""
    address = os.environ.get(ADDRESS_VARIABLE)  # a fork's environment lacks it: it runs the script
    if not address:
        return
    request = {
        "script": os.path.abspath(script),
        "job": pickle.dumps(job),
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "process": _process(),
    }
    payload = pickle.dumps(request)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.connect(address)
            socket.send_fds(connection, [struct.pack("!Q", len(payload))], [0, 1, 2])
            connection.sendall(payload)
            with connection.makefile("rb") as stream:
                answer = stream.read()
        reply = json.loads(answer) if answer else {"refused": "the server closed without an answer"}
    except OSError as error:
        reply = {"refused": f"no answer at {address} ({error})"}
    if "status" not in reply:
        print(f"unishift job server not used: {reply.get('refused')}", file=sys.stderr)
        return
    if job.log:  # the job's own CPU, which Snakemake's benchmark file does not see
        client = resource.getrusage(resource.RUSAGE_SELF)
        with open(job.log[0], "a") as log:
            cpu = f"CPU {reply['user']:.3f} s user, {reply['sys']:.3f} s sys"
            own = f"this job's process {client.ru_utime + client.ru_stime:.3f} s"
            print(f"job server: ran in a fork, {cpu}; {own}", file=log)
    sys.exit(reply["status"])


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    header, fds, _, _ = socket.recv_fds(connection, 8, 3)
    try:
        (size,) = struct.unpack("!Q", header)
        with connection.makefile("rb") as stream:
            payload = stream.read(size)
        if len(payload) < size:
            raise ConnectionError("the job closed its connection before its request ended")
        return pickle.loads(payload), fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def warm_up() -> None:
    """Import what the jobs import: the server does it once, before its first fork."""
    import importlib

    from unishift.cpu_kernels import thread_pools
    from unishift.data.quapy_loader import load_quapy
    from unishift.methods.registry import all_methods

    for module in PRELOAD:
        importlib.import_module(module)
    load_quapy()  # before PyTorch, as a job that uses only QuaPy loads it
    importlib.import_module("torch")  # LasCal's and TransCal's reference arithmetic
    all_methods()  # every method module, and the plugins of the run's environment
    thread_pools()  # the libraries' scan, which start_job would repeat in every fork


def serve(address: str) -> dict | None:
    """Accept jobs at ``address`` until terminated or orphaned; in each forked job, return its
    request (the caller runs it); in the server itself, return None at the end."""
    warm_up()
    # the imported objects leave the collector's generations: a fork's collections then do not
    # touch (and copy) the pages it shares with the server
    gc.freeze()
    server_pid, parent = os.getpid(), os.getppid()
    own = _fingerprint(_process(), os.environ)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    running: dict[int, socket.socket] = {}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("ready", flush=True)
    try:
        while os.getppid() == parent:
            for key, _ in selector.select(timeout=0.05):
                if key.fileobj is not listener:  # a job gone before its fork ended: stop the fork
                    if key.data in running:
                        os.kill(key.data, signal.SIGTERM)
                    selector.unregister(key.fileobj)
                    continue
                connection, _ = listener.accept()
                # a job sends its request at once; none may stall the rest
                connection.settimeout(60)
                try:
                    request, fds = _receive(connection)
                except (OSError, ValueError, struct.error, pickle.UnpicklingError) as error:
                    connection.close()
                    print(f"a request failed: {error}", file=sys.stderr, flush=True)
                    continue
                theirs = _fingerprint(request["process"], request["env"])
                if theirs != own:
                    differ = {k: (own[k], theirs[k]) for k in own if own[k] != theirs[k]}
                    reply = {"refused": f"(server's, job's) {differ}"}
                    connection.sendall(json.dumps(reply).encode())
                    connection.close()
                else:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    pid = os.fork()
                    if pid == 0:
                        selector.close()
                        listener.close()
                        for other in (connection, *running.values()):
                            other.close()
                        signal.signal(signal.SIGTERM, signal.SIG_DFL)
                        for target, fd in enumerate(fds):
                            os.dup2(fd, target)
                            os.close(fd)
                        return request
                    running[pid] = connection
                    selector.register(connection, selectors.EVENT_READ, pid)
                for fd in fds:  # the job's streams: held open here, its reader would wait
                    os.close(fd)
            while running:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
                if pid == 0:
                    break
                connection = running.pop(pid)
                if connection in selector.get_map():  # not if the job went first
                    selector.unregister(connection)
                code = os.waitstatus_to_exitcode(status)
                reply = {"status": code, "user": usage.ru_utime, "sys": usage.ru_stime}
                with contextlib.suppress(OSError):
                    connection.sendall(json.dumps(reply).encode())
                connection.close()
    finally:
        if os.getpid() == server_pid:
            for pid in running:
                os.kill(pid, signal.SIGTERM)
            os.unlink(address)
    return None


def _interpreter(address: str, log) -> subprocess.Popen:
    """The server in an interpreter of its own: its stdout a pipe, its stderr ``log``."""
    return subprocess.Popen(
        [sys.executable, "-m", "unishift.workflow.job_server", address],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )


def start(log_path: str, launch=_interpreter):
    """Start a server for this process's jobs (they inherit its address through the environment)
    and stop it when this process exits; None, with the reason on stderr, where it does not start.
    ``launch(address, log)`` starts the server's process, whose stderr is the open ``log``, and
    returns its handle as ``subprocess.Popen`` does: ``stdout`` (its first line "ready" once it
    serves), ``terminate()`` and ``wait()``."""
    folder = tempfile.mkdtemp(prefix="unishift-jobs-")  # AF_UNIX paths must stay short
    address = os.path.join(folder, "socket")
    with open(log_path, "w") as log:
        server = launch(address, log)
    if server.stdout.readline().strip() != "ready":
        server.wait()
        print(f"unishift job server did not start ({log_path}); jobs run alone", file=sys.stderr)
        return None
    os.environ[ADDRESS_VARIABLE] = address

    def stop():
        os.environ.pop(ADDRESS_VARIABLE, None)
        server.terminate()
        server.wait()
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    return server


def _run(request: dict) -> int:
    """Run a job's script in this fork as Python would run it alone; its exit status."""
    import runpy

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    del os.environ[ADDRESS_VARIABLE]
    sys.argv = [request["script"]]
    try:
        job = pickle.loads(request["job"])
        runpy.run_path(request["script"], init_globals={"snakemake": job}, run_name="__main__")
        status = 0
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else 0 if exit.code is None else 1
        if not isinstance(exit.code, int | None):
            print(exit.code, file=sys.stderr)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        status = 1
    # what an interpreter's exit does, without tearing down the modules the fork shares with the
    # server (that teardown costs a fork about 0.08 CPU s)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        # closed by an exit function, as the job's log file is
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    return status


if __name__ == "__main__":
    forked_request = serve(sys.argv[1])
    if forked_request is not None:
        os._exit(_run(forked_request))
