"""The shared domain-classifier weights of a setup: computing, writing, reading and attaching them
(one file per (setup, plan): docs/domain-weights.md)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import fields, replace

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.data.setups import SetupData
from unishift.evaluation.evaluate import evaluate_setup
from unishift.evaluation.records import layout_of
from unishift.io import DamagedFileError, read_npz, write_npz
from unishift.methods.adapt.to_cap import CalibrationToCAP
from unishift.methods.base import Calibrator, SampleContext
from unishift.methods.domain_weights import (
    MEMO_KEY,
    PREDICTED_CLASSES,
    SAMPLE,
    SHARED_PLANS,
    CallKey,
    DomainWeightMemo,
    domain_weight_plan,
    domain_weights,
)


class WeightProbe(Calibrator):
    """An unregistered calibrator that only asks for the weights (plan ``sample``)."""

    def domain_weight_plan(self):
        return SAMPLE

    def fit(self, setting: Setting):
        self.setting_ = setting
        return self

    def calibrate(self, sample: Sample, context: SampleContext) -> np.ndarray:
        domain_weights(self.setting_, sample, context)
        return np.asarray(sample.posteriors, dtype=float)


def probe(plan: str) -> tuple[str, object]:
    """(task, method) whose weight calls are those of every method with ``plan``."""
    if plan == SAMPLE:
        return "calibration", WeightProbe()
    if plan == PREDICTED_CLASSES:
        return "cap", CalibrationToCAP(inner=WeightProbe)
    raise ValueError(f"no shared domain weights for plan {plan!r}; shared plans: {SHARED_PLANS}")


def compute_domain_weights(
    setup: SetupData, plan: str, domain_stream: str = "reference"
) -> tuple[DomainWeightMemo, list[str]]:
    """Every call of plan ``plan`` on every sample of ``setup`` (a recording memo), and the reasons
    of the samples whose calls failed (they are left to the consumers, which record the error)."""
    task, method = probe(plan)
    memo = DomainWeightMemo(recording=True)
    recording = replace(setup, sample_artifacts=lambda sample_id: {MEMO_KEY: memo})
    records, _ = evaluate_setup(
        task,
        "domain weights",
        lambda: method,
        recording,
        domain_stream=domain_stream,
        layout=layout_of([setup.n_classes]),
    )
    errors = [f"sample {r['sample_id']}: {r['reason']}" for r in records if r["status"] == "error"]
    memo.recording = False
    return memo, errors


def method_domain_weight_plan(
    task: str, name: str, shift: str, params: dict | None = None
) -> str | None:
    """The plan of a registered method as configured."""
    from unishift.methods.registry import get_method

    return domain_weight_plan(get_method(task, name, shift).build(shift, 2, params))


FORMAT = 1
_KEY_FIELDS = tuple(f.name for f in fields(CallKey))
_INTEGERS = ("sample_id", "n_training", "n_validation")


def write_domain_weights(
    path, memo: DomainWeightMemo, setup: SetupData, plan: str, domain_stream: str
) -> None:
    entries = list(memo.entries.values())
    lengths = [len(e.weights) for e in entries]
    dtypes = {name: np.int64 if name in _INTEGERS else str for name in _KEY_FIELDS}
    write_npz(
        path,
        format=np.asarray(FORMAT),
        setup_key=np.asarray(setup.key),
        plan=np.asarray(plan),
        domain_stream=np.asarray(domain_stream),
        **{
            name: np.asarray([getattr(k, name) for k in memo.entries], dtype=dtype)
            for name, dtype in dtypes.items()
        },
        stream_after=np.asarray([e.stream_after for e in entries], dtype=str),
        has_fallback=np.asarray([e.fallback is not None for e in entries], dtype=bool),
        fallback=np.asarray([e.fallback or "" for e in entries], dtype=str),
        offsets=np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))).astype(np.int64),
        weights=np.concatenate([np.zeros(0), *(e.weights.reshape(-1) for e in entries)]),
    )


def read_domain_weights(path) -> tuple[dict, DomainWeightMemo]:
    """(``{"setup_key", "plan", "domain_stream"}``, the memo) of a weights file."""
    arrays = read_npz(path, ("format", "setup_key", "plan", "offsets", "weights", *_KEY_FIELDS))
    if int(arrays["format"]) != FORMAT:
        raise DamagedFileError(path, f"domain-weights format {int(arrays['format'])}, not {FORMAT}")
    memo = DomainWeightMemo()
    offsets, weights = arrays["offsets"], arrays["weights"]
    for i in range(len(arrays["setting_key"])):
        key = CallKey(*((int if n in _INTEGERS else str)(arrays[n][i]) for n in _KEY_FIELDS))
        fallback = str(arrays["fallback"][i]) if arrays["has_fallback"][i] else None
        rows = weights[offsets[i] : offsets[i + 1]].reshape(-1, 1)
        memo.add(key, rows, fallback, str(arrays["stream_after"][i]))
    meta = {name: str(arrays[name]) for name in ("setup_key", "plan", "domain_stream")}
    return meta, memo


def attach_domain_weights(setups: Iterable[SetupData], paths: Iterable[str]) -> Iterator[SetupData]:
    """The setups, each reading the weights files written for it (matched by setup key)."""
    by_setup: dict[str, DomainWeightMemo] = {}
    for path in paths:
        meta, memo = read_domain_weights(path)
        by_setup.setdefault(meta["setup_key"], DomainWeightMemo()).entries.update(memo.entries)
    for setup in setups:
        merged = by_setup.pop(setup.key, None)
        if merged is not None:
            setup.sample_artifacts = lambda sample_id, memo=merged: {MEMO_KEY: memo}
        yield setup
    if by_setup:
        raise ValueError(
            f"domain-weights files of setups {sorted(by_setup)} match no evaluated setup"
        )
