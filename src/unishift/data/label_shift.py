"""Splits, trained classifiers, posteriors and samples of one label-shift setup (docs/protocols.md §2)."""

from __future__ import annotations

import warnings

import numpy as np

from unishift.classifiers import make_classifier, one_thread
from unishift.data.containers import LabelledSet, Setting
from unishift.data.setups import SetupData
from unishift.data.uci import fetch_binary_dataset
from unishift.io import DamagedFileError, read_npz
from unishift.protocols import upp_indices
from unishift.protocols.sampling import stream_state_arrays, stream_state_from_arrays

# What each intermediate file of a label-shift setup must hold.
SPLIT_ARRAYS = ("X_h", "y_h", "X_val", "y_val", "X_test", "y_test", "prevalence_full")
POSTERIOR_ARRAYS = ("P_h", "P_val", "P_test", "test_accuracy")
SAMPLE_ARRAYS = ("indices", "prevalence", "shift_intensity")


def read_splits(path) -> dict:
    return read_npz(path, SPLIT_ARRAYS)


def read_posteriors(path) -> dict:
    return read_npz(path, POSTERIOR_ARRAYS)


def read_samples(path) -> dict:
    return read_npz(path, SAMPLE_ARRAYS)


def label_pool_size(n_items: int, train_fraction: float = 0.7) -> int:
    """Items in the test pool of a data set of ``n_items``: QuaPy's stratified split keeps
    floor(0.7 n) for training (scikit-learn's train_size rounding), the rest is the test pool."""
    return n_items - int(np.floor(train_fraction * n_items))


def check_sample_size(sample_size: int, pool_size: int, allow_larger: bool, where: str) -> None:
    """A sample larger than the pool it is drawn from repeats items; only on explicit request."""
    if sample_size > pool_size and not allow_larger:
        raise ValueError(
            f"{where}: sample_size={sample_size} is larger than the test pool ({pool_size} items), so "
            f"every item would be drawn about {sample_size / pool_size:.1f} times; lower sample_size "
            "or set allow_sample_larger_than_pool: true"
        )


def prepare_splits(name: str, data_home, data_root=None, seed: int = 0) -> tuple[dict, str]:
    """70/30 stratified split (QuaPy, seed 0), standardised on the 70 %, then 50/50 stratified.

    Returns the arrays of the classifier-training half (``h``), the validation half (``val``) and the
    test pool (``test``), plus the positive prevalence of the whole 70 % portion.
    """
    dataset, source = fetch_binary_dataset(name, data_home, data_root)
    training, validation = dataset.training.split_stratified(0.5, random_state=seed)
    arrays = {
        "X_h": training.X,
        "y_h": training.y.astype(np.int64),
        "X_val": validation.X,
        "y_val": validation.y.astype(np.int64),
        "X_test": dataset.test.X,
        "y_test": dataset.test.y.astype(np.int64),
        "prevalence_full": np.array(dataset.training.prevalence()[1]),
    }
    return arrays, source


SAMPLE_POSTERIORS = ("per_sample", "pool")


def train_and_predict(
    splits: dict, classifier: str, seed: int, samples: dict | None = None
) -> tuple[object, dict]:
    """Fit the classifier on the training half; its posteriors (:func:`predict_posteriors`).

    Fitted and predicted on one thread (:func:`unishift.classifiers.one_thread`): the same posteriors
    on every machine.
    """
    with one_thread():
        model = make_classifier(classifier, seed)
        with warnings.catch_warnings():
            # the MLP's convergence warning at sklearn's default max_iter is part of the paper's set-up
            warnings.simplefilter("ignore")
            model.fit(splits["X_h"], splits["y_h"])
    return model, predict_posteriors(model, splits, samples)


def predict_posteriors(model, splits: dict, samples: dict | None = None) -> dict:
    """A fitted classifier's posteriors for the three parts and its test-pool accuracy, on one thread.

    With ``samples`` (the persisted UPP indices) also ``P_samples``: the posteriors of each sample
    predicted as one batch, as the reference's scripts compute them. They can differ from the pool's
    in the last bit (BLAS rounds a product differently in another batch; 88 of 25,000 items of
    cmc.3 with LR), which moves LasCal's tied confidences across its bin edges.
    """
    with one_thread():
        posteriors = {
            "P_h": model.predict_proba(splits["X_h"]),
            "P_val": model.predict_proba(splits["X_val"]),
            "P_test": model.predict_proba(splits["X_test"]),
        }
        posteriors["test_accuracy"] = np.array(
            np.mean(model.predict(splits["X_test"]) == splits["y_test"])
        )
        if samples is not None:
            posteriors["P_samples"] = np.stack(
                [model.predict_proba(splits["X_test"][idx]) for idx in samples["indices"]]
            )
    return posteriors


