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


def provenance(config: dict) -> dict:
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
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": versions,
    }
