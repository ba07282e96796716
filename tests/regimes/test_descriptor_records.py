"""The shift descriptors of a setup's samples (docs/regimes.md §5.1) and their join into the records:
describe_setup against a per-sample recomputation from the definitions, π and the target share, the
seeds, and join_descriptors / the record readers."""

import numpy as np
import pandas as pd
import pytest

from unishift.data.containers import LabelledSet, Setting, derive_seed
from unishift.data.setups import SetupData
from unishift.evaluation.records import (
    BASE_COLUMNS,
    COLUMNS,
    DESCRIPTOR_COLUMNS,
    K_CLASS,
    TWO_CLASS,
    join_descriptors,
    layout_of_columns,
    read_descriptors,
)
from unishift.io import DamagedFileError, write_csv
from unishift.regimes import descriptors as D
from unishift.regimes.setups import COLUMNS as FILE_COLUMNS
from unishift.regimes.setups import describe_setup, full_prevalence
from unishift.report.tables import read_records


def _labelled(rng, n, k, shift=0.0):
    X = rng.normal(size=(n, 3)) + shift
    logits = np.column_stack([X[:, 0] * (c + 1) - c for c in range(k)])
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(k, p=p) for p in P])
    return LabelledSet(P, y, X)


def _setup(k=2, shift="covariate", n_samples=5, size=40, seed=0):
    rng = np.random.default_rng(seed)
    validation, training = _labelled(rng, 120, k), _labelled(rng, 150, k)
    source, target = _labelled(rng, 100, k), _labelled(rng, 80, k, shift=1.5)
    pool = LabelledSet(
        np.vstack([source.posteriors, target.posteriors]),
        np.r_[source.labels, target.labels],
        np.vstack([source.features, target.features]),
    )
    indices = np.array([rng.choice(len(pool), size) for _ in range(n_samples)])
    setting = Setting(validation, training, shift, key="M/src->tgt", seed=seed)
    return SetupData(shift, "M", "src->tgt", setting, pool, indices, np.zeros(n_samples)), 100


def test_the_descriptor_columns_are_the_libraries_in_its_order():
    assert DESCRIPTOR_COLUMNS is D.DESCRIPTORS  # declared once
    assert FILE_COLUMNS[4:] == DESCRIPTOR_COLUMNS
    for layout in (TWO_CLASS, K_CLASS):
        assert COLUMNS[layout] == (*BASE_COLUMNS[layout], *DESCRIPTOR_COLUMNS)


@pytest.mark.parametrize("k", [2, 3])
def test_describe_setup_equals_the_definitions_sample_by_sample(k):
    setup, n_source = _setup(k)
    frame, reasons = describe_setup(setup, seed=7, n_source=n_source)
    assert reasons == [] and list(frame.columns) == list(FILE_COLUMNS)
    assert frame["sample_id"].tolist() == list(range(5))
    validation = setup.setting.validation
    pi = setup.setting.train_prevalence
    for i, row in frame.iterrows():
        idx = setup.sample_indices[i]
        labels = setup.pool.labels[idx]
        posteriors = setup.pool.posteriors[idx]
        # L1 between pi and the sample's class shares, by a literal loop
        shares = [sum(labels == c) / len(labels) for c in range(k)]
        assert row["true_label_shift"] == pytest.approx(
            sum(abs(a - b) for a, b in zip(pi, shares)), abs=1e-12
        )
        assert row["true_mixture"] == pytest.approx(sum(j >= n_source for j in idx) / len(idx))
        confidence = lambda p: np.mean([max(r) for r in p])  # noqa: E731
        assert row["confidence_drop"] == pytest.approx(
            confidence(validation.posteriors) - confidence(posteriors), abs=1e-12
        )
        seed = derive_seed(7, "covariate", "M/src->tgt", "descriptors", i)
        assert row["domain_auc"] == D.domain_auc(
            validation.features, setup.pool.features[idx], seed
        )
        quantifier = D.fit_prevalence_estimator(validation.posteriors, validation.labels)
        assert row["est_prevalence_shift"] == pytest.approx(
            D.est_prevalence_shift(pi, quantifier, posteriors), abs=1e-12
        )


