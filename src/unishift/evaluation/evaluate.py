"""Evaluate one method of one task on every sample of every setup (:class:`SetupData`: one
classifier on one data set, or one language model on one source->target pair), for any number of
classes: every method on exactly the same samples, each record in the run's layout
(:mod:`unishift.evaluation.records`). ``ece_precision`` and ``domain_stream`` reproduce the
reference implementation's arithmetic and randomness (config/README.md, "Faithful by default";
docs/reproduction.md).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import numpy as np

from unishift.data.setups import SetupData
from unishift.evaluation.metrics import (
    absolute_error,
    accuracy,
    brier,
    check_accuracy,
    check_posteriors,
    check_prevalence,
    ece_classwise,
    ece_positive_class,
    ece_top_label,
    prevalence_vector,
    quantification_ae,
    quantification_rae,
    top_label_confidence,
)
from unishift.evaluation.records import COLUMNS, ECE_CHOICES, K_CLASS, LAYOUTS, TWO_CLASS
from unishift.io import one_line
from unishift.methods.base import TASKS, Method, SampleContext
from unishift.methods.registry import get_method
from unishift.numerics import PRECISIONS
from unishift.option_checks import check_choice

DOMAIN_STREAMS = ("reference", "per_sample")


def _vector(values) -> str:
    return json.dumps([round(float(v), 12) for v in values])


def _calibrated(output, sample) -> np.ndarray:
    calibrated = np.asarray(output, dtype=float)
    if calibrated.shape != np.shape(sample.posteriors):
        raise ValueError(
            f"calibrator returned shape {calibrated.shape}, expected {np.shape(sample.posteriors)}"
        )
    try:
        return check_posteriors(calibrated)
    except ValueError as err:
        raise ValueError(f"calibrator returned invalid posteriors: {err}") from None


def _accuracy_estimate(output) -> float:
    values = np.asarray(output, dtype=float)
    if values.size != 1:
        raise ValueError(f"cap method returned {values.size} values, expected one accuracy")
    return check_accuracy(values.reshape(-1)[0], "the cap method's accuracy estimate")


def score(
    task: str,
    output: Any,
    sample,
    labels: np.ndarray,
    layout: str = TWO_CLASS,
    ece: str = "top_label",
    ece_precision: str = "float32",
) -> dict[str, Any]:
    """The scored fields of one record: what a method returned on a sample against its labels."""
    k = sample.n_classes
    labels = np.asarray(labels)
    truth = prevalence_vector(labels, k)
    if task == "calibration":
        calibrated = _calibrated(output, sample)
        top = ece_top_label(calibrated, labels, precision=ece_precision)
        if layout == TWO_CLASS:
            positive = ece_positive_class(calibrated, labels)
            return {
                "true_value": float(labels.mean()),
                "estimate": float(calibrated[:, 1].mean()),
                "error": top if ece == "top_label" else positive,
                "ece": top,
                "ece_positive": positive,
                "brier": brier(calibrated, labels),
            }
        classwise = ece_classwise(calibrated, labels, precision=ece_precision)
        confidence, _ = top_label_confidence(calibrated)
        return {
            "true_value": accuracy(calibrated, labels),
            "estimate": float(confidence.mean()),
            "error": top if ece == "top_label" else classwise,
            "true_prevalence": _vector(truth),
            "estimated_prevalence": _vector(calibrated.mean(axis=0)),
            "ece": top,
            "ece_classwise": classwise,
            "brier": brier(calibrated, labels),
        }
    if task == "quantification":
        estimate = check_prevalence(output, k, "the quantifier's estimate")
        ae = quantification_ae(truth, estimate)
        if layout == TWO_CLASS:
            return {"true_value": float(labels.mean()), "estimate": float(estimate[1]), "error": ae}
        return {
            "error": ae,
            "true_prevalence": _vector(truth),
            "estimated_prevalence": _vector(estimate),
            "ae": ae,
            "rae": quantification_rae(truth, estimate, sample_size=len(labels)),
        }
    estimate = _accuracy_estimate(output)
    true_value = accuracy(sample.posteriors, labels)
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
    """``SampleContext.draws`` of one (method, setup): the reference implementation's continuing
    stream, or None (derived per-sample seeds)."""
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


def check_options(
    layout: str,
    ece: str = "top_label",
    ece_precision: str = "float32",
    domain_stream: str = "reference",
) -> None:
    """Refuse a record layout, ECE, ECE arithmetic or domain stream that does not exist (the ECE
    must be one the layout stores)."""
    check_choice("layout", layout, LAYOUTS)
    if ece not in ECE_CHOICES[layout]:
        hint = "two classes" if ece == "positive_class" else "data with more than two classes"
        raise ValueError(
            f"ece={ece!r} is not available in the {layout} record layout (choose one of "
            f"{list(ECE_CHOICES[layout])}); it needs {hint}"
        )
    check_choice("ece_precision", ece_precision, PRECISIONS)
    check_choice("domain_stream", domain_stream, DOMAIN_STREAMS)


def evaluate_setup(
    task: str,
    method_name: str,
    build: Callable[[], Method],
    setup: SetupData,
    ece: str = "top_label",
    sample_ids: Iterable[int] | None = None,
    ece_precision: str = "float32",
    domain_stream: str = "reference",
    layout: str = TWO_CLASS,
    observe: Callable[[SetupData, int, np.ndarray, np.ndarray], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Fit a fresh method on the setup and apply it to each sample; errors are recorded, not raised.
    With ``domain_stream="reference"`` each draw continues the stream where the previous sample left
    it, so the samples must be applied in generation order from the first (as the reference
    implementation did).
    ``observe(setup, sample_id, calibrated, labels)`` sees the calibrated posteriors of each scored
    calibration sample (the reliability diagrams' statistics, :mod:`unishift.evaluation.reliability`):
    the records keep only their summaries."""
    check_choice("task", task, TASKS)
    check_options(layout, ece, ece_precision, domain_stream)
    base = {
        "shift": setup.shift,
        "task": task,
        "method": method_name,
        "classifier": setup.classifier,
        "dataset": setup.dataset,
    }
    if layout == K_CLASS:
        base["n_classes"] = setup.n_classes
    sample_ids = range(len(setup.sample_indices)) if sample_ids is None else sample_ids
    started = time.perf_counter()
    fit_error = None
    method = build()
    try:
        method.fit(setup.setting)
    except Exception as err:  # a method that cannot be fitted fails every sample of this setup
        fit_error = f"fit failed: {type(err).__name__}: {one_line(str(err))}"
    fit_seconds = time.perf_counter() - started
    fit_notes = list(method.fit_notes)
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
            record.update(score(task, output, sample, labels, layout, ece, ece_precision))
            status, reason = _status(context.notes)
            if observe is not None and task == "calibration":
                observe(setup, int(sample_id), _calibrated(output, sample), np.asarray(labels))
        except Exception as err:
            status, reason = "error", f"{type(err).__name__}: {one_line(str(err))}"
        apply_seconds += time.perf_counter() - tick
        records.append(dict(record, status=status, reason=reason))
    return records, {
        "fit_seconds": fit_seconds,
        "apply_seconds": apply_seconds,
        "n_samples": len(records),
    }


