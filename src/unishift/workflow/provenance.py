"""What produced a set of results: the config (and its hash), seeds, package versions, the code's
git commit, the lock file, the hub commits of data sets and models, and the GPUs used."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
from dataclasses import asdict
from importlib import metadata
from pathlib import Path

from unishift.io import file_sha256

PACKAGES = (
    "unishift",
    "numpy",
    "scipy",
    "scikit-learn",
    "pandas",
    "quapy",
    "abstention",
    "torch",
    "transformers",
    "datasets",
    "snakemake",
)


def config_hash(config: dict) -> str:
    canonical = json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def provenance(config: dict, code_version: str | None = None) -> dict:
    """The config, seed, versions, kernels and plugins of a run (code version: the library's)."""
    from unishift.cpu_kernels import in_effect as kernels_in_effect
    from unishift.workflow.code_version import library_version

    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "config_sha256": config_hash(config),
        "seed": config.get("seed"),
        "config": config,
        "code_version": code_version or library_version(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": versions,
        "cpu_kernels": kernels_in_effect(),
        "plugins": plugin_records(),
    }


def plugin_records() -> list[dict]:
    """Each plugin source of the registry (:class:`unishift.methods.registry.Plugin`) with its code version."""
    from unishift.methods.registry import plugins
    from unishift.workflow.code_version import plugin_code_version

    return [
        {
            **asdict(plugin),
            "code_version": None if plugin.error else plugin_code_version(plugin.module),
            "error": plugin.error or None,
        }
        for plugin in plugins()
    ]


def git_state(repository: str | Path) -> dict:
    """Commit of the checkout and whether tracked files differ from it (None outside git)."""

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(repository), *args], capture_output=True, text=True, timeout=60
        )

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return {"commit": None, "dirty": None, "reason": head.stderr.strip()[:200]}
        status = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError) as error:
        return {"commit": None, "dirty": None, "reason": f"git unavailable: {error}"}
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}


def hub_revisions(manifests) -> dict:
    """``{kind: {id: {revision, commit}}}`` from the hub_download stage's records."""
    resolved: dict = {}
    for path in manifests:
        record = json.loads(Path(path).read_text())
        entry = {key: record[key] for key in ("revision", "commit")}
        resolved.setdefault(record["kind"] + "s", {})[record["id"]] = entry
    return resolved


def gpus_used(lm_reports) -> list[dict]:
    """Distinct GPUs (name, memory, CUDA runtime, driver) the fine-tuning jobs report."""
    seen = []
    for path in lm_reports:
        gpu = json.loads(Path(path).read_text()).get("gpu")
        if gpu:
            entry = {k: gpu.get(k) for k in ("name", "memory_gib", "cuda_runtime", "driver")}
            if entry not in seen:
                seen.append(entry)
    return seen


def deployment(repository, lock_file, hub_manifests=(), lm_reports=()) -> dict:
    """The fields that say which code, environment, hub files and hardware produced the results."""
    return {
        "git": git_state(repository),
        "lock_file_sha256": file_sha256(lock_file) if Path(lock_file).is_file() else None,
        "hub": hub_revisions(hub_manifests),
        "gpus": gpus_used(lm_reports),
    }
