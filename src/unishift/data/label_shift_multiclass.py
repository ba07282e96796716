"""Splits, trained classifiers, posteriors and samples of one multiclass label-shift setup.

The binary protocol (docs/protocols.md §2) carried over to k classes: QuaPy's 70/30 split (seed 0,
standardised), the 70 % split 50/50 stratified into the classifier-training half and the validation
set, one of the paper's four scikit-learn classifiers trained on the first half, and QuaPy's UPP over k
classes (uniform on the simplex) on the 30 % test pool. Shift intensity = QuaPy's AE between a
sample's prevalence vector and the 70 % portion's (for two classes the binary |p - pi|).
"""

from __future__ import annotations

import warnings

import numpy as np

from unishift.classifiers import make_classifier, one_thread
from unishift.data.multiclass_setup import MulticlassSetup, load_multiclass_label_setup
from unishift.data.uci_multiclass import fetch_multiclass_dataset
from unishift.protocols.multiclass import upp_indices_k


def prepare_multiclass_splits(
    name: str, data_home, data_root=None, seed: int = 0, min_class_support: int = 100
) -> tuple[dict, str]:
    """Arrays of the classifier-training half (``h``), validation half and test pool, the number of
    classes and the prevalence vector of the 70 % portion. Every class must appear in each part."""
    dataset, source = fetch_multiclass_dataset(name, data_home, data_root, min_class_support)
    training, validation = dataset.training.split_stratified(0.5, random_state=seed)
    n_classes = int(dataset.training.n_classes)
    arrays = {
        "X_h": training.X,
        "y_h": training.y.astype(np.int64),
        "X_val": validation.X,
        "y_val": validation.y.astype(np.int64),
        "X_test": dataset.test.X,
        "y_test": dataset.test.y.astype(np.int64),
        "n_classes": np.array(n_classes),
        "prevalence_full": np.asarray(dataset.training.prevalence(), dtype=float),
    }
    for part in ("h", "val", "test"):
        counts = np.bincount(arrays[f"y_{part}"], minlength=n_classes)
        if np.any(counts == 0):
            raise ValueError(
                f"{name}: the {part} part has no item of class {np.flatnonzero(counts == 0).tolist()} "
                f"(class sizes {counts.tolist()}); raise min_class_support"
            )
    return arrays, source


def train_and_predict_k(splits: dict, classifier: str, seed: int) -> tuple[object, dict]:
    """Fit on the classifier-training half; n x k posteriors of the three parts, test-pool accuracy.

    The classifier must output one column per class, in class order: anything else fails here,
    before any method sees its posteriors. Fitted and predicted on one thread
    (:func:`unishift.classifiers.one_thread`): the same posteriors on every machine.
    """
    n_classes = int(splits["n_classes"])
    with one_thread():
        model = make_classifier(classifier, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the MLP's convergence warning is part of the set-up
            model.fit(splits["X_h"], splits["y_h"])
        classes = np.asarray(getattr(model, "classes_", []))
        if classes.tolist() != list(range(n_classes)):
            raise ValueError(
                f"{classifier} knows the classes {classes.tolist()}, expected 0..{n_classes - 1}: "
                f"it would not output {n_classes} posterior columns in class order"
            )
        posteriors = {}
        for part, key in (("h", "P_h"), ("val", "P_val"), ("test", "P_test")):
            P = np.asarray(model.predict_proba(splits[f"X_{part}"]), dtype=float)
            if P.ndim != 2 or P.shape[1] != n_classes:
                raise ValueError(
                    f"{classifier} output {P.shape[1] if P.ndim == 2 else P.shape} columns, the problem "
                    f"has {n_classes} classes"
                )
            posteriors[key] = P
    predicted = np.argmax(posteriors["P_test"], axis=1)
    posteriors["test_accuracy"] = np.array(np.mean(predicted == splits["y_test"]))
    return model, posteriors


def multiclass_label_shift_samples(
    splits: dict, sample_size: int, n_samples: int, seed: int
) -> dict:
    """UPP indices into the test pool, each sample's prevalence vector and shift intensity."""
    n_classes = int(splits["n_classes"])
    y = splits["y_test"]
    indices = upp_indices_k(y, n_classes, sample_size, n_samples, seed)
    prevalence = np.stack([np.bincount(y[row], minlength=n_classes) / len(row) for row in indices])
    full = np.asarray(splits["prevalence_full"], dtype=float)
    return {
        "indices": indices,
        "prevalence": prevalence,
        "shift_intensity": np.mean(np.abs(prevalence - full), axis=1),
    }


__all__ = [
    "MulticlassSetup",
    "load_multiclass_label_setup",
    "multiclass_label_shift_samples",
    "prepare_multiclass_splits",
    "train_and_predict_k",
]
