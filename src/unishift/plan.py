"""What a config runs, in one place for the workflow's rules and the Python API: the result folder,
the setups of each shift in table order, the record layout of each shift and the paths of the files
the steps exchange (docs/evaluation-jobs.md, docs/reporting.md).

The number of classes comes from the data: a label-shift run on QuaPy's binary UCI collection and a
covariate-shift run on two-class text have two classes, the multiclass UCI collection and the
three-class tweets more; the record layout of a shift follows (:mod:`unishift.records`).
"""

from __future__ import annotations

from pathlib import Path

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


def label_classes(config: dict) -> str:
    """``two_class`` or ``k_class``: the layout of the label-shift records."""
    benchmark = (config.get("label_shift") or {}).get("benchmark", "uci_binary")
    return TWO_CLASS if benchmark == "uci_binary" else K_CLASS


def covariate_classes(config: dict) -> str:
    covariate = config.get("covariate_shift") or {}
    three = covariate.get("text_source", "tweets") == "tweets" and (
        int((covariate.get("tweets") or {}).get("classes", 2)) > 2
    )
    return K_CLASS if three else TWO_CLASS


def record_layout(config: dict, shift: str) -> str:
    """The record layout of one shift's per-sample files."""
    return label_classes(config) if shift == "label" else covariate_classes(config)


__all__ = [
    "PATHS",
    "covariate_classes",
    "label_classes",
    "path",
    "record_layout",
    "results_folder",
]