def label_shift_samples(
    splits: dict, sample_size: int, n_samples: int, seed: int, allow_larger: bool = False
) -> dict:
    """UPP indices into the test pool, each sample's positive prevalence and shift intensity
    (§2.4-2.5), and the legacy RNG state after the index draws (``stream_*``: the reference stream
    that the domain classifier's up-sampling continues).

    A ``sample_size`` above the pool size raises unless ``allow_larger``; UPP needs ``n_samples >= 2``
    (QuaPy's prevalence grid).
    """
    if n_samples < 2:
        raise ValueError(f"n_samples={n_samples}: UPP needs at least 2 samples per setup")
    check_sample_size(sample_size, len(splits["y_test"]), allow_larger, "label_shift")
    indices, state = upp_indices(splits["y_test"], sample_size, n_samples, seed, return_state=True)
    prevalence = splits["y_test"][indices].mean(axis=1)
    return {
        "indices": indices,
        "prevalence": prevalence,
        "shift_intensity": np.abs(prevalence - float(splits["prevalence_full"])),
        **stream_state_arrays(state),
    }


def check_setup_parts(splits: dict, posteriors: dict, samples: dict, names=None) -> None:
    """The posteriors and samples of a setup must have been made from its split; ``names`` (the
    file of each part) go into the error."""
    names = names or {"posteriors": "the posteriors", "samples": "the samples"}
    n_test = len(splits["y_test"])
    for key, n in (
        ("P_val", len(splits["y_val"])),
        ("P_h", len(splits["y_h"])),
        ("P_test", n_test),
    ):
        if len(posteriors[key]) != n:
            raise DamagedFileError(
                names["posteriors"],
                f"{key} has {len(posteriors[key])} rows where the split has {n} items",
                "it was computed from another split: delete it and rerun snakemake",
            )
    indices = np.asarray(samples["indices"])
    if indices.size and (indices.min() < 0 or indices.max() >= n_test):
        raise DamagedFileError(
            names["samples"],
            f"indices up to {indices.max()} for a test pool of {n_test} items",
            "they were drawn from another split: delete the file and rerun snakemake",
        )
    if "P_samples" in posteriors and np.shape(posteriors["P_samples"])[:2] != indices.shape:
        raise DamagedFileError(
            names["posteriors"],
            f"per-sample posteriors of shape {np.shape(posteriors['P_samples'])} for samples of "
            f"shape {indices.shape}",
            "they were predicted on other samples: delete it and rerun snakemake",
        )


def read_label_setup(
    splits_path,
    posteriors_path,
    samples_path,
    dataset: str,
    classifier: str,
    seed: int,
    sample_posteriors: str = "per_sample",
) -> SetupData:
    """:func:`load_label_setup` from the three files, each validated (errors name the file)."""
    splits, posteriors = read_splits(splits_path), read_posteriors(posteriors_path)
    samples = read_samples(samples_path)
    check_setup_parts(
        splits, posteriors, samples, {"posteriors": posteriors_path, "samples": samples_path}
    )
    return load_label_setup(
        splits, posteriors, samples, dataset, classifier, seed, sample_posteriors
    )


def load_label_setup(
    splits: dict,
    posteriors: dict,
    samples: dict,
    dataset: str,
    classifier: str,
    seed: int,
    sample_posteriors: str = "per_sample",
) -> SetupData:
    """The setup of (dataset, classifier); ``sample_posteriors="per_sample"`` gives each sample the
    posteriors predicted on it as a batch (``P_samples``, the reference's), ``"pool"`` the rows of
    the test pool's posteriors."""
    if sample_posteriors not in SAMPLE_POSTERIORS:
        raise ValueError(
            f"sample_posteriors={sample_posteriors!r} is not one of {list(SAMPLE_POSTERIORS)}"
        )
    check_setup_parts(splits, posteriors, samples)
    per_sample = None
    if sample_posteriors == "per_sample":
        if "P_samples" not in posteriors:
            raise ValueError(
                f"{dataset}/{classifier}: sample_posteriors='per_sample' needs the per-sample "
                "posteriors (P_samples) that train_and_predict writes when given the samples; "
                "regenerate the posteriors or use sample_posteriors: pool"
            )
        per_sample = np.asarray(posteriors["P_samples"])
    setting = Setting(
        validation=LabelledSet(posteriors["P_val"], splits["y_val"], splits["X_val"]),
        training=LabelledSet(posteriors["P_h"], splits["y_h"], splits["X_h"]),
        shift="label",
        key=f"{dataset}/{classifier}",
        seed=seed,
    )
    return SetupData(
        shift="label",
        classifier=classifier,
        dataset=dataset,
        setting=setting,
        pool=LabelledSet(posteriors["P_test"], splits["y_test"], splits["X_test"]),
        sample_indices=samples["indices"],
        shift_intensity=samples["shift_intensity"],
        stream_state=stream_state_from_arrays(samples),
        sample_posteriors=per_sample,
    )
