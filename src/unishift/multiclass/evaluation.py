"""Evaluate one multiclass method on every sample of a setup: the per-sample record of the regime.

The record keeps the binary driver's columns, so that the reporting code (which reads ``error`` per
(method, classifier, dataset, sample_id)) works unchanged, and adds what k classes need:

* ``n_classes``;
* ``true_prevalence`` / ``estimated_prevalence``: JSON lists (quantification; the calibrators' mean
  calibrated vector);
* ``rae`` (QuaPy's, eps = 1 / (2 * sample size)) next to ``ae``;
* ``ece_classwise`` next to the top-label ``ece``.

``error`` is what the tables rank: top-label ECE (or class-wise with ``ece="classwise"``) for
calibration, AE over the prevalence vector for quantification, |acc - acc_hat| for CAP.
``arithmetic`` is the top-label ECE's (``"float32"``: the binary tables' float32 arithmetic).
``true_value`` / ``estimate`` hold the accuracy for CAP and stay empty for quantification (a vector
has no scalar); for calibration they hold the top-label confidence's mean and the accuracy.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from unishift.evaluation import _status
from unishift.methods.base import TASKS, SampleContext, simplex_check
from unishift.methods.base import Method as MulticlassMethod
from unishift.metrics import multiclass as mcm
from unishift.multiclass.records import MULTICLASS_RECORD_COLUMNS

ECE_CHOICES = ("top_label", "classwise")


def _vector(values) -> str:
    return json.dumps([round(float(v), 12) for v in values])


def score(
    task: str,
    output: Any,
    sample,
    labels: np.ndarray,
    ece: str = "top_label",
    arithmetic: str = "float64",
) -> dict:
    k = sample.n_classes
    labels = np.asarray(labels)
    truth = mcm.prevalence_vector(labels, k)
    if task == "calibration":
        calibrated = np.asarray(output, dtype=float)
        if calibrated.shape != np.asarray(sample.posteriors).shape:
            raise ValueError(
                f"calibrator returned shape {calibrated.shape}, expected {np.shape(sample.posteriors)}"
            )
        if not np.all(np.isfinite(calibrated)):
            raise ValueError("calibrator returned non-finite posteriors")
        top, classwise = (
            mcm.ece_top_label(calibrated, labels, arithmetic=arithmetic),
            mcm.ece_classwise(calibrated, labels),
        )
        confidence, _ = mcm.top_label_confidence(calibrated)
        return {
            "true_value": mcm.accuracy(calibrated, labels),
            "estimate": float(confidence.mean()),
            "error": top if ece == "top_label" else classwise,
            "true_prevalence": _vector(truth),
            "estimated_prevalence": _vector(calibrated.mean(axis=0)),
            "ece": top,
            "ece_classwise": classwise,
            "brier": mcm.brier(calibrated, labels),
        }
    if task == "quantification":
        estimate = simplex_check(output, k, "the quantifier")
        ae = mcm.quantification_ae(truth, estimate)
        return {
            "error": ae,
            "true_prevalence": _vector(truth),
            "estimated_prevalence": _vector(estimate),
            "ae": ae,
            "rae": mcm.quantification_rae(truth, estimate, sample_size=len(labels)),
        }
    estimate = float(output)
    if not np.isfinite(estimate):
        raise ValueError(f"cap estimate is not finite ({estimate})")
    true_value = mcm.accuracy(sample.posteriors, labels)
    return {
        "true_value": true_value,
        "estimate": estimate,
        "error": mcm.cap_absolute_error(true_value, estimate),
    }


def evaluate_multiclass_setup(
    task: str,
    method_name: str,
    build: Callable[[], MulticlassMethod],
    setup,
    ece: str = "top_label",
    sample_ids: Iterable[int] | None = None,
    arithmetic: str = "float64",
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Fit a fresh method on the setup, apply it to each sample; failures are recorded, not raised."""
    if task not in TASKS:
        raise ValueError(f"task {task!r} is not one of {TASKS}")
    if ece not in ECE_CHOICES:
        raise ValueError(f"ece={ece!r} is not one of {ECE_CHOICES}")
    base = {
        "shift": setup.shift,
        "task": task,
        "method": method_name,
        "classifier": setup.classifier,
        "dataset": setup.dataset,
        "n_classes": setup.n_classes,
    }
    sample_ids = range(len(setup.sample_indices)) if sample_ids is None else sample_ids
    started = time.perf_counter()
    fit_error = None
    method = build()
    try:
        method.fit(setup.setting)
    except Exception as err:
        fit_error = f"fit failed: {type(err).__name__}: {err}"
    fit_seconds = time.perf_counter() - started
    fit_notes = list(getattr(method, "fit_notes", []) or [])
    records, apply_seconds = [], 0.0
    for sample_id in sample_ids:
        sample, labels = setup.sample(sample_id)
        record = dict(
            base, sample_id=int(sample_id), shift_intensity=float(setup.shift_intensity[sample_id])
        )
        if fit_error is not None:
            records.append(dict(record, status="error", reason=fit_error))
            continue
        context = SampleContext(
            setting_key=setup.setting.key, sample_id=int(sample_id), seed=setup.setting.seed
        )
        context.notes.extend(fit_notes)
        tick = time.perf_counter()
        try:
            record.update(
                score(task, method.apply(sample, context), sample, labels, ece, arithmetic)
            )
            status, reason = _status(context.notes)
        except Exception as err:
            status, reason = "error", f"{type(err).__name__}: {err}"
        apply_seconds += time.perf_counter() - tick
        records.append(dict(record, status=status, reason=reason))
    return records, {
        "fit_seconds": fit_seconds,
        "apply_seconds": apply_seconds,
        "n_samples": len(records),
    }


def evaluate_multiclass_method(
    task, method_name, shift, setups, params=None, ece="top_label", arithmetic="float64"
):
    """Per-sample records and per-setup timings of one catalogued method, as data frames."""
    import pandas as pd

    from unishift.registry import get_method

    spec = get_method(task, method_name)
    if shift not in spec.shifts:
        raise ValueError(f"{task} method {method_name!r} is not meant for {shift} shift")
    records, timings = [], []
    for setup in setups:
        rows, timing = evaluate_multiclass_setup(
            task,
            method_name,
            lambda k=setup.n_classes: spec.build(shift, k, params),
            setup,
            ece=ece,
            arithmetic=arithmetic,
        )
        records.extend(rows)
        timings.append(
            {
                "method": method_name,
                "classifier": setup.classifier,
                "dataset": setup.dataset,
                **timing,
            }
        )
    frame = pd.DataFrame.from_records(records, columns=list(MULTICLASS_RECORD_COLUMNS))
    return frame, pd.DataFrame.from_records(timings)


__all__ = [
    "MULTICLASS_RECORD_COLUMNS",
    "evaluate_multiclass_method",
    "evaluate_multiclass_setup",
    "score",
]
