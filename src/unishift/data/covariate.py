"""Covariate-shift setups from the cached language-model outputs (docs/protocols.md §3.4-3.7, §5).

A setup is one model on one source->target pair. From the (model, source) cache it takes the validation
set, the training subset (first rows of the stored training split) and the source and target test sets;
the test pool is the concatenation [source test ; target test] that the mixture indices point into.
Posteriors are softmax(logits) in float32.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from unishift.data.containers import LabelledSet, Setting
from unishift.data.setups import SetupData
from unishift.io import read_npz
from unishift.lm.cache import unpack
from unishift.protocols.sampling import stream_state_from_arrays

SHIFT = "covariate"


def softmax(logits: np.ndarray) -> np.ndarray:
    logits = np.asarray(logits, dtype=np.float32)
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return (exp / exp.sum(axis=1, keepdims=True)).astype(np.float32)


def labelled_set(arrays: dict) -> LabelledSet:
    logits = np.asarray(arrays["logits"], dtype=np.float32)
    return LabelledSet(
        posteriors=softmax(logits),
        labels=np.asarray(arrays["labels"], dtype=np.int64),
        features=np.asarray(arrays["hidden"], dtype=np.float32),
        logits=logits,
    )


def read_lm_outputs(path: str | Path) -> dict[str, dict[str, np.ndarray]]:
    return unpack(read_npz(path))


def concatenate(first: dict, second: dict) -> dict:
    return {
        key: np.concatenate([first[key], second[key]]) for key in ("logits", "hidden", "labels")
    }


def load_covariate_setup(
    lm_outputs: str | Path | dict,
    samples: str | Path | dict,
    model: str,
    source: str,
    target: str,
    seed: int,
) -> SetupData:
    """The :class:`SetupData` of ``model`` on ``source->target`` from its cache and persisted samples."""
    sets = read_lm_outputs(lm_outputs) if not isinstance(lm_outputs, dict) else lm_outputs
    if not isinstance(samples, dict):
        samples = read_npz(samples, ("indices", "shift_intensity", "n_source", "n_target"))
    target_key = f"target_{target}"
    if target_key not in sets:
        raise KeyError(
            f"the {model}/{source} cache has no test set of {target!r} (has {sorted(sets)})"
        )
    source_test, target_test = sets["test"], sets[target_key]
    if int(samples["n_source"]) != len(source_test["labels"]) or int(samples["n_target"]) != len(
        target_test["labels"]
    ):
        raise ValueError(
            f"samples were drawn for pools of {int(samples['n_source'])}+{int(samples['n_target'])} items, "
            f"the cache holds {len(source_test['labels'])}+{len(target_test['labels'])}"
        )
    dataset = f"{source}->{target}"
    setting = Setting(
        validation=labelled_set(sets["validation"]),
        training=labelled_set(sets["train"]),
        shift=SHIFT,
        key=f"{model}/{dataset}",
        seed=seed,
    )
    return SetupData(
        shift=SHIFT,
        classifier=model,
        dataset=dataset,
        setting=setting,
        pool=labelled_set(concatenate(source_test, target_test)),
        sample_indices=np.asarray(samples["indices"], dtype=np.int64),
        shift_intensity=np.asarray(samples["shift_intensity"], dtype=float),
        stream_state=stream_state_from_arrays(samples),
    )


def accuracy(arrays: dict) -> float:
    """mean(argmax logits == label), ties to class 0 (docs/protocols.md §3.5)."""
    logits = np.asarray(arrays["logits"])
    return float(np.mean((logits[:, 1] > logits[:, 0]).astype(int) == arrays["labels"]))


def lm_accuracies(
    caches: dict[tuple[str, str], str | Path | dict], domains: list[str]
) -> pd.DataFrame:
    """The appendix accuracy table: one row per (model, source, target); source == target is in-domain.

    ``caches`` maps (model, source) to that pair's cache. The diagonal uses the full source test set,
    the off-diagonal cells the full target test set.
    """
    rows = []
    for (model, source), cache in caches.items():
        sets = read_lm_outputs(cache) if not isinstance(cache, dict) else cache
        for target in domains:
            key = "test" if target == source else f"target_{target}"
            if key not in sets:
                continue
            rows.append(
                {
                    "model": model,
                    "source": source,
                    "target": target,
                    "accuracy": accuracy(sets[key]),
                }
            )
    return pd.DataFrame(rows, columns=["model", "source", "target", "accuracy"])