def test_the_seed_and_the_given_pi_enter_and_label_shift_has_no_mixture():
    setup, _ = _setup()
    a, _ = describe_setup(setup, seed=0)
    b, _ = describe_setup(setup, seed=1)
    assert a["true_mixture"].isna().all()  # no n_source: not a mixture
    assert not np.allclose(a["domain_auc"], b["domain_auc"])  # the root seed reaches the folds
    pi = np.array([0.9, 0.1])
    c, _ = describe_setup(setup, seed=0, train_prevalence=pi)
    labels = setup.pool.labels[setup.sample_indices[0]]
    assert c.loc[0, "true_label_shift"] == pytest.approx(2 * abs(labels.mean() - 0.1))


def test_full_prevalence_reads_both_split_layouts():
    assert full_prevalence(np.array(0.25)).tolist() == [0.75, 0.25]
    assert full_prevalence(np.array([0.2, 0.3, 0.5])).tolist() == [0.2, 0.3, 0.5]


def test_a_domain_auc_that_cannot_be_computed_is_left_empty_with_its_reason():
    setup, _ = _setup(size=3)  # three items: fewer than the five folds
    frame, reasons = describe_setup(setup, seed=0)
    assert frame["domain_auc"].isna().all() and frame["confidence_drop"].notna().all()
    assert len(reasons) == 5 and "domain_auc" in reasons[0]


def _records(n=3):
    rows = [
        {c: np.nan for c in BASE_COLUMNS[TWO_CLASS]}
        | {"shift": "label", "task": "cap", "method": "Naive", "classifier": clf, "dataset": ds,
           "sample_id": s, "error": 0.1 * s, "status": "ok", "reason": ""}
        for clf in ("LR", "kNN") for ds in ("a", "b") for s in range(n)
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=list(BASE_COLUMNS[TWO_CLASS]))


def _descriptors(n=3):
    rows = []
    for clf in ("LR", "kNN"):
        for ds in ("a", "b"):
            for s in range(n):
                values = {
                    d: (7 * len(clf) + 3 * ord(ds) + 11 * s + j) % 97 / 97
                    for j, d in enumerate(DESCRIPTOR_COLUMNS)
                }
                rows.append({"shift": "label", "classifier": clf, "dataset": ds, "sample_id": s})
                rows[-1].update(values)
    return pd.DataFrame(rows, columns=list(FILE_COLUMNS))


def test_join_matches_each_record_to_its_own_sample_whatever_the_order():
    records, table = _records(), _descriptors()
    shuffled = table.sample(frac=1.0, random_state=0)
    joined = join_descriptors(records, [shuffled.iloc[:5], shuffled.iloc[5:]])
    assert tuple(joined.columns) == COLUMNS[TWO_CLASS]
    assert joined[list(BASE_COLUMNS[TWO_CLASS])].equals(records)  # rows and order kept
    for _, row in joined.iterrows():
        expected = table[
            (table["classifier"] == row["classifier"])
            & (table["dataset"] == row["dataset"])
            & (table["sample_id"] == row["sample_id"])
        ].iloc[0]
        for d in DESCRIPTOR_COLUMNS:
            assert row[d] == expected[d]


def test_join_refuses_missing_and_duplicated_samples():
    records, table = _records(), _descriptors()
    with pytest.raises(ValueError, match="no descriptor row"):
        join_descriptors(records, [table.iloc[1:]])
    with pytest.raises(ValueError, match="two descriptor rows"):
        join_descriptors(records, [table, table.iloc[:1]])
    other_shift = table.assign(shift="covariate")
    with pytest.raises(ValueError, match="no descriptor row"):
        join_descriptors(records, [other_shift])


def test_the_readers_take_records_with_and_without_descriptors(tmp_path):
    records = _records()
    joined = join_descriptors(records, [_descriptors()])
    for name, frame in (("old.csv", records), ("new.csv", joined)):
        write_csv(tmp_path / name, frame)
        assert layout_of_columns(frame.columns) == TWO_CLASS
        read = read_records(tmp_path / name)
        assert len(read) == len(frame)
    assert read["domain_auc"].tolist() == joined["domain_auc"].tolist()
    write_csv(tmp_path / "d.csv", _descriptors())
    assert read_descriptors(tmp_path / "d.csv").equals(_descriptors())
    write_csv(tmp_path / "bad.csv", _descriptors().drop(columns="domain_auc"))
    with pytest.raises(DamagedFileError, match="expected"):
        read_descriptors(tmp_path / "bad.csv")
