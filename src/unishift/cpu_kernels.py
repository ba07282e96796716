"""The CPU kernels of the numerical libraries (OpenBLAS, NumPy's own SIMD dispatch, PyTorch's MKL,
oneDNN and ATen), pinned through their environment variables before NumPy is imported so that a
config gives the same bytes on every x86-64 machine (docs/determinism.md, "CPU kernels"). Nothing
numerical is imported at import time.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import sys
import warnings
from pathlib import Path

# The profile the documented numbers were computed with (docs/reproduction.md): the AVX2 kernels,
# which every x86-64 CPU since 2013 (Haswell, Zen) runs.
DEFAULT_PROFILE = "avx2"
PROFILES: dict[str, dict[str, str]] = {
    "avx2": {
        "OPENBLAS_CORETYPE": "Haswell",  # NumPy / SciPy's OpenBLAS
        # PyTorch's MKL (conditional numerical reproducibility): its SSE2 branch, the one MKL runs
        # on every x86-64 CPU. MKL honours its AVX2 branch on Intel CPUs only: an AMD CPU silently
        # gets the AUTO branch, whose last bits differ (the language model's matrix products)
        "MKL_CBWR": "COMPATIBLE",
        "ONEDNN_MAX_CPU_ISA": "AVX2",  # PyTorch's oneDNN
        "ATEN_CPU_CAPABILITY": "avx2",  # PyTorch's own vectorised kernels
        # NumPy's own loops (ufuncs, reductions, sorting): of the targets NumPy 2.4 dispatches to
        # (X86_V3, X86_V4, AVX512_ICL, AVX512_SPR) only the AVX2 one, X86_V3. An allow-list rather
        # than NPY_DISABLE_CPU_FEATURES, so that a target a later NumPy adds stays off too
        "NPY_ENABLE_CPU_FEATURES": "X86_V3",
        # Arrow's compute kernels (pyarrow reads the data files; pandas may hand it strings)
        "ARROW_USER_SIMD_LEVEL": "AVX2",
    },
    # the machine's own choice: fastest, but the last bits depend on the CPU
    "native": {},
}
# What a CPU needs to run a profile's kernels (names as /proc/cpuinfo spells the flags).
REQUIRED_CPU_FLAGS = {"avx2": ("avx2", "fma")}
# Set with the profile's variables, so that a job (and a test) can tell which profile it runs under.
PROFILE_VARIABLE = "UNISHIFT_CPU_KERNELS"
# NumPy refuses to start with both its enable and its disable list set: a pin clears the latter.
CLEARED_VARIABLES = ("NPY_DISABLE_CPU_FEATURES",)
# Every variable any profile sets, and those it clears: "native" clears them all.
VARIABLES = sorted({name for env in PROFILES.values() for name in env} | set(CLEARED_VARIABLES))
NUMPY_VARIABLE = "NPY_ENABLE_CPU_FEATURES"
KEY = "cpu_kernels"
NATIVE = f"set {KEY}: native (its numbers may differ in the last digits, docs/determinism.md)"


class KernelError(RuntimeError):
    """A kernel profile that cannot run here, or one that is not in effect."""


def check_profile(profile: str) -> None:
    if profile not in PROFILES:
        raise KernelError(f"{KEY}={profile!r} is not a profile; choose one of {sorted(PROFILES)}")


def cpu_flags() -> set[str] | None:
    """The CPU's feature flags (Linux), or None where they cannot be read."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    flags = [line for line in text.splitlines() if line.startswith("flags")]
    return set(flags[0].split(":", 1)[1].split()) if flags else None


