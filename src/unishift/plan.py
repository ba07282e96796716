"""What a config runs, in one place for the workflow's rules and the Python API: the result folder,
the setups of each shift in table order, the record layout of each shift and the paths of the files
the steps exchange (docs/evaluation-jobs.md, docs/reporting.md).

The number of classes comes from the data: a label-shift run on QuaPy's binary UCI collection and a
covariate-shift run on two-class text have two classes, the multiclass UCI collection and the
three-class tweets more; the record layout of a shift follows (:mod:`unishift.records`).
"""

from __future__ import annotations

from pathlib import Path

from unishift.data.datasets import two_class
from unishift.records import K_CLASS, TWO_CLASS

# Where each artifact lies under the results folder; ``{...}`` are the fields of one file (the
# workflow's wildcards).
PATHS = {
    "split": "data/label/{dataset}/split.npz",
    "label_samples": "samples/label/{dataset}.npz",
    "posteriors": "posteriors/label/{dataset}/{classifier}.npz",
    "covariate_samples": "samples/covariate/{source}__{target}.npz",
    "lm_outputs": "lm/{model}/{source}/outputs.npz",
    "eval": "eval/{shift}/{task}/{method}.csv",
    "runtime": "runtime/{shift}/{task}/{method}.csv",
}


def results_folder(config: dict) -> str:
    return str(config.get("results") or "results")


def path(kind: str, results: str | Path, **fields) -> str:
    """The file of one artifact, e.g. ``path("split", "results", dataset="yeast")``; with no fields,
    the pattern with its wildcards (for a rule's input or output)."""
    pattern = f"{results}/{PATHS[kind]}"
    return pattern.format(**fields) if fields else pattern


def collection_of(config: dict, shift: str) -> tuple[str, dict]:
    """The data-set collection of one shift's data and its options (:mod:`unishift.data.datasets`):
    ``label_shift.benchmark``, or ``covariate_shift.text_source`` with its section."""
    if shift == "label":
        return (config.get("label_shift") or {}).get("benchmark", "uci_binary"), {}
    covariate = config.get("covariate_shift") or {}
    source = covariate.get("text_source", "tweets")
    return source, covariate.get(source) or {}


def record_layout(config: dict, shift: str) -> str:
    """The record layout of one shift's per-sample files: ``two_class`` when every data set of the
    shift's collection has two classes, else ``k_class``."""
    collection, options = collection_of(config, shift)
    return TWO_CLASS if two_class(collection, options) else K_CLASS


__all__ = [
    "PATHS",
    "collection_of",
    "path",
    "record_layout",
    "results_folder",
]
