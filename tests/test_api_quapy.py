"""The Python API's QuaPy wrapper, table() and load_records() (docs/api.md).

QuaPy is the oracle for the numbers of a wrapped QuaPy method: the same QuaPy class, run the QuaPy
way on a real fitted classifier (features in, its own scores out), must give what unishift gives
from that classifier's posteriors alone."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from quapy.method.aggregative import ACC, MAX, MS, MS2, PACC, T50, X
from quapy.method.non_aggregative import DMx, MaximumLikelihoodPrevalenceEstimation
from sklearn.linear_model import LogisticRegression

from tests.calibration_settings import make_setting
from tests.test_api import _setup
from unishift.api import QuaPyQuantifier, evaluate, from_quapy, load_records, table
from unishift.io import write_csv, write_json
from unishift.methods.base import fresh_context
from unishift.methods.quapy_adapter import quiet
from unishift.output_records import write_record
from unishift.workflow.provenance import provenance

THRESHOLD_METHODS = [MAX, T50, X, MS, MS2]


def _quapy_on(classifier, method, validation_features, validation_labels):
    """``method`` fitted the QuaPy way on an already fitted classifier (validation set only)."""
    quantifier = method(classifier, fit_classifier=False, val_split=None)
    return quiet(quantifier.fit, validation_features, validation_labels)


def _posterior_scorer():
    """A real sklearn classifier whose scores (decision function) are its input's single column:
    fed the positive posteriors, it scores every item by its positive posterior."""
    scorer = LogisticRegression()
    scorer.coef_, scorer.intercept_ = np.array([[1.0]]), np.array([0.0])
    scorer.classes_ = np.array([0, 1])
    return scorer


@pytest.mark.parametrize("method", [*THRESHOLD_METHODS, ACC, PACC], ids=lambda m: m.__name__)
def test_a_wrapped_quapy_method_gives_quapys_numbers_on_the_real_classifier(method):
    """The threshold methods see the classifier's scores: from the posteriors alone, unishift must
    give what QuaPy gives on the logistic regression's own decision function (its log-odds)."""
    setting, classifier, draw = make_setting(seed=5, separation=0.8)
    validation = setting.validation
    theirs = _quapy_on(classifier, method, validation.features, validation.labels)
    ours = from_quapy(method()).fit(setting)
    estimates = []
    for sample_id, prevalence in enumerate((0.3, 0.5, 0.8)):
        sample, _ = draw(120, prevalence, sample_seed=10 + sample_id)
        estimate = ours.quantify(sample, fresh_context(setting, sample_id))
        np.testing.assert_array_equal(estimate, quiet(theirs.predict, sample.features))
        estimates.append(estimate[1])
    assert len(set(estimates)) == 3 and 0 < min(estimates) < max(estimates) < 1


@pytest.mark.parametrize("method", THRESHOLD_METHODS, ids=lambda m: m.__name__)
def test_the_threshold_methods_score_items_by_their_positive_posterior(method):
    """QuaPy on a classifier whose scores equal the positive posteriors gives the same estimates."""
    setting, _, draw = make_setting(seed=6, separation=1.0)
    validation = setting.validation
    scores = validation.posteriors[:, [1]]
    theirs = _quapy_on(_posterior_scorer(), method, scores, validation.labels)
    ours = from_quapy(method()).fit(setting)
    for sample_id, prevalence in enumerate((0.2, 0.7)):
        sample, _ = draw(100, prevalence, sample_seed=20 + sample_id)
        expected = quiet(theirs.predict, sample.posteriors[:, [1]])
        estimate = ours.quantify(sample, fresh_context(setting, sample_id))
        np.testing.assert_array_equal(estimate, expected)


def test_a_threshold_method_with_no_usable_cut_falls_back_to_classify_and_count():
    """MS2 discards every cut whose tpr - fpr <= 0.25; on a classifier without signal none remains
    and QuaPy falls back to counting the items whose score is >= 0, its classifier's decision
    boundary. Scores that are the bare positive posteriors (all >= 0) would count every item."""
    setting, classifier, draw = make_setting(seed=7, separation=0.0)
    validation = setting.validation
    theirs = _quapy_on(classifier, MS2, validation.features, validation.labels)
    assert theirs.tprs.tolist() == [1] and theirs.fprs.tolist() == [0]  # the fallback
    ours = from_quapy(MS2()).fit(setting)
    sample, _ = draw(200, 0.5, sample_seed=3)
    estimate = ours.quantify(sample, fresh_context(setting, 0))
    np.testing.assert_array_equal(estimate, quiet(theirs.predict, sample.features))
    assert estimate[1] == np.mean(sample.posteriors[:, 1] >= 0.5)
    assert 0.1 < estimate[1] < 0.9


