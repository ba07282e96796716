"""What produced a set of results: the config (and its hash), seeds and package versions."""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from importlib import metadata

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
    """``code_version``: the content hash of the library's code (default: computed now; see
    :mod:`unishift.codeversion`), so that results name the code that made them."""
    from unishift.codeversion import library_version

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
    }
