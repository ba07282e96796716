"""The start of the language-model jobs (``lm_encode``, ``lm_finetune``), apart from
:mod:`unishift.workflow.jobs` so that the other rules' environments need no Hugging Face library."""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unishift.workflow.jobs import start_job


@dataclass(frozen=True)
class LanguageModelJob:
    """What a language-model job (``lm_encode``, ``lm_finetune``) starts from."""

    log: logging.Logger
    settings: Any  # unishift.lm.config.FinetuneSettings
    model: str  # a local folder or a hub id (the rule's ``params.model_path``)
    revision: str | None  # the hub commit hub_download resolved, or None for a local model


def start_lm_job(job) -> LanguageModelJob:
    """Start a language-model job: the hub switched offline before anything imports the Hugging
    Face libraries (its files come from the download stage only; call this before importing
    ``unishift.lm``'s models or pipeline), then :func:`~unishift.workflow.jobs.start_job`, the Trainer's stdout kept in the
    rule's log, and the settings, model and revision of the job's rule."""
    from unishift.data.hub_access import use_offline_hub

    use_offline_hub(job.params.cache)
    from unishift.lm.config import FinetuneSettings

    log = start_job(job)
    # the Trainer prints its metrics to stdout; keep them in the rule's log
    sys.stdout = sys.stderr
    hub = job.input.get("hub")
    revision = json.loads(Path(hub).read_text())["commit"] if hub else None
    settings = FinetuneSettings.from_config(job.params.settings)
    return LanguageModelJob(log, settings, job.params.model_path, revision)
