"""One tolerance for what a method returns (docs/reporting.md §1.8, issue 32): within 1e-6 an entry
outside [0, 1] is clipped and its row renormalised before any measure, beyond it the sample fails
with a reason; no measure sees a negative, NaN or above-1 entry. The methods are the plugin of
deliberately wrong methods, ``tests.wrong_methods``."""

import numpy as np
import pytest

from tests.evaluation.test_evaluate import make_setup
from tests.wrong_methods import NEGATIVE_ENTRY, MostlyFails, NegCal, OverOne, Unnormalised
from unishift.evaluation.evaluate import evaluate_setup
from unishift.evaluation.metrics import (
    OUTPUT_TOLERANCE,
    accuracy,
    brier,
    check_accuracy,
    check_posteriors,
    check_prevalence,
    ece_positive_class,
    ece_top_label,
    quantification_ae,
)


def _clipped(rows: np.ndarray) -> np.ndarray:
    """The clip-and-renormalise of the policy, written out row by row."""
    out = []
    for row in rows:
        if (row < 0).any() or (row > 1).any():
            row = np.clip(row, 0, 1)
            row = row / row.sum()
        out.append(row)
    return np.array(out)


def test_negative_entries_within_the_tolerance_are_clipped_before_the_ece():
    rng = np.random.default_rng(3)
    positive = rng.uniform(0, 1, 40)
    posteriors = np.column_stack([1 - positive, positive])
    labels = rng.integers(0, 2, 40)
    posteriors[:10] = [NEGATIVE_ENTRY, 1 - NEGATIVE_ENTRY]
    clean = _clipped(posteriors)
    assert clean.min() == 0.0 and (clean[:10] == [0.0, 1.0]).all()
    # before: the log of a negative entry made the item fall out of every bin but count in n
    for precision in ("float32", "float64"):
        assert ece_top_label(posteriors, labels, precision=precision) == ece_top_label(
            clean, labels, precision=precision
        )
    assert ece_positive_class(posteriors, labels) == ece_positive_class(clean, labels)
    assert brier(posteriors, labels) == brier(clean, labels)
    checked = check_posteriors(posteriors)
    np.testing.assert_array_equal(checked, clean)
    assert checked.min() >= 0.0 and checked.max() <= 1.0
    # rows already in [0, 1] are returned bit for bit
    np.testing.assert_array_equal(checked[10:], posteriors[10:])


@pytest.mark.parametrize(
    "row, accepted",
    [
        ([1 + 9e-6, 0.0], False),  # allclose let this through before
        ([0.5, 0.5 + 2e-6], False),
        ([0.5, 0.5 + 5e-7], True),
        ([-2e-6, 1.0], False),
        ([-5e-7, 1.0 + 5e-7], True),
        ([np.nan, 1.0], False),
    ],
)
def test_one_tolerance_for_entries_and_row_sums(row, accepted):
    posteriors = np.array([row, [0.3, 0.7]])
    if accepted:
        out = check_posteriors(posteriors)
        assert out.min() >= 0 and out.max() <= 1
        assert np.abs(out.sum(axis=1) - 1).max() <= OUTPUT_TOLERANCE
    else:
        with pytest.raises(ValueError, match="NaN|1e-06"):
            check_posteriors(posteriors)


def test_a_value_on_the_tolerance_is_accepted_and_one_ulp_beyond_it_is_not():
    """The limit is inclusive for entries, prevalence vectors and accuracies alike (issue 32's probe:
    values on a limit flipped from sample to sample, each check with a rule of its own)."""
    low, high = -OUTPUT_TOLERANCE, 1.0 + OUTPUT_TOLERANCE
    below, above = np.nextafter(low, -1.0), np.nextafter(high, 2.0)
    np.testing.assert_array_equal(check_posteriors(np.array([[low, high]])), [[0.0, 1.0]])
    np.testing.assert_array_equal(check_prevalence([low, high]), [0.0, 1.0])
    assert (check_accuracy(low), check_accuracy(high)) == (0.0, 1.0)
    for row in ([below, high], [low, above]):
        with pytest.raises(ValueError, match="within 1e-06"):
            check_posteriors(np.array([row]))
        with pytest.raises(ValueError, match="simplex"):
            check_prevalence(row)
    for value in (below, above):
        with pytest.raises(ValueError, match="outside"):
            check_accuracy(value)


def test_prevalence_vectors_and_accuracies_take_the_same_tolerance():
    # before: entries tolerated 1e-8 and sums 1e-6, accuracies nothing
    np.testing.assert_array_equal(check_prevalence([-5e-7, 1 + 5e-7]), [0.0, 1.0])
    assert quantification_ae([0.0, 1.0], [-5e-7, 1 + 5e-7]) == 0.0
    with pytest.raises(ValueError, match="simplex"):
        check_prevalence([-2e-6, 1.0 + 2e-6])
    with pytest.raises(ValueError, match="simplex"):
        check_prevalence([0.5, 0.5 + 2e-6])
    assert check_accuracy(1.0000000000000002) == 1.0
    assert check_accuracy(-5e-7) == 0.0
    for bad in (1 + 2e-6, -2e-6, np.nan, np.inf):
        with pytest.raises(ValueError, match="outside"):
            check_accuracy(bad)
    # a measure given a classifier's posteriors with a 1 + 2e-16 entry sees it clipped
    assert accuracy(np.array([[1 + 2e-16, -2e-16]]), np.array([0])) == 1.0


def test_the_wrong_methods_are_clipped_or_fail_with_a_reason():
    setup = make_setup(n_samples=10)
    records, _ = evaluate_setup("calibration", "NegCal", NegCal, setup)
    assert {r["status"] for r in records} == {"ok"}
    for record, sample_id in zip(records, range(10), strict=True):
        sample, labels = setup.sample(sample_id)
        clean = _clipped(NegCal().calibrate(sample, None))
        assert record["ece"] == ece_top_label(clean, labels)
    records, _ = evaluate_setup("cap", "OverOne", OverOne, setup)
    # before: 1.0000000000000002 failed every sample
    assert {r["status"] for r in records} == {"ok"} and {r["estimate"] for r in records} == {1.0}
    records, _ = evaluate_setup("quantification", "Unnormalised", Unnormalised, setup)
    assert {r["status"] for r in records} == {"error"}
    assert "do not sum to 1 within 1e-06" in records[0]["reason"]
    records, _ = evaluate_setup("calibration", "MostlyFails", MostlyFails, setup)
    assert [r["status"] for r in records] == ["ok"] + ["error"] * 9