def test_a_wrapped_quapy_method_is_named_after_its_quapy_class():
    setups = [_setup()]
    assert from_quapy(ACC()).name == "ACC" and from_quapy(MAX()).name == "MAX"
    assert evaluate(from_quapy(ACC()), setups)["method"].unique().tolist() == ["ACC"]
    named = evaluate(from_quapy(MAX(), name="MyMAX"), setups)
    assert named["method"].unique().tolist() == ["MyMAX"] and (named["status"] == "ok").all()


@pytest.mark.parametrize(
    "quantifier",
    [MaximumLikelihoodPrevalenceEstimation(), DMx()],
    ids=["MLPE", "DMx"],
)
def test_from_quapy_refuses_a_non_aggregative_method_when_wrapping_it(quantifier):
    name = type(quantifier).__name__
    with pytest.raises(ValueError, match=f"{name} .*not a QuaPy aggregative.*posteriors"):
        from_quapy(quantifier)
    wrapper = QuaPyQuantifier(quantifier)  # stored as given (a scikit-learn estimator) ...
    assert wrapper.get_params()["quantifier"] is quantifier
    with pytest.raises(ValueError, match=name):  # ... and refused by fit
        wrapper.fit(make_setting(seed=5)[0])


def _table_records():
    setups = [_setup(3), _setup(4), _setup(5)]
    registered = [evaluate(n, setups, task="quantification") for n in ("CC", "PACC", "DoC_a2q")]
    # QuaPy's ACC under a name the registry does not know (the registry has an ACC of its own)
    return pd.concat(
        [*registered, evaluate(from_quapy(ACC(), name="QuaPyACC"), setups)], ignore_index=True
    )


def test_table_refuses_a_method_it_cannot_place():
    records = _table_records()
    with pytest.raises(ValueError, match=r"'QuaPyACC' is not a registered.*groups=\{'QuaPyACC'"):
        table(records, "quantification", "label")


def test_table_places_a_method_in_the_group_it_is_given():
    records = _table_records()
    paper = table(records[records["method"] != "QuaPyACC"], "quantification", "label")
    adapted = table(records, "quantification", "label", groups={"QuaPyACC": "adapted"})
    assert paper.references == adapted.references == ["PACC"]
    assert adapted.names == ["CC", "PACC", "DoC_a2q", "QuaPyACC"]
    doc = paper.names.index("DoC_a2q")
    np.testing.assert_array_equal(
        adapted.wins.rates[:, adapted.names.index("DoC_a2q")], paper.wins.rates[:, doc]
    )
    reference = table(records, "quantification", "label", groups={"QuaPyACC": "reference"})
    assert reference.references == ["PACC", "QuaPyACC"] and reference.wins.rates.shape[0] == 2
    with pytest.raises(ValueError, match="group 'mine'"):
        table(records, "quantification", "label", groups={"QuaPyACC": "mine"})


def _results(tmp_path, configured):
    """A results folder as the workflow leaves it: the per-method records under eval/ (CC, PCC and
    PACC, as if an earlier config had named PACC) and the run's provenance.json."""
    results = tmp_path / "results"
    folder = results / "eval" / "label" / "quantification"
    setups = [_setup(3)]
    for name in ("CC", "PCC", "PACC"):
        path = folder / f"{name}.csv"
        write_csv(path, evaluate(name, setups, task="quantification"))
        # the record of the job that wrote it, which load_records checks as the workflow does
        write_record(path, "aggregate_records", {"method": name}, [], results)
    if configured is not None:
        config = {"seed": 0, "methods": {"label": {"quantification": configured}}}
        write_json(results / "provenance.json", provenance(config, code_version="test"))
    return results


def test_load_records_reads_the_methods_of_the_runs_config(tmp_path):
    results = _results(tmp_path, ["PCC", "CC"])
    with pytest.warns(UserWarning, match=r"\['PACC'\].*does not name"):
        records = load_records(results, "label", "quantification")
    assert list(dict.fromkeys(records["method"])) == ["PCC", "CC"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chosen = load_records(results, "label", "quantification", methods=["PACC"])
    assert chosen["method"].unique().tolist() == ["PACC"] and len(chosen) == 2


def test_load_records_says_what_it_read_without_provenance_and_what_is_missing(tmp_path):
    unfinished = _results(tmp_path / "a", None)
    with pytest.warns(UserWarning, match="provenance.json is missing.*'CC', 'PACC', 'PCC'"):
        records = load_records(unfinished, "label", "quantification")
    assert sorted(records["method"].unique()) == ["CC", "PACC", "PCC"]
    missing = _results(tmp_path / "b", ["CC", "KDEy"])
    with (
        pytest.warns(UserWarning, match=r"\['PACC', 'PCC'\]"),
        pytest.raises(FileNotFoundError, match=r"no per-sample records of \['KDEy'\]"),
    ):
        load_records(missing, "label", "quantification")
