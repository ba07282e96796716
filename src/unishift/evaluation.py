"""Evaluate one method of one task on every sample of every setup of a shift.

A *setup* is one trained classifier on one data set (label shift) or one language model on one
source->target pair (covariate shift). It brings the :class:`Setting` the method is fitted on, the pool
of labelled test items and the persisted sample indices into that pool. Every method of every task is
evaluated on exactly the same samples.

Two switches reproduce the reference code's arithmetic and randomness (docs/reproduction.md):
``ece_precision`` (float32, REF's, or float64) and ``domain_stream``: ``"reference"`` continues the
sample generator's legacy NumPy stream (persisted with the samples) across the setup's samples in
order, a fresh copy per (method, setup) as REF's per-method loops do, so that the domain classifier's
up-sampling draws what REF drew; ``"per_sample"`` seeds each draw from (seed, setting, sample).
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
from unishift.numerics import PRECISIONS

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
DOMAIN_STREAMS = ("reference", "per_sample")


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
    # Legacy NumPy RNG state right after the sample indices were drawn (np.random.get_state()
    # tuple); the "reference" domain stream continues it. None: the samples carry no stream.
    stream_state: tuple | None = None
    # Posteriors of each sample predicted as one batch (n_samples x sample_size x 2), used instead of
    # the pool's rows when given (the reference's scripts predict each sample separately).
    sample_posteriors: np.ndarray | None = None

    @property
    def key(self) -> str:
        return self.setting.key

    def sample(self, sample_id: int) -> tuple[Sample, np.ndarray]:
        idx = self.sample_indices[sample_id]
        items = self.pool.subset(idx)
        posteriors = items.posteriors
        if self.sample_posteriors is not None:
            posteriors = self.sample_posteriors[sample_id]
        return Sample(posteriors, items.features, items.logits), items.labels


def _score(
    task: str,
    output: Any,
    sample: Sample,
    labels: np.ndarray,
    ece: str,
    ece_precision: str = "float32",
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
        top = ece_top_label(calibrated, labels, precision=ece_precision)
        positive = ece_positive_class(calibrated, labels)
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


def _domain_draws(setup: SetupData, domain_stream: str) -> Callable | None:
    """``SampleContext.draws`` of one (method, setup): REF's continuing stream, or None (derived
    per-sample seeds)."""
    if domain_stream == "per_sample":
        return None
    if setup.stream_state is None:

        def missing(*parts):
            raise RuntimeError(
                f"domain_stream='reference' needs the random state persisted with the samples of "
                f"{setup.key}, which this setup lacks (samples generated by an older version?): "
                f"regenerate the samples, or set domain_stream: per_sample"
            )

        return missing
    stream = np.random.RandomState()
    stream.set_state(setup.stream_state)
    return lambda *parts: stream


def evaluate_setup(
    task: str,
    method_name: str,
    build: Callable[[], Method],
    setup: SetupData,
    ece: str = "top_label",
    sample_ids: Iterable[int] | None = None,
    ece_precision: str = "float32",
    domain_stream: str = "reference",
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Fit a fresh method on the setup and apply it to each sample; errors are recorded, not raised.

    With ``domain_stream="reference"`` the samples must be applied in generation order from the
    first (as REF did): each draw continues the stream where the previous sample left it.
    """
    if task not in TASKS:
        raise ValueError(f"task {task!r} is not one of {TASKS}")
    if ece not in ECE_CHOICES:
        raise ValueError(f"ece={ece!r} is not one of {ECE_CHOICES}")
    if ece_precision not in PRECISIONS:
        raise ValueError(f"ece_precision={ece_precision!r} is not one of {list(PRECISIONS)}")
    if domain_stream not in DOMAIN_STREAMS:
        raise ValueError(f"domain_stream={domain_stream!r} is not one of {list(DOMAIN_STREAMS)}")
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
    draws = _domain_draws(setup, domain_stream)

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
            setting_key=setup.key, sample_id=int(sample_id), seed=setup.setting.seed, draws=draws
        )
        context.notes.extend(fit_notes)
        if setup.sample_artifacts is not None:
            context.store.update(setup.sample_artifacts(int(sample_id)))
        tick = time.perf_counter()
        try:
            output = method.apply(sample, context)
            record.update(_score(task, output, sample, labels, ece, ece_precision))
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
    ece_precision: str = "float32",
    domain_stream: str = "reference",
):
    """Per-sample records (one row per setup x sample) and per-setup timings of one method."""
    import pandas as pd

    from unishift.registry import get_method

    spec = get_method(task, method_name, shift)
    spec.params(shift, params)  # fail early on a malformed parameter mapping
    records, timings = [], []
    for setup in setups:
        rows, timing = evaluate_setup(
            task,
            method_name,
            lambda: spec.build(shift, params),
            setup,
            ece=ece,
            ece_precision=ece_precision,
            domain_stream=domain_stream,
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
