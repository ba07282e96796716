"""What a config runs, for the workflow's rules and the Python API: the result folder, the record
layout of each shift (:mod:`unishift.evaluation.records`) and whether its protocol is the paper's
(docs/evaluation-jobs.md, docs/reporting.md).
"""

from __future__ import annotations

from unishift.data.datasets import two_class
from unishift.evaluation.records import K_CLASS, TWO_CLASS


def results_folder(config: dict) -> str:
    return str(config.get("results") or "results")


def record_layout(config: dict, shift: str) -> str:
    """The record layout of one shift: ``two_class`` when every data set of its collection has two
    classes, else ``k_class``."""
    if shift == "label":
        collection = (config.get("label_shift") or {}).get("benchmark", "uci_binary")
        options = {}
    else:
        covariate = config.get("covariate_shift") or {}
        collection = covariate.get("text_source", "tweets")
        options = covariate.get(collection) or {}
    return TWO_CLASS if two_class(collection, options) else K_CLASS


# The config keys that decide a shift's samples and the arithmetic of its cells: a run whose values
# differ from config/paper.yaml's computes other cells than the paper printed.
_SCORING = ("ece", "ece_precision", "domain_stream")
PAPER_PROTOCOL = {
    "label": (
        "seed",
        "label_shift.benchmark",
        "label_shift.sample_size",
        "label_shift.n_samples",
        "label_shift.sample_posteriors",
        *_SCORING,
    ),
    "covariate": (
        "seed",
        "covariate_shift.text_source",
        "covariate_shift.mixture.sample_size",
        "covariate_shift.mixture.n_samples",
        "covariate_shift.mixture.counts",
        "covariate_shift.lm.mode",
        "covariate_shift.lm.epochs",
        "covariate_shift.lm.learning_rate",
        "covariate_shift.lm.max_length",
        *_SCORING,
    ),
}


def config_value(config: dict, key: str):
    """The value of a dotted config key (``"label_shift.sample_size"``), None where it is absent."""
    for part in key.split("."):
        config = config.get(part) if isinstance(config, dict) else None
    return config


def reproduction_caveat(config: dict, paper_config: dict, shift: str) -> str:
    """A sentence for the top of a reproduction page when the run's samples or arithmetic are not
    the paper's (the keys of :data:`PAPER_PROTOCOL` that differ from ``paper_config``), else ""."""
    differing = [
        f"{key} {config_value(config, key)!r} (the paper's: {config_value(paper_config, key)!r})"
        for key in PAPER_PROTOCOL.get(shift, ())
        if config_value(config, key) != config_value(paper_config, key)
    ]
    if not differing:
        return ""
    return (
        "**Not comparable with the paper:** this run's samples or arithmetic are not the paper's "
        f"({'; '.join(differing)}), so its cells may differ from the printed ones and no verdict "
        "below speaks to the reproduction; `config/paper.yaml` runs the paper's protocol."
    )
