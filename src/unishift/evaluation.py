"""Evaluate one method of one task on every sample of every setup of a shift.

A *setup* is one trained classifier on one data set (label shift) or one language model on one
source->target pair (covariate shift). It brings the :class:`Setting` the method is fitted on, the pool
of labelled test items and the persisted sample indices into that pool. Every method of every task is
evaluated on exactly the same samples.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from unishift.io import one_line
from unishift.methods.base import TASKS, LabelledSet, Method, Sample, SampleContext, Setting
from unishift.metrics import absolute_error, brier, ece_positive_class, ece_top_label

RECORD_COLUMNS = (
    "shift",
    "task",
    "method",
    "classifier",
    "dataset",
    "sample_id",
    "shift_intensity",
    "true_value",
    "estimate",
    "error",
    "ece",
    "ece_positive",
    "brier",
    "status",
    "reason",
)
ECE_CHOICES = ("top_label", "positive_class")


@dataclass
class SetupData:
    """One setup: what methods are fitted on, the test pool and the persisted samples."""

    shift: str
    classifier: str
    dataset: str
    setting: Setting
    pool: LabelledSet
    sample_indices: np.ndarray
    shift_intensity: np.ndarray
    extra: dict[str, Any] = field(default_factory=dict)
    # Precomputed per-sample artifacts (e.g. domain-classifier weights written by an upstream rule),
    # keyed like SampleContext.cached keys; they pre-seed each sample's context.
    sample_artifacts: Callable[[int], dict] | None = None

    @property
    def key(self) -> str:
        return self.setting.key

    def sample(self, sample_id: int) -> tuple[Sample, np.ndarray]:
        idx = self.sample_indices[sample_id]
        items = self.pool.subset(idx)
        return Sample(items.posteriors, items.features, items.logits), items.labels


def _score(
    task: str, output: Any, sample: Sample, labels: np.ndarray, ece: str
) -> dict[str, float]:
    labels = np.asarray(labels)
    if task == "calibration":
        calibrated = np.asarray(output, dtype=float)
        if calibrated.shape != sample.posteriors.shape:
            raise ValueError(
                f"calibrator returned shape {calibrated.shape}, expected {sample.posteriors.shape}"
            )
        if not np.all(np.isfinite(calibrated)):
            raise ValueError("calibrator returned non-finite posteriors")
        top, positive = ece_top_label(calibrated, labels), ece_positive_class(calibrated, labels)
        return {
            "true_value": float(labels.mean()),
            "estimate": float(calibrated[:, 1].mean()),
            "error": top if ece == "top_label" else positive,
            "ece": top,
            "ece_positive": positive,
            "brier": brier(calibrated, labels),
        }
    estimate = float(output)
    if not np.isfinite(estimate):
        raise ValueError(f"{task} estimate is not finite ({estimate})")
    if task == "quantification":
        true_value = float(labels.mean())
    else:
        true_value = float(np.mean(sample.predictions == labels))
    return {
        "true_value": true_value,
        "estimate": estimate,
        "error": absolute_error(true_value, estimate),
    }


def _status(notes: list[tuple[str, str]]) -> tuple[str, str]:
    if not notes:
        return "ok", ""
    statuses = {status for status, _ in notes}
    status = "error" if "error" in statuses else sorted(statuses)[0]
    # one short line per reason: a multi-line message (e.g. scipy's) would break the CSV's rows
    reasons = list(dict.fromkeys(one_line(reason) for _, reason in notes))
    return status, "; ".join(reasons)


def evaluate_setup(
    task: str,
    method_name: str,
    build: Callable[[], Method],
    setup: SetupData,
    ece: str = "top_label",
    sample_ids: Iterable[int] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Fit a fresh method on the setup and apply it to each sample; errors are recorded, not raised."""
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
    }
    sample_ids = range(len(setup.sample_indices)) if sample_ids is None else sample_ids
    started = time.perf_counter()
    fit_error = None
    method = build()
    try:
        method.fit(setup.setting)
    except Exception as err:  # a method that cannot be fitted fails every sample of this setup
        fit_error = f"fit failed: {type(err).__name__}: {one_line(str(err))}"
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
            setting_key=setup.key, sample_id=int(sample_id), seed=setup.setting.seed
        )
        context.notes.extend(fit_notes)
        if setup.sample_artifacts is not None:
            context.store.update(setup.sample_artifacts(int(sample_id)))
        tick = time.perf_counter()
        try:
            output = method.apply(sample, context)
            record.update(_score(task, output, sample, labels, ece))
            status, reason = _status(context.notes)
        except Exception as err:
            status, reason = "error", f"{type(err).__name__}: {one_line(str(err))}"
        apply_seconds += time.perf_counter() - tick
        records.append(dict(record, status=status, reason=reason))
    timing = {
        "fit_seconds": fit_seconds,
        "apply_seconds": apply_seconds,
        "n_samples": len(records),
    }
    return records, timing


def evaluate_method(
    task: str,
    method_name: str,
    shift: str,
    setups: Iterable[SetupData],
    params: dict[str, Any] | None = None,
    ece: str = "top_label",
):
    """Per-sample records (one row per setup x sample) and per-setup timings of one method."""
    import pandas as pd

    from unishift.registry import get_method

    spec = get_method(task, method_name, shift)
    spec.params(shift, params)  # fail early on a malformed parameter mapping
    records, timings = [], []
    for setup in setups:
        rows, timing = evaluate_setup(
            task, method_name, lambda: spec.build(shift, params), setup, ece=ece
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
    frame = pd.DataFrame.from_records(records, columns=list(RECORD_COLUMNS))
    return frame, pd.DataFrame.from_records(timings)
