"""Splits, trained classifiers, posteriors and samples of one label-shift setup, for any number of
classes (docs/protocols.md §2, docs/multiclass.md §7).

The files have two layouts: with two classes the split stores the positive prevalence of the 70 %
portion (``prevalence_full``) and no class count, and a sample's ``prevalence`` is its positive
prevalence and its shift intensity |p - pi|; with k > 2 the split stores ``n_classes`` and the
prevalence vector, and a sample's ``prevalence`` is its vector and its shift intensity QuaPy's AE.
"""

from __future__ import annotations

import warnings

import numpy as np

from unishift.classifiers import make_classifier, one_thread
from unishift.data.containers import LabelledSet, Setting, argmax_predictions
from unishift.data.setups import SetupData
from unishift.data.uci import BINARY, class_counts, fetch_dataset, uci_spec
from unishift.io import DamagedFileError, read_npz
from unishift.option_checks import check_choice
from unishift.protocols.sampling import (
    stream_state_arrays,
    stream_state_from_arrays,
    upp_indices,
)


def read_splits(path) -> dict:
    return read_npz(path, ("X_h", "y_h", "X_val", "y_val", "X_test", "y_test", "prevalence_full"))


def read_posteriors(path) -> dict:
    return read_npz(path, ("P_h", "P_val", "P_test", "test_accuracy"))


def read_samples(path) -> dict:
    return read_npz(path, ("indices", "prevalence", "shift_intensity"))


def label_pool_size(n_items: int, train_fraction: float = 0.7) -> int:
    """Items in the test pool of a data set of ``n_items``: QuaPy's stratified split keeps
    floor(0.7 n) for training (scikit-learn's train_size rounding), the rest is the test pool."""
    return n_items - int(np.floor(train_fraction * n_items))


# QuaPy's multiclass loader caps the training portion at this many items (max_train_instances)
MAX_TRAIN_INSTANCES = 25_000


def pool_size_of(
    name: str,
    collection: str = BINARY,
    data_home=None,
    data_root=None,
    min_class_support: int = 100,
) -> int:
    """Items in the test pool of a configured data set, before any job: from its spec for the
    binary benchmark; for the multiclass one from the classes QuaPy keeps, which reads (or seeds)
    QuaPy's cache and raises :class:`unishift.data.uci.DataUnavailableError` when it cannot."""
    if collection == BINARY:
        return label_pool_size(uci_spec(name, collection).n_items)
    counts = class_counts(name, data_home, data_root)
    n = int(counts[counts >= min_class_support].sum())
    fraction = 0.7
    if int(n * fraction) > MAX_TRAIN_INSTANCES:
        fraction = MAX_TRAIN_INSTANCES / n
    return label_pool_size(n, fraction)


def check_sample_size(sample_size: int, pool_size: int, allow_larger: bool, where: str) -> None:
    """A sample larger than the pool it is drawn from repeats items; only on explicit request."""
    if sample_size > pool_size and not allow_larger:
        raise ValueError(
            f"{where}: sample_size={sample_size} is larger than the test pool ({pool_size} items), so "
            f"every item would be drawn about {sample_size / pool_size:.1f} times; lower sample_size "
            "or set allow_sample_larger_than_pool: true"
        )


def splits_n_classes(splits: dict) -> int:
    """The number of classes of a split (the two-class layout stores no count)."""
    return int(splits["n_classes"]) if "n_classes" in splits else 2


def prepare_splits(
    name: str,
    data_home,
    data_root=None,
    seed: int = 0,
    *,
    collection: str = BINARY,
    min_class_support: int = 100,
) -> tuple[dict, str]:
    """QuaPy's 70/30 stratified split (seed 0, standardised on the 70 %), then 50/50 stratified
    (docs/protocols.md §2.2): the arrays of the classifier-training half (``h``), the validation half
    (``val``) and the test pool (``test``) and the prevalence of the 70 % portion (the module
    docstring's layouts), and where the data came from. Every class must appear in each part."""
    dataset, source = fetch_dataset(
        name, data_home, data_root, collection=collection, min_class_support=min_class_support
    )
    training, validation = dataset.training.split_stratified(0.5, random_state=seed)
    n_classes = int(dataset.training.n_classes)  # QuaPy refuses fewer than three multiclass ones
    arrays = {}
    for part, data in (("h", training), ("val", validation), ("test", dataset.test)):
        arrays[f"X_{part}"], arrays[f"y_{part}"] = data.X, data.y.astype(np.int64)
        counts = np.bincount(arrays[f"y_{part}"], minlength=n_classes)
        if np.any(counts == 0):
            raise ValueError(
                f"{name}: the {part} part has no item of class {np.flatnonzero(counts == 0).tolist()} "
                f"(class sizes {counts.tolist()}); raise min_class_support"
            )
    if n_classes == 2:
        arrays["prevalence_full"] = np.array(dataset.training.prevalence()[1])
    else:
        arrays["n_classes"] = np.array(n_classes)
        arrays["prevalence_full"] = np.asarray(dataset.training.prevalence(), dtype=float)
    return arrays, source


def train_and_predict(
    splits: dict, classifier: str, seed: int, samples: dict | None = None
) -> tuple[object, dict]:
    """Fit the classifier on the training half (on one thread, as :func:`predict_posteriors`); the
    model and its posteriors. One column per class in class order, or it fails here."""
    n_classes = splits_n_classes(splits)
    with one_thread():
        model = make_classifier(classifier, seed)
        with warnings.catch_warnings():
            # the MLP's convergence warning at sklearn's default max_iter is part of the paper's set-up
            warnings.simplefilter("ignore")
            model.fit(splits["X_h"], splits["y_h"])
    classes = np.asarray(getattr(model, "classes_", []))
    if classes.tolist() != list(range(n_classes)):
        raise ValueError(
            f"{classifier} knows the classes {classes.tolist()}, expected 0..{n_classes - 1}: "
            f"it would not output {n_classes} posterior columns in class order"
        )
    return model, predict_posteriors(model, splits, samples)


