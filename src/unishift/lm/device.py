"""Where a language-model job runs: exactly one GPU per job, and no silent weeks on the CPU
(docs/running.md, "GPUs: one per job"). Nothing here initialises CUDA, so that narrowing
``CUDA_VISIBLE_DEVICES`` still takes effect.
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("unishift.lm")

# A sustained CPU rate for transformer inference (FLOP/s): a generous multi-core workstation in
# fp32 (this repository's 2-core build machine reaches about a tenth of it). The guard errs towards
# letting jobs run.
CPU_FLOPS = 2.0e11
CPU_HOURS_LIMIT = 1.0
_CLAIMED: list = []  # open lock files of the GPU this process holds (released when it exits)


@dataclass(frozen=True)
class Workload:
    """Forward passes of a language-model job, for the CPU-time estimate."""

    n_parameters: int  # parameters the forward pass multiplies (embeddings excluded)
    tokens_per_text: float
    forward_passes: float  # texts run through the model, training and evaluation included

    def cpu_hours(self) -> float:
        flops = 2.0 * self.n_parameters * self.tokens_per_text * self.forward_passes
        return flops / CPU_FLOPS / 3600.0


def tokens_per_text(texts, max_length: int, padding: str) -> float:
    """Tokens the model sees per text: max_length when padding to it, else a length estimate
    (4 characters a token, plus the two special tokens) capped at max_length."""
    if padding == "max_length":
        return float(max_length)
    lengths = [len(str(t)) for t in texts]
    mean_chars = sum(lengths) / len(lengths) if lengths else 0.0
    return float(min(max_length, mean_chars / 4.0 + 2.0))


def finetune_passes(settings, n_train: int, n_validation: int, n_extracted: int) -> float:
    """Texts through the whole model in ``faithful`` mode: every epoch of training (an upper bound:
    early stopping may end sooner), one validation pass per evaluation, and the final extraction."""
    steps = math.ceil(n_train / settings.batch_size) * settings.epochs
    evaluations = 1 + steps // settings.eval_steps
    return settings.epochs * n_train + evaluations * n_validation + n_extracted


def claim_gpu(
    n_visible: int,
    env: MutableMapping[str, str],
    lock_dir: str | Path | None = None,
) -> str:
    """Pin this process to one GPU: the one ``CUDA_VISIBLE_DEVICES`` names (assigned by the
    scheduler or the user), or a free one it holds an exclusive lock on and sets the variable to.
    Returns the id. The locks are machine-wide (per user), shared by concurrent workflow runs."""
    import fcntl

    value = env.get("CUDA_VISIBLE_DEVICES")
    if value is None:  # every GPU visible
        ids = [str(i) for i in range(n_visible)]
    else:
        ids = [v.strip() for v in value.split(",") if v.strip() not in ("", "-1")]
    if len(ids) == 1:
        return ids[0]
    default = Path(tempfile.gettempdir()) / f"unishift-gpu-claims-{os.getuid()}"
    folder = Path(lock_dir) if lock_dir is not None else default
    folder.mkdir(parents=True, exist_ok=True)
    for gpu in ids:
        handle = open(folder / f"gpu{gpu}.lock", "a+")  # noqa: SIM115  (held for the job's lifetime)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        _CLAIMED.append(handle)
        env["CUDA_VISIBLE_DEVICES"] = gpu
        log.info("%d GPUs visible: this job claimed GPU %s (lock %s)", len(ids), gpu, handle.name)
        return gpu
    raise RuntimeError(
        f"{len(ids)} GPUs are visible ({','.join(ids)}) and every one is held by another "
        "language-model job: run at most as many GPU jobs as there are GPUs (snakemake "
        f"--resources gpu={len(ids)}), or give each job one GPU with CUDA_VISIBLE_DEVICES "
        f"(locks in {folder})"
    )


def choose_device(
    requested: str = "auto",
    workload: Workload | None = None,
    *,
    cuda_count: Callable[[], int] | None = None,
    env: MutableMapping[str, str] | None = None,
    lock_dir: str | Path | None = None,
) -> str:
    """``cpu`` or ``cuda`` (one GPU) for ``requested`` in {auto, cpu, cuda}; ``auto`` without a GPU
    refuses a ``workload`` estimated over ``CPU_HOURS_LIMIT`` on the CPU (docs/running.md)."""
    if requested not in ("auto", "cpu", "cuda"):
        raise ValueError(f"covariate_shift.lm.device={requested!r} is not one of auto, cpu, cuda")
    if requested == "cpu":
        return "cpu"
    if cuda_count is None:
        import torch

        cuda_count = torch.cuda.device_count
    n_visible = cuda_count()
    if n_visible > 0:
        if n_visible > 1:
            claim_gpu(n_visible, os.environ if env is None else env, lock_dir)
        return "cuda"
    if requested == "cuda":
        raise RuntimeError("covariate_shift.lm.device is 'cuda' but no CUDA device is available")
    if workload is not None:
        hours = workload.cpu_hours()
        if hours > CPU_HOURS_LIMIT:
            raise RuntimeError(
                f"no CUDA device is available and this job would take about {hours:,.1f} h on a "
                f"CPU ({workload.forward_passes:,.0f} texts x {workload.tokens_per_text:.0f} tokens "
                f"through {workload.n_parameters / 1e6:,.0f}M parameters at "
                f"{CPU_FLOPS / 1e9:.0f} GFLOP/s): run it on a GPU node, or set "
                "covariate_shift.lm.device: cpu to run it on the CPU anyway"
            )
        log.warning(
            "no CUDA device available: running on the CPU (estimated %.2f h at most)", hours
        )
    else:
        log.warning("no CUDA device available: running the language model on the CPU")
    return "cpu"


def gpu_description() -> dict | None:
    """Name, memory, CUDA runtime and driver of the GPU this process uses (None on the CPU)."""
    import torch

    if not torch.cuda.is_available():
        return None
    properties = torch.cuda.get_device_properties(torch.cuda.current_device())
    try:
        import pynvml  # shipped as nvidia-ml-py with CUDA builds of torch

        pynvml.nvmlInit()
        driver = pynvml.nvmlSystemGetDriverVersion()
        driver = driver.decode() if isinstance(driver, bytes) else driver
    except Exception:  # noqa: BLE001  (the driver version is informative only)
        driver = None
    return {
        "name": properties.name,
        "memory_gib": round(properties.total_memory / 2**30, 1),
        "capability": f"{properties.major}.{properties.minor}",
        "cuda_runtime": torch.version.cuda,
        "driver": driver,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "bf16_supported": bool(torch.cuda.is_bf16_supported()),
    }


@contextmanager
def cpu_threads(count: int) -> Iterator[None]:
    """Run PyTorch's CPU work on exactly ``count`` threads (``covariate_shift.lm.cpu_threads``, a
    setting rather than the job's share of ``--cores``: docs/determinism.md), then restore the
    previous count."""
    import torch

    from unishift.cpu_kernels import PROFILE_VARIABLE, assert_pinned, mkl_branch

    profile = os.environ.get(PROFILE_VARIABLE)
    if profile:  # PyTorch's MKL branch, which the job's start could not check before PyTorch loaded
        assert_pinned(profile)
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    log.info(
        "PyTorch CPU threads: %d (covariate_shift.lm.cpu_threads), MKL branch %s",
        torch.get_num_threads(),
        mkl_branch(),
    )
    try:
        yield
    finally:
        torch.set_num_threads(previous)
