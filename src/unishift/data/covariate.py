"""Covariate-shift setups from the cached language-model outputs (docs/protocols.md §3.4-3.7, §5).

A setup is one model on one source->target pair. From the (model, source) cache it takes the validation
set, the training subset (first rows of the stored training split) and the source and target test sets;
the test pool is the concatenation [source test ; target test] that the mixture indices point into.
Posteriors are softmax(logits) in float32. Any number of classes: the cache's logits have one column
per class (two for the binary domains, three for the 3-class tweets).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from unishift.data.containers import LabelledSet, Setting, argmax_predictions, derive_seed
from unishift.data.setups import SetupData
from unishift.io import read_npz
from unishift.lm.cache import unpack
from unishift.protocols.compound import compound_indices
from unishift.protocols.sampling import stream_state_from_arrays

SHIFT = "covariate"
# The shifts whose setups are built from the language models' caches: covariate shift (mixture
# samples) and compound shift (mixture samples with a drawn class prevalence, docs/regimes.md §2).
CACHE_SHIFTS = ("covariate", "compound")


def softmax(logits: np.ndarray) -> np.ndarray:
    logits = np.asarray(logits, dtype=np.float32)
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return (exp / exp.sum(axis=1, keepdims=True)).astype(np.float32)


def labelled_set(arrays: dict, n_classes: int | None = None) -> LabelledSet:
    """A cached split as a labelled set; ``n_classes`` (when given) must be the logits' columns."""
    logits = np.asarray(arrays["logits"], dtype=np.float32)
    if n_classes is not None and (logits.ndim != 2 or logits.shape[1] != n_classes):
        raise ValueError(
            f"the cache holds logits of shape {logits.shape}; a {n_classes}-class head must output "
            f"{n_classes} columns (was the head trained with num_labels={n_classes}?)"
        )
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
    n_classes: int | None = None,
    shift: str = SHIFT,
) -> SetupData:
    """The :class:`SetupData` of ``model`` on ``source->target`` from its cache and persisted samples;
    ``n_classes`` (when given) is checked against the cache's logit columns. ``shift``: covariate
    (mixture samples) or compound (compound-shift samples of the same pools)."""
    if shift not in CACHE_SHIFTS:
        raise ValueError(f"shift={shift!r}: a language-model setup is one of {CACHE_SHIFTS}")
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
        validation=labelled_set(sets["validation"], n_classes),
        training=labelled_set(sets["train"], n_classes),
        shift=shift,
        key=f"{model}/{dataset}",
        seed=seed,
    )
    return SetupData(
        shift=shift,
        classifier=model,
        dataset=dataset,
        setting=setting,
        pool=labelled_set(concatenate(source_test, target_test), n_classes),
        sample_indices=np.asarray(samples["indices"], dtype=np.int64),
        shift_intensity=np.asarray(samples["shift_intensity"], dtype=float),
        stream_state=stream_state_from_arrays(samples),
    )


def compound_seed(seed: int, source: str, target: str) -> int:
    """The seed of one pair's compound-shift samples: derived from the root seed and the pair, so
    that each pair draws its own prevalences (docs/regimes.md §2)."""
    return derive_seed(seed, "compound", f"{source}->{target}")


def compound_samples(
    source_labels,
    target_labels,
    n_classes: int,
    source: str,
    target: str,
    seed: int,
    sample_size: int = 250,
    n_samples: int = 100,
    mixture: str = "round",
    replace: str = "as_needed",
) -> dict[str, np.ndarray]:
    """The compound-shift samples of ``source->target`` (:func:`compound_indices` on the two test
    pools' labels, seeded by :func:`compound_seed`), with ``shift_intensity`` = the realised share
    of target items (the intensity the error-by-shift plots bin, as under covariate shift)."""
    samples = compound_indices(
        source_labels,
        target_labels,
        n_classes,
        sample_size=sample_size,
        repeats=n_samples,
        seed=compound_seed(seed, source, target),
        mixture=mixture,
        replace=replace,
    )
    return {**samples, "shift_intensity": np.asarray(samples["realised_mixture"], dtype=float)}


def accuracy(arrays: dict) -> float:
    """mean(argmax logits == label), ties to the lowest class (docs/protocols.md §3.5)."""
    return float(np.mean(argmax_predictions(arrays["logits"]) == arrays["labels"]))


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
