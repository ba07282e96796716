"""Multiclass covariate-shift setups from cached language-model outputs (k-column logits).

The binary module (:mod:`unishift.data.covariate`) builds binary containers and computes accuracy as
``logits[:, 1] > logits[:, 0]``; everything else (the float32 softmax, the cache layout, the mixture
samples, which only index the [source test ; target test] pool) is class-agnostic and reused.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from unishift.data.containers import LabelledSet as MulticlassLabelledSet
from unishift.data.containers import Setting as MulticlassSetting
from unishift.data.covariate import SHIFT, concatenate, read_lm_outputs, softmax
from unishift.data.multiclass_setup import MulticlassSetup
from unishift.io import read_npz


def labelled_set_k(arrays: dict, n_classes: int) -> MulticlassLabelledSet:
    logits = np.asarray(arrays["logits"], dtype=np.float32)
    if logits.ndim != 2 or logits.shape[1] != n_classes:
        raise ValueError(
            f"the cache holds logits of shape {logits.shape}; a {n_classes}-class head must output "
            f"{n_classes} columns (was the head trained with num_labels={n_classes}?)"
        )
    return MulticlassLabelledSet(
        posteriors=softmax(logits),
        labels=np.asarray(arrays["labels"], dtype=np.int64),
        n_classes=n_classes,
        features=np.asarray(arrays["hidden"], dtype=np.float32),
        logits=logits,
    )


def load_covariate_setup_k(
    lm_outputs: str | Path | dict,
    samples: str | Path | dict,
    model: str,
    source: str,
    target: str,
    seed: int,
    n_classes: int = 3,
) -> MulticlassSetup:
    """The multiclass setup of ``model`` on ``source->target`` from its cache and persisted samples."""
    sets = read_lm_outputs(lm_outputs) if not isinstance(lm_outputs, dict) else lm_outputs
    samples = read_npz(samples) if not isinstance(samples, dict) else samples
    target_key = f"target_{target}"
    if target_key not in sets:
        raise KeyError(
            f"the {model}/{source} cache has no test set of {target!r} (has {sorted(sets)})"
        )
    source_test, target_test = sets["test"], sets[target_key]
    if int(samples["n_source"]) != len(source_test["labels"]) or int(samples["n_target"]) != len(
        target_test["labels"]
    ):
        raise ValueError("the samples were drawn for pools of other sizes than the cache holds")
    dataset = f"{source}->{target}"
    setting = MulticlassSetting(
        validation=labelled_set_k(sets["validation"], n_classes),
        training=labelled_set_k(sets["train"], n_classes),
        shift=SHIFT,
        key=f"{model}/{dataset}",
        seed=seed,
    )
    return MulticlassSetup(
        shift=SHIFT,
        classifier=model,
        dataset=dataset,
        setting=setting,
        pool=labelled_set_k(concatenate(source_test, target_test), n_classes),
        sample_indices=np.asarray(samples["indices"], dtype=np.int64),
        shift_intensity=np.asarray(samples["shift_intensity"], dtype=float),
        extra={"source": source, "target": target, "n_source": len(source_test["labels"])},
    )


def accuracy_k(arrays: dict) -> float:
    """mean(argmax logits == label), ties to the lowest class (the binary rule for two columns)."""
    logits = np.asarray(arrays["logits"])
    return float(np.mean(np.argmax(logits, axis=1) == arrays["labels"]))


def lm_accuracies_k(
    caches: dict[tuple[str, str], str | Path | dict], domains: list[str]
) -> pd.DataFrame:
    """The appendix accuracy table (as :func:`unishift.data.covariate.lm_accuracies`) with the
    k-class argmax accuracy: one row per (model, source, target); source == target is in-domain."""
    rows = []
    for (model, source), cache in caches.items():
        sets = read_lm_outputs(cache) if not isinstance(cache, dict) else cache
        for target in domains:
            key = "test" if target == source else f"target_{target}"
            if key in sets:
                rows.append(
                    {
                        "model": model,
                        "source": source,
                        "target": target,
                        "accuracy": accuracy_k(sets[key]),
                    }
                )
    return pd.DataFrame(rows, columns=["model", "source", "target", "accuracy"])


__all__ = ["accuracy_k", "labelled_set_k", "lm_accuracies_k", "load_covariate_setup_k"]
