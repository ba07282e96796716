"""One cell of the paper's label-shift tables, recomputed through the library as the workflow's rules
do (splits and samples with seed 0, 100 UPP samples of 250 items), for the paper-cell tests and the
tools of docs/reproduction.md ("How the numbers were checked"). Splits, samples and posteriors are
cached per process, keyed by the data folders."""

from __future__ import annotations

from functools import cache

from unishift.data.label_shift import (
    label_shift_samples,
    load_label_setup,
    prepare_splits,
    train_and_predict,
)
from unishift.evaluation.evaluate import evaluate_method
from unishift.report.paper import load_paper

SAMPLE_SIZE, N_SAMPLES, SEED = 250, 100, 0


@cache
def splits(dataset: str, data_home: str, data_root: str | None) -> dict:
    """The workflow's split arrays of a data set of the paper's grid."""
    arrays, _ = prepare_splits(dataset, data_home, data_root, seed=SEED)
    return arrays


@cache
def samples(dataset: str, data_home: str, data_root: str | None) -> dict:
    """The paper's 100 UPP samples of 250 items of a data set (with the persisted random stream)."""
    return label_shift_samples(splits(dataset, data_home, data_root), SAMPLE_SIZE, N_SAMPLES, SEED)


@cache
def _posteriors(dataset: str, classifier: str, data_home: str, data_root: str | None):
    _, posteriors = train_and_predict(
        splits(dataset, data_home, data_root),
        classifier,
        SEED,
        samples=samples(dataset, data_home, data_root),
    )
    return posteriors


def label_setup(dataset: str, classifier: str, data_home, data_root=None):
    """The :class:`SetupData` the workflow builds for (dataset, classifier) of the paper grid."""
    key = (dataset, str(data_home), None if data_root is None else str(data_root))
    return load_label_setup(
        splits(*key),
        _posteriors(dataset, classifier, *key[1:]),
        samples(*key),
        dataset,
        classifier,
        SEED,
    )


def sample_records(
    task: str, method: str, dataset: str, classifier: str, data_home, data_root=None, **options
):
    """Per-sample records of one cell (``options``: ece_precision, domain_stream, params)."""
    setup = label_setup(dataset, classifier, data_home, data_root)
    records, _ = evaluate_method(task, method, "label", [setup], **options)
    return records


def paper_value(task: str, method: str, dataset: str, classifier: str) -> float:
    """The printed value of one label-shift cell (``unishift/report/paper/cells.csv``)."""
    cells = load_paper("cells").set_index(["task", "shift", "method", "dataset", "classifier"])
    key = (task, "label", method, dataset, classifier)
    if key not in cells.index:
        raise KeyError(f"no printed cell {task}/{method} {dataset}/{classifier}")
    return float(cells.loc[key, "value"])