def evaluate_setups(
    task: str,
    name: str,
    build: Callable[[SetupData], Method],
    setups,
    layout: str = TWO_CLASS,
    observe: Callable[[SetupData, int, np.ndarray, np.ndarray], None] | None = None,
    **options,
):
    """The records (a frame in ``layout``'s columns) and per-setup timings (a frame) of a fresh
    method ``build(setup)`` on every setup (``options``: ece, ece_precision, domain_stream;
    ``observe``: :func:`evaluate_setup`'s)."""
    import pandas as pd

    check_options(layout, **options)
    records, timings = [], []
    for setup in setups:
        rows, timing = evaluate_setup(
            task, name, partial(build, setup), setup, layout=layout, observe=observe, **options
        )
        records.extend(rows)
        timings.append(
            {"method": name, "classifier": setup.classifier, "dataset": setup.dataset, **timing}
        )
    frame = pd.DataFrame.from_records(records, columns=list(COLUMNS[layout]))
    return frame, pd.DataFrame.from_records(timings)


def evaluate_method(
    task: str,
    method_name: str,
    shift: str,
    setups: Iterable[SetupData],
    params: dict[str, Any] | None = None,
    **options,
):
    """:func:`evaluate_setups` of one registered method, built for each setup's number of classes."""
    spec = get_method(task, method_name, shift)
    build = partial(spec.build, shift, overrides=params)
    return evaluate_setups(task, method_name, lambda s: build(s.n_classes), setups, **options)