def check_cpu(profile: str, flags: set[str] | None = None, machine: str | None = None) -> None:
    """Raise, naming the missing instructions and the fix, when this CPU cannot run the profile."""
    check_profile(profile)
    required = REQUIRED_CPU_FLAGS.get(profile)
    if not required:
        return
    machine = machine or platform.machine()
    if machine.lower() not in ("x86_64", "amd64"):
        raise KernelError(
            f"{KEY}: {profile} pins x86-64 AVX2 kernels, and this is a {machine} machine; {NATIVE}"
        )
    flags = cpu_flags() if flags is None else flags
    if flags is None:
        return  # cannot tell: the job-side check (assert_pinned) still catches a wrong kernel
    missing = [flag for flag in required if flag not in flags]
    if missing:
        raise KernelError(
            f"{KEY}: {profile} needs a CPU with {', '.join(required)}; this one lacks "
            f"{', '.join(missing)}: {NATIVE}"
        )


def pin(profile: str = DEFAULT_PROFILE, environ=None) -> dict[str, str]:
    """Pin the CPU kernels of the numerical libraries by setting the profile's variables.

    Call it before NumPy (or PyTorch) is first imported: a library already loaded keeps its
    kernels (docs/determinism.md). The profile's variables replace every variable any profile
    sets; ``"native"`` clears them all.

    Parameters
    ----------
    profile : {"avx2", "native"}, default "avx2"
        ``"avx2"``: the kernels the documented numbers were computed with; ``"native"``: the
        machine's own (fastest; the last digits depend on the CPU).
    environ : MutableMapping of str to str, optional
        The environment to set them in; by default ``os.environ``.

    Returns
    -------
    dict of str to str
        The variables set, with ``UNISHIFT_CPU_KERNELS`` naming the profile.

    Raises
    ------
    KernelError
        If ``profile`` is unknown, or this CPU cannot run its kernels.

    Examples
    --------
    >>> environ = {}
    >>> pin("avx2", environ)["OPENBLAS_CORETYPE"]  # doctest: +SKIP
    'Haswell'
    >>> pin("native", environ)
    {'UNISHIFT_CPU_KERNELS': 'native'}
    """
    check_cpu(profile)
    environ = os.environ if environ is None else environ
    for name in VARIABLES:
        environ.pop(name, None)
    values = {**PROFILES[profile], PROFILE_VARIABLE: profile}  # "native": none of the variables
    environ.update(values)
    return values


@functools.cache
def thread_pools():
    """threadpoolctl's controller of the BLAS and OpenMP libraries loaded in this process (imports
    NumPy), found once (a scan costs about 0.015 CPU s; a job server's fork reuses the server's)."""
    import numpy  # noqa: F401  (loads OpenBLAS)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def openblas_architecture() -> str | None:
    """The core type NumPy's OpenBLAS runs with in this process (imports NumPy)."""
    pools = [p for p in thread_pools().info() if p.get("internal_api") == "openblas"]
    return pools[0].get("architecture") if pools else None


def numpy_dispatch() -> list[str]:
    """The targets of NumPy's runtime SIMD dispatch that its loops may run in this process (imports
    NumPy): those it was compiled for and found enabled on this CPU, e.g. ['X86_V3', 'X86_V4',
    'AVX512_ICL', 'AVX512_SPR'] on an AVX-512 CPU unpinned, ['X86_V3'] under the avx2 profile."""
    from numpy._core import _multiarray_umath as umath

    return [name for name in umath.__cpu_dispatch__ if umath.__cpu_features__.get(name)]


# MKL's CNR branch constants (mkl_cbwr_get), by the names MKL_CBWR takes
MKL_BRANCHES = {1: "OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 8: "SSE4_2", 9: "AVX", 10: "AVX2",
                12: "AVX512", 14: "AVX512_E1"}  # fmt: skip


