"""Covariate- and compound-shift setups, one language model on one source->target pair, from the
(model, source) cache (docs/protocols.md §3.4-3.7, §5): the validation set, the training subset and
the test pool [source test ; target test] that the sample indices point into, for any number of
classes (the logits' columns).
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

# The shifts whose setups are built from the language models' caches (compound: docs/regimes.md §2)
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


def _cached_sets(cache: str | Path | dict) -> dict[str, dict[str, np.ndarray]]:
    return cache if isinstance(cache, dict) else unpack(read_npz(cache))


def load_covariate_setup(
    lm_outputs: str | Path | dict,
    samples: str | Path | dict,
    model: str,
    source: str,
    target: str,
    seed: int,
    n_classes: int | None = None,
    shift: str = "covariate",
) -> SetupData:
    """The :class:`SetupData` of ``model`` on ``source->target`` from its cache and persisted samples
    (mixture samples, or compound-shift ones of the same pools); ``n_classes`` (when given) is
    checked against the cache's logit columns."""
    if shift not in CACHE_SHIFTS:
        raise ValueError(f"shift={shift!r}: a language-model setup is one of {CACHE_SHIFTS}")
    sets = _cached_sets(lm_outputs)
    if not isinstance(samples, dict):
        samples = read_npz(samples, ("indices", "shift_intensity", "n_source", "n_target"))
    target_key = f"target_{target}"
    if target_key not in sets:
        raise KeyError(
            f"the {model}/{source} cache has no test set of {target!r} (has {sorted(sets)})"
        )
    source_test, target_test = sets["test"], sets[target_key]
    drawn = (int(samples["n_source"]), int(samples["n_target"]))
    if drawn != (len(source_test["labels"]), len(target_test["labels"])):
        raise ValueError(
            f"samples were drawn for pools of {drawn[0]}+{drawn[1]} items, "
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
        pool=labelled_set(
            {
                k: np.concatenate([source_test[k], target_test[k]])
                for k in ("logits", "hidden", "labels")
            },
            n_classes,
        ),
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
    """The appendix accuracy table: one row per (model, source, target) on the full test set of the
    target (source == target: in-domain); ``caches`` maps (model, source) to that pair's cache."""
    rows = []
    for (model, source), cache in caches.items():
        sets = _cached_sets(cache)
        for target in domains:
            key = "test" if target == source else f"target_{target}"
            if key in sets:
                rows.append((model, source, target, accuracy(sets[key])))
    return pd.DataFrame(rows, columns=["model", "source", "target", "accuracy"])
