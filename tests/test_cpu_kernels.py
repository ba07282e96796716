"""Same numbers on every machine, without a second machine (docs/determinism.md).

Two OpenBLAS kernels that this CPU can run, and NumPy's dispatch with and without its AVX-512 loops
(where the CPU has them), are forced from outside the workflow, through the environment of the
snakemake process. The tests first show that the two kernels, and the two NumPy dispatches, do give
different last bits here (a classifier's posteriors; np.exp, np.log and np.tanh over a million
normals, computed under each, unpinned), so that they cannot pass vacuously; then a small run under
each must write identical result files, every job having computed with the pinned cpu_kernels.
"""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys

import pytest
import yaml

from tests.conftest import KERNELS_PINNED, REPO
from unishift import cpu_kernels

# The probe: a logistic regression fitted by lbfgs, whose gradient is a BLAS matrix product.
PROBE = """
import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_info
rng = np.random.default_rng(0)
X = rng.normal(size=(400, 30)) @ rng.normal(size=(30, 30))
y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
p = LogisticRegression(max_iter=200).fit(X, y).predict_proba(X)[:, 1]
arch = [i.get("architecture") for i in threadpool_info() if i.get("internal_api") == "openblas"]
print(arch[0], p.tobytes().hex())
"""

# Core types from the oldest to the newest instruction set, with the CPU flags each needs.
CORE_TYPES = (("Sandybridge", ("avx",)), ("Haswell", ("avx2", "fma")), ("SkylakeX", ("avx512f",)))


# NumPy 2.4's names of its AVX-512 dispatch targets (numpy._core._multiarray_umath.__cpu_dispatch__)
AVX512_TARGETS = ("X86_V4", "AVX512_ICL", "AVX512_SPR")
# NumPy forced from outside: every target the CPU has (nothing set), or the AVX-512 ones disabled
# through the variable the pin does not set (and must clear: NumPy refuses both lists at once)
NUMPY_FORCED = {
    "AVX-512 on": {},
    "AVX-512 off": {"NPY_DISABLE_CPU_FEATURES": " ".join(AVX512_TARGETS)},
}


def forced_environment(core_type: str, numpy_forced: dict | None = None) -> dict[str, str]:
    """This process's environment without the pinned profile, OpenBLAS forced to core_type and
    NumPy's dispatch to numpy_forced."""
    env = {k: v for k, v in os.environ.items() if k not in cpu_kernels.VARIABLES}
    env.pop(cpu_kernels.PROFILE_VARIABLE, None)
    env["OPENBLAS_CORETYPE"] = core_type
    env.update(numpy_forced or {})
    return env