def mkl_branch() -> str | None:
    """The CNR branch PyTorch's MKL computes with in this process ("COMPATIBLE" under the avx2
    profile), or None where PyTorch is not loaded or carries no MKL. Unlike ``MKL_CBWR``, this is
    the branch MKL took: it runs AUTO where it cannot run the one asked for, without a warning."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:  # the build's MKL is linked into libtorch_cpu, which exports its service functions
        get = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"))
        get = get.mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return None
    get.restype, get.argtypes = ctypes.c_int, [ctypes.c_int]
    code = get(1)  # MKL_CBWR_BRANCH
    return MKL_BRANCHES.get(code, str(code))


def in_effect() -> dict[str, str | None]:
    """The profile, OpenBLAS core type, NumPy dispatch and kernel variables this process computes
    with."""
    return {
        "profile": os.environ.get(PROFILE_VARIABLE),
        "openblas_architecture": openblas_architecture(),
        "numpy_dispatch": " ".join(numpy_dispatch()),
        **{name: os.environ.get(name) for name in VARIABLES},
    }


def assert_pinned(profile: str) -> str | None:
    """Raise when this process does not compute with the profile's OpenBLAS kernel, NumPy dispatch
    and, where loaded, Arrow's kernels and PyTorch's MKL branch (a library was loaded before the
    variables were set, or ignored them, as NumPy does a target name it does not know and MKL an
    Intel-only branch on another CPU); return the OpenBLAS core type."""
    check_profile(profile)
    fix = (
        "Set the variables before Python starts (or call unishift.cpu_kernels.pin() before importing "
        "numpy)"
    )
    architecture = openblas_architecture()
    wanted = PROFILES[profile].get("OPENBLAS_CORETYPE")  # threadpoolctl's "architecture"
    if wanted and architecture is not None and architecture.lower() != wanted.lower():
        raise KernelError(
            f"{KEY}: {profile} wants OpenBLAS's {wanted} kernels, but this process runs "
            f"{architecture}: NumPy was imported before OPENBLAS_CORETYPE was set. {fix}"
        )
    targets = PROFILES[profile].get(NUMPY_VARIABLE)
    if targets is not None and numpy_dispatch() != targets.split():
        # equality, not inclusion: a name this NumPy does not know leaves no target enabled (NumPy
        # only says so in an ImportWarning, hidden by default), and the baseline loops round
        # differently again
        raise KernelError(
            f"{KEY}: {profile} wants NumPy's {targets} loops, but this process dispatches to "
            f"{numpy_dispatch() or 'none (the baseline loops)'}: NumPy was imported before "
            f"{NUMPY_VARIABLE} was set, or this NumPy does not know the name (its targets: "
            f"numpy._core._multiarray_umath.__cpu_dispatch__). {fix}"
        )
    mkl = PROFILES[profile].get("MKL_CBWR")
    branch = mkl_branch() if mkl else None  # checked where PyTorch is loaded, as Arrow below
    if branch is not None and branch != mkl:
        raise KernelError(
            f"{KEY}: {profile} wants MKL's {mkl} branch, but PyTorch's MKL runs {branch}: PyTorch "
            "was imported before MKL_CBWR was set, or MKL ignored the branch (it runs its AVX2 "
            f"and other instruction-set branches on Intel CPUs only, COMPATIBLE on any). {fix}"
        )
    arrow = PROFILES[profile].get("ARROW_USER_SIMD_LEVEL")
    if arrow and "pyarrow" in sys.modules:  # checked where loaded: importing it costs 0.1 s
        level = sys.modules["pyarrow"].runtime_info().simd_level
        if level.lower() != arrow.lower():
            raise KernelError(
                f"{KEY}: {profile} wants Arrow's {arrow} kernels, but this process runs {level}: "
                f"pyarrow was imported before ARROW_USER_SIMD_LEVEL was set. {fix}"
            )
    return architecture


def warn_if_unpinned() -> None:
    """Warn when this process computes with other kernels than the default profile's."""
    try:
        assert_pinned(DEFAULT_PROFILE)
    except KernelError as error:
        warnings.warn(
            f"unishift runs with other CPU kernels than the workflow's ({error}), so its last "
            "digits may differ; call unishift.cpu_kernels.pin() before importing numpy, or start "
            "Python with " + " ".join(f"{k}={v}" for k, v in PROFILES[DEFAULT_PROFILE].items()),
            stacklevel=3,
        )