def predict_posteriors(model, splits: dict, samples: dict | None = None) -> dict:
    """A fitted classifier's n x k posteriors for the three parts and its test-pool accuracy
    (argmax, ties to the lowest class), on one thread (:func:`unishift.classifiers.one_thread`).
    With ``samples`` also ``P_samples``: each sample's posteriors predicted as one batch, as the
    reference implementation did (they can differ from the pool's in the last bit:
    docs/reproduction.md, "Arithmetic that decides numbers")."""
    n_classes = splits_n_classes(splits)
    with one_thread():
        posteriors = {
            key: model.predict_proba(splits[part])
            for key, part in (("P_h", "X_h"), ("P_val", "X_val"), ("P_test", "X_test"))
        }
        if samples is not None:
            posteriors["P_samples"] = np.stack(
                [model.predict_proba(splits["X_test"][idx]) for idx in samples["indices"]]
            )
    for key, P in posteriors.items():
        if np.shape(P)[-1] != n_classes:
            raise ValueError(
                f"{key} has {np.shape(P)[-1]} columns, the problem has {n_classes} classes"
            )
    predicted = argmax_predictions(posteriors["P_test"])
    posteriors["test_accuracy"] = np.array(np.mean(predicted == splits["y_test"]))
    # the files keep the order P_h, P_val, P_test, test_accuracy[, P_samples]
    order = ("P_h", "P_val", "P_test", "test_accuracy", "P_samples")
    return {key: posteriors[key] for key in order if key in posteriors}


def label_shift_samples(
    splits: dict, sample_size: int, n_samples: int, seed: int, allow_larger: bool = False
) -> dict:
    """UPP indices into the test pool, each sample's prevalence and shift intensity (the module
    docstring's layouts; docs/protocols.md §2.4-2.5), and the legacy RNG state after the index draws
    (``stream_*``, which the domain classifier's up-sampling continues)."""
    if n_samples < 2:
        raise ValueError(f"n_samples={n_samples}: UPP needs at least 2 samples per setup")
    check_sample_size(sample_size, len(splits["y_test"]), allow_larger, "label_shift")
    n_classes = splits_n_classes(splits)
    y = splits["y_test"]
    indices, state = upp_indices(
        y, sample_size, n_samples, seed, return_state=True, n_classes=n_classes
    )
    if n_classes == 2:
        prevalence = y[indices].mean(axis=1)
        intensity = np.abs(prevalence - float(splits["prevalence_full"]))
    else:
        prevalence = np.stack(
            [np.bincount(row, minlength=n_classes) / len(row) for row in y[indices]]
        )
        full = np.asarray(splits["prevalence_full"], dtype=float)
        intensity = np.mean(np.abs(prevalence - full), axis=1)
    return {
        "indices": indices,
        "prevalence": prevalence,
        "shift_intensity": intensity,
        **stream_state_arrays(state),
    }


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
    names = {"posteriors": posteriors_path, "samples": samples_path}
    return load_label_setup(
        splits, posteriors, samples, dataset, classifier, seed, sample_posteriors, names
    )


def load_label_setup(
    splits: dict,
    posteriors: dict,
    samples: dict,
    dataset: str,
    classifier: str,
    seed: int,
    sample_posteriors: str = "per_sample",
    names=None,
) -> SetupData:
    """The setup of (dataset, classifier), any number of classes; ``sample_posteriors="per_sample"``
    gives each sample the posteriors predicted on it as a batch (``P_samples``, the reference's),
    ``"pool"`` the rows of the test pool's posteriors. The posteriors and samples must have been
    made from the split; ``names`` (the file of each part) go into the error."""
    check_choice("sample_posteriors", sample_posteriors, ("per_sample", "pool"))
    names = names or {"posteriors": "the posteriors", "samples": "the samples"}
    n_test = len(splits["y_test"])
    for key, part in (("P_val", "y_val"), ("P_h", "y_h"), ("P_test", "y_test")):
        if len(posteriors[key]) != (n := len(splits[part])):
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
    per_sample = None
    if sample_posteriors == "per_sample":
        if "P_samples" not in posteriors:
            raise ValueError(
                f"{dataset}/{classifier}: sample_posteriors='per_sample' needs the per-sample "
                "posteriors (P_samples) that train_and_predict writes when given the samples; "
                "regenerate the posteriors or use sample_posteriors: pool"
            )
        per_sample = np.asarray(posteriors["P_samples"])
    k = splits_n_classes(splits)
    setting = Setting(
        validation=LabelledSet(posteriors["P_val"], splits["y_val"], splits["X_val"], n_classes=k),
        training=LabelledSet(posteriors["P_h"], splits["y_h"], splits["X_h"], n_classes=k),
        shift="label",
        key=f"{dataset}/{classifier}",
        seed=seed,
    )
    return SetupData(
        shift="label",
        classifier=classifier,
        dataset=dataset,
        setting=setting,
        pool=LabelledSet(posteriors["P_test"], splits["y_test"], splits["X_test"], n_classes=k),
        sample_indices=np.asarray(samples["indices"], dtype=np.int64),
        shift_intensity=np.asarray(samples["shift_intensity"], dtype=float),
        stream_state=stream_state_from_arrays(samples),
        sample_posteriors=per_sample,
    )