def probe(core_type: str) -> tuple[str, str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=forced_environment(core_type),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    architecture, bits = result.stdout.split()
    return architecture, bits


@pytest.fixture(scope="module")
def two_kernels():
    """Two core types this CPU runs whose last bits differ, or a skip with the reason."""
    flags = cpu_kernels.cpu_flags()
    if flags is None or cpu_kernels.platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("needs an x86-64 Linux machine whose CPU flags can be read")
    runnable = [name for name, needs in CORE_TYPES if all(f in flags for f in needs)]
    if len(runnable) < 2:
        pytest.skip(f"this CPU runs only the OpenBLAS core types {runnable}; two are needed")
    # the two outermost, so that neither is the pinned Haswell where a third is available
    first, second = runnable[0], runnable[-1]
    (arch_a, bits_a), (arch_b, bits_b) = probe(first), probe(second)
    if arch_a.lower() != first.lower() or arch_b.lower() != second.lower():
        pytest.skip(
            f"OpenBLAS ignored the forced core types ({first}->{arch_a}, {second}->{arch_b})"
        )
    if bits_a == bits_b:
        pytest.skip(f"{first} and {second} give the same last bits on the probe on this CPU")
    return first, second


def test_the_probe_tells_the_kernels_apart(two_kernels):
    """The precondition itself, reported as a test: unpinned, the two kernels differ here."""
    first, second = two_kernels
    assert probe(first)[1] != probe(second)[1]


# NumPy's own loops: the transcendental functions the methods' softmax, likelihoods and logits run
NUMPY_PROBE = """
import hashlib
import numpy as np
from unishift.cpu_kernels import numpy_dispatch
x = np.random.default_rng(0).normal(size=1_000_000)
out = np.exp(x).tobytes() + np.log(np.abs(x)).tobytes() + np.tanh(x).tobytes()
print(",".join(numpy_dispatch()) or "baseline", hashlib.sha256(out).hexdigest())
"""


def numpy_probe(env: dict[str, str]) -> tuple[list[str], str]:
    result = subprocess.run(
        [sys.executable, "-c", NUMPY_PROBE], env=env, capture_output=True, text=True, timeout=120,
        check=True,
    )  # fmt: skip
    dispatch, digest = result.stdout.split()
    return dispatch.split(","), digest


@pytest.fixture(scope="module")
def two_numpy_dispatches():
    """NumPy's dispatch forced with and without its AVX-512 loops, when this CPU has them and they
    give other last bits here; otherwise a skip with the reason."""
    on, off = (numpy_probe(forced_environment("Haswell", NUMPY_FORCED[k])) for k in NUMPY_FORCED)
    if not set(AVX512_TARGETS) & set(on[0]):
        pytest.skip(f"this CPU runs no AVX-512 loop of NumPy's (its dispatch: {on[0]})")
    if set(AVX512_TARGETS) & set(off[0]):
        pytest.skip(f"NumPy ignored NPY_DISABLE_CPU_FEATURES (its dispatch: {off[0]})")
    if on[1] == off[1]:
        pytest.skip("NumPy's loops with and without AVX-512 give the same bits on the probe here")
    return on, off


def test_numpys_avx512_loops_round_differently_here(two_numpy_dispatches):
    """The precondition, as a test: unpinned, NumPy's AVX-512 loops give other last bits than its
    AVX2 (X86_V3) ones, which is what an AVX2-only CPU runs."""
    (on_targets, on_digest), (off_targets, off_digest) = two_numpy_dispatches
    assert "X86_V4" in on_targets and off_targets == ["X86_V3"]
    assert on_digest != off_digest


def test_the_pin_gives_numpy_the_avx2_loops_whatever_is_forced(two_numpy_dispatches):
    """Pinned over either forced dispatch, NumPy runs the X86_V3 loops, and they give the bits of
    the AVX-512-off run (an AVX2-only CPU's)."""
    _, (_, avx2_digest) = two_numpy_dispatches
    for forced in NUMPY_FORCED.values():
        env = forced_environment("SkylakeX", forced)
        cpu_kernels.pin("avx2", env)
        assert "NPY_DISABLE_CPU_FEATURES" not in env
        assert numpy_probe(env) == (["X86_V3"], avx2_digest)


def test_this_session_runs_no_avx512_loop_of_numpys(pinned_kernels):
    """NumPy itself says which of its dispatch targets can run: under the pin only X86_V3."""
    from numpy._core import _multiarray_umath as umath

    assert cpu_kernels.numpy_dispatch() == ["X86_V3"]
    assert not [t for t in umath.__cpu_dispatch__ if umath.__cpu_features__.get(t) and (
        t.startswith("AVX512") or t == "X86_V4")]  # fmt: skip


def test_a_job_under_numpys_avx512_loops_or_a_wrong_target_name_stops(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "openblas_architecture", lambda: "Haswell")
    monkeypatch.setattr(cpu_kernels, "numpy_dispatch", lambda: ["X86_V3", "X86_V4", "AVX512_ICL"])
    with pytest.raises(cpu_kernels.KernelError, match="dispatches to .*X86_V4"):
        cpu_kernels.assert_pinned("avx2")
    # NumPy leaves every target off for a name it does not know, saying so in a hidden warning
    monkeypatch.setattr(cpu_kernels, "numpy_dispatch", lambda: [])
    with pytest.raises(cpu_kernels.KernelError, match="none \\(the baseline loops\\)"):
        cpu_kernels.assert_pinned("avx2")
    monkeypatch.setattr(cpu_kernels, "numpy_dispatch", lambda: ["X86_V3"])
    assert cpu_kernels.assert_pinned("avx2") == "Haswell"
    assert cpu_kernels.assert_pinned("native") == "Haswell"  # native pins nothing of NumPy's


@pytest.mark.parametrize("name", ["AVX2", "x86_v3 "])
def test_numpy_ignoring_a_target_name_is_caught_in_the_job(name):
    """A real NumPy given a name it does not know (AVX2 is a feature, not a dispatch target; the
    names are case-sensitive) only warns: the job's check must stop it."""
    if not KERNELS_PINNED:
        pytest.skip("this CPU cannot run the pinned AVX2 kernels")
    env = {**os.environ, "NPY_ENABLE_CPU_FEATURES": name}
    code = "from unishift import cpu_kernels; cpu_kernels.assert_pinned('avx2')"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.returncode != 0
    assert "KernelError" in result.stderr and "this NumPy does not know the name" in result.stderr


# .test/config.yaml cut to one data set, two classifiers fitted by BLAS products, the two methods
# whose search and optimiser turn last bits into decisions (LasCal; TransCal, on the shared weights
# of a domain classifier), both in PyTorch, and one method of each other task whose estimate is a
# numerical optimum (KDEy's likelihood; LEAP's linear system, or least squares over the simplex)
SMALL_RUN = {
    "shifts": ["label"],
    "label_shift": {"datasets": ["cmc.3"], "classifiers": ["LR", "MLP"], "sample_size": 50,
                    "n_samples": 6},
    "methods": {"label": {"calibration": ["LasCal", "TransCal"],
                          "quantification": ["KDEy"],
                          "cap": ["LEAP"]}},
    "evaluation_jobs": "per_method",
    "report_pdf": False,
    "selector": False,  # trained leave one data set out: one data set here
}  # fmt: skip


@pytest.fixture(scope="module")
def numpy_forcing(request):
    """The two NumPy dispatches the workflow runs are forced to, or nothing where this CPU has no
    AVX-512 loop of NumPy's (test_numpys_avx512_loops_round_differently_here says so)."""
    try:
        request.getfixturevalue("two_numpy_dispatches")
    except pytest.skip.Exception:
        return ({}, {})
    return tuple(NUMPY_FORCED.values())


@pytest.mark.workflow
def test_result_files_do_not_depend_on_the_cpu_kernel(two_kernels, numpy_forcing, tmp_path):
    from tests.workflow.test_workflow import (
        assert_same_arrays,
        copy_workflow,
        is_made_record,
        snakemake,
    )

    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    config.update({key: value for key, value in SMALL_RUN.items() if key != "label_shift"})
    config["label_shift"].update(SMALL_RUN["label_shift"])
    runs = {}
    for core_type, job_server, numpy_forced in zip(
        two_kernels, (False, True), numpy_forcing, strict=True
    ):
        # the second run's jobs run in forks of the job server, the first's each in its own process
        work = copy_workflow(tmp_path / core_type)
        (work / "small.yaml").write_text(yaml.safe_dump({**config, "job_server": job_server}))
        # the records and the three tables (with their CD diagrams) only: what the numbers decide
        targets = [
            *(f"results/tables/{task}_label.csv" for task in config["methods"]["label"]),
            *(f"results/eval/label/{task}/{method}.csv"
              for task, methods in config["methods"]["label"].items() for method in methods),
        ]  # fmt: skip
        # the targets before --configfile, which takes several values
        snakemake(
            "--cores",
            "2",
            *targets,
            "--configfile",
            "small.yaml",
            cwd=work,
            env=forced_environment(core_type, numpy_forced),
        )
        runs[core_type] = work / "results"
        logs = list((work / "results" / "logs" / "eval").rglob("*.log"))
        assert logs
        for log in logs:
            assert "CPU kernels: avx2 (OpenBLAS Haswell, NumPy X86_V3)" in log.read_text(), log
            assert ("job server: ran in a fork" in log.read_text()) == job_server, log
    first, second = (runs[c] for c in two_kernels)
    compared = 0
    for folder in ("eval", "tables", "posteriors", "samples"):
        files = sorted(
            p.relative_to(first)
            for p in (first / folder).rglob("*")
            if p.is_file() and not is_made_record(p)
        )
        assert files, folder
        for name in files:
            if name.suffix == ".npz":  # archives carry the time of writing: compare their arrays
                assert_same_arrays(first / name, second / name)
            else:
                assert filecmp.cmp(first / name, second / name, shallow=False), name
            compared += 1
    # every record file, three files per table, one posterior file per classifier, the samples
    label, methods = config["label_shift"], config["methods"]["label"]
    expected = sum(map(len, methods.values())) + 3 * len(methods) + len(label["classifiers"]) + 1
    assert compared == expected


def test_a_cpu_without_avx2_is_refused_with_the_fix():
    with pytest.raises(cpu_kernels.KernelError, match="lacks avx2.*cpu_kernels: native"):
        cpu_kernels.check_cpu("avx2", flags={"sse4_2", "fma"}, machine="x86_64")
    with pytest.raises(cpu_kernels.KernelError, match="aarch64.*cpu_kernels: native"):
        cpu_kernels.check_cpu("avx2", flags=set(), machine="aarch64")
    cpu_kernels.check_cpu("native", flags=set(), machine="aarch64")  # no kernel pinned: any machine


def test_pin_sets_and_clears_the_profile_variables():
    environ = {"OPENBLAS_CORETYPE": "SkylakeX", "PATH": "/bin"}
    cpu_kernels.pin("native", environ)
    assert environ == {"PATH": "/bin", cpu_kernels.PROFILE_VARIABLE: "native"}
    if cpu_kernels.cpu_flags() and {"avx2", "fma"} <= cpu_kernels.cpu_flags():
        cpu_kernels.pin("avx2", environ)
        assert environ["OPENBLAS_CORETYPE"] == "Haswell" and environ["MKL_CBWR"] == "COMPATIBLE"


def test_a_job_under_other_kernels_stops(monkeypatch):
    """assert_pinned compares the OpenBLAS core type in effect with the profile's."""
    monkeypatch.setattr(cpu_kernels, "openblas_architecture", lambda: "SkylakeX")
    with pytest.raises(cpu_kernels.KernelError, match="runs SkylakeX"):
        cpu_kernels.assert_pinned("avx2")
    monkeypatch.setattr(cpu_kernels, "openblas_architecture", lambda: "Haswell")
    assert cpu_kernels.assert_pinned("avx2") == "Haswell"


def test_this_session_computes_with_the_pinned_kernel(pinned_kernels):
    assert cpu_kernels.assert_pinned("avx2") == "Haswell"


def test_pytorchs_mkl_runs_the_pinned_branch_and_a_job_under_another_stops():
    """The branch is read from MKL, not from MKL_CBWR: MKL honours AVX2 on Intel CPUs only and runs
    AUTO elsewhere without a word (an AMD CPU wrote other covariate tables than an Intel one), so
    the profile pins COMPATIBLE, which MKL runs on every x86-64 CPU."""
    if not KERNELS_PINNED:
        pytest.skip("this CPU cannot run the pinned AVX2 kernels")
    code = (
        "import torch; from unishift import cpu_kernels; print(cpu_kernels.mkl_branch()); "
        "cpu_kernels.assert_pinned('avx2')"
    )
    pinned = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert pinned.returncode == 0, pinned.stderr
    assert pinned.stdout.split() == ["COMPATIBLE"]
    # AUTO: the branch an Intel-only one falls back to on another CPU, and the one a process gets
    # that loaded PyTorch before the variable was set
    env = {**os.environ, "MKL_CBWR": "AUTO"}
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert other.returncode != 0
    assert "wants MKL's COMPATIBLE branch, but PyTorch's MKL runs AUTO" in other.stderr


def test_the_mkl_branch_is_checked_only_where_pytorch_is_loaded(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "openblas_architecture", lambda: "Haswell")
    monkeypatch.setattr(cpu_kernels, "numpy_dispatch", lambda: ["X86_V3"])
    monkeypatch.setattr(cpu_kernels, "mkl_branch", lambda: None)
    assert cpu_kernels.assert_pinned("avx2") == "Haswell"
    monkeypatch.setattr(cpu_kernels, "mkl_branch", lambda: "AVX2")
    with pytest.raises(cpu_kernels.KernelError, match="Intel CPUs only, COMPATIBLE on any"):
        cpu_kernels.assert_pinned("avx2")
    assert cpu_kernels.assert_pinned("native") == "Haswell"  # native pins no branch
